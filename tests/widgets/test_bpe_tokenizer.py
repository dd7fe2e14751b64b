"""bpe-tokenizer on our tokenizer's export (data/real-model/tokenizer/tokenizer.json): its heap-based
encoder against a plain BPE written here (lowest rank first, every occurrence left to right) and
against the lab's ids the export records (and Hugging Face `tokenizers` where installed); the merge
steps, the chips' bytes and fragments, bad input (emoji, characters never seen, a lone surrogate,
empty), and the hand-training steps of the lesson's worked example and exercise."""
import json
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import load_model  # noqa: E402

model = load_model("bpe-tokenizer")
DATA = json.loads((ROOT / "data/real-model/tokenizer/tokenizer.json").read_text(encoding="utf-8"))
POOL = "玄德曰：「吾乃中山靖王之後。」曹操孔明之乎者也大模型怎么看中文，。😀🙂abc \n龘𠀀é"


def plain_bpe(data, text):
    """Textbook BPE: while some adjacent pair has a merge, merge the lowest-ranked pair everywhere,
    left to right. An independent reading of the same merge table."""
    V = data["vocab_size"]
    rank = {(data["merges"][2 * r], data["merges"][2 * r + 1]): r for r in range(V - 256)}
    ids = [data["byte_ids"][b] for b in text.encode("utf-8")]
    while True:
        found = [rank[p] for p in zip(ids, ids[1:]) if p in rank]
        if not found:
            return ids
        r = min(found)
        pair = (data["merges"][2 * r], data["merges"][2 * r + 1])
        out, i = [], 0
        while i < len(ids):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
                out.append(256 + r)
                i += 2
            else:
                out.append(ids[i])
                i += 1
        ids = out


def texts(n, seed=0):
    rng = random.Random(seed)
    return ["".join(rng.choice(POOL) for _ in range(rng.randint(0, 40))) for _ in range(n)]


def test_the_heap_encoder_is_plain_bpe():
    for text in texts(200) + [s["text"] for s in DATA["samples"]]:
        assert model.encode(DATA, text) == plain_bpe(DATA, text), text


def test_the_encoder_gives_the_labs_ids():
    assert DATA["check"]["identical"] and DATA["check"]["tokens"] > 100_000  # the whole validation text, in the lab
    for s in DATA["samples"]:
        assert model.encode(DATA, s["text"]) == s["ids"], s["text"]


def test_the_encoder_gives_hugging_faces_ids():
    tokenizers = pytest.importorskip("tokenizers")
    alphabet = model.byte_alphabet()
    pieces = [""] * DATA["vocab_size"]
    for b, i in enumerate(DATA["byte_ids"]):
        pieces[i] = alphabet[b]
    merges = []
    for r in range(DATA["vocab_size"] - 256):
        a, b = DATA["merges"][2 * r], DATA["merges"][2 * r + 1]
        pieces[256 + r] = pieces[a] + pieces[b]
        merges.append((pieces[a], pieces[b]))
    tok = tokenizers.Tokenizer(tokenizers.models.BPE({p: i for i, p in enumerate(pieces)}, merges))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    for text in texts(100, seed=1):
        assert model.encode(DATA, text) == tok.encode(text).ids, text


def test_each_merge_step_joins_one_pair_and_keeps_the_bytes():
    text = "玄德曰：「大模型怎么看中文？」"
    raw = text.encode("utf-8")
    full = model.view({**model.PARAMS, "data": DATA, "text": text})
    total = full["slider"]["max"]
    assert len(full["chips"]) == len(raw) - total
    for steps in range(total + 1):
        s = model.view({**model.PARAMS, "data": DATA, "text": text, "steps": steps})
        assert len(s["chips"]) == len(raw) - steps
        assert bytes.fromhex("".join(c["hex"].replace(" ", "") for c in s["chips"])) == raw
    t = model.tables(DATA)
    toks, applied = model.run(t, raw)
    for k in (0, 1, total // 2, total):
        assert model.replay(t, raw, applied[:k]) == model.run(t, raw, k)[0]  # the slider's shortcut is the heap's state
    assert "第 1 次合并" in model.view({**model.PARAMS, "data": DATA, "text": text, "steps": 1})["out"]["step"]
    assert model.view({**model.PARAMS, "data": DATA, "text": text, "steps": 0})["out"]["step"].startswith("还没有合并")


def c_text(chip):
    return "".join(s["text"] if not s["part"] else ("\ufffd" if s["from"] == 1 else "\ufffd" * (s["to"] - s["from"] + 1))
                   for s in chip["segments"])


def test_tokens_read_as_python_decodes_them():
    for text in texts(50, seed=2):
        for row in model.tokens(DATA, text):
            piece = bytes.fromhex(row["hex"].replace(" ", ""))
            assert row["text"] == "".join(model.VISIBLE.get(c, c) for c in piece.decode("utf-8", errors="replace"))


def test_chips_mark_fragments_and_rebuild_the_text():
    text = "好😀𠀀，曹操"
    s = model.view({**model.PARAMS, "data": DATA, "text": text})
    ids = model.encode(DATA, text)
    assert [c["id"] for c in s["chips"]] == ids
    shown = ""
    for c in s["chips"]:
        piece = bytes.fromhex(c["hex"].replace(" ", ""))
        try:
            piece.decode("utf-8")
            whole = True
        except UnicodeDecodeError:
            whole = False
        assert c["fragment"] == (not whole)
        assert c_text(c) == piece.decode("utf-8", errors="replace")  # as the lab's export shows a token
        for seg in c["segments"]:  # a cut character shows in each of its tokens: count it at its first byte
            if not seg["part"] or seg["from"] == 1:
                shown += seg["text"]
    assert shown == text
    assert "😀" in s["out"]["summary"] and "字节片段" in s["out"]["summary"]


def test_bad_input_breaks_nothing():
    empty = model.view({**model.PARAMS, "data": DATA, "text": ""})
    assert empty["chips"] == [] and "为空" in empty["out"]["summary"] and empty["slider"]["max"] == 0
    lone = model.view({**model.PARAMS, "data": DATA, "text": "好\ud83d"})  # half an emoji pasted
    assert lone["params"]["text"] == "好\ufffd"
    long = model.view({**model.PARAMS, "data": DATA, "text": "之" * (model.MAX_CHARS + 50)})
    assert len(long["params"]["text"]) == model.MAX_CHARS and "只取前" in long["out"]["summary"]
    assert model.view({**model.PARAMS, "data": DATA, "text": "abc", "steps": 99})["params"]["steps"] == 0
    with pytest.raises(ValueError):
        model.view({**model.PARAMS})


def test_a_tokens_detail_spells_it_as_the_vocabulary_file_does():
    s = model.view({**model.PARAMS, "data": DATA, "text": "曰：", "selected": 0})
    d = s["detail"]
    assert d["hex"] == "e6 9b b0 ef bc 9a" or d["spelling"]  # one token or two, either way spelled
    comma = model.encode(DATA, "，")
    assert len(comma) == 1 and model.vocab_spelling(DATA, comma[0]) == "ï¼Į"  # GPT-2's byte alphabet
    assert model.byte_alphabet()[0x20] == "Ġ" and model.byte_alphabet()[ord("A")] == "A"
    frag = model.view({**model.PARAMS, "data": DATA, "text": "😀", "selected": 0})["detail"]
    assert "不是一个完整的字" in frag["note"] and frag["made"]


def test_hand_training_counts_pairs_and_breaks_ties_by_first_appearance():
    assert model.merge_once(list("哈哈哈")) == (["哈哈", "哈"], ("哈", "哈"), 2)
    assert model.merge_once(list("甲乙丙丁"))[1] == ("甲", "乙")  # all once: the first pair
    assert model.merge_once(["之"]) == (["之"], None, 0)
    steps = model.train_by_hand("玄德曰：「諾。」孔明曰：「諾。」玄德曰：「善。」", 4)
    assert [s["pair"] for s in steps] == [["曰", "："], ["曰：", "「"], ["。", "」"], ["玄", "德"]]
    assert [s["count"] for s in steps] == [3, 3, 3, 2]
    for s in steps:
        assert "".join(s["tokens"]) == "玄德曰：「諾。」孔明曰：「諾。」玄德曰：「善。」"


def test_every_vocabulary_entry_reads_as_python_decodes_it():
    fragments = 0
    for tid in range(DATA["vocab_size"]):
        info = model.token_info(DATA, tid)
        piece = bytes.fromhex(info["hex"].replace(" ", ""))
        try:
            text = piece.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        assert info["fragment"] == (text is None), tid
        fragments += text is None
        assert info["text"] == "".join(model.VISIBLE.get(c, c) for c in piece.decode("utf-8", errors="replace"))
        if tid >= 256:
            a, b = info["parts"]
            assert bytes.fromhex((model.token_info(DATA, a)["hex"] + " " + model.token_info(DATA, b)["hex"]).replace(" ", "")) == piece
    assert fragments == DATA["source"]["fragment_tokens"]


def test_has_no_token_means_not_in_the_vocabulary():
    """A character 「没有自己的 token」 only when its bytes are no vocabulary entry; one that has a token but
    lost bytes to a neighbour (「，」 + the first bytes of the next character) is told apart."""
    t = model.tables(DATA)
    entries = set(t["pieces"])
    st = model.stats(DATA, "聞達，王太守")
    assert "王" in st["split_chars"] and "王" in st["cut_chars"] and "王" not in st["missing_chars"]
    assert "王".encode("utf-8") in entries
    assert st["cut_sentences"][0].startswith("「王」在词表里有自己的 token，这里被前面的「，」带走了")
    v = model.view({"data": DATA, "text": "聞達，王太守"})
    assert "「王」在词表里没有" not in v["out"]["summary"] and "「王」在词表里有自己的 token" in v["out"]["summary"]
    for text in ("大模型怎么看中文？", "卻說姜維退兵屯於鍾提，魏兵屯於狄道城外。", "好😀𠀀"):
        st = model.stats(DATA, text)
        for c in st["missing_chars"]:
            assert c.encode("utf-8") not in entries
        for c in st["cut_chars"]:
            assert c.encode("utf-8") in entries
        assert sorted(st["missing_chars"] + st["cut_chars"]) == sorted(st["split_chars"])


def test_a_fragment_merge_is_shown_as_its_bytes():
    v = model.view({"data": DATA, "text": "玄德曰：「大模型怎么看中文？」", "steps": 1})
    assert "「ef」+「bc」→「ef bc」（这里「：」「？」的前两个字节）" in v["out"]["step"]
    assert "\ufffd" not in v["out"]["step"]
