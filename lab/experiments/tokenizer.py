"""The tokenizer experiment (C1 第 1 课, `python -m lab tokenizer`): what the vocabulary size does to
the text the model sees, with no model trained.

    python -m lab tokenizer --corpus ../shared/corpus --work ../lab-runs/ed2 --out data/real-model/tokenizer

It reuses the work dir's prepared data (or prepares it: the same split and tokenizer as `all`), then

1. **the sweep** (`sweep.json`): a byte-level BPE trained exactly as lab/prepare.py trains ours (the
   training chapters of every book, no regex pre-split) at each of `sizes` (256 = the bytes alone, no
   merge), and measured on the validation chapters: tokens per character (each book's validation
   text encoded as one text, as prepare.py does), how many vocabulary entries are byte fragments (their
   bytes are not whole UTF-8 characters), the share of the distinct validation characters that are one
   vocabulary entry (and of their occurrences), how many characters a `window`-token context holds,
   the most frequent multi-character tokens, one sentence's tokens, and the seconds each training took.
   Beside them, two character-level vocabularies: the tiny-gpt page's (data/tiny-gpt.json, 255
   characters of 三國演義 and UNK) and every character of the training split (plus UNK). The size equal
   to the work dir's tokenizer must reproduce it merge for merge. Each size is cached in
   `work/tokenizer/` (resumable: a size already trained is read back).
2. **the page's encoder** (`tokenizer.json`): the work dir's tokenizer in compact form (each byte's id,
   the merges as id pairs) for widgets/bpe_tokenizer/model.py, whose standard-library encoder is run
   here over every book's validation text and must give the lab's ids (val.bin) token for token;
   the export records that check, and a few sample texts with the lab's ids for the site's tests.
3. **embedding neighbours** (`neighbours.json`, when `work/<run_variant>-s<run_seed>/result.json` exists): the
   tied embedding table of that finished run, and of the same seed's model before training (the
   control), read by cosine: the nearest rows to each of `neighbours` (texts that are one token each)
   and the distribution of cosines between all pairs of rows.

Every file is validated with data/schemas/real-model/tokenizer/ before it replaces anything.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import tokenizers
from tokenizers import Tokenizer

from lab import prepare, schema, train
from lab.experiments import common

NAME = "tokenizer"  # python -m lab tokenizer
DEFAULT_OUT = "data/real-model/tokenizer"
SCHEMA_VERSION = 1
ENCODER = common.REPO_DIR / "widgets" / "bpe_tokenizer" / "model.py"  # the page's encoder, checked here
TINY_GPT = common.REPO_DIR / "data" / "tiny-gpt.json"  # the tiny-gpt page's character vocabulary
HAN_WORD = re.compile(r"[\u4e00-\u9fff]{2,}")  # a token of two or more Han characters and nothing else
MEASURE_VERSION = 3  # what measure() reports; a cached size measured otherwise is measured again (not retrained)
SAMPLE_TEXTS = ("玄德曰：「吾乃中山靖王之後。」", "大模型怎么看中文？", "The model reads tokens.", "好😀", "𠀀", "")


@dataclass
class Config:
    sizes: str = "256,512,1024,2048,4096,8192,16384"  # BPE vocabulary sizes (256: the bytes alone)
    window: int = 256  # the context a model reads, in tokens: how many characters it holds
    sample_book: str = "sanguo-yanyi.txt"  # the sweep's sentence: this book's first validation sentence
    top_words: int = 8  # the most frequent multi-character tokens listed per size
    neighbours: str = "曹操,玄德,孔明,寶玉,曰,之"  # texts whose embedding rows are read ("" = no neighbours.json)
    run_variant: str = "baseline"  # the run whose tied embedding is read: work/<run_variant>-s<run_seed>/
    run_seed: int = 5
    check_seed: int = 4  # a second seed of the same variant whose neighbours are compared (-1: none)
    probe_chars: str = "这们说时国见为么儿里后并"  # characters whose presence in the character tables is reported
    k: int = 8  # neighbours per query
    command: str = ""  # the command the model card records; "" = this process's command line


def sizes_of(cfg: Config) -> list[int]:
    """sizes_of(Config(sizes="512,256")) -> [256, 512]"""
    sizes = sorted({int(s) for s in cfg.sizes.split(",") if s.strip()})
    if not sizes or sizes[0] < 256:
        raise SystemExit("sizes: byte-level BPE starts from the 256 bytes: every size must be at least 256")
    return sizes


def load_encoder():
    """widgets/bpe_tokenizer/model.py, the page's encoder (it imports numfmt from widgets/common)."""
    import sys
    common_dir = str(common.REPO_DIR / "widgets" / "common")
    if common_dir not in sys.path:
        sys.path.insert(0, common_dir)
    spec = importlib.util.spec_from_file_location("bpe_tokenizer_model", ENCODER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the corpus, split as prepare.py split it ------------------------------------------------------


def split_books(prep: prepare.PrepareConfig, meta: dict) -> list[dict]:
    """Every book's training chapters and validation text, cut by the work dir's own split (checked
    against meta.json's character counts)."""
    books = []
    for path, b in zip(prepare.corpus_files(prep.corpus), meta["split"]["books"]):
        _, text = prepare.read_book(path)
        chapters = prepare.split_chapters(text)
        n_train = b["train_chapters"][1]
        train_chapters, val = chapters[:n_train], "".join(chapters[n_train:])
        if path.name != b["file"] or sum(map(len, train_chapters)) != b["train_chars"] or len(val) != b["val_chars"]:
            raise SystemExit(f"{path.name}: the split differs from the work dir's meta.json")
        books.append({"file": path.name, "train": train_chapters, "val": val, "val_range": b["val_token_range"]})
    return books


def first_sentence(val: str) -> str:
    """The first sentence of a book's validation text: its first line after the chapter title, up to
    and with its first 。 (the whole line if it has none).

    first_sentence("第一回　甲\\n卻說乙，丙。丁。\\n") -> '卻說乙，丙。'
    """
    lines = [l.strip() for l in val.split("\n")[1:] if l.strip()]
    if not lines:
        raise SystemExit("sample_book: its validation text has no line after the chapter title")
    line = lines[0]
    return line[: line.index("。") + 1] if "。" in line else line


# --- one vocabulary size ---------------------------------------------------------------------------


def pieces_of(tok: Tokenizer) -> list[bytes]:
    return prepare.token_bytes(tok)


def token_rows(pieces: list[bytes], ids: list[int]) -> list[dict]:
    """Each token as it shows alone and whether it is a byte fragment."""
    from lab.experiments.ffn import is_fragment, show
    return [{"text": show(pieces[i]), "fragment": is_fragment(pieces[i])} for i in ids]


def measure(tok: Tokenizer, books: list[dict], sentence: str, cfg: Config) -> dict:
    """Tokens per character on validation and train, fragments, single-token characters, top words."""
    pieces = pieces_of(tok)
    vocab_bytes = set(pieces)
    fragments = sum(1 for p in pieces if not prepare._is_text(p))
    multi = sum(1 for p in pieces if prepare._is_text(p) and len(p.decode("utf-8")) >= 2)
    per_book, val_ids = [], Counter()
    whole_occ = cut_single = 0  # validation characters not cut by the tokens around them; in-vocabulary ones cut
    val_chars = val_tokens = train_chars = train_tokens = 0
    for b in books:
        ids = tok.encode(b["val"]).ids
        val_ids.update(ids)
        bounds, at = set(), 0
        for i in ids:
            at += len(pieces[i])
            bounds.add(at)
        at = 0
        for c in b["val"]:
            e = at + len(c.encode("utf-8"))
            cut = any(k in bounds for k in range(at + 1, e))
            whole_occ += not cut
            cut_single += cut and c.encode("utf-8") in vocab_bytes
            at = e
        per_book.append({"file": b["file"], "val_chars": len(b["val"]), "val_tokens": len(ids)})
        val_chars += len(b["val"])
        val_tokens += len(ids)
        text = "".join(b["train"])
        train_chars += len(text)
        train_tokens += len(tok.encode(text).ids)
    occurrences = Counter(c for b in books for c in b["val"])
    single = [c for c in occurrences if c.encode("utf-8") in vocab_bytes]
    words = [(n, i) for i, n in val_ids.items()
             if prepare._is_text(pieces[i]) and len(pieces[i].decode("utf-8").strip()) >= 2]
    words.sort(key=lambda x: (-x[0], x[1]))
    han = [(n, i) for n, i in words if HAN_WORD.fullmatch(pieces[i].decode("utf-8"))]
    per_char = val_tokens / val_chars
    return {
        "vocab_size": tok.get_vocab_size(),
        "merges": tok.get_vocab_size() - 256,
        "fragment_tokens": fragments,
        "fragment_share": fragments / tok.get_vocab_size(),
        "multi_char_tokens": multi,
        "val_chars": val_chars, "val_tokens": val_tokens, "tokens_per_char": per_char,
        "train_chars": train_chars, "train_tokens": train_tokens, "train_tokens_per_char": train_tokens / train_chars,
        "chars_per_window": cfg.window / per_char,
        "distinct_chars": len(occurrences),
        "single_token_chars": len(single),
        "single_token_share": len(single) / len(occurrences),
        "single_token_occurrence_share": sum(occurrences[c] for c in single) / val_chars,
        "whole_occurrence_share": whole_occ / val_chars,
        "cut_single_occurrences": cut_single,
        "books": per_book,
        "top_words": [{"text": pieces[i].decode("utf-8"), "id": i, "count": n} for n, i in words[: cfg.top_words]],
        "han_words": sum(1 for p in pieces if prepare._is_text(p) and HAN_WORD.fullmatch(p.decode("utf-8"))),
        "top_han_words": [{"text": pieces[i].decode("utf-8"), "id": i, "count": n} for n, i in han[: cfg.top_words]],
        "sample": token_rows(pieces, tok.encode(sentence).ids),
    }


def size_settings(meta: dict, size: int) -> dict:
    """What a cached size was made from: a cache with other settings is trained again."""
    return json.loads(json.dumps({"corpus": common.corpus_shas(meta["corpus"]), "split": meta["split"]["rule"],
                                  "books": [[b["file"], b["train_chapters"]] for b in meta["split"]["books"]],
                                  "vocab_size": size, "library": tokenizers.__version__}))  # as read back


def sweep_size(size: int, books: list[dict], meta: dict, sentence: str, cfg: Config, cache: Path) -> dict:
    """One size: trained (or read back from the cache) and measured."""
    settings = size_settings(meta, size)
    measured = {"sample_text": sentence, "window": cfg.window, "top_words": cfg.top_words, "version": MEASURE_VERSION}
    tok_file, res_file = cache / f"bpe-{size}.json", cache / f"bpe-{size}.result.json"
    res = json.loads(res_file.read_text()) if res_file.exists() and tok_file.exists() else {}
    if res.get("settings") == settings:
        row = res["row"]
        if all(res.get(k) == v for k, v in measured.items()):
            print(f"tokenizer: size {size:,}: reusing {res_file.name} (trained in {row['train_seconds']:.1f} s)")
            return row
        print(f"tokenizer: size {size:,}: reusing {tok_file.name} (trained in {row['train_seconds']:.1f} s), measuring again")
        tok, seconds, load = Tokenizer.from_file(str(tok_file)), row["train_seconds"], row["load_before"]
    else:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        t0 = time.perf_counter()
        tok = prepare.train_tokenizer([c for b in books for c in b["train"]], size)
        seconds = round(time.perf_counter() - t0, 2)
        load = None if load is None else round(load, 2)
        if tok.get_vocab_size() != size:
            raise SystemExit(f"size {size}: the trainer stopped at {tok.get_vocab_size()} tokens (too little text?)")
        cache.mkdir(parents=True, exist_ok=True)
        tok.save(str(tok_file))
    row = measure(tok, books, sentence, cfg)
    row["train_seconds"] = seconds
    row["load_before"] = load
    tmp = res_file.with_suffix(".tmp")
    tmp.write_text(json.dumps({"settings": settings, **measured, "row": row}, ensure_ascii=False))
    os.replace(tmp, res_file)
    print(f"tokenizer: size {size:,}: {seconds:.1f} s; {row['tokens_per_char']:.3f} tokens/char on val,"
          f" {row['fragment_tokens']:,} fragments, {row['single_token_share']:.1%} of val's characters one token")
    return row


def same_merges(a: Path, b: Path) -> bool:
    """Whether two tokenizer.json files hold the same vocabulary and merges."""
    ma, mb = (json.loads(p.read_text())["model"] for p in (a, b))
    return ma["vocab"] == mb["vocab"] and [list(m) for m in ma["merges"]] == [list(m) for m in mb["merges"]]


# --- character-level vocabularies --------------------------------------------------------------------


def char_row(name: str, vocab: list[str], books: list[dict], cfg: Config, source: str) -> dict:
    """A character-level vocabulary (UNK included in `vocab`) on the validation text: one token per
    character, the rest fold into UNK."""
    known = set(vocab)
    occurrences = Counter(c for b in books for c in b["val"])
    total = sum(occurrences.values())
    covered = [c for c in occurrences if c in known]
    return {"name": name, "vocab_size": len(vocab), "tokens_per_char": 1.0, "chars_per_window": float(cfg.window),
            "distinct_chars": len(occurrences), "covered_chars": len(covered),
            "covered_share": len(covered) / len(occurrences),
            "unk_share": 1 - sum(occurrences[c] for c in covered) / total, "source": source,
            # the corpus writes a missing character as a literal UNK-looking "\u25a1": covered_chars counts it
            "placeholder_covered": "\u25a1" in covered,
            "latin_letters": sum(1 for c in known if c.isascii() and c.isalpha()),
            "probe": {c: c in known for c in cfg.probe_chars}}


def char_rows(books: list[dict], cfg: Config) -> list[dict]:
    rows = []
    if TINY_GPT.exists():
        tiny = json.loads(TINY_GPT.read_text(encoding="utf-8"))
        rows.append(char_row("tiny_gpt", tiny["vocab"], books, cfg,
                             "data/tiny-gpt.json vocab: the 从 0 训练 page's characters (index 0 is UNK)"))
    train_chars = sorted({c for b in books for ch in b["train"] for c in ch})
    rows.append(char_row("all_train", ["\u25a1"] + train_chars, books, cfg,
                         "every distinct character of the training split, plus UNK"))
    return rows


# --- the page's encoder ------------------------------------------------------------------------------


def compact(tok_file: Path) -> dict:
    """The work dir's tokenizer as the page carries it: each byte's id and the merges as id pairs;
    merge r makes token 256 + r (checked)."""
    model = json.loads(tok_file.read_text())["model"]
    vocab = model["vocab"]
    alphabet = prepare.bytes_to_unicode()
    byte_ids = [vocab[alphabet[b]] for b in range(256)]
    if sorted(byte_ids) != list(range(256)):
        raise SystemExit(f"{tok_file}: the 256 bytes are not ids 0..255")
    merges = []
    for r, (a, b) in enumerate(model["merges"]):
        if vocab[a + b] != 256 + r:
            raise SystemExit(f"{tok_file}: merge {r} makes id {vocab[a + b]}, not {256 + r}")
        merges += [vocab[a], vocab[b]]
    return {"byte_ids": byte_ids, "merges": merges}


def encoder_export(work: Path, books: list[dict], meta: dict, card: dict) -> dict:
    """tokenizer.json: the compact tokenizer, checked against the lab's ids on every book's validation text."""
    data_dir = work / "data"
    enc = compact(data_dir / "tokenizer.json")
    page = load_encoder()
    lab_tok = Tokenizer.from_file(str(data_dir / "tokenizer.json"))
    val = np.fromfile(data_dir / "val.bin", dtype=np.uint16)
    t0 = time.perf_counter()
    checked = []
    for b in books:
        lo, hi = b["val_range"]
        mine = page.encode(enc, b["val"])
        if mine != val[lo:hi].tolist():
            first = next((i for i, (x, y) in enumerate(zip(mine, val[lo:hi].tolist())) if x != y), min(len(mine), hi - lo))
            raise SystemExit(f"{b['file']}: the page's encoder differs from the lab's ids at token {first}")
        checked.append({"file": b["file"], "chars": len(b["val"]), "tokens": len(mine)})
    seconds = time.perf_counter() - t0
    samples = []
    for text in SAMPLE_TEXTS + (card["sample"]["text"],):
        ids = lab_tok.encode(text).ids
        if page.encode(enc, text) != ids:
            raise SystemExit(f"sample {text!r}: the page's encoder differs from the lab's")
        samples.append({"text": text, "ids": ids})
    print(f"tokenizer: the page's encoder gives the lab's ids on {sum(c['tokens'] for c in checked):,} validation"
          f" tokens ({seconds:.1f} s)")
    return {
        "schema_version": SCHEMA_VERSION,
        "vocab_size": 256 + len(enc["merges"]) // 2,
        "byte_ids": enc["byte_ids"], "merges": enc["merges"],
        "check": {"encoder": "widgets/bpe_tokenizer/model.py", "against": "val.bin: the lab's ids (tokenizers)",
                  "books": checked, "chars": sum(c["chars"] for c in checked),
                  "tokens": sum(c["tokens"] for c in checked), "identical": True, "seconds": round(seconds, 1)},
        "samples": samples,
        "source": {"file": "tokenizer.json of the work dir's data/ (lab/prepare.py)", "library": card["library"],
                   "vocab_size": meta["tokenizer"]["vocab_size"], "fragment_tokens": meta["tokenizer"]["fragment_tokens"],
                   "date": card["date"], "command": card["command"]},
    }


# --- embedding neighbours ------------------------------------------------------------------------------


def neighbours_export(cfg: Config, work: Path, card: dict) -> dict | None:
    """neighbours.json from a finished run's tied embedding, with the same seed's untrained table as control."""
    import torch
    queries = [q for q in cfg.neighbours.split(",") if q]
    run = common.run_dir(work, cfg.run_variant, cfg.run_seed)
    if not queries:
        return None
    if not (run / "result.json").exists():
        print(f"tokenizer: {run}/result.json not there (training unfinished?): neighbours.json not written")
        return None
    result = json.loads((run / "result.json").read_text())
    trained = common.load_model(run)
    vocab = trained.embed.weight.shape[0]
    tc = train.TrainConfig(**{k: v for k, v in result["config"].items() if k in train.TrainConfig.__dataclass_fields__})
    init = common.fresh_model(cfg.run_variant, cfg.run_seed, vocab, tc)
    tok = Tokenizer.from_file(str(work / "data" / "tokenizer.json"))
    pieces = pieces_of(tok)
    from lab.experiments.ffn import is_fragment
    meta = json.loads((work / "data" / "meta.json").read_text())
    rate = book_rates(np.fromfile(work / "data" / "train.bin", dtype=np.uint16), meta, vocab)  # (books, V)
    files = [b["file"] for b in meta["split"]["books"]]

    def book_of(i):
        """The book where token i is most frequent for the book's length, and that book's share of its rate."""
        col = rate[:, i]
        if col.sum() == 0:
            return None, 0.0
        b = int(col.argmax())
        return files[b], round(float(col[b] / col.sum()), 3)

    def table(model):
        w = model.embed.weight.detach().double()  # (V, d)
        return w / w.norm(dim=1, keepdim=True)  # (V, d) unit rows

    def spread(unit):
        cos = unit @ unit.T  # (V, V)
        off = cos[~torch.eye(len(cos), dtype=torch.bool)]  # (V * (V - 1),)
        q = torch.quantile(off.float(), torch.tensor([0.5, 0.99, 0.999]))
        return {"mean": float(off.mean()), "median": float(q[0]), "p99": float(q[1]), "p999": float(q[2]),
                "max": float(off.max())}

    def nearest(unit, i):
        cos = unit @ unit[i]  # (V,)
        cos[i] = -2.0
        top = torch.topk(cos, cfg.k)
        out = []
        for c, j in zip(top.values, top.indices):
            book, share = book_of(int(j))
            # No text: a token such as "/" would read as a machine path; the site reads it from tokenizer.json.
            out.append({"id": int(j), "fragment": is_fragment(pieces[int(j)]),
                        "cosine": round(float(c), 4), "book": book, "book_share": share})
        return out

    units = {"trained": table(trained), "init": table(init)}
    counts = np.bincount(np.fromfile(work / "data" / "train.bin", dtype=np.uint16), minlength=vocab)
    seen = torch.tensor(counts > 0)
    never = ~seen
    w_t, w_0 = trained.embed.weight.detach().double(), init.embed.weight.detach().double()

    def norms(mask):
        # A group with no tokens (a small corpus sees every token, or none 1,000 times) has no mean: None, not NaN.
        if not mask.any():
            return {"tokens": 0, "init_norm": None, "trained_norm": None, "change_norm": None}
        return {"tokens": int(mask.sum()), "init_norm": float(w_0[mask].norm(dim=1).mean()),
                "trained_norm": float(w_t[mask].norm(dim=1).mean()),
                "change_norm": float((w_t[mask] - w_0[mask]).norm(dim=1).mean())}

    u = units["trained"]
    cos = u @ u.T
    off = ~torch.eye(len(cos), dtype=torch.bool)
    high = (cos > 0.9) & off
    in_high = high.any(dim=1)
    nv = u[never]
    nv_cos = (nv @ nv.T)[~torch.eye(int(never.sum()), dtype=torch.bool)]
    labels = [book_of(i)[0] for i in range(vocab)]
    seen_ids = [i for i in range(vocab) if counts[i] > 0]
    stats = {
        "seen_tokens": len(seen_ids), "never_seen_tokens": int(never.sum()),
        "pairs_seen": {k: common.sig_all(spread(units[k][seen]), 4) for k in ("trained", "init")},
        "norms": {"never_seen": common.sig_all(norms(never), 4),
                  "seen_over_1000": common.sig_all(norms(torch.tensor(counts > 1000)), 4)},
        "never_seen_median_cosine": round(float(torch.quantile(nv_cos.float(), 0.5)), 4) if len(nv_cos) else None,
        "tail": {"pairs_over_0_9": int(high.sum()) // 2, "tokens": int(in_high.sum()),
                 "never_seen": int((in_high & never).sum())},
        "book_shares": {f: sum(1 for i in seen_ids if labels[i] == f) / len(seen_ids) for f in files},
    }
    check = None
    crun = common.run_dir(work, cfg.run_variant, cfg.check_seed) if cfg.check_seed >= 0 else None
    if crun is not None and (crun / "result.json").exists():
        other = table(common.load_model(crun))
        check = {"seed": cfg.check_seed, "val_loss": json.loads((crun / "result.json").read_text())["val_loss"],
                 "queries": []}
    rows = []
    for q in queries:
        ids = tok.encode(q).ids
        row = {"text": q, "ids": ids, "single": len(ids) == 1}
        if len(ids) == 1:
            row["book"], row["book_share"] = book_of(ids[0])
            row["neighbours"] = nearest(units["trained"], ids[0])
            row["init_neighbours"] = nearest(units["init"], ids[0])
            if check is not None:
                check["queries"].append({"text": q, "neighbours": [n["id"] for n in nearest(other, ids[0])]})
        rows.append(row)
    return {
        "schema_version": SCHEMA_VERSION,
        "run": {"variant": cfg.run_variant, "seed": cfg.run_seed, "steps": common.steps_of(result),
                "val_loss": result["val_loss"], "train_loss": result["train_loss"],
                "precision": common.precision(result), "tied": True,
                "vocab_size": vocab, "d_model": int(trained.embed.weight.shape[1])},
        "k": cfg.k, "metric": "cosine between rows of the tied embedding table (input embedding = output head)",
        "queries": rows,
        "pairs": {"trained": common.sig_all(spread(units["trained"]), 4), "init": common.sig_all(spread(units["init"]), 4)},
        "stats": stats, "check": check,
        "control": "the same seed's table before its first step (lab/experiments/common.py fresh_model)",
        "book_rule": "a token's book: the book of the corpus where it is most frequent in the training split per token"
                     " of that book; book_share: that book's share of the token's per-token rates over all books",
        "model_card": {"date": card["date"], "command": card["command"], "code": card["code"],
                       "corpus": card["corpus"]},
    }


def book_rates(train, meta: dict, vocab: int):
    """(books, V): each token's count in each book's training tokens, divided by that book's token count.
    The books lie one after another in train.bin, in meta.json's order."""
    rows, at = [], 0
    for b in meta["split"]["books"]:
        n = b["train_tokens"]
        rows.append(np.bincount(train[at:at + n], minlength=vocab) / max(n, 1))
        at += n
    if at != len(train):
        raise SystemExit("train.bin does not hold the books meta.json lists")
    return np.stack(rows)


# --- the command ---------------------------------------------------------------------------------------


def run(cfg: Config, prep: prepare.PrepareConfig, base: train.TrainConfig, out: str, invoked: str) -> dict:
    code = common.git_lab_commit()  # the code as this process loaded it
    print("tokenizer config:", json.dumps(asdict(cfg), ensure_ascii=False))
    work = Path(prep.work_dir)
    common.ensure_data(prep)
    meta = json.loads((work / "data" / "meta.json").read_text())
    books = split_books(prep, meta)
    sample = next((b for b in books if b["file"] == cfg.sample_book), None)
    if sample is None:
        raise SystemExit(f"sample_book {cfg.sample_book!r} is not in the corpus: {[b['file'] for b in books]}")
    sentence = first_sentence(sample["val"])
    t0 = time.perf_counter()
    rows = [sweep_size(size, books, meta, sentence, cfg, work / "tokenizer") for size in sizes_of(cfg)]
    lab_size = meta["tokenizer"]["vocab_size"]
    for row in rows:
        row["is_ours"] = row["vocab_size"] == lab_size
        if row["is_ours"]:
            if not same_merges(work / "tokenizer" / f"bpe-{lab_size}.json", work / "data" / "tokenizer.json"):
                raise SystemExit(f"size {lab_size}: the sweep's BPE differs from the work dir's tokenizer")
            if row["val_tokens"] != meta["split"]["val_tokens"] or row["train_tokens"] != meta["split"]["train_tokens"]:
                raise SystemExit(f"size {lab_size}: token counts differ from meta.json's")
    provenance = common.provenance(cfg.command or invoked, code)
    card = {
        "name": f"tokenizer-sweep-{common.corpus_label(meta)}",
        **provenance,
        "hardware": {"device": "cpu", "name": common.cpu_name(), "cpu_count": os.cpu_count() or 1},
        "library": f"tokenizers {tokenizers.__version__}",
        "trainer": "byte-level BPE as lab/prepare.py trains it (tokenizers' BpeTrainer, ByteLevel pre-tokenizer"
                   " without the regex pre-split, initial alphabet the 256 bytes), on every book's training chapters,"
                   " one chapter a text",
        "corpus": meta["corpus"], "split": meta["split"],
        "sample": {"book": cfg.sample_book, "text": sentence,
                   "rule": "the book's first validation sentence: the first line after the chapter title, up to its first 。"},
        "config": common.portable_config(asdict(cfg)),
        "prepare": common.portable_config(meta["config"]),
        "timing": {"sweep_seconds": round(time.perf_counter() - t0, 1),
                   "note": "sweep_seconds: this call's time for every size (a size read back from work/tokenizer/"
                           " costs almost nothing); train_seconds per size: the wall time of that size's BPE training"
                           " when it ran, on this machine; load_before: the 1-minute load average just before it"
                           " (other processes, e.g. a training run, shared the cores)"},
    }
    one_byte = Counter(c for b in books for c in b["val"] if len(c.encode("utf-8")) == 1)
    sweep = {"schema_version": SCHEMA_VERSION, "window": cfg.window, "rows": rows,
             "characters": char_rows(books, cfg), "model_card": card,
             "val_one_byte": [{"char": c, "count": n} for c, n in sorted(one_byte.items(), key=lambda x: (-x[1], x[0]))]}
    out_dir = Path(out)
    encoder = encoder_export(work, books, meta, card)
    neighbours = neighbours_export(cfg, work, card)
    path = schema.write_validated(schema.TOKENIZER_SWEEP_FILE, sweep, out_dir)
    print(f"tokenizer: wrote {path} ({path.stat().st_size:,} B)")
    path = schema.write_validated(schema.TOKENIZER_FILE, encoder, out_dir)
    print(f"tokenizer: wrote {path} ({path.stat().st_size:,} B)")
    if neighbours is not None:
        path = schema.write_validated(schema.TOKENIZER_NEIGHBOURS_FILE, neighbours, out_dir)
        print(f"tokenizer: wrote {path} ({path.stat().st_size:,} B)")
    return sweep
