"""The residual lesson's second experiment (C4 第 2 课): what a skip connection does, isolated.

    python -m lab mechanism --corpus PATH --out data/real-model/residual [key=value ...]

The first experiment (lab/residual.py) showed that without skips our model ends at the
unigram loss. This one asks why, with one change to the baseline per run (model.MECHANISM_VARIANTS):
the skip's value kept but its gradient cut (x.detach() + F(norm(x))); no per-block skips but
the embedding added back once before the final norm; a skip around attention only, around the
FFN only; and no skips with every output projection at N(0, 0.02). The baseline is trained
beside them in the same work dir, so every run here has the same settings, precision and probes
(lab/probe.py: does each position still carry its own token?, logged before the first step and
at every evaluation). The no-skip model itself is the residual experiment's run (residual.json,
its loss sits on the unigram); this export adds its probes before the first step, taken on the
same fresh model train.py would build.

prepare (only when the work dir has no data yet) -> train every (variant, seed 0), resumable ->
gradients at step 0 -> write out/mechanism.json, validated first with
data/schemas/real-model/residual/mechanism.schema.json.
A variant may be stopped early with `stop_early=VARIANT:STEP` (its run trains the full
schedule's first STEP steps, the same trajectory as the full run up to there).
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from lab import prepare, schema, train
from lab.experiments import common, residual
from lab.probe import probe_batch, token_identity
from lab.model import MECHANISM_VARIANTS, make_config, variant_overrides

NAME = "mechanism"  # python -m lab mechanism
DEFAULT_OUT = "data/real-model/residual"
VARIANT_NAMES = ("baseline", *MECHANISM_VARIANTS)  # the runs, in export order
# The model settings a run here may change; each is reported per variant.
SKIP_FIELDS = ("residual", "skip_attn", "skip_ffn", "skip_grad", "embed_skip", "out_init_std")
DESCRIPTIONS = {
    "baseline": "the baseline: x + attn(norm1(x)), then x + ffn(norm2(x))",
    "detached_skip": "skips carry the value but not the gradient: x.detach() + F(norm(x))",
    "embed_readd": "no per-block skips; the embedding is added to the stream once, before the final norm",
    "attn_skip_only": "a skip around attention only; the FFN's output replaces the stream",
    "ffn_skip_only": "a skip around the FFN only; attention's output replaces the stream",
    "no_residual_init02": "no skip connections, every output projection at N(0, 0.02) instead of 0.02/sqrt(2L)",
}
assert list(DESCRIPTIONS) == list(VARIANT_NAMES)


@dataclass
class Config:
    run_seed: int = 0  # every variant's seed: the baseline's weights (where shapes agree) and batch order
    stop_early: str = ""  # runs cut short, e.g. "no_residual_init02:400" (steps of the full schedule)
    budget_minutes: int = 60  # the limit on the new runs' training time the model card reports against
    grad_batch: int = 12  # sequences in the step-0 gradient batch (as residual.py)
    digits: int = 4  # significant digits of exported measurements
    command: str = ""  # the command the model card records; "" = this process's command line


MechanismConfig = Config  # its name before lab/experiments/


def stops_of(cfg: Config) -> dict[str, int]:
    """stops_of(Config(stop_early="embed_readd:400")) -> {"embed_readd": 400}"""
    return common.parse_stops(cfg.stop_early, VARIANT_NAMES)


def skip_settings(name: str) -> dict:
    """The skip-related model settings of a variant. skip_settings("detached_skip")["skip_grad"] -> False"""
    c = make_config(**variant_overrides(name))
    return {k: getattr(c, k) for k in SKIP_FIELDS}


def run(cfg: Config, prep: prepare.PrepareConfig, base: train.TrainConfig, out: str, invoked: str) -> dict:
    commit, dirty = common.git_lab_commit()  # the code as this process loaded it
    work = Path(prep.work_dir)
    print("mechanism config:", json.dumps(asdict(cfg), ensure_ascii=False))
    common.ensure_data(prep)
    stops = stops_of(cfg)
    configs = [replace(base, variant=name, seed=cfg.run_seed, out_dir=str(common.run_dir(work, name, cfg.run_seed)),
                       stop_at=stops.get(name, 0)) for name in VARIANT_NAMES]
    results = dict(zip(VARIANT_NAMES, common.train_runs(configs)))
    common.check_same_settings(list(results.values()))  # same data, budget and schedule
    missing = [n for n, r in results.items() if not r.get("probes")]
    if missing:
        raise SystemExit(f"runs {missing} were trained before lab/probe.py logged probes; delete their"
                         " run directories (or choose another --work) and run again")

    t0 = time.time()
    data = Path(base.data_dir)
    meta = json.loads((data / "meta.json").read_text())
    val = train.load_tokens(data, "val")
    block = base.block_size
    starts = [i * block for i in range(cfg.grad_batch)]
    idx = torch.stack([val[s:s + block] for s in starts])  # (B, T)
    tgt = torch.stack([val[s + 1:s + block + 1] for s in starts])  # (B, T)
    vocab = meta["tokenizer"]["vocab_size"]
    fresh = common.fresh_model("no_residual", cfg.run_seed, vocab, base)
    no_skip_init = {"variant": "no_residual", "seed": cfg.run_seed,
                    "probe": {"step": 0, **token_identity(fresh, probe_batch(val, block))}}
    gradients = []
    for name in VARIANT_NAMES:
        g = residual.step0_gradients(common.fresh_model(name, cfg.run_seed, vocab, base), idx, tgt)
        gradients.append({"variant": name, "seed": cfg.run_seed, "loss": round(g["loss"], 4),
                          "blocks": common.sig_all(g["blocks"], cfg.digits),
                          "output_stream_grad_norm": common.sig(g["output_stream_grad_norm"], cfg.digits)})
    doc = build_export(cfg, results, meta, json.loads((data / "ngram.json").read_text()), gradients, idx, no_skip_init,
                       command=cfg.command or invoked, code=(commit, dirty), measure_s=time.time() - t0,
                       val_tokens=val, block=block)
    write(doc, Path(out))
    return doc


def build_export(cfg, results, meta, ngram, gradients, idx, no_skip_init, command, code, measure_s, val_tokens, block) -> dict:
    first = results["baseline"]
    tc, mc = first["config"], first["model_config"]
    variants = []
    for name in VARIANT_NAMES:
        r = results[name]
        variants.append({"name": name, "description": DESCRIPTIONS[name], **skip_settings(name),
                         "params": r["params"], "seed": r["seed"], "steps_trained": r.get("steps_trained", r["steps"]),
                         "val_loss": r["val_loss"], "train_loss": r["train_loss"], "history": common.one_book_history(r["history"]),
                         "probes": r["probes"]})
    new_s = sum(r["wall_seconds"] for n, r in results.items() if n in MECHANISM_VARIANTS)
    shared_train = common.portable_config({k: v for k, v in tc.items()
                                           if k not in ("variant", "seed", "bar_position", "stop_at")})
    card = {
        "name": f"{common.corpus_label(meta)}-residual-mechanism-d{mc['d_model']}",
        "date": common.utc_date(),
        "command": command,
        "code": {"lab_commit": code[0], "lab_dirty": code[1]},
        "hardware": common.hardware(first, bf16_autocast=first["bf16_autocast"]),
        "corpus": meta["corpus"],
        "split": meta["split"],
        "architecture": {"n_layer": mc["n_layer"], "n_head": mc["n_head"], "d_model": mc["d_model"],
                         "d_ff": mc["d_ff"], "vocab_size": mc["vocab_size"], "block_size": mc["block_size"],
                         "norm": "pre-norm RMSNorm with a weight, no bias",
                         "residual_init_std": residual.residual_init_std(mc["n_layer"])},
        "training": {"steps": tc["steps"], "batch_size": tc["batch_size"], "block_size": tc["block_size"],
                     "tokens_per_run": first["tokens"],
                     "epochs": round(first["tokens"] / meta["split"]["train_tokens"], 2),
                     "lr": tc["lr"], "warmup_steps": tc["warmup_steps"], "dropout": tc["dropout"],
                     "precision": common.precision(first),
                     "same_for_every_run": "same data, schedule, settings, precision and seed for every run (checked);"
                                           " a run stopped early followed the full schedule up to its last step",
                     "seed": cfg.run_seed},
        "budget": {"limit_seconds": cfg.budget_minutes * 60, "new_runs_seconds": round(new_s, 1),
                   "choice": "one seed per variant, the baseline's seed (same batches, and the same initial weights"
                             " where the shapes match); the baseline's run of that seed is the one the FFN and"
                             " residual experiments share (trained once, not counted as new); the no-skip model is"
                             " residual.json's run, probed here at step 0 only (timing.runs has each run's wall time)"
                             + (f"; stopped early: {cfg.stop_early}" if cfg.stop_early else "")},
        "timing": {"runs": [{"variant": n, "seed": r["seed"], "wall_seconds": r["wall_seconds"],
                             "tokens_per_second": r["train_tokens_per_second"], "threads": r["threads"]}
                            for n, r in results.items()],
                   "measure_seconds": round(measure_s, 1)},
        "configs": {"prepare": common.portable_config(meta["config"]), "train": shared_train,
                    "mechanism": common.portable_config(asdict(cfg))},
    }
    return {
        "schema_version": schema.MECHANISM_SCHEMA_VERSION,
        "metric": "validation cross-entropy in nats per token over the full validation split",
        "variants": variants,
        "references": {"unigram": round(ngram["unigram"], 4), "bigram": round(ngram["bigram"], 4)},
        "no_skip_init": no_skip_init,
        "probes": {"windows": probe_batch(val_tokens, block).shape[0], "positions": probe_batch(val_tokens, block).numel(),
                   "rule": "lab/probe.py on the first 8 non-overlapping validation windows (2,048 positions),"
                           " eval mode, before the first step and at every evaluation."
                           " current_token_top1: share of positions whose top prediction is the token at that"
                           " position; modal_top1_share: share of positions whose top prediction is the most"
                           " common one; cosine_final: mean cosine between different positions' vectors of a"
                           " sequence where the final norm reads them; cosine_by_depth: the same after the"
                           " embedding (index 0) and after each block; own_embedding_cosine_by_depth: mean cosine"
                           " between a position's vector and its own token's embedding, at the same depths"},
        "gradients": {"rule": "as residual.json: one fixed batch of validation windows, fp32, dropout off, the"
                              " weights train.py initialises for the seed; param_grad_norm is the norm of the"
                              " gradient of all a block's parameters",
                      "batch": {"sequences": idx.shape[0], "tokens": idx.numel()}, "models": gradients},
        "model_card": card,
    }


def write(doc: dict, out: Path) -> None:
    path = schema.write_validated(schema.MECHANISM_FILE, doc, out)
    print(f"mechanism: wrote {path} ({path.stat().st_size:,} B)")
