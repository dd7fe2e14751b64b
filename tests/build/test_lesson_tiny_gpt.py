"""从 0 训练 (train/l1): the longer runs' table and sentences are the export's (data/tiny-gpt.json's
`longer`, recomputed here from the runs, not read from facts): each arm's lowest mean validation
loss and its step, its end, its own bigram line, and whether the larger model on ten times the
text crosses that line, as the page says."""
import html as htmllib
import json
import re

from support import ROOT

DATA = json.loads((ROOT / "data/tiny-gpt.json").read_text(encoding="utf-8"))
LONGER = DATA["longer"]


def text_of(site_dir):
    body = (site_dir / "train" / "l1-tiny-gpt" / "index.html").read_text(encoding="utf-8")
    body = re.sub(r"<(script|style)[^>]*>.*?</\1>", "", body, flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", body))


def mean_curve(arm):
    return [sum(v) / len(v) for v in zip(*[r["val"] for r in arm["runs"]])]


def arm(name, chars):
    return next(a for a in LONGER["arms"] if a["name"] == name and a["train_chars"] == chars)


def test_the_longer_runs_are_the_pages_settings_on_its_own_text_and_on_more():
    page_chars = len(DATA["train_text"])
    card = DATA["model_card"]["split"]["train_slice"]
    own = [a for a in LONGER["arms"] if a["train_chars"] == page_chars]
    assert {a["name"] for a in own} == {"defaults", "largest"}
    assert all(a["train_sha256"] == card["sha256"] for a in own)  # the page's own training slice
    assert all(a["bigram"] == DATA["reference"]["bigram"] for a in own)  # and so its bigram line
    more = [a for a in LONGER["arms"] if a["train_chars"] > page_chars]
    assert more and all(a["bigram"] < DATA["reference"]["bigram"] for a in more)  # more text, a better count
    assert all(len(r["val"]) == len(LONGER["steps"]) for a in LONGER["arms"] for r in a["runs"])


def test_the_page_prints_each_arms_lowest_point_end_and_line(site_dir):
    text = re.sub(r"\s+", " ", text_of(site_dir))
    steps = LONGER["steps"]
    for a in LONGER["arms"]:
        m = mean_curve(a)
        best = min(range(len(m)), key=m.__getitem__)
        row = f"{a['train_chars']:,} 字 {m[best]:.3f}（第 {steps[best]:,} 步） {m[-1]:.3f} {a['bigram']:.3f}"
        assert row in text, row


def test_the_page_says_where_the_larger_model_on_more_text_crosses_its_line(site_dir):
    text = text_of(site_dir)
    a = next(a for a in LONGER["arms"] if a["name"] == "largest" and a["train_chars"] > len(DATA["train_text"]))
    every_seed = [s for s, v in zip(LONGER["steps"], zip(*[r["val"] for r in a["runs"]])) if max(v) < a["bigram"]]
    if every_seed:
        assert f"从第 {every_seed[0]:,} 步起三个种子都低于它" in text
    else:
        assert "没有三个种子都低于它" in text
    own = arm("largest", len(DATA["train_text"]))
    if min(min(r["val"]) for r in own["runs"]) >= own["bigram"]:  # on the page's own text, no seed crosses
        assert "哪一种都没越过二元线" in text


def test_memorising_is_said_where_the_held_out_characters_turn(site_dir):
    """The largest model on the page's text: the trained-on characters keep falling while every seed's held-out
    characters rise from their lowest point; the page gives the step and the range of the rise."""
    text = text_of(site_dir)
    own = arm("largest", len(DATA["train_text"]))
    trained = mean_curve({"runs": [{"val": r["trained"]} for r in own["runs"]]})
    rises = [r["heldout"][-1] - min(r["heldout"]) for r in own["runs"]]
    assert trained[-1] == min(trained) and min(rises) > 0  # what the sentence claims, from the export
    turns = sorted(LONGER["steps"][r["heldout"].index(min(r["heldout"]))] for r in own["runs"])
    assert all(t >= LONGER["steps"][-1] / 2 for t in turns)  # "在训练的后半段开始背"
    assert f"三个种子各自在第 {'、'.join(f'{t:,}' for t in turns)} 步最低" in text
    assert f"都比各自的最低点高出 {min(rises):.2f}～{max(rises):.2f}" in text


def test_the_held_out_passage_is_said_to_be_harder_in_itself(site_dir):
    text = text_of(site_dir)
    p = DATA["passages"]
    assert p["bigram_heldout"] > p["bigram_second_half"]  # the sentence's direction, from the export
    assert (f"在后一半上损失 {p['bigram_second_half']:.2f}，在这 {len(DATA['heldout_text']):,} 个字上 "
            f"{p['bigram_heldout']:.2f}") in text
