"""The positions lesson's training arms, read (C3 第 2 课, `python -m lab rope part=arms`): trains nothing.

The arms (lab/model.py POSITION_VARIANTS: `nope`, `one_head`, `abs_pos`) train with `python -m lab train`
(one run at a time, `../lab-runs/queue5.sh`), paired with the baseline's seeds (same initial weights and
batches). This reads every finished run of the baseline and the arms in the work dir and writes
`out/arms.json`:

- `runs`: each finished run's final and per-evaluation training and validation losses, its parameters and
  model config (the site reads them by seeds protocol v2, `widgets/common/seeds.py`);
- `missing`: the declared (arm, seed) pairs not finished yet (a run still training is not read);
- `primary`: the comparisons declared before the runs (rope.PRIMARY), with their predictions;
- `heads`: C3 第 1 课's head measures (lab/experiments/attention.py `measure`: weight on the previous
  token, on punctuation, ...) for seed `head_seed` of the baseline and of each arm, over the same book's
  validation windows as attention.json: does the no-position model lose its previous-token head, can one
  head do what layer 2's two heads did?

Every run must share the baseline's training settings (variant and seed aside); one that does not is refused.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from lab import schema
from lab.experiments import attention, rope
from lab.experiments.common import (check_same_settings, finite, git_lab_commit, hardware, load_model,
                                    portable_config, provenance)
from lab.model import POSITION_VARIANTS

FILE = "rope/arms.json"
DESCRIPTIONS = {
    "baseline": "the baseline: 4 heads of 64, RoPE (base 10,000) on q and k",
    "nope": "no position at all: q and k are not rotated; only the causal mask orders the tokens",
    "one_head": "one head of 256 instead of 4 of 64: the same W_q, W_k, W_v, W_o, one softmax per layer",
    "abs_pos": "a learned vector per position (block_size x d_model) added to the token embedding, no rotation",
}
assert set(DESCRIPTIONS) == {"baseline", *POSITION_VARIANTS}
ORDER = ("baseline", *rope.ARMS)


def run_row(r: dict) -> dict:
    return {"variant": r["variant"], "seed": r["seed"], "params": r["params"], "model_config": r["model_config"],
            "steps_trained": r["steps_trained"], "val_loss": finite(r["val_loss"]), "train_loss": finite(r["train_loss"]),
            "val_by_book": {k: finite(v) for k, v in (r.get("val_by_book") or {}).items()},
            "history": [{"step": h["step"], "tokens": h["tokens"], "train_loss": finite(h["train_loss"]),
                         "val_loss": finite(h["val_loss"])} for h in r["history"]],
            "wall_seconds": r["wall_seconds"], "threads": r["threads"]}


def finished_runs(work: Path) -> tuple[list[dict], list[list]]:
    """Every finished baseline and arm run in the work dir (ORDER, then seed), and the declared arm seeds
    that are not finished."""
    runs, missing = [], []
    for name in ORDER:
        seeds = sorted(int(p.name.rsplit("-s", 1)[1]) for p in work.glob(f"{name}-s*") if p.name.rsplit("-s", 1)[1].isdigit())
        for seed in sorted(set(seeds) | (set(rope.ARM_SEEDS) if name != "baseline" else set())):
            try:
                runs.append(rope.finished_run(work / f"{name}-s{seed}"))
            except (FileNotFoundError, ValueError):
                if name != "baseline" and seed in rope.ARM_SEEDS:
                    missing.append([name, seed])
    return runs, missing


def head_measures(work: Path, runs: list[dict], seed: int, book: str) -> dict:
    """attention.measure for seed `seed` of every variant that has it finished, on `book`'s validation windows."""
    meta = json.loads((work / "data" / "meta.json").read_text())
    pieces = [bytes.fromhex(h) for h in json.loads((work / "data" / "token_bytes.json").read_text())]
    val = torch.from_numpy(np.fromfile(work / "data" / "val.bin", dtype=np.uint16).astype(np.int64))  # (N,)
    lo, hi = attention.book_range(meta, book, len(val))
    vocab = attention.token_texts(pieces, range(len(pieces)))
    punct_of = torch.tensor([t["punct"] for t in vocab])  # (V,)
    with_punct = torch.tensor(attention.holds_punctuation(pieces))  # (V,)
    models, windows = [], []
    for r in runs:
        if r["seed"] != seed:
            continue
        model = load_model(work / f"{r['variant']}-s{seed}")
        block = model.cfg.block_size
        windows = [(s, min(s + block, hi)) for s in range(lo, hi, block) if min(s + block, hi) - s > 1]
        m = attention.measure(model, val, punct_of, windows, with_punct)
        models.append({"variant": r["variant"], "n_head": model.cfg.n_head, "heads": m["heads"],
                       "prefix_average": m["prefix_average"], "queries": m["queries"]})
    return {"rule": ("C3 第 1 课's head measures (lab/experiments/attention.py measure, attention.json's"
                     f" measures.rule): per layer and head, over every query t >= 1 of {book}'s validation windows"
                     " (non-overlapping, block_size tokens), the mean weight on the previous token, itself, the"
                     " window's first token, earlier occurrences of its own token, the token after such an"
                     " occurrence, punctuation, and the mean look-back distance; prefix_average: the same for"
                     " weights 1/(t+1)."), "book": book, "seed": seed, "windows": len(windows), "models": models}


def export(cfg: rope.Config, invoked: str) -> dict:
    work = Path(cfg.work_dir)
    t0 = time.time()
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    runs, missing = finished_runs(work)
    base = [r for r in runs if r["variant"] == "baseline"]
    if not base:
        raise FileNotFoundError(f"{work}: no finished baseline run; the arms pair with the baseline's seeds")
    try:
        check_same_settings(runs)
    except ValueError as e:
        raise ValueError(f"an arm's run was trained with other settings than the baseline's: {e}") from None
    meta = json.loads((work / "data" / "meta.json").read_text())
    return {
        "schema_version": 1,
        "primary": {"pairs": [list(p) for p in rope.PRIMARY], "key": rope.PRIMARY_KEY, "step": rope.PRIMARY_STEP,
                    "predictions": rope.PREDICTIONS, "declared": rope.DECLARED, "arm_seeds": list(rope.ARM_SEEDS)},
        "variants": [{"name": n, "description": DESCRIPTIONS[n]} for n in ORDER],
        "runs": [run_row(r) for r in runs],
        "missing": missing,
        "heads": head_measures(work, runs, cfg.head_seed, cfg.book),
        "model_card": {"hardware": hardware(base[0]), "corpus": rope.corpus_block(meta),
                       "train_config": portable_config({k: v for k, v in base[0]["config"].items()
                                                        if k not in ("variant", "seed", "bar_position", "out_dir")})},
        "export_config": portable_config(asdict(cfg)),
        "seconds": round(time.time() - t0, 1),
        **provenance(cfg.command or invoked, git_lab_commit()),
    }


def run_export(cfg: rope.Config, invoked: str = "python -m lab rope part=arms") -> dict:
    doc = export(cfg, invoked)
    path = schema.write_validated(FILE, doc, cfg.out_dir)
    have = {}
    for r in doc["runs"]:
        have.setdefault(r["variant"], []).append(r["seed"])
    print(f"rope arms: finished {have}; missing {doc['missing']}; head measures of seed {cfg.head_seed}:"
          f" {[m['variant'] for m in doc['heads']['models']]}")
    print(f"rope arms: wrote {path} ({path.stat().st_size:,} B) in {doc['seconds']} s")
    return doc
