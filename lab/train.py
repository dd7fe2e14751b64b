"""Stage 2: train one variant with one seed; checkpoint so a killed run resumes.

Reads data_dir/{train,val}.bin and meta.json (from prepare); writes out_dir/ckpt.pt
(model, optimizer, RNG states, loss history, config) every ckpt_every steps and
out_dir/result.json (val loss on the full validation split, history, timing) at the end.
"""
from __future__ import annotations

import json
import math
import os
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from lab.model import GPT, NORMS, make_config, recorded_config, variant_overrides
from lab.prepare import val_segments
from lab.probe import probe_batch, token_identity


@dataclass
class TrainConfig:
    data_dir: str = "lab/runs/data"  # prepare's output
    out_dir: str = ""  # checkpoint + result.json; "" = lab/runs/<variant>-s<seed>
    variant: str = "baseline"  # a key of model.VARIANTS or model.RESIDUAL_VARIANTS
    seed: int = 0  # weight init, batch order and dropout all follow it
    steps: int = 1400  # optimizer steps; tokens seen = 1400 * 12 * 256 = 4.3M (about one pass over the seven books)
    batch_size: int = 12  # sequences per step
    block_size: int = 256  # tokens per sequence (the model's context)
    lr: float = 1e-3  # peak learning rate, reached after warmup (tuned: 1e-3 beat 2e-3 beat 4e-3)
    min_lr: float = 1e-4  # learning rate at the end of the cosine decay
    warmup_steps: int = 60  # linear warmup from 0
    weight_decay: float = 0.1  # AdamW decay on matrices and the embedding, not on norm weights
    norm_weight_decay: bool = False  # True: the same decay on the norms' gains too (LayerNorm's bias stays undecayed)
    beta1: float = 0.9  # AdamW first-moment decay
    beta2: float = 0.95  # AdamW second-moment decay
    grad_clip: float = 1.0  # max global gradient norm; 0 = off
    dropout: float = 0.0  # residual dropout: none, as in pre-training, now that the text hardly repeats
    eval_every: int = 200  # steps between evaluations on the full validation split
    ckpt_every: int = 50  # steps between checkpoints
    stop_at: int = 0  # stop after this many steps of the schedule (0 = all): the full run's trajectory up to there
    snapshot_every: int = 0  # > 0: the model's weights also kept at step 0 and every this many steps, in
    #                          snapshots/step<NNNNN>.pt (the induction lesson's probes over training); 0 = none
    device: str = "auto"  # auto = cuda when present, else cpu
    amp: str = "off"  # bf16 autocast for training: off = fp32 everywhere (one precision for every run); auto = when supported; on
    threads: int = 0  # torch CPU threads; 0 = torch's default
    progress: bool = True  # tqdm bar with loss and tokens/s
    bar_position: int = 0  # tqdm line (parallel runs each take one)

    def resolved_out_dir(self) -> Path:
        return Path(self.out_dir or f"lab/runs/{self.variant}-s{self.seed}")


# Fields that may differ when a run resumes (they do not change the trajectory).
RESUMABLE_DIFFERENCES = {"out_dir", "data_dir", "eval_every", "ckpt_every", "device", "threads", "progress",
                         "bar_position", "stop_at", "snapshot_every"}


# Fields added after the first exports, recorded only when they differ from the default
# (recorded_train_config), so every earlier run's checkpoint resumes and every export reads as before.
LATER_FIELDS = {"norm_weight_decay": False, "snapshot_every": 0}


def recorded_train_config(cfg: TrainConfig) -> dict:
    """asdict(cfg) without the later fields at their default. "norm_weight_decay" in recorded_train_config(TrainConfig()) -> False"""
    return {k: v for k, v in asdict(cfg).items() if not (k in LATER_FIELDS and v == LATER_FIELDS[k])}


def norm_gains(model: GPT) -> set[int]:
    """id() of every norm's gain parameter (RMSNorm.weight, LayerNorm.weight; not LayerNorm.bias)."""
    return {id(m.weight) for m in model.modules() if isinstance(m, NORMS)}


def make_optimizer(model: GPT, cfg: TrainConfig, lr: float, fused: bool = False) -> torch.optim.AdamW:
    """AdamW with decay on matrices and the embedding (and on the norms' gains when
    cfg.norm_weight_decay), none on the other vectors."""
    gains = norm_gains(model) if cfg.norm_weight_decay else set()
    decay = [p for p in model.parameters() if p.dim() >= 2 or id(p) in gains]
    no_decay = [p for p in model.parameters() if p.dim() < 2 and id(p) not in gains]
    return torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=lr, betas=(cfg.beta1, cfg.beta2), fused=fused)


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warmup, then cosine decay to min_lr at the last step.

    lr_at(0, TrainConfig(lr=1.0, min_lr=0.0, warmup_steps=10, steps=110)) -> 0.1
    lr_at(60, TrainConfig(lr=1.0, min_lr=0.0, warmup_steps=10, steps=110)) -> 0.5
    """
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    progress = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    return cfg.min_lr + 0.5 * (cfg.lr - cfg.min_lr) * (1 + math.cos(math.pi * min(1.0, progress)))


def load_tokens(data_dir, split: str) -> torch.Tensor:
    return torch.from_numpy(np.fromfile(Path(data_dir) / f"{split}.bin", dtype=np.uint16).astype(np.int64))  # (N,)


def get_batch(data: torch.Tensor, batch_size: int, block_size: int, gen: torch.Generator):
    """Random windows of block_size + 1 tokens: inputs and next-token targets, each (B, T)."""
    starts = torch.randint(len(data) - block_size, (batch_size,), generator=gen)  # (B,)
    window = data[starts[:, None] + torch.arange(block_size + 1)]  # (B, T+1)
    return window[:, :-1], window[:, 1:]  # (B, T), (B, T)


@torch.no_grad()
def evaluate(model: GPT, data: torch.Tensor, block_size: int, device, batch_size: int = 32,
             segments=None) -> tuple[float, list[float]]:
    """Mean next-token cross-entropy (nats) over the whole split and over each segment (a book's
    part of it: [first, end) token ranges, the whole split when None), in consecutive
    non-overlapping windows of block_size inside each segment (every token but a segment's first
    is predicted once). The overall figure is the mean over every predicted token."""
    was_training = model.training
    model.eval()
    totals = []
    for first, end in segments or [(0, len(data))]:
        part = data[first:end]
        total, count = 0.0, 0
        starts = list(range(0, len(part) - 1, block_size))
        for i in range(0, len(starts), batch_size):
            chunk = starts[i : i + batch_size]
            lengths = [min(block_size, len(part) - 1 - s) for s in chunk]
            for length in sorted(set(lengths)):  # the last window may be shorter
                group = [s for s, n in zip(chunk, lengths) if n == length]
                idx = torch.stack([part[s : s + length] for s in group]).to(device)  # (b, T)
                tgt = torch.stack([part[s + 1 : s + length + 1] for s in group]).to(device)  # (b, T)
                logits, _ = model(idx)  # (b, T, V)
                total += F.cross_entropy(logits.float().flatten(0, 1), tgt.flatten(), reduction="sum").item()
                count += tgt.numel()
        totals.append((total, count))
    model.train(was_training)
    overall = sum(t for t, _ in totals) / sum(c for _, c in totals)
    return overall, [t / c for t, c in totals]


def resolve_device(name: str) -> torch.device:
    return torch.device("cuda" if name == "auto" and torch.cuda.is_available() else ("cpu" if name == "auto" else name))


def resolve_amp(amp: str, device: torch.device) -> bool:
    if amp in ("on", "off"):
        return amp == "on"
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())


def run(cfg: TrainConfig) -> dict:
    overrides = variant_overrides(cfg.variant)  # ValueError for an unknown name
    out = cfg.resolved_out_dir()
    out.mkdir(parents=True, exist_ok=True)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    device = resolve_device(cfg.device)
    use_amp = resolve_amp(cfg.amp, device)
    meta = json.loads((Path(cfg.data_dir) / "meta.json").read_text())
    mcfg = make_config(vocab_size=meta["tokenizer"]["vocab_size"], block_size=cfg.block_size, dropout=cfg.dropout,
                       **overrides)
    train_data, val_data = load_tokens(cfg.data_dir, "train"), load_tokens(cfg.data_dir, "val")
    books = val_segments(meta)  # (file, first, end) of each book's validation tokens

    torch.manual_seed(cfg.seed)
    model = GPT(mcfg).to(device)
    opt = make_optimizer(model, cfg, cfg.lr, fused=device.type == "cuda")
    gen = torch.Generator().manual_seed(cfg.seed)
    state = {"step": 0, "losses": [], "evals": [], "probes": [], "train_seconds": 0.0, "wall_seconds": 0.0}

    ckpt_path = out / "ckpt.pt"
    if ckpt_path.exists():
        ckpt = torch.load(ckpt_path, map_location=device, weights_only=False)
        saved = {**LATER_FIELDS, **ckpt["config"]}  # a checkpoint from before a later field has its default
        diff = {k: (saved.get(k), v) for k, v in asdict(cfg).items()
                if k not in RESUMABLE_DIFFERENCES and saved.get(k) != v}
        if diff:
            raise ValueError(f"{ckpt_path} was made with other settings (saved, now): {diff}; "
                             "delete the run directory or choose another out_dir")
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        gen.set_state(ckpt["data_rng"])
        torch.set_rng_state(ckpt["torch_rng"])
        if device.type == "cuda" and ckpt.get("cuda_rng") is not None:
            torch.cuda.set_rng_state(ckpt["cuda_rng"])
        state = {"probes": [], **ckpt["state"]}  # a checkpoint from before probes has none
        if state["step"] >= (cfg.stop_at or cfg.steps) and (out / "result.json").exists():
            print(f"train {cfg.variant} seed {cfg.seed}: already done ({ckpt_path})")
            return json.loads((out / "result.json").read_text())
        print(f"train {cfg.variant} seed {cfg.seed}: resuming at step {state['step']} from {ckpt_path}")

    def save():
        ckpt = {"model": model.state_dict(), "optimizer": opt.state_dict(), "data_rng": gen.get_state(),
                "torch_rng": torch.get_rng_state(),
                "cuda_rng": torch.cuda.get_rng_state() if device.type == "cuda" else None,
                "state": state, "config": recorded_train_config(cfg), "model_config": recorded_config(mcfg)}
        torch.save(ckpt, out / "ckpt.pt.tmp")
        os.replace(out / "ckpt.pt.tmp", ckpt_path)  # atomic: a kill never leaves half a checkpoint

    def snapshot():
        """The weights at this step, kept (before the checkpoint of the same step, so a resumed run has them)."""
        snaps = out / "snapshots"
        snaps.mkdir(exist_ok=True)
        path = snaps / f"step{state['step']:05d}.pt"
        torch.save(model.state_dict(), path.with_suffix(".tmp"))
        os.replace(path.with_suffix(".tmp"), path)

    print(f"train config: {json.dumps(recorded_train_config(cfg))}")
    print(f"model config: {json.dumps(recorded_config(mcfg))}; {model.num_params():,} parameters; device {device};"
          f" bf16 autocast {use_amp}; {torch.get_num_threads()} threads")
    tokens_per_step = cfg.batch_size * cfg.block_size
    autocast = (lambda: torch.autocast(device.type, dtype=torch.bfloat16)) if use_amp else nullcontext
    bar = tqdm(total=cfg.steps, initial=state["step"], desc=f"{cfg.variant} s{cfg.seed}", unit="step",
               disable=not cfg.progress, position=cfg.bar_position, mininterval=2.0, leave=True)
    probe_idx = probe_batch(val_data, cfg.block_size).to(device)
    if state["step"] == 0 and not state["probes"]:
        state["probes"].append({"step": 0, **token_identity(model, probe_idx)})
    if state["step"] == 0 and cfg.snapshot_every:
        snapshot()
    model.train()
    wall0 = time.time()
    wall_base = state["wall_seconds"]
    last = min(cfg.stop_at or cfg.steps, cfg.steps)
    while state["step"] < last:
        step = state["step"]
        t0 = time.time()
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg)
        x, y = get_batch(train_data, cfg.batch_size, cfg.block_size, gen)
        x, y = x.to(device), y.to(device)  # (B, T)
        with autocast():
            _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        state["losses"].append(round(loss.item(), 5))
        state["train_seconds"] += time.time() - t0
        state["step"] = step + 1
        tok_s = tokens_per_step * state["step"] / max(state["train_seconds"], 1e-9)
        bar.update(1)
        bar.set_postfix(loss=f"{loss.item():.3f}", tok_s=f"{tok_s:,.0f}", refresh=False)
        if state["step"] % cfg.eval_every == 0 or state["step"] == last:
            val, per_book = evaluate(model, val_data, cfg.block_size, device, segments=[b[1:] for b in books])
            recent = state["losses"][-min(cfg.eval_every, 50):]
            state["evals"].append({"step": state["step"], "tokens": state["step"] * tokens_per_step,
                                   "epochs": round(state["step"] * tokens_per_step / len(train_data), 4),
                                   "train_loss": round(sum(recent) / len(recent), 4), "val_loss": round(val, 4),
                                   "val_by_book": {b[0]: round(v, 4) for b, v in zip(books, per_book)},
                                   "wall_seconds": round(wall_base + time.time() - wall0, 1)})
            state["probes"].append({"step": state["step"], **token_identity(model, probe_idx)})
            bar.write(f"{cfg.variant} s{cfg.seed} step {state['step']}: train {state['evals'][-1]['train_loss']:.3f}"
                      f" val {val:.4f} ({tok_s:,.0f} tok/s)")
        state["wall_seconds"] = wall_base + time.time() - wall0
        if cfg.snapshot_every and (state["step"] % cfg.snapshot_every == 0 or state["step"] == last):
            snapshot()
        if state["step"] % cfg.ckpt_every == 0 or state["step"] == last:
            save()
    bar.close()

    final = state["evals"][-1]
    result = {
        "variant": cfg.variant, "seed": cfg.seed, "params": model.num_params(),
        "val_loss": final["val_loss"], "train_loss": final["train_loss"], "val_by_book": final.get("val_by_book"),
        "train_tokens": len(train_data), "epochs": round(cfg.steps * tokens_per_step / len(train_data), 4),
        "steps": cfg.steps, "steps_trained": state["step"], "tokens": cfg.steps * tokens_per_step,
        "wall_seconds": round(state["wall_seconds"], 1),
        "train_tokens_per_second": round(tokens_per_step * state["step"] / state["train_seconds"], 1),
        "device": str(device), "bf16_autocast": use_amp, "threads": torch.get_num_threads(),
        "history": state["evals"], "probes": state["probes"], "step_losses": state["losses"],
        "config": recorded_train_config(cfg),
        "model_config": recorded_config(mcfg),
    }
    (out / "result.json").write_text(json.dumps(result, indent=1))
    print(f"train {cfg.variant} seed {cfg.seed}: val {final['val_loss']:.4f} nats/token after {state['step']} steps,"
          f" {result['wall_seconds']:.0f} s, {result['train_tokens_per_second']:,.0f} tok/s")
    return result

