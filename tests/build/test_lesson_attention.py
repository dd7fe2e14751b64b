"""C3 第 1 课 (注意力): the page's worked numbers are the toy model's, its claims about the cheap fixes
and the sqrt(d_k) saturation hold in the models, its 真模型 sentences say what the attention export
shows, the chapter is linked from C4 第 1 课, and the page has its contract's sections."""
import html as htmllib
import re

import numfmt
from support import ROOT

from course.checks import contract
from course.data import load_data
from course.facts import build_facts
from course.widgets import load_model


def page(site_dir):
    return (site_dir / "c3" / "l1-attention" / "index.html").read_text(encoding="utf-8")


def text_of(site_dir):
    body = re.sub(r'<span class="katex-mathml">.*?</span>', "", page(site_dir), flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", body))


def test_the_hand_computation_is_on_the_page(site_dir):
    text = text_of(site_dir)
    wk = load_model("attention-toy").worked("plain", "给了")
    assert f"{wk['weights'][0]:.3f}" == "0.849" and f"{wk['total']:.2f}" == "19.92"
    for x in wk["exps"]:
        assert f"{x:.2f}" in text
    assert "(0.849, 0.050, 0.000)" in text and "取回了 0.85 份小明、0.05 份苹果" in text
    for exercise in ("stable-softmax", "causal-head"):
        assert f'data-exercise="c3/l1/{exercise}"' in page(site_dir)


def test_the_cheap_fixes_fail_as_the_page_says(site_dir):
    text = text_of(site_dir)
    toy = load_model("attention-toy")
    _, ins = toy.sentence_tokens("inserted")
    pos = toy.weights(ins, 4, "position")[1]
    assert pos[1] == max(pos) and ins[1] == "昨天" and pos[0] == 0  # the fixed weights land on 昨天
    assert f"那 {pos[1]:.2f} 的权重落到了「昨天」上" in text
    qk = toy.weights(ins, 4, "qk")[1]
    assert qk[0] == max(qk) and f"照样把 {qk[0]:.3f} 的权重给了小明" in text


def test_the_saturation_numbers_are_the_widgets(site_dir):
    text = text_of(site_dir)
    both = load_model("softmax-scale").summary(64, 1)
    raw, scaled = both[False], both[True]
    assert raw["top"] > 0.8 > 0.5 > scaled["top"]
    assert f"最大的权重平均 {raw['top']:.3f}" in text and f"最大的权重 {scaled['top']:.3f}" in text


def test_the_real_model_section_reads_the_export(site_dir):
    f = build_facts(load_data(ROOT / "data", ROOT))["attention"]
    text = text_of(site_dir)
    if f is None:
        assert "它的头在看哪里" in text and "按规则的名字" not in text
        return
    assert f"{f['corpus']['measured_tokens']:,}" in text
    for h in f["heads"]:
        assert f"| {h['layer']} · {h['head']} |" not in text  # the table is rendered, not left as Markdown
    named = [h for h in f["heads"] if h["name"]]
    assert f["named_count"] == len(named)
    for m, rows in f["named"].items():
        for r in rows:  # every named head passes the rule the page states
            assert r["share"] >= f["rule"]["share"] and r["ratio"] >= f["rule"]["ratio"]
            assert f"第 {r['layer']} 层第 {r['head']} 个头（{numfmt.pct(r['share'])}" in text
    assert f["command"].startswith("python -m lab attention") and f["command"] in text


def test_chapter_c3_is_linked_and_outlined(site_dir):
    c4 = (site_dir / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../c3/l1-attention/"' in c4
    home = (site_dir / "index.html").read_text(encoding="utf-8")
    for title in ("多头与位置：RoPE", "归纳头与上下文学习", "KV 缓存"):
        assert title in home


def test_the_page_has_its_sections(site_dir):
    src = (ROOT / "lessons" / "c3" / "l1-attention.md").read_text(encoding="utf-8")
    assert contract is not None and "## 真模型" in src
    for mark in "①②③④⑤⑥⑦⑧⑨⑩":
        assert f"## {mark}" in src


def protocol(base, other, band):
    """The seeds protocol written out again: base, other {seed: loss} -> (pairs, mean gap, measured)."""
    diffs = [other[s] - base[s] for s in sorted(base) if s in other]
    gap = sum(diffs) / len(diffs)
    if len(diffs) == 1:
        return 1, gap, abs(gap) >= 5 * band
    same = all(d > 0 for d in diffs) or all(d < 0 for d in diffs)
    return len(diffs), gap, same and abs(gap) > band


def test_the_control_is_read_by_the_seeds_protocol(site_dir):
    """真模型's control (attention replaced by the prefix average): the final verdict, every evaluation's
    row and the far seed's sentence, recomputed from attention.json's control block alone."""
    doc = load_data(ROOT / "data", ROOT)["real-model/attention/attention"]
    text = text_of(site_dir)
    if "control" not in doc:
        assert "对照：把注意力换成前缀平均" not in text
        return
    base, ctl = doc["control"]["baseline"], doc["control"]["control"]
    b, c = dict(zip(base["seeds"], base["val_losses"])), dict(zip(ctl["seeds"], ctl["val_losses"]))
    band = max(base["val_losses"]) - min(base["val_losses"])
    n, gap, measured = protocol(b, c, band)
    paired = sum(b[s] for s in c) / len(c)
    assert (f"训练结束时，对照的验证损失平均是 {sum(c.values()) / len(c):.3f}，同样种子的基线平均是 {paired:.3f}；") in text
    diffs = "、".join(f"种子 {s_} {'+' if c[s_] > b[s_] else '−'}{abs(c[s_] - b[s_]):.3f}" for s_ in sorted(c))
    assert f"逐对的差是{diffs}。" in text
    assert f"平均{'高' if gap > 0 else '低'} {abs(gap):.3f}" in text or f"高 {abs(gap):.3f}" in text
    assert ("算测到了" in text.split("逐对的差是")[1].split("训练过程中")[0]) == measured
    assert f"（{ctl['params']:,} 个参数，基线 {base['params']:,} 个）" in text
    for i, row in enumerate(ctl["histories"][0]):
        at = [h[i]["val_loss"] for h in base["histories"]]
        hb = {s: h[i]["val_loss"] for s, h in zip(base["seeds"], base["histories"])}
        hc = {s: h[i]["val_loss"] for s, h in zip(ctl["seeds"], ctl["histories"])}
        _, g, _ = protocol(hb, hc, max(at) - min(at))
        cells = [re.sub(r"<[^>]+>", "", x).strip() for x in re.findall(r"<td[^>]*>(.*?)</td>", page(site_dir), flags=re.S)]
        k = cells.index(f"{row['step']:,}")
        assert cells[k + 1] == f"{'+' if g > 0 else '−'}{abs(g):.3f}" and cells[k + 2] == f"{max(at) - min(at):.3f}", row
    ranked = sorted(zip(base["val_losses"], base["seeds"]))
    far, rest = ranked[-1], ranked[:-1]
    if not measured and far[0] - rest[-1][0] > 2 * (rest[-1][0] - rest[0][0]):
        spread = rest[-1][0] - rest[0][0]
        assert f"基线的种子 {far[1]} 前几百步落在后面，训练结束时是 {far[0]:.3f}，和对照各种子的 {min(c.values()):.3f}–{max(c.values()):.3f} 差不多" in text
        assert f"只看其余 {len(rest)} 个种子，带只有 {spread:.3f}。" in text and "倍。规则不因" not in text
        assert (f"把带撑宽的种子 {far[1]} 不在配对之中" in text) == (far[1] not in c)


def test_the_attention_map_opens_on_what_the_previous_token_head_usually_does(site_dir):
    """The default query is one whose largest weight in the previous-token head is on the token
    before it (the sentence-final punctuation the widget used to open on was the head's exception)."""
    facts = build_facts(load_data(ROOT / "data", ROOT))["attention"]
    q, b = facts["open_query"], facts["best"]["previous"]
    row = facts["data"]["passages"][0]["weights"][b["layer"] - 1][b["head"] - 1][q]
    assert q >= 1 and row.index(max(row)) == q - 1
    token = facts["data"]["passages"][0]["tokens"][q]["text"]
    assert f"查询是第一段里的「{token}」：它把最多的权重给了紧挨着的前一个 token" in text_of(site_dir)


def test_the_page_says_which_heads_it_cannot_tell_from_averaging(site_dir):
    """No sentence says every trained head is not averaging; the heads whose every table column is
    within 1 point (and 2 tokens back) of the prefix average are counted, by a rule written here again."""
    doc = load_data(ROOT / "data", ROOT)["real-model/attention/attention"]
    ms = doc["measures"]
    blind = ms["prefix_average"]
    near = [h for h in ms["heads"] if all(abs(h[m] - blind[m]) < 0.01 for m in ("previous", "same_token", "punctuation", "first"))
            and abs(h["distance"] - blind["distance"]) < 2]
    text = text_of(site_dir)
    assert "训练出来的头不是在平均" not in text
    if near:
        names = "、".join(f"{h['layer']} · {h['head']}" for h in near)
        assert f"其中 {len(near)} 个头（{names}）在表里每一列的份额都和前缀平均相差不到 1 个百分点" in text


def test_the_scores_at_initialisation_follow_from_the_model_card(site_dir):
    """The √d_k section's numbers for our own init: RMSNorm'd inputs, N(0, init_std^2) weights."""
    data = load_data(ROOT / "data", ROOT)
    arch, hd = data["real-model/model-card"]["architecture"], data["real-model/attention/attention"]["model_config"]["head_dim"]
    var = arch["d_model"] * arch["init_std"] ** 2
    text = text_of(site_dir)
    assert f"不缩放的分数，标准差约 {hd ** 0.5 * var:.2f}" in text and f"之后约 {var:.2f}" in text


def test_the_previous_token_heads_exceptions_are_counted_from_the_passages(site_dir):
    facts = build_facts(load_data(ROOT / "data", ROOT))["attention"]
    b = facts["best"]["previous"]
    shares = []
    for p in facts["data"]["passages"]:
        last = p["weights"][b["layer"] - 1][b["head"] - 1][-1]
        shares.append(numfmt.pct(last[-2] / 1000, 0))
    assert f"它给前一个 token 的只有 {'、'.join(shares)}" in text_of(site_dir)
