"""The residual experiment (C4 第 2 课): the skip connection removed, and depth with and without it.

    python -m lab residual --corpus PATH --out data/real-model/residual [key=value ...]

prepare (only when the work dir has no data yet: the same data as `all`) -> train the
baseline's seeds (the FFN experiment's runs, reused when the work dir holds them) and
model.RESIDUAL_VARIANTS with the baseline's training settings -> measure the residual
stream of the trained models and the gradients at step 0 -> write
out/residual.json, validated first with data/schemas/real-model/residual/residual.schema.json.
Run it again after a kill: finished runs are skipped, the others resume.
"""
from __future__ import annotations

import inspect
import json
import math
import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from lab import prepare, schema, train
from lab.experiments import common
from lab.experiments.common import ensure_data, fresh_model, load_model, sig_all
from lab.model import GPT, RESIDUAL_VARIANTS, make_config, residual_init_std, variant_overrides

NAME = "residual"  # python -m lab residual
DEFAULT_OUT = "data/real-model/residual"
VARIANT_NAMES = ("baseline", *RESIDUAL_VARIANTS)  # the experiment's runs, in export order


@dataclass
class Config:
    baseline_seeds: int = 5  # baseline seeds 0..4, shared with the FFN experiment (their range is the band)
    no_residual_seeds: int = 1  # no_residual seed 0, the baseline's init and batch order (each extra seed: 11-13 min on 2 cores)
    deep_seeds: int = 1  # deep_8l and deep_8l_no_residual, seed 0 each (an 8-layer run: ~20 min on 2 cores)
    budget_minutes: int = 60  # the limit on the new runs' training time the model card reports against
    stop_early: str = ""  # runs cut short, e.g. "deep_8l:600" (steps of the full schedule; its history ends there)
    stream_seed: int = 0  # the trained runs whose residual stream is measured
    grad_seed: int = 0  # weight init of the step-0 gradient measurement (train.py's init for that seed)
    grad_batch: int = 12  # sequences in its fixed batch: the first non-overlapping validation windows
    digits: int = 4  # significant digits of exported measurements
    command: str = ""  # the command the model card records; "" = this process's command line


ResidualConfig = Config  # its name before lab/experiments/


def seeds_of(cfg: Config) -> dict[str, int]:
    """Number of seeds of each variant. seeds_of(Config())["deep_8l"] -> 1"""
    return {"baseline": cfg.baseline_seeds, "no_residual": cfg.no_residual_seeds,
            "deep_8l": cfg.deep_seeds, "deep_8l_no_residual": cfg.deep_seeds}


def stops_of(cfg: Config) -> dict[str, int]:
    """stops_of(Config(stop_early="deep_8l:600")) -> {"deep_8l": 600}"""
    return common.parse_stops(cfg.stop_early, VARIANT_NAMES)


def description(name: str) -> str:
    """One line per variant, from its config. description("deep_8l") -> '8 layers, with skip connections'"""
    c = make_config(**variant_overrides(name))
    skips = "with skip connections" if c.residual else "no skip connections: each sublayer's output replaces the stream"
    return ("the FFN experiment's baseline: " if name == "baseline" else "") + f"{c.n_layer} layers, {skips}"


# --- measurement 1: the residual stream ------------------------------------------------------


class StreamCapture:
    """Forward hooks on the real modules. The stream is read where a norm reads it (the input of
    every block's norm1 and norm2 and of norm_f, in call order: after 0, 1, ..., 2·n_layer writes);
    a write is the output of the embedding, of each attention and of each FFN. Sums of squares
    accumulate over every forward pass; each pass checks stream_k = stream_(k-1) + write_k
    (with skips) or stream_k = write_k (without)."""

    def __init__(self, model: GPT):
        self.residual = model.cfg.residual
        self.streams, self.writes = [], []
        self.stream_sq, self.write_sq, self.count = None, None, 0
        norms = [m for b in model.blocks for m in (b.norm1, b.norm2) if m is not None] + [model.norm_f]
        writers = [model.embed] + [m for b in model.blocks for m in (b.attn, b.ffn) if m is not None]
        self.handles = [n.register_forward_pre_hook(lambda m, a: self.streams.append(a[0].detach())) for n in norms]
        self.handles += [w.register_forward_hook(lambda m, a, o: self.writes.append(o.detach())) for w in writers]
        self.handles.append(model.register_forward_hook(lambda m, a, o: self.pass_done()))

    def pass_done(self):
        s, w = self.streams, self.writes
        assert len(s) == len(w), f"{len(s)} stream reads for {len(w)} writes"
        assert torch.equal(s[0], w[0]), "the first block does not read the embedding"
        for k in range(1, len(s)):
            want = s[k - 1] + w[k] if self.residual else w[k]  # (b, T, C)
            assert torch.allclose(s[k], want, rtol=1e-5, atol=1e-6), f"stream after write {k} is not what was written"
        sq = torch.tensor([x.double().pow(2).sum().item() for x in s])  # (writes + 1,)
        wq = torch.tensor([x.double().pow(2).sum().item() for x in w])  # (writes + 1,)
        self.stream_sq = sq if self.stream_sq is None else self.stream_sq + sq
        self.write_sq = wq if self.write_sq is None else self.write_sq + wq
        self.count += s[0].numel()
        self.streams, self.writes = [], []

    def remove(self):
        for h in self.handles:
            h.remove()


def stream_points(model: GPT, val: torch.Tensor, segments=None) -> tuple[list[dict], float]:
    """RMS of the stream after each write and of each write, over every position and channel of
    the validation split in the val loss's windows (per book: `segments`, [first, end) of each
    book's tokens, as train.py scores them); returns (points, val loss). Asserts that the hooked
    pass gives the plain pass's val loss."""
    block = model.cfg.block_size
    plain = train.evaluate(model, val, block, "cpu", segments=segments)[0]
    cap = StreamCapture(model)
    try:
        hooked = train.evaluate(model, val, block, "cpu", segments=segments)[0]
    finally:
        cap.remove()
    assert hooked == plain, f"the hooked pass ({hooked}) differs from the plain one ({plain})"
    stream_rms = (cap.stream_sq / cap.count).sqrt().tolist()
    write_rms = (cap.write_sq / cap.count).sqrt().tolist()
    kinds = [("embedding", None)] + [(k, i + 1) for i, b in enumerate(model.blocks)
                                      for k, m in (("attention", b.attn), ("ffn", b.ffn)) if m is not None]
    points = [{"writes": k, "write": kind, "block": blk, "stream_rms": stream_rms[k], "write_rms": write_rms[k],
               "rms_if_independent": math.sqrt(sum(r * r for r in write_rms[: k + 1]))}
              for k, (kind, blk) in enumerate(kinds)]
    return points, plain


# --- measurement 2: gradients at step 0 ------------------------------------------------------


def step0_gradients(model: GPT, idx: torch.Tensor, tgt: torch.Tensor) -> dict:
    """Cross-entropy on one batch in fp32, dropout off; the norm of dL/d(stream) at the input of
    every block and of the final norm, and of the gradient of each block's parameters."""
    model.eval()
    model.zero_grad(set_to_none=True)
    inputs = []

    def keep(m, a):
        a[0].retain_grad()
        inputs.append(a[0])

    _, plain = model(idx, tgt)
    handles = [b.register_forward_pre_hook(keep) for b in model.blocks] + [model.norm_f.register_forward_pre_hook(keep)]
    try:
        _, loss = model(idx, tgt)
    finally:
        for h in handles:
            h.remove()
    assert torch.equal(loss, plain), "the hooked pass differs from the plain one"
    loss.backward()
    blocks = [{"block": i + 1, "stream_grad_norm": inputs[i].grad.norm().item(),
               "param_grad_norm": math.sqrt(sum(p.grad.pow(2).sum().item() for p in b.parameters()))}
              for i, b in enumerate(model.blocks)]
    return {"loss": loss.item(), "blocks": blocks, "output_stream_grad_norm": inputs[-1].grad.norm().item()}


# --- the command --------------------------------------------------------------------------------


def run(cfg: Config, prep: prepare.PrepareConfig, base: train.TrainConfig, out: str, invoked: str) -> dict:
    """prepare if needed -> every run of plan_runs -> measure -> write out/residual.json.
    `prep` names the corpus and work dir; `base` is the training settings every run shares (its
    variant, seed and out_dir are set here); `invoked` is this command line without machine
    paths, what the model card records unless cfg.command is given."""
    commit, dirty = common.git_lab_commit()  # the code as this process loaded it
    work = Path(prep.work_dir)
    print("residual config:", json.dumps(asdict(cfg), ensure_ascii=False))
    ensure_data(prep)
    plan = plan_runs(cfg)
    stops = stops_of(cfg)
    configs = [replace(base, variant=name, seed=seed, out_dir=str(common.run_dir(work, name, seed)),
                       stop_at=stops.get(name, 0)) for name, seed in plan]
    results = dict(zip(plan, common.train_runs(configs)))
    common.check_same_settings(list(results.values()))  # same data, budget and schedule as the baseline

    t0 = time.time()
    data = Path(base.data_dir)
    meta = json.loads((data / "meta.json").read_text())
    vocab = meta["tokenizer"]["vocab_size"]
    val = train.load_tokens(data, "val")
    segments = [b[1:] for b in prepare.val_segments(meta)]  # windows never cross a book, as in training
    stream = []
    for name in VARIANT_NAMES:  # the trained models ...
        points, loss = stream_points(load_model(work / f"{name}-s{cfg.stream_seed}"), val, segments)
        recorded = results[(name, cfg.stream_seed)]["val_loss"]
        assert abs(loss - recorded) < 1e-3, f"{name}: the checkpoint gives val {loss}, its run recorded {recorded}"
        stream.append({"variant": name, "seed": cfg.stream_seed, "state": "trained", "val_loss": round(loss, 4),
                       "points": sig_all(points, cfg.digits)})
    for name in VARIANT_NAMES:  # ... and the same architectures before their first step
        points, loss = stream_points(fresh_model(name, cfg.grad_seed, vocab, base), val, segments)
        stream.append({"variant": name, "seed": cfg.grad_seed, "state": "init", "val_loss": round(loss, 4),
                       "points": sig_all(points, cfg.digits)})

    block = base.block_size
    if cfg.grad_batch * block + 1 > len(val):
        raise SystemExit(f"grad_batch={cfg.grad_batch} windows of {block} tokens need more validation tokens")
    starts = [i * block for i in range(cfg.grad_batch)]
    idx = torch.stack([val[s:s + block] for s in starts])  # (B, T)
    tgt = torch.stack([val[s + 1:s + block + 1] for s in starts])  # (B, T)
    gradients = []
    for name in VARIANT_NAMES:
        g = step0_gradients(fresh_model(name, cfg.grad_seed, vocab, base), idx, tgt)
        gradients.append({"variant": name, "seed": cfg.grad_seed, "loss": round(g["loss"], 4),
                          "blocks": sig_all(g["blocks"], cfg.digits),
                          "output_stream_grad_norm": common.sig(g["output_stream_grad_norm"], cfg.digits)})

    doc = build_export(cfg, results, plan, meta, json.loads((data / "ngram.json").read_text()), stream, gradients,
                       idx, command=cfg.command or invoked, code=(commit, dirty), measure_s=time.time() - t0)
    write(doc, Path(out))
    return doc


def plan_runs(cfg: Config) -> list[tuple[str, int]]:
    """(variant, seed) in training order: seed 0 of every variant first, then round by round.

    plan_runs(Config(baseline_seeds=2, no_residual_seeds=1, deep_seeds=1))[-1] -> ("baseline", 1)
    """
    return common.round_robin(seeds_of(cfg))


def build_export(cfg, results, plan, meta, ngram, stream, gradients, idx, command, code, measure_s) -> dict:
    by_variant = {v: [results[(n, s)] for n, s in plan if n == v] for v in VARIANT_NAMES}
    variants = []
    for name, runs in by_variant.items():
        mc = runs[0]["model_config"]
        variants.append({"name": name, "description": description(name), "n_layer": mc["n_layer"],
                         "residual": mc.get("residual", True), "params": runs[0]["params"],
                         "seeds": [r["seed"] for r in runs], "val_losses": [r["val_loss"] for r in runs],
                         "train_losses": [r["train_loss"] for r in runs], "histories": [common.one_book_history(r["history"]) for r in runs]})
    first = by_variant["baseline"][0]
    tc, mc = first["config"], first["model_config"]
    shared_train = common.portable_config({k: v for k, v in tc.items() if k not in ("variant", "seed", "bar_position")})
    new_runs = [r for v in RESIDUAL_VARIANTS for r in by_variant[v]]
    new_s = sum(r["wall_seconds"] for r in new_runs)
    init_std = inspect.signature(residual_init_std).parameters["init_std"].default
    n_seeds = seeds_of(cfg)
    card = {
        "name": f"{common.corpus_label(meta)}-residual-d{mc['d_model']}",
        "date": common.utc_date(),
        "command": command,
        "code": {"lab_commit": code[0], "lab_dirty": code[1]},
        "hardware": common.hardware(first),
        "corpus": meta["corpus"],
        "split": meta["split"],
        "tokenizer": {"type": meta["tokenizer"]["type"], "vocab_size": meta["tokenizer"]["vocab_size"],
                      "trained_on": meta["tokenizer"]["trained_on"]},
        "architecture": {"n_head": mc["n_head"], "d_model": mc["d_model"], "d_ff": mc["d_ff"],
                         "vocab_size": mc["vocab_size"], "block_size": mc["block_size"],
                         "norm": "pre-norm RMSNorm with a weight, no bias",
                         "block_with_residual": "x = x + attn(norm1(x)); x = x + ffn(norm2(x))",
                         "block_without_residual": "x = attn(norm1(x)); x = ffn(norm2(x))",
                         "init_std": init_std, "residual_init_rule": "init_std / sqrt(2 * n_layer)",
                         "residual_init_std": {str(n): residual_init_std(n, init_std)
                                               for n in sorted({v["n_layer"] for v in variants})}},
        "training": {"steps": tc["steps"], "batch_size": tc["batch_size"], "block_size": tc["block_size"],
                     "tokens_per_run": first["tokens"], "epochs": round(first["tokens"] / meta["split"]["train_tokens"], 2),
                     "lr": tc["lr"], "min_lr": tc["min_lr"], "warmup_steps": tc["warmup_steps"], "dropout": tc["dropout"],
                     "precision": common.precision(first),
                     "same_for_every_run": "same data, token budget, schedule and settings for every run (checked);"
                                           " seed s means the same batch order for every variant, and for the"
                                           " 4-layer pair the same initial weights",
                     "seeds": {v: [r["seed"] for r in by_variant[v]] for v in VARIANT_NAMES}},
        "budget": {"limit_seconds": cfg.budget_minutes * 60, "new_runs_seconds": round(new_s, 1),
                   "choice": f"{tc['steps']:,} steps ({first['tokens']:,} tokens) for every run; 8 layers for the deep"
                             f" pair (an 8-layer run costs about 1.6x a 4-layer one on CPU); no_residual with"
                             f" {n_seeds['no_residual']} seed(s)"
                             f"{' for a band of its own' if n_seeds['no_residual'] > 1 else ' (the baseline band is the noise floor)'},"
                             f" each 8-layer variant with"
                             f" {cfg.deep_seeds}; the baseline's {n_seeds['baseline']} runs are shared with the FFN"
                             " experiment (same work dir) and not counted"
                             + (f"; stopped early (the full schedule's first steps, compared with the baseline at"
                                f" the same step): {cfg.stop_early}" if cfg.stop_early else "")},
        "timing": {"runs": [{"variant": r["variant"], "seed": r["seed"], "wall_seconds": r["wall_seconds"],
                             "tokens_per_second": r["train_tokens_per_second"], "threads": r["threads"]}
                            for v in VARIANT_NAMES for r in by_variant[v]],
                   "measure_seconds": round(measure_s, 1)},
        "configs": {"prepare": common.portable_config(meta["config"]), "train": shared_train,
                    "residual": common.portable_config(asdict(cfg))},
    }
    doc = {
        "schema_version": schema.RESIDUAL_SCHEMA_VERSION,
        "metric": "validation cross-entropy in nats per token over the full validation split",
        "tokens_per_run": first["tokens"],
        "variants": variants,
        "baseline_band": common.seed_band("baseline", by_variant["baseline"]),
        "references": {"unigram": round(ngram["unigram"], 4), "bigram": round(ngram["bigram"], 4)},
        "stream": {"rule": "RMS over every position and channel of the validation split, in the val loss's"
                           " non-overlapping windows, eval mode; stream_rms after `writes` writes (the embedding"
                           " is write 0, then each block's attention and FFN outputs), write_rms of that write"
                           " alone, rms_if_independent = sqrt(sum of write_rms^2 so far): the stream's RMS if the"
                           " writes were uncorrelated; captured with forward hooks, checked against the plain pass",
                   "models": stream},
        "gradients": {"rule": "one fixed batch (the first grad_batch non-overlapping validation windows), mean"
                              " cross-entropy, fp32, dropout off, weights as train.py initialises them for the seed"
                              " (N(0, init_std), residual projections N(0, init_std / sqrt(2 * n_layer)));"
                              " stream_grad_norm: Frobenius norm of dL/d(stream) at a block's input;"
                              " param_grad_norm: the norm of the gradient of all the block's parameters",
                      "batch": {"sequences": idx.shape[0], "tokens": idx.numel()},
                      "models": gradients},
        "model_card": card,
    }
    return doc


def write(doc: dict, out: Path) -> None:
    path = schema.write_validated(schema.RESIDUAL_FILE, doc, out)
    print(f"residual: wrote {path} ({path.stat().st_size:,} B)")
