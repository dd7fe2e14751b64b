"""Stage 1: split every book of the corpus by chapter, train the byte-level BPE on the training
chapters, tokenize, and measure the n-gram reference losses on the same tokenizer and split.

The corpus is one or more UTF-8 files (a folder stands for every *.txt under it). Every book
gives its last chapters to validation (val_fraction of them, at least one; or exactly
val_chapters), so the validation split covers every book and each book's part of it can be
scored on its own.

Writes into work_dir/data/: tokenizer.json, token_bytes.json (the bytes of every token id, hex),
train.bin and val.bin (uint16 token ids, the books one after another in corpus order),
meta.json (corpus files, split per book, sizes, config) and ngram.json (unigram and
interpolated-bigram val loss).
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

# A chapter-title line: 第…回 (novels) or 第…卷 (story collections), numerals in any of the
# editions' spellings (一百二十, 一二零, 一○), then a space or the line's end (so 「第四回中…」 in
# running text is no title). Leading spaces allowed: some editions indent their titles.
CHAPTER_RE = re.compile(r"^[^\S\n]*第[一二三四五六七八九十百零〇○]+[回卷](?=\s|$)", re.MULTILINE)
HAN_RE = re.compile(r"[\u4e00-\u9fff]")


@dataclass
class PrepareConfig:
    corpus: str = ""  # corpus file(s) or folder(s), comma-separated (required; never copied into the project)
    work_dir: str = "lab/runs"  # outputs go to work_dir/data
    vocab_size: int = 2048  # byte-level BPE vocabulary: 256 bytes + merges
    val_fraction: float = 0.08  # every book's last ~8% of chapters (at least one) are validation
    val_chapters: int = 0  # > 0: exactly this many last chapters of every book instead
    ngram_holdout: float = 0.1  # tail fraction of train tokens used to pick the bigram weight


def corpus_files(corpus: str) -> list[Path]:
    """The corpus's files in order: each comma-separated path, a folder as its *.txt files sorted.
    A missing path, an empty folder, or two files of one name (books are named by file) is an error.

    corpus_files("a.txt,b.txt") -> [Path("a.txt"), Path("b.txt")]
    """
    files: list[Path] = []
    for part in filter(None, (x.strip() for x in corpus.split(","))):
        path = Path(part)
        if path.is_dir():
            found = sorted(path.rglob("*.txt"))
            if not found:
                raise ValueError(f"corpus folder {part}: no *.txt file in it")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"corpus file {part}: not found")
    if not files:
        raise ValueError("no corpus given (--corpus FILE or FOLDER, several separated by commas)")
    names = [f.name for f in files]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"corpus: two files named {twice[0]} (books are named by file name)")
    return files


def read_book(path: Path) -> tuple[bytes, str]:
    """A corpus file's bytes and text; a file that is empty or not UTF-8 is an error naming it."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"corpus file {path.name}: not UTF-8 (byte {e.start})") from None
    if not text.strip():
        raise ValueError(f"corpus file {path.name}: empty")
    return raw, text


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def n_val_chapters(n_chapters: int, fraction: float, fixed: int) -> int:
    """How many of a book's last chapters are validation.

    n_val_chapters(120, 0.08, 0) -> 10; n_val_chapters(40, 0.08, 0) -> 3; n_val_chapters(6, 0.08, 2) -> 2
    """
    n = fixed if fixed > 0 else max(1, round(n_chapters * fraction))
    if not 0 < n < n_chapters:
        raise ValueError(f"{n} validation chapters of a book with {n_chapters}")
    return n


def split_chapters(text: str) -> list[str]:
    """Cut the text at chapter-title lines; chapters re-join to the text exactly. Text before the
    first title (a prologue such as 水滸傳's 楔子) is a chapter of its own when it has any Han
    character, else part of the first; a title whose chapter has no Han character (an edition's
    repeated title line) joins the next chapter.

    split_chapters("第一回 甲\\n乙\\n第二回 丙\\n") -> ["第一回 甲\\n乙\\n", "第二回 丙\\n"]
    """
    starts = [m.start() for m in CHAPTER_RE.finditer(text)]
    if not starts:
        raise ValueError("no chapter-title lines (第…回 or 第…卷) found")
    if starts[0] and HAN_RE.search(text[: starts[0]]):
        starts.insert(0, 0)
    starts[0] = 0
    chapters = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    merged: list[str] = []
    carry = ""
    for i, chapter in enumerate(chapters):
        titled = CHAPTER_RE.match(chapter)
        body = chapter.split("\n", 1)[1] if titled and "\n" in chapter else ("" if titled else chapter)
        if HAN_RE.search(body) or i == len(chapters) - 1:
            merged.append(carry + chapter)
            carry = ""
        else:
            carry += chapter
    return merged


def chapter_title(chapter: str) -> str:
    """A chapter's title as listed: its first line up to the first wide space or run of spaces.
    chapter_title("第一回　宴桃園\\n") -> "第一回"
    """
    return re.split(r"[\u3000\s]+", chapter.strip(), maxsplit=1)[0]


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable-character table that byte-level BPE vocabularies use.

    bytes_to_unicode()[ord("A")] -> "A"; bytes_to_unicode()[0x20] -> "Ġ"
    """
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def train_tokenizer(texts: list[str], vocab_size: int) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    # No GPT-2 regex pre-split: merges may join characters with punctuation (曰：), which
    # suits Chinese text and reproduces the reference figures (unigram 6.99, bigram 5.63).
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(texts, trainer)
    return tok


def token_bytes(tok: Tokenizer) -> list[bytes]:
    """The raw bytes of every token id (index = id)."""
    inverse = {c: b for b, c in bytes_to_unicode().items()}
    out = [b""] * tok.get_vocab_size()
    for piece, i in tok.get_vocab().items():
        out[i] = bytes(inverse[c] for c in piece)
    return out


def ngram_losses(train: np.ndarray, val: np.ndarray, vocab: int, holdout: float) -> dict:
    """Val cross-entropy (nats/token) of an add-one unigram and of a bigram interpolated
    with it; the bigram weight is picked on the tail of the training tokens."""

    def fit(tokens):
        uni = np.bincount(tokens, minlength=vocab).astype(np.float64)
        big = Counter(zip(tokens[:-1].tolist(), tokens[1:].tolist()))
        p_uni = (uni + 1) / (uni.sum() + vocab)
        ctx = np.bincount(tokens[:-1], minlength=vocab).astype(np.float64)
        return p_uni, big, ctx

    def nll(model, tokens, lam):
        p_uni, big, ctx = model
        prev, nxt = tokens[:-1].tolist(), tokens[1:].tolist()
        total = 0.0
        for a, b in zip(prev, nxt):
            p_big = big.get((a, b), 0) / ctx[a] if ctx[a] else 0.0
            total -= math.log(lam * p_big + (1 - lam) * p_uni[b])
        return total / len(nxt)

    cut = int(len(train) * (1 - holdout))
    fitted = fit(train[:cut])
    lam = min((round(0.05 * k, 2) for k in range(0, 20)), key=lambda l: nll(fitted, train[cut:], l))
    full = fit(train)
    p_uni = full[0]
    unigram = float(-np.log(p_uni[val[1:]]).mean())  # same targets as the model: every val token but the first
    return {"unigram": unigram, "bigram": nll(full, val, lam), "bigram_lambda": lam,
            "unigram_smoothing": "add-one", "bigram_lambda_picked_on": f"last {holdout:.0%} of train tokens"}


def run(cfg: PrepareConfig) -> dict:
    print("prepare config:", json.dumps(asdict(cfg), ensure_ascii=False))
    books = []
    for path in corpus_files(cfg.corpus):
        raw, text = read_book(path)
        try:
            chapters = split_chapters(text)
            n_val = n_val_chapters(len(chapters), cfg.val_fraction, cfg.val_chapters)
        except ValueError as e:
            raise ValueError(f"corpus file {path.name}: {e}") from None
        n_train = len(chapters) - n_val
        books.append({"path": path, "raw": raw, "text": text, "chapters": chapters, "n_train": n_train,
                      "train": "".join(chapters[:n_train]), "val": "".join(chapters[n_train:])})

    tok = train_tokenizer([c for b in books for c in b["chapters"][: b["n_train"]]], cfg.vocab_size)
    pieces = token_bytes(tok)
    ids = {"train": [], "val": []}
    for book in books:
        for name in ("train", "val"):
            arr = np.array(tok.encode(book[name]).ids, dtype=np.uint16)  # (N,)
            assert b"".join(pieces[i] for i in arr.tolist()) == book[name].encode("utf-8"), \
                f"{book['path'].name} {name}: bytes not preserved"
            book[f"{name}_ids"] = arr
            ids[name].append(arr)
    ids = {name: np.concatenate(parts) for name, parts in ids.items()}

    out = Path(cfg.work_dir) / "data"
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    (out / "token_bytes.json").write_text(json.dumps([p.hex() for p in pieces]))
    for name, arr in ids.items():
        arr.tofile(out / f"{name}.bin")
    ngram = ngram_losses(ids["train"], ids["val"], tok.get_vocab_size(), cfg.ngram_holdout)
    (out / "ngram.json").write_text(json.dumps(ngram, indent=1))

    files, split_books, val_at = [], [], 0
    for book in books:
        chapters, n_train = book["chapters"], book["n_train"]
        titles = [chapter_title(c) for c in chapters]
        files.append({"file": book["path"].name, "sha256": hashlib.sha256(book["raw"]).hexdigest(),
                      "bytes": len(book["raw"]), "chars": len(book["text"]), "chapters": len(chapters)})
        n_val_tok = int(len(book["val_ids"]))
        split_books.append({
            "file": book["path"].name,
            "train_chapters": [1, n_train], "val_chapters": [n_train + 1, len(chapters)],
            "train_first_title": titles[0], "val_first_title": titles[n_train],
            "train_chars": len(book["train"]), "val_chars": len(book["val"]),
            "train_tokens": int(len(book["train_ids"])), "val_tokens": n_val_tok,
            "val_token_range": [val_at, val_at + n_val_tok]})
        val_at += n_val_tok
    rule = (f"by chapter, in every book: the last {cfg.val_chapters} chapters" if cfg.val_chapters > 0 else
            f"by chapter, in every book: the last {cfg.val_fraction:.0%} of its chapters (at least one)")
    meta = {
        "config": asdict(cfg),
        "corpus": {"files": files, "bytes": sum(f["bytes"] for f in files), "chars": sum(f["chars"] for f in files),
                   "chapters": sum(f["chapters"] for f in files)},
        "split": {"rule": rule + " are validation, the rest training; chapters are numbered in the order the"
                              " book gives them (a prologue before the first title is chapter 1)",
                  "train_chars": sum(b["train_chars"] for b in split_books),
                  "val_chars": sum(b["val_chars"] for b in split_books),
                  "train_tokens": int(len(ids["train"])), "val_tokens": int(len(ids["val"])),
                  "books": split_books},
        "tokenizer": {"type": "byte-level BPE", "library": "tokenizers", "vocab_size": tok.get_vocab_size(),
                      "trained_on": "train split",
                      "fragment_tokens": sum(1 for p in pieces if not _is_text(p))},
    }
    (out / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1))
    for b in split_books:
        print(f"prepare: {b['file']}: chapters {b['train_chapters'][1]} train + "
              f"{b['val_chapters'][1] - b['val_chapters'][0] + 1} val ({b['val_first_title']}…);"
              f" {b['train_tokens']:,} + {b['val_tokens']:,} tokens")
    print(f"prepare: {len(books)} books, {meta['corpus']['chapters']} chapters -> train {len(ids['train']):,} tokens,"
          f" val {len(ids['val']):,} tokens; vocab {tok.get_vocab_size()}; unigram {ngram['unigram']:.3f},"
          f" bigram {ngram['bigram']:.3f} nats/token")
    return meta


def val_segments(meta: dict) -> list[tuple[str, int, int]]:
    """(book file, first, end) of every book's part of val.bin; one segment for data prepared
    before books were split apart."""
    books = meta["split"].get("books")
    if not books:
        return [(meta["corpus"].get("file", "corpus"), 0, meta["split"]["val_tokens"])]
    return [(b["file"], *b["val_token_range"]) for b in books]


def _is_text(b: bytes) -> bool:
    """True when the bytes decode as UTF-8 on their own. _is_text("公".encode()[:2]) -> False"""
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False
