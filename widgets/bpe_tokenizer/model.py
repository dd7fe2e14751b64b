"""bpe-tokenizer: our model's tokenizer in the page. Type Chinese, see its tokens, ids and bytes.

Data: data/real-model/tokenizer/tokenizer.json (`python -m lab tokenizer`), the lab's byte-level BPE
(2,048 tokens, trained by Hugging Face `tokenizers` on the training chapters, no regex pre-split)
in compact form: `byte_ids` (the id of each byte value 0..255: ids 0..255 are the 256 bytes in the
order of GPT-2's printable byte alphabet) and `merges`, flat ([a0, b0, a1, b1, ...]): merge r joins
tokens a_r and b_r into token 256 + r.

Encoding is the lab's, rule for rule: the text's UTF-8 bytes, one token each, then merges applied
lowest rank first, and among equal ranks leftmost first, until no adjacent pair has a merge (what
`tokenizers`' BPE model does to a word; with no pre-split the whole text is one word). A binary heap
of our own keeps it fast on a whole book (the lab's export checks this encoder against the lab's ids
on the full validation text), and `steps` stops it after that many merges, so the page can show the
bytes joining one merge at a time. Standard library only, in the subset MicroPython shares.

Functions a lesson can quote (model("bpe-tokenizer")), `data` the export:
    encode(data, text) -> the token ids
    tokens(data, text) -> [{"id", "hex", "text", "fragment", "chars"}] per token
    stats(data, text) -> {"chars", "bytes", "tokens", "fragments", "per_char", "split_chars",
                          "missing_chars", "cut_chars"}
        split_chars: every character the tokens cut; missing_chars: those with no vocabulary entry of
        their own (their UTF-8 bytes are not a token); cut_chars: those that have one but are cut here
        anyway (a merge across the character boundary took some of their bytes, e.g. 「，」 + the first
        bytes of the next character)
    vocab_spelling(data, id) -> the token as a vocabulary file spells it (GPT-2's byte alphabet, "ï¼Į")
"""
from numfmt import num

PARAMS = {"data": None, "text": None, "steps": None, "selected": None}
DEFAULT_TEXT = "玄德曰：「大模型怎么看中文？」"
MAX_CHARS = 120  # the widget encodes at most this many characters (a phone stays within 100 ms a call)
EXAMPLES = (  # (label, text): what the buttons type
    ("三国里的一句", "玄德曰：「吾乃中山靖王之後。」"),
    ("现代词", "大模型怎么看中文？"),
    ("英文", "The model reads tokens."),
    ("表情符号", "好😀"),
    ("生僻字", "𠀀"),
)
VISIBLE = {"\n": "↵", " ": "␣", "\u3000": "␣", "\t": "⇥"}  # whitespace a chip could not show
HEX = "0123456789abcdef"


# --- the tokenizer's tables ----------------------------------------------------------------------

_TABLES = [None, None]  # (merges list it was built from, tables): the page passes the same data each call


def tables(data):
    """Everything encoding needs, built once per export: pair -> rank, each token's bytes."""
    if data is None:
        raise ValueError("bpe-tokenizer needs data: the parsed data/real-model/tokenizer/tokenizer.json "
                         "(embed it as widget(\"bpe-tokenizer\", data=...))")
    merges = data["merges"]
    if _TABLES[0] is not None and _TABLES[0] == merges:
        return _TABLES[1]
    byte_ids = data["byte_ids"]
    V = 256 + len(merges) // 2
    pieces = [b""] * V
    for b in range(256):
        pieces[byte_ids[b]] = bytes([b])
    ranks = {}
    for r in range(len(merges) // 2):
        a, b = merges[2 * r], merges[2 * r + 1]
        ranks[a * V + b] = r
        pieces[256 + r] = pieces[a] + pieces[b]
    entries = set()
    for p in pieces:
        entries.add(p)
    t = {"V": V, "ranks": ranks, "pieces": pieces, "byte_ids": byte_ids, "merges": merges, "entries": entries}
    _TABLES[0] = merges
    _TABLES[1] = t
    return t


# --- a binary heap of ints (MicroPython has no heapq) ----------------------------------------------


def _push(heap, x):
    heap.append(x)
    i = len(heap) - 1
    while i > 0:
        p = (i - 1) >> 1
        if heap[p] <= x:
            break
        heap[i] = heap[p]
        i = p
    heap[i] = x


def _pop(heap):
    last = heap.pop()
    if not heap:
        return last
    top = heap[0]
    n = len(heap)
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and heap[c + 1] < heap[c]:
            c += 1
        if heap[c] >= last:
            break
        heap[i] = heap[c]
        i = c
    heap[i] = last
    return top


# --- encoding ------------------------------------------------------------------------------------


def clean(text):
    """The text with lone surrogates (half an emoji pasted) replaced by U+FFFD, so it has UTF-8 bytes."""
    if text is None:
        return ""
    out = []
    for c in text:
        o = ord(c)
        out.append("\ufffd" if 0xD800 <= o <= 0xDFFF else c)
    return "".join(out)


def run(t, raw, limit=None):
    """BPE over the bytes `raw`: (tokens as (start byte, id) in order, merges applied as (rank, start)).
    Stops after `limit` merges when given. Each heap key is rank * n + start, so the lowest rank
    comes first and, among equal ranks, the leftmost."""
    n = len(raw)
    byte_ids, ranks, V = t["byte_ids"], t["ranks"], t["V"]
    ids = [byte_ids[b] for b in raw]
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    heap = []
    for i in range(n - 1):
        r = ranks.get(ids[i] * V + ids[i + 1])
        if r is not None:
            _push(heap, r * n + i)
    applied = []
    while heap and (limit is None or len(applied) < limit):
        key = _pop(heap)
        r = key // n
        i = key - r * n
        if ids[i] < 0:
            continue  # merged into its left neighbour
        j = nxt[i]
        if j >= n or ranks.get(ids[i] * V + ids[j]) != r:
            continue  # an entry the merges since have made stale
        ids[i] = 256 + r
        ids[j] = -1
        k = nxt[j]
        nxt[i] = k
        if k < n:
            prv[k] = i
        applied.append((r, i))
        p = prv[i]
        if p >= 0:
            r2 = ranks.get(ids[p] * V + ids[i])
            if r2 is not None:
                _push(heap, r2 * n + p)
        if k < n:
            r2 = ranks.get(ids[i] * V + ids[k])
            if r2 is not None:
                _push(heap, r2 * n + i)
    out = []
    i = 0
    while i < n:
        out.append((i, ids[i]))
        i = nxt[i]
    return out, applied


def replay(t, raw, applied):
    """The tokens after the merges `applied` (as run() recorded them), without the heap: each merge
    joins the token at its start with the one after it. Tokens as (start byte, id)."""
    n = len(raw)
    byte_ids = t["byte_ids"]
    ids = [byte_ids[b] for b in raw]
    nxt = list(range(1, n + 1))
    for r, i in applied:
        j = nxt[i]
        ids[i] = 256 + r
        nxt[i] = nxt[j]
    out = []
    i = 0
    while i < n:
        out.append((i, ids[i]))
        i = nxt[i]
    return out


_LAST = [None, None, None]  # (tables, raw bytes, run's result): a slider move re-uses the text's run


def full_run(t, raw):
    if _LAST[0] is t and _LAST[1] == raw:
        return _LAST[2]
    result = run(t, raw)
    _LAST[0] = t
    _LAST[1] = raw
    _LAST[2] = result
    return result


def encode(data, text):
    """The token ids of `text`, as the lab's tokenizer gives them."""
    toks, _ = run(tables(data), clean(text).encode("utf-8"))
    return [i for _, i in toks]


def hex_of(b):
    """hex_of(b"\\xe5\\xa4") -> 'e5 a4'"""
    return " ".join(HEX[x >> 4] + HEX[x & 15] for x in b)


def utf8_length(first):
    """How many bytes the character starting with byte `first` has (0: not a first byte)."""
    if first < 0x80:
        return 1
    if first < 0xC0:
        return 0
    if first < 0xE0:
        return 2
    if first < 0xF0:
        return 3
    return 4


def char_starts(text):
    """[(start byte, character)] of text, in order."""
    out = []
    at = 0
    for c in text:
        out.append((at, c))
        at += len(c.encode("utf-8"))
    return out


def show(c):
    return VISIBLE.get(c, c)


def describe(t, text, toks):
    """Each token with its id, bytes and the characters it holds: whole ones, or a part of one
    (a byte fragment: the token's bytes cut a character)."""
    starts = char_starts(text)
    ends = [s + len(c.encode("utf-8")) for s, c in starts]
    rows = []
    ci = 0
    for k in range(len(toks)):
        start, tid = toks[k]
        piece = t["pieces"][tid]
        stop = start + len(piece)
        while ci < len(starts) and ends[ci] <= start:
            ci += 1
        segs = []
        cj = ci
        whole = True
        while cj < len(starts) and starts[cj][0] < stop:
            s, c = starts[cj]
            e = ends[cj]
            if s >= start and e <= stop:
                segs.append({"text": show(c), "part": False})
            else:
                whole = False
                lo = (start if start > s else s) - s + 1
                hi = (stop if stop < e else e) - s
                segs.append({"text": show(c), "part": True, "of": e - s, "from": lo, "to": hi})
            cj += 1
        rows.append({"id": tid, "hex": hex_of(piece), "segments": segs, "fragment": not whole,
                     "text": "".join(s["text"] if not s["part"] else _replacement(s) for s in segs)})
    return rows


def _replacement(seg):
    """What UTF-8 decoding with errors="replace" writes for a cut character's bytes: one U+FFFD for a
    first byte with some of its continuation bytes, one per byte for continuation bytes alone."""
    if seg["from"] == 1:
        return "\ufffd"
    return "\ufffd" * (seg["to"] - seg["from"] + 1)


def tokens(data, text):
    t = tables(data)
    text = clean(text)
    toks, _ = run(t, text.encode("utf-8"))
    return describe(t, text, toks)


def split_chars(rows):
    """The characters the tokens cut into byte fragments, each once, in order."""
    seen = []
    for r in rows:
        for s in r["segments"]:
            if s["part"] and s["text"] not in seen:
                seen.append(s["text"])
    return seen


def has_token(t, c):
    """Whether character c is a vocabulary entry of its own (its UTF-8 bytes are one token)."""
    return clean(c).encode("utf-8") in t["entries"]


def _seg_text(s):
    return _replacement(s) if s["part"] else s["text"]


def cuts(t, rows):
    """The cut characters, each once, in order: {"char", "own" (has a token of its own), "by" (for an own
    character: the neighbouring text whose token took some of its bytes), "side" ("前面"/"后面"),
    "n" (how many of its bytes went with it)}."""
    out = []
    seen = []
    for k in range(len(rows)):
        segs = rows[k]["segments"]
        for j in range(len(segs)):
            s = segs[j]
            if not s["part"] or s["text"] in seen:
                continue
            seen.append(s["text"])
            c = {"char": s["text"], "own": s["text"] in VISIBLE.values() or has_token(t, s["text"]), "by": "", "side": "", "n": 0}
            if c["own"]:
                if s["from"] == 1 and j > 0:
                    c["by"] = "".join(_seg_text(x) for x in segs[:j])
                    c["side"] = "前面"
                    c["n"] = s["to"]
                else:
                    # the token that holds its last byte reaches into the next character
                    for r in rows[k:]:
                        rs = r["segments"]
                        hit = [i for i in range(len(rs)) if rs[i]["part"] and rs[i]["text"] == s["text"]
                               and rs[i]["to"] == rs[i]["of"]]
                        if hit:
                            i = hit[0]
                            c["by"] = "".join(_seg_text(x) for x in rs[i + 1:])
                            c["side"] = "后面" if c["by"] else ""
                            c["n"] = rs[i]["to"] - rs[i]["from"] + 1
                            break
            out.append(c)
    return out


NUMBERS = ("零", "一", "两", "三", "四")


def cut_sentence(c):
    """One cut character that has a token of its own, in words."""
    if not c["side"]:
        return "「" + c["char"] + "」在词表里有自己的 token，这里却被切开了"
    part = ("第一个字节" if c["n"] == 1 else "前" + NUMBERS[c["n"]] + "个字节") if c["side"] == "前面" else (
        "最后一个字节" if c["n"] == 1 else "后" + NUMBERS[c["n"]] + "个字节")
    return ("「" + c["char"] + "」在词表里有自己的 token，这里被" + c["side"] + "的「" + c["by"] + "」带走了" + part)


def cut_summary(cs, most=8):
    """The widget's sentence about the cut characters: the ones missing from the vocabulary, then the ones
    that have a token but lost bytes to a neighbour here."""
    missing = [c["char"] for c in cs if not c["own"]]
    own = [c for c in cs if c["own"]]
    parts = []
    if missing:
        parts.append("、".join("「" + c + "」" for c in missing[:most]) + ("等" if len(missing) > most else "")
                     + "在词表里没有自己的 token，被切成了字节")
    for c in own[:3]:
        parts.append(cut_sentence(c))
    if len(own) > 3:
        parts.append("还有 " + str(len(own) - 3) + " 个字也是这样")
    return "；".join(parts) + "。"


def stats(data, text):
    text = clean(text)
    rows = tokens(data, text)
    n_chars = len(text)
    cs = cuts(tables(data), rows)
    return {"chars": n_chars, "bytes": len(text.encode("utf-8")), "tokens": len(rows),
            "fragments": sum(1 for r in rows if r["fragment"]),
            "per_char": len(rows) / n_chars if n_chars else 0.0, "split_chars": split_chars(rows),
            "missing_chars": [c["char"] for c in cs if not c["own"]], "cut_chars": [c["char"] for c in cs if c["own"]],
            "cut_sentences": [cut_sentence(c) for c in cs if c["own"]]}


def byte_alphabet():
    """GPT-2's byte -> printable character table (as lab/prepare.py's bytes_to_unicode): what a
    byte-level vocabulary file writes for each byte. byte_alphabet()[0x20] -> 'Ġ'"""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    table = [""] * 256
    for b in keep:
        table[b] = chr(b)
    n = 0
    for b in range(256):
        if not table[b]:
            table[b] = chr(256 + n)
            n += 1
    return table


_ALPHABET = byte_alphabet()


def vocab_spelling(data, tid):
    """The token as tokenizer.json's vocabulary spells it. vocab_spelling(data, id of '，') -> 'ï¼Į'"""
    return "".join(_ALPHABET[b] for b in tables(data)["pieces"][tid])


def token_info(data, tid):
    """One vocabulary entry: {"id", "spelling" (as tokenizer.json writes it), "hex", "text" (U+FFFD where
    its bytes cut a character), "fragment", "parts" (the two ids merged into it, [] for a byte)}."""
    t = tables(data)
    piece = t["pieces"][tid]
    parts = merge_parts(t, tid)
    text = piece_text(t, tid)
    return {"id": tid, "spelling": "".join(_ALPHABET[b] for b in piece), "hex": hex_of(piece), "text": text,
            "fragment": not is_text(piece), "parts": [] if parts is None else [parts[0], parts[1]]}


def merge_parts(t, tid):
    """(a, b) for a merged token, None for a byte."""
    if tid < 256:
        return None
    r = tid - 256
    return t["merges"][2 * r], t["merges"][2 * r + 1]


def piece_text(t, tid):
    """A token alone, as text: what UTF-8 decoding with errors="replace" gives (U+FFFD where its bytes
    cut a character: one for a first byte and its continuations, one per stray continuation byte)."""
    b = t["pieces"][tid]
    out = []
    i = 0
    while i < len(b):
        n = utf8_length(b[i])
        if n == 0:
            out.append("\ufffd")
            i += 1
            continue
        j = i + 1
        while j < i + n and j < len(b) and 0x80 <= b[j] < 0xC0:
            j += 1
        if j == i + n:
            out.append(show(b[i:j].decode("utf-8")))
        else:
            out.append("\ufffd")
        i = j
    return "".join(out)


def is_text(b):
    """Whether the bytes are whole UTF-8 characters. is_text("公".encode("utf-8")[:2]) -> False"""
    i = 0
    while i < len(b):
        n = utf8_length(b[i])
        if n == 0 or i + n > len(b) or not _continuations(b, i + 1, i + n):
            return False
        i += n
    return True


def _continuations(b, lo, hi):
    for i in range(lo, hi):
        if not 0x80 <= b[i] < 0xC0:
            return False
    return True


def detail(t, row):
    """What the page says about one token."""
    tid = row["id"]
    parts = merge_parts(t, tid)
    spelled = "".join(_ALPHABET[b] for b in t["pieces"][tid])
    out = {"id": tid, "hex": row["hex"], "spelling": spelled, "text": row["text"]}
    if parts is None:
        out["made"] = "一个字节，词表最早的 256 个 token 之一"
    else:
        a, b = parts
        out["made"] = ("合并表第 " + num(tid - 256 + 1) + " 条：「" + piece_text(t, a) + "」（" + num(a) + "）+「"
                       + piece_text(t, b) + "」（" + num(b) + "）")
    if row["fragment"]:
        cut = [s for s in row["segments"] if s["part"]]
        out["note"] = "；".join("「" + s["text"] + "」有 " + str(s["of"]) + " 个字节，这个 token 只有它的第 "
                               + (str(s["from"]) if s["from"] == s["to"] else str(s["from"]) + "–" + str(s["to"]))
                               + " 个" for s in cut) + "：单独看，它不是一个完整的字。"
    else:
        out["note"] = "它的字节正好是完整的字。"
    return out


def label(t, tid):
    """A token for a sentence: its text when its bytes are whole characters, its bytes in hex when they
    hold no whole character (「ef bc」), both when they are text and part of one (「，�」（ef bc 8c e7 8e））."""
    piece = t["pieces"][tid]
    if is_text(piece):
        return "「" + piece_text(t, tid) + "」"
    text = piece_text(t, tid)
    if text.replace("\ufffd", "") == "":
        return "「" + hex_of(piece) + "」"
    return "「" + text + "」（" + hex_of(piece) + "）"


def holders(text, piece):
    """Where a fragment's bytes sit in the text's characters: （这里「：」「？」的前两个字节）, "" if nowhere."""
    where = {}
    order = []
    n = len(piece)
    for c in text:
        b = c.encode("utf-8")
        if len(b) <= n or c in where:
            continue
        at = ("前" if b[:n] == piece else "后" if b[len(b) - n:] == piece else
              "中间" if piece in b else "")
        if at:
            where[c] = at
            order.append(c)
    if not order:
        return ""
    sides = []
    for c in order:
        if where[c] not in sides:
            sides.append(where[c])
    count = NUMBERS[n] if n < len(NUMBERS) else str(n)
    if len(sides) > 1:
        return "（这里「" + "」「".join(order[:4]) + "」里的" + count + "个字节）"
    return "（这里「" + "」「".join(order[:4]) + "」的" + sides[0] + count + "个字节）"


def merge_step(t, raw, applied, k, text=""):
    """What the k-th merge (1-based) joined; a fragment shown as its bytes, with the characters it is part of."""
    r, _ = applied[k - 1]
    a, b = t["merges"][2 * r], t["merges"][2 * r + 1]
    new = t["pieces"][256 + r]
    where = holders(text, new) if not is_text(new) and piece_text(t, 256 + r).replace("\ufffd", "") == "" else ""
    return ("第 " + num(k) + " 次合并：" + label(t, a) + "+" + label(t, b) + "→" + label(t, 256 + r) + where
            + "（合并表第 " + num(r + 1) + " 条，新 token 的 id 是 " + num(256 + r) + "）")


# --- training by hand: the lesson's worked example and its exercise --------------------------------


def pair_counts(tokens):
    """[(pair, count, first position)] of adjacent pairs, in order of first appearance. Overlapping
    pairs all count: pair_counts(["a", "a", "a"]) -> [(("a", "a"), 2, 0)]"""
    seen = {}
    order = []
    for i in range(len(tokens) - 1):
        p = (tokens[i], tokens[i + 1])
        if p in seen:
            seen[p][0] += 1
        else:
            seen[p] = [1, i]
            order.append(p)
    return [(p, seen[p][0], seen[p][1]) for p in order]


def merge_once(tokens):
    """One training step of BPE on a list of token strings: the most frequent adjacent pair (a tie goes
    to the pair that appears first) joined everywhere, left to right. Returns (new tokens, pair, count);
    pair None when fewer than two tokens are left.

    merge_once(["曹", "操", "曰", "曹", "操"]) -> (["曹操", "曰", "曹操"], ("曹", "操"), 2)
    """
    counts = pair_counts(tokens)
    if not counts:
        return list(tokens), None, 0
    best = counts[0]
    for c in counts:
        if c[1] > best[1]:
            best = c  # first in order wins a tie: counts are in order of first appearance
    (a, b), n, _ = best
    out = []
    i = 0
    while i < len(tokens):
        if i + 1 < len(tokens) and tokens[i] == a and tokens[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out, (a, b), n


def train_by_hand(text, merges):
    """`merges` training steps from the text's characters: [{"pair", "count", "tokens"}] per step."""
    tokens = list(text)
    steps = []
    for _ in range(merges):
        tokens, pair, n = merge_once(tokens)
        if pair is None:
            break
        steps.append({"pair": [pair[0], pair[1]], "count": n, "tokens": tokens})
    return steps


def encode_by_hand(text, pairs):
    """Encode `text` with a hand-trained merge table (pairs in training order): from its characters,
    apply each merge in order, everywhere, left to right.
    encode_by_hand("曹操曰", [["曹", "操"]]) -> ["曹操", "曰"]"""
    tokens = list(text)
    for a, b in pairs:
        out = []
        i = 0
        while i < len(tokens):
            if i + 1 < len(tokens) and tokens[i] == a and tokens[i + 1] == b:
                out.append(a + b)
                i += 2
            else:
                out.append(tokens[i])
                i += 1
        tokens = out
    return tokens


def page_params(params):
    out = dict(params)
    data = params.get("data")
    if data is not None:
        out["data"] = {"byte_ids": data["byte_ids"], "merges": data["merges"]}
    return out


def view(params):
    data = params.get("data")
    t = tables(data)
    text = params.get("text")
    text = clean(DEFAULT_TEXT if text is None else text)
    cut = len(text) > MAX_CHARS
    if cut:
        text = text[:MAX_CHARS]
    raw = text.encode("utf-8")
    toks, applied = full_run(t, raw)
    total = len(applied)
    steps = params.get("steps")
    steps = total if steps is None else max(0, min(total, int(steps)))
    if steps < total:
        toks = replay(t, raw, applied[:steps])
    rows = describe(t, text, toks)
    sel = params.get("selected")
    sel = None if sel is None or not 0 <= int(sel) < len(rows) else int(sel)
    chips = []
    for k, r in enumerate(rows):
        # Read by a screen reader between the token's text and its id and bytes (the button's name
        # holds the visible text as it is, so a voice user can say what they see).
        sr = "（字节片段）" if r["fragment"] else ""
        sr += "，第 " + str(k + 1) + " 个 token，id "
        chips.append({"segments": r["segments"], "id": r["id"], "hex": r["hex"], "fragment": r["fragment"],
                      "pressed": "true" if k == sel else "false", "sr": sr})
    n_chars = len(text)
    n_tok = len(rows)
    frags = sum(1 for r in rows if r["fragment"])
    split = split_chars(rows)
    if n_chars == 0:
        summary = "输入为空：没有字节，也就没有 token。模型什么也看不到。"
    else:
        summary = (num(n_chars) + " 个字符 → " + num(len(raw)) + " 个 UTF-8 字节 → " + num(n_tok) + " 个 token，"
                   + "每个字符 " + num(n_tok / n_chars, 2) + " 个 token。")
        if steps == 0 and total:
            summary = ("还没有合并：" + num(len(raw)) + " 个字节就是 " + num(n_tok) + " 个 token（合并全做完是 "
                       + num(n_tok - total) + " 个）。")
        elif steps < total:
            summary = ("只做了前 " + num(steps) + " 次合并（共 " + num(total) + " 次）：" + num(n_tok)
                       + " 个 token（全做完是 " + num(n_tok - (total - steps)) + " 个）。")
        elif split:
            summary += "其中 " + num(frags) + " 个 token 是字节片段：" + cut_summary(cuts(t, rows))
        else:
            summary += "每个 token 都是完整的字：没有字被切成字节。"
    if cut:
        summary += "（只取前 " + str(MAX_CHARS) + " 个字符。）"
    if steps == 0 and total:
        step_text = "还没有合并：每个字节是一个 token（常用汉字 3 个字节，生僻的扩展区汉字 4 个）。"
    elif steps == 0:
        step_text = "这段文字里没有可合并的相邻字节对。"
    else:
        step_text = merge_step(t, raw, applied, steps, text)
    info = detail(t, rows[sel]) if sel is not None else None
    return {
        "params": {"text": text, "steps": steps, "selected": sel},
        "chips": chips,
        "examples": [{"label": label, "text": ex} for label, ex in EXAMPLES],
        "slider": {"min": 0, "max": total, "value": steps},
        "max_chars": MAX_CHARS,
        "detail": info,
        "out": {"summary": summary, "step": step_text, "steps": num(steps) + " / " + num(total),
                "count": num(n_tok)},
        "announce": summary,
    }


def example(facts):
    """The gallery's params: the export, once lab/ has written it."""
    tok = facts.get("tokenizer")
    return {"data": tok["encoder"]} if tok else None
