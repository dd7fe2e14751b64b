"""The synthetic copy task (C3 第 3 课, `python -m lab copytask`): where induction heads form, watched step by step.

Each sequence is `seq_len` tokens drawn uniformly from a vocabulary of `vocab` symbols, whose first L tokens come
again right after them (L drawn per sequence from min_len..max_len, so the copy is never a fixed distance back and
no position-only head can do it; the tokens after the repeat stay random). The loss that matters is the **copy
loss**: the mean next-token loss on the repeat's predictable tokens (positions L..2L-2 predicting L+1..2L-1); a
model that cannot copy sits near ln(vocab), one that copies near 0.

Three arms of the lab's own model (lab/model.py, attention only, no FFN): 2 layers (an induction head can read a
previous-token head of layer 1), 1 layer (it cannot), 1 layer with smeared keys (each key mixed with the previous
position's: one layer can then match "the token before"), `seeds` seeds each, AdamW at a constant rate. Every
`every` steps, on a fixed evaluation set: the copy loss, each layer's and head's previous-token share (mean weight on
key t-1) and prefix-matching share (queries t in the repeat, weight on key t-L+1, the token after the earlier copy
of token t). For the widget, seed 0 of each arm keeps its attention maps on one example sequence at `snap_steps`.
Trains in seconds per run on one CPU core; nothing is read from disk.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

from lab import schema
from lab.experiments.attention import AttentionCapture
from lab.experiments.common import git_lab_commit, portable_config, provenance
from lab.model import GPT, make_config, variant_overrides

NAME = "copytask"
DEFAULT_OUT = "data/real-model/induction"
FILE = "induction/copy-task.json"
ARMS = ("attn_only_2l", "attn_only_1l", "smeared_1l")  # lab/model.py INDUCTION_VARIANTS


@dataclass
class Config:
    out_dir: str = DEFAULT_OUT  # --out
    vocab: int = 32  # symbols
    seq_len: int = 48  # tokens a sequence (the model's context)
    min_len: int = 8  # L, the copied segment's length, drawn per sequence from min_len..max_len
    max_len: int = 24
    d_model: int = 64
    n_head: int = 2
    batch: int = 32
    lr: float = 1e-3  # AdamW, constant, no weight decay (3e-3 left every 2-layer seed on the plateau for 1,500 steps)
    steps: int = 1500
    seeds: str = "0,1,2,3,4"
    every: int = 25  # steps between evaluations
    eval_sequences: int = 256  # the fixed evaluation set (its own generator)
    head_sequences: int = 64  # of which the head measures read the first this many
    example_len: int = 10  # the widget's example: L = example_len, its repeat, no tail
    snap_steps: str = "0,100,200,250,300,325,350,375,400,450,500,750,1000,1500"
    threads: int = 1
    command: str = ""


def draw(count: int, cfg: Config, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(count, seq_len + 1) tokens with each row's first L repeated at L..2L-1, and the (count, seq_len) mask of
    the predictions that the repeat makes certain (positions L..2L-2)."""
    x = torch.randint(cfg.vocab, (count, cfg.seq_len + 1), generator=gen)
    lengths = torch.randint(cfg.min_len, cfg.max_len + 1, (count,), generator=gen)
    mask = torch.zeros(count, cfg.seq_len, dtype=torch.bool)
    for i, n in enumerate(lengths.tolist()):
        x[i, n: 2 * n] = x[i, :n]
        mask[i, n: 2 * n - 1] = True
    return x, mask


def lengths_of(mask: torch.Tensor) -> list[int]:
    """Each row's L from its mask (the mask covers positions L..2L-2: L - 1 of them)."""
    return [int(m.sum()) + 1 for m in mask]


def copy_loss(model, x: torch.Tensor, mask: torch.Tensor) -> tuple[float, float]:
    """The mean next-token loss on the repeat's predictable tokens, and on the first copy's (positions 0..L-2)."""
    logits, _ = model(x[:, :-1])
    loss = F.cross_entropy(logits.flatten(0, 1), x[:, 1:].flatten(), reduction="none").view(mask.shape)
    first = torch.zeros_like(mask)
    for i, n in enumerate(lengths_of(mask)):
        first[i, : n - 1] = True
    return float(loss[mask].mean()), float(loss[first].mean())


def head_shares(model, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(n_layer, H) mean previous-token share over queries t >= 1 and prefix-matching share over the repeat's
    queries t = L..2L-1 (weight on key t-L+1), one sequence at a time (AttentionCapture keeps one)."""
    prev = pm = 0.0
    for seq, n in zip(x[:, :-1], lengths_of(mask)):
        cap = AttentionCapture(model)
        try:
            model(seq[None])
        finally:
            cap.remove()
        w = torch.stack(cap.weights).double()  # (n_layer, H, T, T)
        t = torch.arange(1, w.shape[-1])
        prev = prev + w[..., t, t - 1].mean(-1)
        q = torch.arange(n, 2 * n)
        pm = pm + w[..., q, q - n + 1].mean(-1)
    return prev / len(x), pm / len(x)


def best(shares: torch.Tensor) -> dict:
    i = int(shares.argmax())
    layer, head = divmod(i, shares.shape[1])
    return {"layer": layer + 1, "head": head + 1, "share": round(float(shares.flatten()[i]), 4)}


def example_sequence(cfg: Config) -> torch.Tensor:
    """The widget's example: example_len symbols (their own generator) and the same again."""
    half = torch.randint(cfg.vocab, (cfg.example_len,), generator=torch.Generator().manual_seed(7))
    return torch.cat([half, half])


def maps(model, seq: torch.Tensor) -> list[list[list[list[float]]]]:
    """Every layer's and head's attention weights on seq, rows = queries, 2 decimals, each row up to its query."""
    cap = AttentionCapture(model)
    try:
        model(seq[None])
    finally:
        cap.remove()
    return [[[[round(float(v), 2) for v in row[: t + 1]] for t, row in enumerate(head)] for head in layer]
            for layer in cap.weights]


def train_arm(variant: str, seed: int, cfg: Config, evalset, snaps: set[int] | None) -> dict:
    torch.manual_seed(seed)
    mc = make_config(**{**variant_overrides(variant), "vocab_size": cfg.vocab, "block_size": cfg.seq_len,
                        "d_model": cfg.d_model, "n_head": cfg.n_head})
    model = GPT(mc)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(1000 + seed)  # the batches' own stream
    x_eval, m_eval = evalset
    example = example_sequence(cfg)
    points, kept = [], []
    t0 = time.time()
    for step in range(cfg.steps + 1):
        if step % cfg.every == 0 or (snaps and step in snaps):
            model.eval()
            with torch.no_grad():
                if step % cfg.every == 0:
                    loss, first = copy_loss(model, x_eval, m_eval)
                    prev, pm = head_shares(model, x_eval[: cfg.head_sequences], m_eval[: cfg.head_sequences])
                    points.append({"step": step, "copy_loss": round(loss, 4), "first_loss": round(first, 4),
                                   "previous": best(prev), "prefix_matching": best(pm)})
                if snaps and step in snaps:
                    kept.append({"step": step, "maps": maps(model, example)})
            model.train()
        if step == cfg.steps:
            break
        x, mask = draw(cfg.batch, cfg, gen)
        logits, _ = model(x[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), x[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    row = {"variant": variant, "seed": seed, "n_layer": mc.n_layer, "smear_keys": mc.smear_keys,
           "params": model.num_params(), "points": points, "seconds": round(time.time() - t0, 1)}
    if snaps:
        row["snapshots"] = kept
    last = points[-1]
    print(f"copytask: {variant} s{seed}: copy loss {points[0]['copy_loss']:.2f} -> {last['copy_loss']:.2f},"
          f" prefix matching {last['prefix_matching']['share']:.2f}, previous {last['previous']['share']:.2f};"
          f" {row['seconds']} s", flush=True)
    return row


def export(cfg: Config, invoked: str) -> dict:
    if not 2 <= cfg.min_len <= cfg.max_len or 2 * cfg.max_len > cfg.seq_len or 2 * cfg.example_len > cfg.seq_len:
        raise ValueError(f"min_len={cfg.min_len}, max_len={cfg.max_len}, example_len={cfg.example_len}: a segment and"
                         f" its repeat must fit seq_len={cfg.seq_len}")
    torch.set_num_threads(cfg.threads)
    t0 = time.time()
    seeds = [int(s) for s in cfg.seeds.split(",") if s.strip()]
    snaps = {int(s) for s in cfg.snap_steps.split(",") if s.strip()}
    evalset = draw(cfg.eval_sequences, cfg, torch.Generator().manual_seed(12345))
    runs = [train_arm(v, s, cfg, evalset, snaps if s == seeds[0] else None) for v in ARMS for s in seeds]
    return {
        "schema_version": 1,
        "task": {"vocab": cfg.vocab, "seq_len": cfg.seq_len, "min_len": cfg.min_len, "max_len": cfg.max_len,
                 "uniform_loss": round(float(torch.log(torch.tensor(float(cfg.vocab)))), 4),
                 "rule": ("uniform random symbols; the first L (drawn per sequence from min_len..max_len) repeated"
                          " right after them; copy_loss: the mean next-token loss of positions L..2L-2 (the repeat's"
                          " predictable tokens); first_loss: of positions 0..L-2")},
        "measures": ("on a fixed evaluation set of eval_sequences sequences (its own generator): copy_loss and"
                     " first_loss; on its first head_sequences: per layer and head, the mean weight on key t-1 over"
                     " queries t >= 1 (previous) and on key t-L+1 over the repeat's queries t = L..2L-1"
                     " (prefix_matching); each point gives the best head of each"),
        "example": example_sequence(cfg).tolist(),
        "runs": runs,
        "model_card": {"model": "lab/model.py GPT, attention only (d_ff 0), RoPE, pre-norm RMSNorm, tied embedding",
                       "optimizer": f"AdamW lr {cfg.lr} constant, no weight decay, batch {cfg.batch}",
                       "hardware": {"device": "cpu", "threads": cfg.threads, "torch": torch.__version__}},
        "export_config": portable_config(asdict(cfg)),
        "seconds": round(time.time() - t0, 1),
        **provenance(cfg.command or invoked, git_lab_commit()),
    }


def run_export(cfg: Config, invoked: str = "python -m lab copytask") -> dict:
    print("copytask config:", json.dumps(asdict(cfg), ensure_ascii=False))
    doc = export(cfg, invoked)
    path = schema.write_validated(FILE, doc, cfg.out_dir)
    print(f"copytask: {len(doc['runs'])} runs; wrote {path} ({path.stat().st_size:,} B) in {doc['seconds']} s")
    return doc
