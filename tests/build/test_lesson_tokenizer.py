"""C1 第 1 课 (分词): every figure the page prints about our tokenizer and the vocabulary sweep is the
export's (recomputed here from data/real-model/tokenizer/ and the model card, not read from facts), the
worked example is a plain pair count, the vocabulary file's spelling is GPT-2's byte alphabet written out
here, the published vocabularies are data/vocabularies.json's, the exercises and the widget are on the
page, and the page has its contract's sections."""
import html as htmllib
import json
import re
from collections import Counter

from support import ROOT

from course.checks import contract
from course.widgets import load_model

SWEEP = json.loads((ROOT / "data/real-model/tokenizer/sweep.json").read_text(encoding="utf-8"))
ENC = json.loads((ROOT / "data/real-model/tokenizer/tokenizer.json").read_text(encoding="utf-8"))
CARD = json.loads((ROOT / "data/real-model/model-card.json").read_text(encoding="utf-8"))
VOCABS = json.loads((ROOT / "data/vocabularies.json").read_text(encoding="utf-8"))
NEIGHBOURS = ROOT / "data/real-model/tokenizer/neighbours.json"


def page(site_dir):
    return (site_dir / "c1" / "l1-tokenizer" / "index.html").read_text(encoding="utf-8")


def text_of(site_dir):
    body = re.sub(r'<span class="katex-mathml">.*?</span>', "", page(site_dir), flags=re.S)
    body = re.sub(r'<div class="cw-widget".*?<p class="cw-sr"[^>]*></p>\s*</div>', "", body, flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", body))


def rows_of_table(site_dir, first_header):
    """The body rows of the table whose first header cell starts with first_header, as cell texts."""
    html = page(site_dir)
    for table in re.findall(r"<table>(.*?)</table>", html, re.S):
        head = re.search(r"<th(?:\s[^>]*)?>(.*?)</th>", table, re.S)
        if head and htmllib.unescape(re.sub(r"<[^>]+>", "", head.group(1))).strip().startswith(first_header):
            body = re.search(r"<tbody>(.*?)</tbody>", table, re.S).group(1)
            return [[htmllib.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
                    for r in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
    raise AssertionError(f"no table headed {first_header!r}")


def gpt2_alphabet():
    """GPT-2's byte -> printable character table, written out here."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    extra = [b for b in range(256) if b not in keep]
    table = {b: chr(b) for b in keep}
    table.update({b: chr(256 + n) for n, b in enumerate(extra)})
    return table


def test_the_sweep_table_is_the_export(site_dir):
    rows = rows_of_table(site_dir, "词表大小")
    bpe = SWEEP["rows"]
    assert len(rows) == len(bpe) + 2  # every size, then the two character-level vocabularies
    d = CARD["architecture"]["d_model"]
    for cells, r in zip(rows, bpe):
        per_char = r["val_tokens"] / r["val_chars"]
        assert cells[0].startswith(f"{r['vocab_size']:,}")
        assert cells[1] == f"{per_char:.3f}"
        assert cells[2] == f"{SWEEP['window'] / per_char:.0f}"
        assert cells[3] == f"{r['fragment_tokens']:,}"
        assert cells[4] == f"{100 * r['single_token_chars'] / r['distinct_chars']:.1f}%"
        assert cells[6].startswith(f"{r['vocab_size'] * d:,}")
    ours = [c for c, r in zip(rows, bpe) if r["vocab_size"] == CARD["architecture"]["vocab_size"]]
    assert len(ours) == 1 and "我们的" in ours[0][0]
    tiny, full = rows[-2], rows[-1]
    chars = {c["name"]: c for c in SWEEP["characters"]}
    assert f"{100 * chars['tiny_gpt']['unk_share']:.1f}%" in tiny[1]
    assert f"{chars['all_train']['vocab_size']:,}" in full[0]


def test_our_tokenizer_is_the_models(site_dir):
    text = text_of(site_dir)
    ours = next(r for r in SWEEP["rows"] if r["is_ours"])
    split = CARD["split"]
    assert ours["fragment_tokens"] == CARD["tokenizer"]["fragment_tokens"]
    train = split["train_tokens"] / split["train_chars"]
    val = split["val_tokens"] / split["val_chars"]
    assert f"把训练文字切成每个字符 {train:.3f} 个 token，把没见过的验证文字切成每个字符 {val:.3f} 个" in text
    assert f"其中 {CARD['tokenizer']['fragment_tokens']:,} 个是字节片段" in text
    # the page's encoder was checked on the whole validation split, token for token
    assert ENC["check"]["identical"] and ENC["check"]["tokens"] == split["val_tokens"]
    assert f"全部 {split['val_chars']:,} 个验证字符上逐个 token 比对过" in text


def test_the_worked_example_is_a_plain_pair_count(site_dir):
    text = text_of(site_dir)
    toy = "玄德曰：「諾。」孔明曰：「諾。」玄德曰：「善。」"
    tokens = list(toy)
    counts = Counter(zip(tokens, tokens[1:]))
    assert max(counts.values()) == 3 and counts[("曰", "：")] == 3
    rows = rows_of_table(site_dir, "第几次合并")
    assert rows[0][-1] == str(len(toy))
    pairs = []
    for n, cells in enumerate(rows[1:], 1):
        counts = Counter(zip(tokens, tokens[1:]))
        best = max(counts.values())
        pair = next(p for p in zip(tokens, tokens[1:]) if counts[p] == best)  # first in the text among the most
        assert cells[1] == f"「{pair[0]}」+「{pair[1]}」" and cells[2] == str(best)
        merged, i = [], 0
        while i < len(tokens):
            if tuple(tokens[i:i + 2]) == pair:
                merged.append(tokens[i] + tokens[i + 1])
                i += 2
            else:
                merged.append(tokens[i])
                i += 1
        tokens = merged
        pairs.append(pair)
        assert cells[4] == str(len(tokens))
    new = list("孔明曰：「善。」")  # the page encodes a new sentence with the table: each merge in order
    for pair in pairs:
        out, i = [], 0
        while i < len(new):
            if tuple(new[i:i + 2]) == pair:
                out.append(new[i] + new[i + 1])
                i += 2
            else:
                out.append(new[i])
                i += 1
        new = out
    assert f"结果是 {' '.join(new)}。" in text


def test_the_sample_sentence_is_counted_with_our_tokenizer(site_dir):
    text = text_of(site_dir)
    bt = load_model("bpe-tokenizer")
    sentence = SWEEP["model_card"]["sample"]["text"]
    ids = bt.encode(ENC, sentence)
    ours = next(r for r in SWEEP["rows"] if r["is_ours"])
    assert len(ids) == len(ours["sample"])  # the page's encoder and the lab's tokenizer agree
    assert next(s["ids"] for s in ENC["samples"] if s["text"] == sentence) == ids
    assert f"它被切成 {len(ids)} 个 token" in text
    assert f"每个字符 {len(ids) / len(sentence):.3f} 个 token" in text
    rows = rows_of_table(site_dir, "词表大小")[len(SWEEP["rows"]) + 2:] or rows_of_table(site_dir, "词表大小")
    assert rows  # the per-size split table follows the sweep table
    for r in SWEEP["rows"]:
        assert " · ".join(t["text"] for t in r["sample"]) in text


def test_the_vocabulary_file_spelling_is_gpt2s_byte_alphabet(site_dir):
    text = text_of(site_dir)
    alphabet = gpt2_alphabet()
    rows = rows_of_table(site_dir, "id")
    pieces = {}
    for b, i in enumerate(ENC["byte_ids"]):
        pieces[i] = bytes([b])
    for r in range(len(ENC["merges"]) // 2):
        pieces[256 + r] = pieces[ENC["merges"][2 * r]] + pieces[ENC["merges"][2 * r + 1]]
    for cells in rows:
        piece = pieces[int(cells[0])]
        assert cells[1] == "".join(alphabet[b] for b in piece)
        assert cells[2] == " ".join(f"{b:02x}" for b in piece)
    comma = "，".encode("utf-8")
    assert f"在词表文件里写作 {''.join(alphabet[b] for b in comma)}" in text


def test_the_published_vocabularies_are_the_data_files(site_dir):
    text = text_of(site_dir)
    llama = VOCABS["llama3"]
    assert f"Llama 3 是 {llama['vocab']:,}" in text
    assert f"从 {llama['english_chars_per_token_llama2']:.2f} 个字符提高到 {llama['english_chars_per_token']:.2f} 个" in text
    assert f"MiniMind 只用 {VOCABS['minimind']['vocab']:,}" in text
    anchor = json.loads((ROOT / "data/anchor-model.json").read_text(encoding="utf-8"))["config"]["text_config"]
    assert f"是 {anchor['vocab_size']:,}" in text


def test_the_neighbours_are_the_exports(site_dir):
    text = text_of(site_dir)
    if not NEIGHBOURS.exists():
        assert "训练后的词嵌入" not in text
        return
    doc = json.loads(NEIGHBOURS.read_text(encoding="utf-8"))
    rows = rows_of_table(site_dir, "token")
    singles = [q for q in doc["queries"] if q["single"]]
    assert [r[0] for r in rows] == ["「" + q["text"] + "」" for q in singles]
    bt = load_model("bpe-tokenizer")
    for cells, q in zip(rows, singles):
        for n, shown in zip(q["neighbours"], cells[1].split("、")):
            piece = bytes.fromhex(bt.token_info(ENC, n["id"])["hex"].replace(" ", ""))
            alone = piece.decode("utf-8", errors="replace").replace("\n", "↵")
            assert shown == f"「{alone}」{n['cosine']:.2f}"
    assert f"种子 {doc['run']['seed']}" in text
    st = doc.get("stats")
    if st:  # the cosine scale over seen tokens, the never-seen rows' norms, the chance rate
        seen = st["pairs_seen"]["trained"]
        assert f"中位数 {seen['median']:.2f}，99% 的对低于 {seen['p99']:.2f}" in text
        never = st["norms"]["never_seen"]
        assert f"从训练前平均 {never['init_norm']:.2f} 变成 {never['trained_norm']:.2f}" in text
        assert f"高于 0.9 的有 {st['tail']['pairs_over_0_9']:,} 对" in text
        top = max(st["book_shares"].values())
        assert f"{top * 100:.1f}% 标的是" in text
    if doc.get("check"):
        assert f"种子 {doc['check']['seed']}（验证损失 {doc['check']['val_loss']:.3f}）" in text
    assert "意思相近、用法相近的 token 在嵌入表里靠到了一起" not in text
    assert "很少被更新：" not in text and "它们那一行在训练里很少被更新" not in text


def test_cut_characters_are_told_apart_from_missing_ones(site_dir):
    """The page's 「没有自己的 token」 is vocabulary membership; in-vocabulary characters cut in context are
    a second clause; the shares in context and in the vocabulary are both the export's."""
    text = text_of(site_dir)
    bt = load_model("bpe-tokenizer")
    t = bt.tables(ENC)
    for c in bt.stats(ENC, SWEEP["model_card"]["sample"]["text"])["missing_chars"]:
        assert c.encode("utf-8") not in t["entries"]
    assert "「王」在词表里有自己的 token，这里被前面的「，」带走了" in text
    ours = next(r for r in SWEEP["rows"] if r["is_ours"])
    if "whole_occurrence_share" in ours:
        assert f"在句子里真正完整的是 {ours['whole_occurrence_share'] * 100:.1f}%" in text
        assert f"另有 {ours['cut_single_occurrences']:,} 次" in text
    # the merged fragments by kind, recomputed from the encoder
    half = punct = word = 0
    for tid in range(256, t["V"]):
        p = t["pieces"][tid]
        if bt.is_text(p):
            continue
        shown = p.decode("utf-8", errors="replace")
        whole = shown.replace("\ufffd", "")
        if not whole:
            half += 1
        elif all(not ch.isalnum() for ch in whole) and not shown.startswith("\ufffd"):
            punct += 1
        else:
            word += 1
    assert half + punct + word == next(r for r in SWEEP["rows"] if r["is_ours"])["fragment_tokens"] - 128
    assert f"{half:,} 个是一个字的前几个字节（半个字），{punct:,} 个是" in text
    assert f"有 {punct} 个条目解出来看着一样" in text
    assert "简体字、英文、表情符号，这张表都没有" not in text
    assert "简体现代文" not in text and "大一些更划算" not in text


def test_the_exercises_and_the_widget_are_on_the_page(site_dir):
    html = page(site_dir)
    for exercise in ("merge-step", "decode-spelling"):
        assert f'data-exercise="c1/l1/{exercise}"' in html
    assert 'data-widget="bpe-tokenizer"' in html


def test_sections_follow_the_contract(site_dir):
    headings = re.findall(r"<h2 id=[^>]*>([^<]+)", page(site_dir))
    marks = contract({"sections": ["真模型"]})
    assert [next(m for m in marks if h.startswith(m)) for h in headings] == marks
