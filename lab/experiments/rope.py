"""The positions export (C3 第 2 课, `python -m lab rope`): what RoPE does to a trained model, measured
exactly, with no training. It reads one finished run (`work/<variant>-s<seed>/ckpt.pt` and
`result.json`) and the work dir's prepared data, and writes `out/rope.json`:

- `shift`: validation windows run twice, at positions 0..T-1 and with every position moved by
  `shift` (RoPE rotates q and k at position + shift). RoPE's score between query m and key n depends
  on m - n only, so every attention weight must come back the same to float rounding: the export
  holds the largest difference over every layer, head, query and key (in fp32 as the model runs, and
  in fp64 on a few windows, where rounding shrinks), the largest logit difference and the loss both
  ways. The control: a learned-absolute-position model (lab/model.py `abs_pos`), trained when its run
  is in the work dir, else at initialisation (the export says which), shifted the same way on windows
  short enough for its table (block_size - shift tokens); the baseline runs on those windows too.
- `long`: windows of `long_tokens` (twice the context) that the model never saw in training: the loss
  at every position, the two halves, and the second half's tokens run alone at positions 0..T-1 (the
  same tokens with the context it was trained on).
- `pairs`: RoPE's frequency pairs from rope_base and the head size: each pair's angle per position,
  its wavelength in tokens and the turns it makes across the context; how many never complete one.

Every figure is computed from the checkpoint and the data; nothing is typed in.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from lab import schema, train
from lab.experiments.attention import AttentionCapture
from lab.experiments.common import fresh_model, git_lab_commit, load_model, portable_config, provenance
from lab.experiments.ffn import run_record
from lab.model import rope_frequencies
from lab.prepare import val_segments

NAME = "rope"
DEFAULT_OUT = "data/real-model/rope"
FILE = "rope/rope.json"
CONTROL = "abs_pos"  # lab/model.py POSITION_VARIANTS: learned absolute positions
# The training arms (lab/model.py POSITION_VARIANTS), each paired with the baseline's seeds 0-2 (same initial
# weights and batches). Seeds protocol v2 (AUTHORING.md): the primary comparisons, declared here before any of
# their runs trained (2026-12-06, while the queue ran baseline seed 0 and the SiLU FFN arm): each arm minus the
# baseline, on validation loss at the last evaluation (step 1,400), Holm-corrected together. Predictions (from
# ../shared/reviews/next-wave-anchors-2.md §1.5, not measured): NoPE higher (+0.03 to +0.15; Haviv et al. 2022:
# competitive at scale, worse small and short-trained), one head higher (+0.03 to +0.10; Vaswani et al. 2017
# Table 3 (A): h = 1 costs +0.073 nats), learned positions no direction (within +-0.05; Table 3 (E): learned
# = sinusoidal). Every other reading (training loss, other steps, the arms against each other) is description.
ARMS = ("nope", "one_head", "abs_pos")
ARM_SEEDS = (0, 1, 2)
PRIMARY = (("nope", "baseline"), ("one_head", "baseline"), ("abs_pos", "baseline"))
PRIMARY_KEY = "val_loss"
PRIMARY_STEP = 1400
PREDICTIONS = {"nope-baseline": 1, "one_head-baseline": 1, "abs_pos-baseline": 0}  # +1: arm higher; 0: none
DECLARED = "2026-12-06"


@dataclass
class Config:
    work_dir: str = "lab/runs"  # --work: data/ and the run directories
    out_dir: str = DEFAULT_OUT  # --out
    variant: str = "baseline"  # the run read: work/<variant>-s<seed>/ (a RoPE model)
    seed: int = 0
    shift: int = 100  # every position moved by this many places
    windows: int = 200  # validation windows of the shift test, spread evenly over every book's
    fp64_windows: int = 8  # the first few of them again in fp64
    long_tokens: int = 512  # the extrapolation windows' length (twice the training context)
    long_windows: int = 0  # how many of them, spread evenly (0 = every non-overlapping one)
    control: str = CONTROL  # the absolute-position control's variant; its run at this seed when finished, else step 0
    threads: int = 0  # torch's CPU threads (0 = torch's default)
    command: str = ""  # the command to record (default: this process's command line)
    part: str = "shift"  # "shift": rope.json (this module); "arms": arms.json, the training arms read (rope_arms.py)
    head_seed: int = 0  # part=arms: whose head measures (C3 第 1 课's) are exported, for the baseline and each arm
    book: str = "sanguo-yanyi.txt"  # part=arms: the book the head measures read (attention.json's)


def finished_run(run_dir: Path) -> dict:
    """result.json of a run trained to its last step, or a clear error (a run still training, stopped
    early with stop_at, or never started)."""
    if not (run_dir / "ckpt.pt").exists():
        raise FileNotFoundError(f"{run_dir}: no checkpoint; train the run first")
    if not (run_dir / "result.json").exists():
        raise FileNotFoundError(f"{run_dir}/result.json is missing: the run is not finished")
    result = json.loads((run_dir / "result.json").read_text())
    step = torch.load(run_dir / "ckpt.pt", map_location="cpu", weights_only=False)["state"]["step"]
    if result["steps_trained"] != result["steps"] or step != result["steps"]:
        raise ValueError(f"{run_dir}: trained {step} of {result['steps']} steps (result.json says"
                         f" {result['steps_trained']}): the run is not finished")
    return result


def windows_in(segments: list[tuple[int, int]], length: int, count: int = 0) -> list[int]:
    """Starts of non-overlapping windows of length + 1 tokens (inputs and next-token targets) inside each
    segment; `count` of them spread evenly over the list (0 = all).

    windows_in([(0, 10), (10, 15)], 3) -> [0, 4, 10]; windows_in([(0, 10), (10, 15)], 3, 2) -> [0, 10]
    """
    starts = [a + s for a, b in segments for s in range(0, b - a - length, length + 1)]
    if count and count < len(starts):
        starts = [starts[round(i * (len(starts) - 1) / (count - 1))] for i in range(count)] if count > 1 else starts[:1]
    return starts


@torch.no_grad()
def shifted_pass(model, ids: torch.Tensor, shift: int) -> dict:
    """One window at positions 0.. and at shift..: the largest and mean absolute differences of every
    attention weight (keys j <= t), the largest logit difference, and the loss (summed nats) both ways."""
    out = []
    for start in (0, shift):
        cap = AttentionCapture(model)
        try:
            logits, _ = model(ids[None, :-1], start=start, extrapolate=model.cfg.pos != "learned")  # (1, T, V)
        finally:
            cap.remove()
        loss = F.cross_entropy(logits[0].double(), ids[1:], reduction="sum").item()
        out.append((torch.stack(cap.weights), logits[0], loss))  # (L, H, T, T), (T, V)
    (w0, l0, loss0), (w1, l1, loss1) = out
    T = w0.shape[-1]
    causal = torch.ones(T, T, dtype=torch.bool).tril()  # (T, T)
    d = (w0 - w1).abs()[..., causal]  # (L, H, T(T+1)/2)
    return {"max": float(d.max()), "sum": float(d.double().sum()), "n": d.numel(),
            "logit_max": float((l0 - l1).abs().max()), "loss": (loss0, loss1), "tokens": T}


def shift_row(model, label: str, trained: bool, val: torch.Tensor, starts: list[int], tokens: int, shift: int,
              fp64: int) -> dict:
    """The shift test of one model on windows of `tokens` tokens, and its first `fp64` windows in fp64."""
    rows = [shifted_pass(model, val[s:s + tokens + 1], shift) for s in starts]
    n_tok = sum(r["tokens"] for r in rows)
    row = {"model": label, "trained": trained, "tokens": tokens, "windows": len(rows),
           "positions": [[0, tokens - 1], [shift, shift + tokens - 1]],
           "max_weight_diff": max(r["max"] for r in rows),
           "mean_weight_diff": sum(r["sum"] for r in rows) / sum(r["n"] for r in rows),
           "max_logit_diff": max(r["logit_max"] for r in rows),
           "loss": [round(sum(r["loss"][i] for r in rows) / n_tok, 6) for i in (0, 1)],
           "loss_diff": abs(sum(r["loss"][0] - r["loss"][1] for r in rows)) / n_tok}
    if fp64:
        model64 = model.double()
        try:
            rows64 = [shifted_pass(model64, val[s:s + tokens + 1], shift) for s in starts[:fp64]]
        finally:
            model.float()
        row["fp64"] = {"windows": len(rows64), "max_weight_diff": max(r["max"] for r in rows64),
                       "max_logit_diff": max(r["logit_max"] for r in rows64)}
    return row


@torch.no_grad()
def long_windows(model, val: torch.Tensor, starts: list[int], tokens: int) -> dict:
    """Loss at every position of windows of `tokens` tokens (past the context: RoPE's angles at positions
    the model never saw), and the second half's tokens run alone at positions 0..tokens/2 - 1."""
    half = tokens // 2
    by_pos = torch.zeros(tokens, dtype=torch.float64)
    alone = torch.zeros(half, dtype=torch.float64)
    for s in starts:
        ids = val[s:s + tokens + 1]
        logits, _ = model(ids[None, :-1], extrapolate=True)  # (1, tokens, V)
        by_pos += F.cross_entropy(logits[0].double(), ids[1:], reduction="none")
        solo, _ = model(ids[None, half:-1])  # (1, half, V) the second half from position 0
        alone += F.cross_entropy(solo[0].double(), ids[half + 1:], reduction="none")
    n = len(starts)
    by_pos, alone = by_pos / n, alone / n
    return {"tokens": tokens, "windows": n, "loss_by_position": [round(float(x), 4) for x in by_pos],
            "first_half": round(float(by_pos[:half].mean()), 4), "second_half": round(float(by_pos[half:].mean()), 4),
            "second_half_alone": round(float(alone.mean()), 4),
            "alone_by_position": [round(float(x), 4) for x in alone]}


def frequency_pairs(head_dim: int, base: float, context: int) -> dict:
    """RoPE's pairs: theta_i = base^(-2i/head_dim) radians per position, wavelength 2 pi / theta_i tokens,
    the turns over the largest offset in the context (context - 1 positions), and how many pairs turn
    less than once there.

    frequency_pairs(4, 10000.0, 256)["slow"] -> 1 (pair 1 turns 0.01 rad a position: 628 tokens a turn)
    """
    theta = rope_frequencies(head_dim, base).double()
    wavelength = 2 * math.pi / theta
    turns = (context - 1) * theta / (2 * math.pi)
    return {"head_dim": head_dim, "base": base, "context": context, "pairs": head_dim // 2,
            "theta": [float(f"{x:.6g}") for x in theta], "wavelength": [float(f"{x:.6g}") for x in wavelength],
            "turns": [float(f"{x:.6g}") for x in turns], "slow": int((turns < 1).sum())}


def corpus_block(meta: dict) -> dict:
    files = meta["corpus"].get("files") or [meta["corpus"]]
    return {"files": [{"file": f["file"], "sha256": f["sha256"]} for f in files],
            "val_tokens": meta["split"]["val_tokens"]}


def export(cfg: Config, invoked: str) -> dict:
    work = Path(cfg.work_dir)
    run_dir = work / f"{cfg.variant}-s{cfg.seed}"
    result = finished_run(run_dir)
    t0 = time.time()
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    model = load_model(run_dir)
    mc = model.cfg
    if mc.pos != "rope":
        raise ValueError(f"{cfg.variant} has pos={mc.pos!r}: the shift test reads a RoPE model")
    if not 0 < cfg.shift < mc.block_size - 1:
        raise ValueError(f"shift={cfg.shift}: between 1 and {mc.block_size - 2} (the control's windows are"
                         " block_size - shift tokens)")
    if cfg.long_tokens <= mc.block_size or cfg.long_tokens % 2:
        raise ValueError(f"long_tokens={cfg.long_tokens}: an even length past the context of {mc.block_size}")
    meta = json.loads((work / "data" / "meta.json").read_text())
    val = torch.from_numpy(np.fromfile(work / "data" / "val.bin", dtype=np.uint16).astype(np.int64))  # (N,)
    segments = [(a, b) for _, a, b in val_segments(meta)]

    full = windows_in(segments, mc.block_size, cfg.windows)
    short_len = mc.block_size - cfg.shift
    short = windows_in(segments, short_len, cfg.windows)
    if not full or not short:
        raise ValueError(f"the validation split has no window of {mc.block_size + 1} tokens inside a book")
    control_dir = work / f"{cfg.control}-s{cfg.seed}"
    try:
        control_result = finished_run(control_dir)
        control, trained = load_model(control_dir), True
    except (FileNotFoundError, ValueError):
        control_result, trained = None, False
        tc = train.TrainConfig(block_size=result["config"]["block_size"], dropout=result["config"]["dropout"])
        control = fresh_model(cfg.control, cfg.seed, mc.vocab_size, tc)  # train.run's model before its first step
    if control.cfg.pos != "learned":
        raise ValueError(f"control={cfg.control!r} is not a learned-position model (pos={control.cfg.pos!r})")
    shift = [shift_row(model, cfg.variant, True, val, full, mc.block_size, cfg.shift, cfg.fp64_windows),
             shift_row(model, cfg.variant, True, val, short, short_len, cfg.shift, cfg.fp64_windows),
             shift_row(control, cfg.control, trained, val, short, short_len, cfg.shift, 0)]
    long = long_windows(model, val, windows_in(segments, cfg.long_tokens, cfg.long_windows), cfg.long_tokens)
    if not long["windows"]:
        raise ValueError(f"the validation split has no window of {cfg.long_tokens + 1} tokens inside a book")

    hd = mc.d_model // mc.n_head
    doc = {
        "schema_version": 1,
        "model": run_record(run_dir),
        "model_config": {"n_layer": mc.n_layer, "n_head": mc.n_head, "d_model": mc.d_model, "head_dim": hd,
                         "block_size": mc.block_size, "vocab_size": mc.vocab_size, "rope_base": mc.rope_base},
        "corpus": corpus_block(meta),
        "shift": {"rule": ("validation windows (non-overlapping, inside one book, spread evenly over every book's) run at"
                           f" positions 0..T-1 and again at {cfg.shift}..{cfg.shift}+T-1, every other input the same;"
                           " max_weight_diff / mean_weight_diff: the largest and the mean absolute difference of every"
                           " attention weight (every layer, head, query t and key j <= t); max_logit_diff: the largest"
                           " logit difference; loss: mean next-token loss (nats) at the first positions, then shifted (loss_diff:"
                           " their absolute difference, unrounded);"
                           " fp64: the first windows again with the model in float64. The learned-position control"
                           f" runs on windows of block_size - shift = {short_len} tokens (its table has"
                           f" {mc.block_size} rows); the RoPE model on those and on full windows, whose shifted positions"
                           f" reach {cfg.shift + mc.block_size - 1}, past the context it was trained on."),
                  "shift": cfg.shift, "rows": shift,
                  "control": {"variant": cfg.control, "trained": trained,
                              "step": control_result["steps"] if trained else 0,
                              "params": control.num_params(),
                              **({"val_loss": control_result["val_loss"]} if trained else {})}},
        "long": {"rule": (f"non-overlapping windows of {cfg.long_tokens} tokens (+1 target) inside one book, spread"
                          " evenly over the validation split: the mean next-token loss (nats) at every position 0.."
                          f"{cfg.long_tokens - 1}, its two halves, and the second half's tokens run alone, from position"
                          " 0 (alone_by_position, second_half_alone: the same tokens with less context, at the"
                          " positions the model was trained on)."), **long},
        "pairs": {"rule": ("RoPE rotates channel pairs (2i, 2i+1) of every head by position x theta_i, theta_i ="
                           " rope_base^(-2i/head_dim); wavelength: 2 pi / theta_i tokens per turn; turns: over the"
                           " largest offset in the context, (block_size - 1) x theta_i / 2 pi; slow: the pairs that"
                           " turn less than once."),
                  **frequency_pairs(hd, mc.rope_base, mc.block_size)},
        "export_config": portable_config(asdict(cfg)),
        "seconds": round(time.time() - t0, 1),
        **provenance(cfg.command or invoked, git_lab_commit()),
    }
    return doc


PARTS = ("shift", "arms")


def run_export(cfg: Config, invoked: str = "python -m lab rope") -> dict:
    print("rope config:", json.dumps(asdict(cfg), ensure_ascii=False))
    if cfg.part not in PARTS:
        raise SystemExit(f"part={cfg.part!r}; known: {PARTS}")
    if cfg.part == "arms":
        from lab.experiments import rope_arms  # it imports this module
        return rope_arms.run_export(cfg, invoked)
    doc = export(cfg, invoked)
    path = schema.write_validated(FILE, doc, cfg.out_dir)
    base, _, control = doc["shift"]["rows"]
    print(f"rope: shift +{doc['shift']['shift']}: {base['model']} max weight difference {base['max_weight_diff']:.3g}"
          f" (fp64 {base['fp64']['max_weight_diff']:.3g}); {control['model']}"
          f" ({'trained' if control['trained'] else 'at initialisation'}) {control['max_weight_diff']:.3g};"
          f" {doc['long']['tokens']}-token windows: {doc['long']['first_half']:.4f} / {doc['long']['second_half']:.4f}"
          f" ({doc['long']['second_half_alone']:.4f} alone); {doc['pairs']['slow']} of {doc['pairs']['pairs']} pairs"
          f" turn less than once")
    print(f"rope: wrote {path} ({path.stat().st_size:,} B) in {doc['seconds']} s")
    return doc
