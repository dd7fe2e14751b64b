"""The tiny-gpt page's data: a slice of 三國演義's training split, the validation slice, a
held-out slice of the training chapters (the characters right after the training slice), the
character vocabulary, the unigram and bigram reference losses (on exactly the characters the
page's validation loss averages over), and the reference band (the page's own Session trained at
the page's default settings in CPython with ten seeds, and again at the smaller settings the page
starts from on a MicroPython without ulab). The runs use widgets/common/tinygpt_ulab.py on numpy
where numpy is installed (the page's engine on ulab; its losses are tinygpt.py's to float
rounding, tests/widgets/test_tiny_gpt.py), else tinygpt.py. No torch.

    python -m lab.tinygpt --corpus ../shared/corpus/sanguo-yanyi.txt [--seeds 1 2 ... 10]

Writes data/tiny-gpt.json (schema: data/schemas/tiny-gpt.schema.json). The split is the lab's:
chapters 111-120 are held out; the training slice is the start of chapter 1 onward, the
validation slice the start of chapter 111 onward.
"""
import argparse
import datetime
import hashlib
import importlib.util
import json
import math
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# numpy's matrices here are tiny ((128, 32) by (32, 256)): BLAS threads only fight over the cores
# (measured: a validation took 2.4 s of CPU with them, 0.11 s without).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, str(ROOT / "widgets" / "common"))
import tinygpt as tg  # noqa: E402
import tinygpt_ulab  # noqa: E402

CHAPTER_RE = re.compile(r"^第[一二三四五六七八九十百零〇]+回", re.MULTILINE)  # as lab/prepare.py
VAL_FROM = 111   # chapters 111-120 are the lab's held-out validation chapters
VOCAB = 256      # characters, UNK included: the rest of the training split's characters fold into UNK
TRAIN_CHARS = 30000
VAL_CHARS = 6000
HELDOUT_CHARS = 2000  # right after the training slice: the training chapters' text, never trained on
SAMPLE_CHARS = 60
# Longer runs than the page's default (issue 54: do larger settings or more text pay?): the page's
# defaults and its largest settings (a smaller learning rate: 0.01 is worse there), each on the
# page's training slice and on ten times as much text from the same chapters' start, 3 seeds each.
LONGER_STEPS = 4000
LONGER_EVERY = 250
LONGER_SEEDS = (1, 2, 3)
LONGER_CHARS = (TRAIN_CHARS, 10 * TRAIN_CHARS)
LARGEST_LR = 0.003  # the page's largest settings (the top of each range it allows) train with this rate
SAMPLE_TEMPERATURE = 0.8
OUT = ROOT / "data" / "tiny-gpt.json"


def load_page_model():
    spec = importlib.util.spec_from_file_location("tiny_gpt_model", ROOT / "widgets" / "tiny_gpt" / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def chapters_of(text):
    starts = [m.start() for m in CHAPTER_RE.finditer(text)]
    starts[0] = 0
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


def ngram_losses(train, val, V):
    """Cross-entropy (nats/character) on every character of `val` after its first of an add-one
    unigram and of a bigram interpolated with it, both counted on the training slice; the
    bigram's weight is picked on the training slice's last tenth (counted on the rest), as
    lab/prepare.py does."""
    def fit(tokens):
        uni = [1] * V
        for t in tokens:
            uni[t] += 1
        total = float(sum(uni))
        big, ctx = {}, [0] * V
        for a, b in zip(tokens, tokens[1:]):
            big[(a, b)] = big.get((a, b), 0) + 1
            ctx[a] += 1
        return [u / total for u in uni], big, ctx

    def nll(model, tokens, lam):
        p_uni, big, ctx = model
        total = 0.0
        for a, b in zip(tokens, tokens[1:]):
            p_big = big.get((a, b), 0) / ctx[a] if ctx[a] else 0.0
            total -= math.log(lam * p_big + (1 - lam) * p_uni[b])
        return total / (len(tokens) - 1)

    cut = int(len(train) * 0.9)
    held = fit(train[:cut])
    lam = min([round(0.05 * k, 2) for k in range(20)], key=lambda l: nll(held, train[cut:], l))
    full = fit(train)
    return nll(full, val, 0.0), nll(full, val, lam), lam


def engine():
    """The engine the reference runs train with: the page's array engine on numpy, else tinygpt.py."""
    return tinygpt_ulab if tinygpt_ulab.np is not None else tg


def slice_loss(run, text):
    """The run's mean loss over back-to-back windows of `text` (every character after the first
    up to the last whole window), as the page measures its validation loss."""
    xs, ys = tg.cover_windows(run.tok.encode(text), run.cfg.block_size)
    return run.engine.loss_of(run.cfg, run.W, xs, ys)


def reference_runs(page, data, settings, seeds, label):
    """The page's Session trained at `settings` once per seed in CPython: (evaluation steps, each
    seed's validation and held-out losses and, at the end, its loss on the training slice, each
    seed's sample, the band over seeds at every evaluation)."""
    runs, samples = [], []
    t0 = time.time()
    for seed in seeds:
        run = page.Session(data, {**settings, "seed": seed}, engine=engine())
        run.train(settings["steps"])
        if run.diverged:
            raise SystemExit(f"{label}, seed {seed} diverged at step {run.diverged['step']}")
        runs.append({"seed": seed, "val": [v for _, v in run.val_log], "heldout": [v for _, v in run.held_log],
                     "train_end": slice_loss(run, data["train_text"])})
        samples.append({"seed": seed, "temperature": SAMPLE_TEMPERATURE, "text": run.sample(SAMPLE_CHARS, SAMPLE_TEMPERATURE)})
        print(f"{label}, seed {seed}: val {run.val_log[-1][1]:.3f} after {run.step} steps, {time.time() - t0:.0f} s", flush=True)
    by_step = list(zip(*[r["val"] for r in runs]))
    band = {"band_lo": [min(v) for v in by_step], "band_hi": [max(v) for v in by_step],
            "band_mean": [sum(v) / len(v) for v in by_step]}
    return [s for s, _ in run.val_log], runs, samples, band


def longer_runs(page, train_split, vocab, val_text):
    """The page's Session trained for LONGER_STEPS at the defaults and at LARGEST, on the page's
    training slice and on LONGER_CHARS[-1] characters: the validation and held-out losses every
    LONGER_EVERY steps (measured as the page measures them, on the whole slices), and each text's
    own n-gram lines on the defaults' validation characters."""
    tok = tg.Tokenizer(vocab)
    arms = []
    for chars in LONGER_CHARS:
        train_text = train_split[:chars]
        heldout_text = train_split[chars:chars + HELDOUT_CHARS]
        data = {"vocab": vocab, "train_text": train_text, "val_text": val_text, "heldout_text": heldout_text}
        T = page.DEFAULTS["block_size"]
        scored = tok.encode(val_text)[:(len(val_text) - 1) // T * T + 1]
        unigram, bigram, _ = ngram_losses(tok.encode(train_text), scored, len(vocab))
        largest = {**{k: page.LIMITS[k][1] for k in ("n_layer", "n_embd", "n_head", "block_size")}, "lr": LARGEST_LR}
        probe_text = train_text[:VAL_CHARS]  # trained-on characters, as many as the validation slice has
        for name, extra in (("defaults", {}), ("largest", largest)):
            settings = {**page.DEFAULTS, **extra, "steps": LONGER_STEPS}
            runs = []
            for seed in LONGER_SEEDS:
                t0 = time.process_time()
                run = page.Session(data, {**settings, "seed": seed}, engine=engine(), evaluate=False)
                run.pending = None  # no validation every EVAL_EVERY steps: measured here every LONGER_EVERY
                val, held, trained = [], [], []
                for step in range(LONGER_EVERY, LONGER_STEPS + 1, LONGER_EVERY):
                    for _ in range(LONGER_EVERY):
                        xs, ys = tg.get_batch(run.train_tokens, page.BATCH, run.cfg.block_size, run.rng)
                        run.engine.train_step(run.cfg, run.W, run.opt, xs, ys)
                    val.append(slice_loss(run, val_text))
                    held.append(slice_loss(run, heldout_text))
                    trained.append(slice_loss(run, probe_text))
                runs.append({"seed": seed, "val": val, "heldout": held, "trained": trained,
                             "cpu_seconds": round(time.process_time() - t0, 1)})
                print(f"longer: {name}, {chars} characters, seed {seed}: val {min(val):.3f} at best, "
                      f"{val[-1]:.3f} at {LONGER_STEPS}", flush=True)
            arms.append({"name": name, "settings": {k: settings[k] for k in page.SETTINGS if k != "seed"},
                         "train_chars": chars, "train_sha256": hashlib.sha256(train_text.encode("utf-8")).hexdigest(),
                         "unigram": unigram, "bigram": bigram, "runs": runs})
    return {"steps": list(range(LONGER_EVERY, LONGER_STEPS + 1, LONGER_EVERY)), "seeds": list(LONGER_SEEDS),
            "trained_chars": VAL_CHARS,
            "engine": engine().__name__, "arms": arms}


def passage_check(train_text, heldout_text, vocab):
    """How hard the held-out slice is in itself: a bigram counted on the training slice's first half only,
    scored on its second half and on the held-out slice (neither seen by it), and each slice's share of
    characters outside the vocabulary (□)."""
    tok = tg.Tokenizer(vocab)
    half = len(train_text) // 2
    first, second, held = (tok.encode(t) for t in (train_text[:half], train_text[half:], heldout_text))
    _, on_second, _ = ngram_losses(first, second, len(vocab))
    _, on_held, _ = ngram_losses(first, held, len(vocab))
    outside = lambda text: sum(ch not in set(vocab) for ch in text) / len(text)  # noqa: E731
    return {"fit_chars": half, "bigram_second_half": on_second, "bigram_heldout": on_held,
            "unk_train": outside(train_text), "unk_heldout": outside(heldout_text)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="sanguo-yanyi.txt (read, never copied)")
    ap.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 11)))
    args = ap.parse_args(argv)
    raw = Path(args.corpus).read_bytes()
    chapters = chapters_of(raw.decode("utf-8"))
    if len(chapters) != 120:
        raise SystemExit(f"expected 120 chapters, found {len(chapters)}")
    train_split = "".join(chapters[:VAL_FROM - 1])
    val_split = "".join(chapters[VAL_FROM - 1:])
    vocab = tg.build_vocab(train_split, VOCAB)
    train_text, val_text = train_split[:TRAIN_CHARS], val_split[:VAL_CHARS]
    heldout_text = train_split[TRAIN_CHARS:TRAIN_CHARS + HELDOUT_CHARS]
    tok = tg.Tokenizer(vocab)
    page = load_page_model()
    settings = dict(page.DEFAULTS)
    # The n-gram lines on exactly the characters the page's validation loss averages over at the
    # defaults: the targets of back-to-back windows of block_size over the validation slice.
    T = settings["block_size"]
    scored = tok.encode(val_text)[:(len(val_text) - 1) // T * T + 1]
    unigram, bigram, lam = ngram_losses(tok.encode(train_text), scored, len(vocab))
    data = {"vocab": vocab, "train_text": train_text, "val_text": val_text, "heldout_text": heldout_text}
    t0 = time.time()
    steps, runs, samples, band = reference_runs(page, data, settings, args.seeds, "defaults")
    default_seconds = time.time() - t0
    # The smaller model the page starts from where its Python is MicroPython (a phone): its own
    # reference, so that what the page tells a phone reader to expect is measured too.
    slow_steps, slow_runs, _, slow_band = reference_runs(page, data, dict(page.SLOW_DEFAULTS), args.seeds, "phone defaults")
    slow_seconds = time.time() - t0 - default_seconds
    longer = longer_runs(page, train_split, vocab, val_text)
    passages = passage_check(train_text, heldout_text, vocab)
    covered = sum(ch in set(vocab) for ch in val_text) / len(val_text)
    starts = [sum(len(c) for c in chapters[:i]) for i in range(len(chapters))]

    def chapters_spanned(offset, n):  # (first, last) chapter of the n characters from offset in the book
        first = max(i for i in range(len(starts)) if starts[i] <= offset)
        last = max(i for i in range(len(starts)) if starts[i] < offset + n)
        return [first + 1, last + 1]
    out = {
        "model_card": {
            "what": "tiny-gpt page: training and validation slices of 三國演義, character vocabulary, "
                    "n-gram reference losses, the reference band of the page's default settings, and longer "
                    "runs at the page's largest settings and on ten times the training text (longer)",
            "corpus": {"file": Path(args.corpus).name, "sha256": hashlib.sha256(raw).hexdigest(),
                       "chapters": len(chapters)},
            "split": {"train_chapters": [1, VAL_FROM - 1], "val_chapters": [VAL_FROM, len(chapters)],
                      "train_slice": {"from": "the start of chapter 1", "characters": len(train_text),
                                      "chapters": chapters_spanned(0, len(train_text)),
                                      "sha256": hashlib.sha256(train_text.encode("utf-8")).hexdigest()},
                      "heldout_slice": {"from": "right after the training slice", "characters": len(heldout_text),
                                        "chapters": chapters_spanned(len(train_text), len(heldout_text)),
                                        "sha256": hashlib.sha256(heldout_text.encode("utf-8")).hexdigest()},
                      "val_slice": {"from": f"the start of chapter {VAL_FROM}", "characters": len(val_text),
                                    "chapters": chapters_spanned(starts[VAL_FROM - 1], len(val_text)),
                                    "sha256": hashlib.sha256(val_text.encode("utf-8")).hexdigest()}},
            "tokenizer": {"kind": "characters", "vocab_size": len(vocab),
                          "vocab_from": f"the {VOCAB - 1} most frequent characters of chapters 1-{VAL_FROM - 1}, "
                                        "the rest folded into one token (□)",
                          "val_characters_in_vocab": covered},
            "reference": {"settings": {k: settings[k] for k in page.SETTINGS if k != "seed"},
                          "batch": page.BATCH, "weight_decay": page.WEIGHT_DECAY, "eval_every": page.EVAL_EVERY,
                          "evaluation": "back-to-back windows of block_size over the whole validation slice, "
                                        "then over the held-out slice (tinygpt.cover_windows)",
                          "seeds": args.seeds, "engine": engine().__name__,
                          "runtime": "CPython " + sys.version.split()[0], "wall_seconds": round(default_seconds, 1)},
            "ngram": {"unigram_smoothing": "add-one", "bigram_lambda": lam, "targets": len(scored) - 1,
                      "evaluated_on": "the characters the validation loss averages over at the defaults: every "
                                      "character of the validation slice after its first, up to the last whole window"},
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "command": "python -m lab.tinygpt --corpus ../shared/corpus/" + Path(args.corpus).name
                       + " --seeds " + " ".join(str(s) for s in args.seeds),
        },
        "vocab": vocab, "train_text": train_text, "heldout_text": heldout_text, "val_text": val_text,
        "reference": {"unigram": unigram, "bigram": bigram, "steps": steps, "runs": runs, **band, "samples": samples},
        "reference_slow": {"settings": {k: page.SLOW_DEFAULTS[k] for k in page.SETTINGS if k != "seed"},
                           "steps": slow_steps, "runs": slow_runs, **slow_band, "wall_seconds": round(slow_seconds, 1)},
        "longer": longer,
        "passages": passages,
    }
    OUT.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"unigram {unigram:.3f}, bigram {bigram:.3f}; wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
