"""Stage 1: split the corpus by chapter, train the byte-level BPE, tokenize, and
measure the n-gram reference losses on the same tokenizer and split.

Writes into work_dir/data/: tokenizer.json, token_bytes.json (the bytes of every
token id, hex), train.bin and val.bin (uint16 token ids), meta.json (corpus,
split, sizes, config) and ngram.json (unigram and interpolated-bigram val loss).
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

CHAPTER_RE = re.compile(r"^第[一二三四五六七八九十百零〇]+回", re.MULTILINE)  # a chapter-title line


@dataclass
class PrepareConfig:
    corpus: str = ""  # path to the UTF-8 corpus (required; never copied into the project)
    work_dir: str = "lab/runs"  # outputs go to work_dir/data
    vocab_size: int = 2048  # byte-level BPE vocabulary: 256 bytes + merges
    val_chapters: int = 12  # the last N chapters are the validation split
    ngram_holdout: float = 0.1  # tail fraction of train tokens used to pick the bigram weight


def split_chapters(text: str) -> list[str]:
    """Cut the text at chapter-title lines; chapters re-join to the text exactly.

    split_chapters("第一回 甲\\n乙\\n第二回 丙\\n") -> ["第一回 甲\\n乙\\n", "第二回 丙\\n"]
    """
    starts = [m.start() for m in CHAPTER_RE.finditer(text)]
    if not starts:
        raise ValueError("no chapter-title lines (第…回) found in the corpus")
    if text[: starts[0]].strip():
        raise ValueError("text before the first chapter title")
    starts[0] = 0
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


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
    raw = Path(cfg.corpus).read_bytes()
    text = raw.decode("utf-8")
    chapters = split_chapters(text)
    if not 0 < cfg.val_chapters < len(chapters):
        raise ValueError(f"val_chapters={cfg.val_chapters} but the corpus has {len(chapters)} chapters")
    n_train = len(chapters) - cfg.val_chapters
    train_text, val_text = "".join(chapters[:n_train]), "".join(chapters[n_train:])

    tok = train_tokenizer(chapters[:n_train], cfg.vocab_size)
    pieces = token_bytes(tok)
    ids = {}
    for name, part in (("train", train_text), ("val", val_text)):
        arr = np.array(tok.encode(part).ids, dtype=np.uint16)  # (N,)
        assert b"".join(pieces[i] for i in arr.tolist()) == part.encode("utf-8"), f"{name}: bytes not preserved"
        ids[name] = arr

    out = Path(cfg.work_dir) / "data"
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    (out / "token_bytes.json").write_text(json.dumps([p.hex() for p in pieces]))
    for name, arr in ids.items():
        arr.tofile(out / f"{name}.bin")
    ngram = ngram_losses(ids["train"], ids["val"], tok.get_vocab_size(), cfg.ngram_holdout)
    (out / "ngram.json").write_text(json.dumps(ngram, indent=1))

    titles = [c.split("\n", 1)[0].split("\u3000")[0] for c in chapters]
    meta = {
        "config": asdict(cfg),
        "corpus": {"file": Path(cfg.corpus).name, "sha256": hashlib.sha256(raw).hexdigest(),
                   "bytes": len(raw), "chars": len(text), "chapters": len(chapters)},
        "split": {"rule": f"by chapter: the last {cfg.val_chapters} chapters are validation, the rest training",
                  "train_chapters": [1, n_train], "val_chapters": [n_train + 1, len(chapters)],
                  "train_first_title": titles[0], "val_first_title": titles[n_train],
                  "train_chars": len(train_text), "val_chars": len(val_text),
                  "train_tokens": int(len(ids["train"])), "val_tokens": int(len(ids["val"]))},
        "tokenizer": {"type": "byte-level BPE", "library": "tokenizers", "vocab_size": tok.get_vocab_size(),
                      "trained_on": "train split",
                      "fragment_tokens": sum(1 for p in pieces if not _is_text(p))},
    }
    (out / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1))
    print(f"prepare: {len(chapters)} chapters -> train {len(ids['train']):,} tokens, val {len(ids['val']):,} tokens;"
          f" vocab {tok.get_vocab_size()}; unigram {ngram['unigram']:.3f}, bigram {ngram['bigram']:.3f} nats/token")
    return meta


def _is_text(b: bytes) -> bool:
    """True when the bytes decode as UTF-8 on their own. _is_text("公".encode()[:2]) -> False"""
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False
