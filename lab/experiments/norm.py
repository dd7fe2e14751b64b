"""The norm experiment (C4 第 3 课): where the norm sits, warm-up, RMSNorm against LayerNorm, the gain.

    python -m lab norm --corpus PATH --work DIR --out data/real-model/norm [key=value ...]

prepare (only when the work dir has no data yet: the same data as `all`) -> train every run of
RUNS, one at a time with every core, resumable -> measure (step-0 gradients per layer of Pre-LN,
Post-LN and no norm at several depths; the learned gains of every trained model's norms; the
training speed of RMSNorm against LayerNorm, interleaved in one process) -> write
out/norm.json, validated first with data/schemas/real-model/norm/norm.schema.json.

Runs (seed `run_seed` each; the baseline's own 1,400-step run is reused from the work dir):
- Pre-LN (the baseline) and Post-LN (model.NORM_VARIANTS["post_ln"]: norm(x + F(x)), no final
  norm), each with the baseline's 60 warm-up steps and without warm-up, at the baseline's learning
  rate and at `high_lr_mult` times it (min_lr scaled alike): 8 short runs, the first `short_steps`
  steps of the full schedule, evaluated every `short_eval_every` steps.
- Weight decay on the gains, the gain as g and as 1 + w (short runs): does decay pull g toward 0?
- LayerNorm instead of RMSNorm, one full run.
- No norm at all (a short run), only while the budget allows (`optional`).
Every run has the baseline's TrainConfig except the fields its row of RUNS sets (checked).
`stop_early=RUN:STEP` cuts a run shorter (the same trajectory up to there).
"""
from __future__ import annotations

import json
import math
import statistics
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from lab import prepare, schema, train
from lab.experiments import common
from lab.experiments.common import band_from_ablation, estimate_seconds, finite, steps_of
from lab.model import GPT, NORMS, make_config, variant_overrides

NAME = "norm"  # python -m lab norm
DEFAULT_OUT = "data/real-model/norm"

@dataclass(frozen=True)
class Run:
    variant: str  # a model variant (model.VARIANTS / NORM_VARIANTS)
    warmup: bool = True  # the baseline's warm-up (TrainConfig.warmup_steps) or none
    high_lr: bool = False  # lr and min_lr times NormConfig.high_lr_mult
    decay_gains: bool = False  # TrainConfig.norm_weight_decay
    short: bool = True  # the first short_steps steps of the full schedule, or all of it
    optional: bool = False  # trained only if the budget has room for it
    description: str = ""


RUNS = {  # in training order: the placement and warm-up question first
    "pre_ln_warmup": Run("baseline", description="Pre-LN (the baseline), 60 warm-up steps, lr 1e-3"),
    "post_ln_no_warmup": Run("post_ln", warmup=False, description="Post-LN, no warm-up, lr 1e-3"),
    "post_ln_warmup": Run("post_ln", description="Post-LN, 60 warm-up steps, lr 1e-3"),
    "pre_ln_no_warmup": Run("baseline", warmup=False, description="Pre-LN, no warm-up, lr 1e-3"),
    "post_ln_no_warmup_high_lr": Run("post_ln", warmup=False, high_lr=True, description="Post-LN, no warm-up, high lr"),
    "post_ln_warmup_high_lr": Run("post_ln", high_lr=True, description="Post-LN, 60 warm-up steps, high lr"),
    "pre_ln_no_warmup_high_lr": Run("baseline", warmup=False, high_lr=True, description="Pre-LN, no warm-up, high lr"),
    "pre_ln_warmup_high_lr": Run("baseline", high_lr=True, description="Pre-LN, 60 warm-up steps, high lr"),
    "gain_decay": Run("baseline", decay_gains=True,
                      description="Pre-LN RMSNorm, weight decay on the gains g too (initialised at 1)"),
    "zero_centred_decay": Run("zero_centred", decay_gains=True,
                              description="Pre-LN RMSNorm with the gain as 1 + w (w initialised at 0), weight decay on w"),
    "layernorm": Run("layernorm", short=False,
                     description="Pre-LN with LayerNorm (mean subtracted, gain and bias) instead of RMSNorm, full run"),
    "no_norm": Run("no_norm", optional=True, description="no norm at all: x + F(x), no final norm"),
}
BASELINE = "baseline"  # the full baseline run, reused from the work dir (`all`, `mechanism` trained it)
PLACEMENT_RUNS = [n for n in RUNS if n.startswith(("pre_ln", "post_ln"))]
# The TrainConfig fields a row of RUNS may change; everything else is the baseline's.
VARIED = ("lr", "min_lr", "warmup_steps", "norm_weight_decay", "stop_at", "eval_every")


@dataclass
class Config:
    run_seed: int = 0  # every run's seed: the baseline's initial weights (where shapes agree) and batch order
    short_steps: int = 300  # steps of the full schedule a short run trains
    short_eval_every: int = 50  # a short run's evaluations (the full run keeps eval_every)
    high_lr_mult: float = 3.0  # the high learning rate, as a multiple of the baseline's
    runs: str = ""  # a comma-separated subset of RUNS to train and export ("" = all)
    stop_early: str = ""  # runs cut shorter, e.g. "layernorm:800" (steps of the full schedule)
    extra_seeds: str = ""  # more seeds of the `seeded` runs, e.g. "1,2": each trains short_steps (stop_early is run_seed's)
    seeded: str = ""  # the runs of RUNS that extra_seeds repeats, e.g. "pre_ln_no_warmup,post_ln_warmup"
    budget_minutes: int = 60  # the limit on the new runs' training time; an optional run starts only within it
    grad_depths: str = "4,8,16"  # n_layer of the step-0 gradient measurement (init only, no training)
    grad_batch: int = 12  # sequences in its fixed batch: the first non-overlapping validation windows
    curve_every: int = 10  # the exported training-loss curve: the mean of every this many steps
    speed_rounds: int = 3  # interleaved timing rounds of RMSNorm and LayerNorm training steps
    speed_steps: int = 8  # timed steps per model per round (after 2 untimed)
    digits: int = 4  # significant digits of exported measurements
    command: str = ""  # the command the model card records; "" = this process's command line


NormConfig = Config  # its name before lab/experiments/


def selected(cfg: Config) -> list[str]:
    """The runs to train, in RUNS order. selected(Config(runs="layernorm,pre_ln_warmup")) -> ['pre_ln_warmup', 'layernorm']"""
    want = [r for r in cfg.runs.split(",") if r]
    unknown = sorted(set(want) - set(RUNS))
    if unknown:
        raise SystemExit(f"runs: unknown {unknown}; known: {list(RUNS)}")
    return [n for n in RUNS if not want or n in want]


def seeded_runs(cfg: Config) -> list[tuple[str, int]]:
    """(run, seed) of every extra seed. seeded_runs(Config(extra_seeds="1,2", seeded="post_ln_warmup"))
    -> [('post_ln_warmup', 1), ('post_ln_warmup', 2)]"""
    seeds = [int(x) for x in cfg.extra_seeds.split(",") if x]
    names = [n for n in cfg.seeded.split(",") if n]
    unknown = sorted(set(names) - set(RUNS))
    if unknown:
        raise SystemExit(f"seeded: unknown {unknown}; known: {list(RUNS)}")
    if cfg.run_seed in seeds:
        raise SystemExit(f"extra_seeds: {cfg.run_seed} is run_seed already")
    return [(n, s) for n in RUNS if n in names for s in seeds]


def stops_of(cfg: Config) -> dict[str, int]:
    """stops_of(Config(stop_early="layernorm:800")) -> {"layernorm": 800}"""
    return common.parse_stops(cfg.stop_early, RUNS)


def train_config(name: str, cfg: Config, base: train.TrainConfig, work: Path, seed: int | None = None) -> train.TrainConfig:
    """The TrainConfig of run `name`: the baseline's, with what its row of RUNS changes. An extra
    seed (not run_seed) always trains the short length: stop_early is run_seed's."""
    r = RUNS[name]
    mult = cfg.high_lr_mult if r.high_lr else 1.0
    seed = cfg.run_seed if seed is None else seed
    short = cfg.short_steps if r.short else 0
    stop = stops_of(cfg).get(name, short) if seed == cfg.run_seed else short
    return replace(base, variant=r.variant, seed=seed, out_dir=str(common.run_dir(work, name, seed)),
                   lr=base.lr * mult, min_lr=base.min_lr * mult, warmup_steps=base.warmup_steps if r.warmup else 0,
                   norm_weight_decay=r.decay_gains, stop_at=stop,
                   eval_every=cfg.short_eval_every if r.short else base.eval_every)


def check_settings(results: dict[str, dict]) -> None:
    """Every run's recorded TrainConfig equals the baseline's (the first) except the fields RUNS varies."""
    try:
        common.check_same_settings(list(results.values()), varied=VARIED)
    except ValueError as e:
        raise SystemExit(f"a run differs from the baseline in settings RUNS does not vary: {e}") from None


# --- measurements (no training) --------------------------------------------------------------


def step0_gradients(model: GPT, idx: torch.Tensor, tgt: torch.Tensor) -> dict:
    """Cross-entropy on one batch, fp32, dropout off: per block the norm of the gradient of all its
    parameters, of its FFN's output projection alone (W2 of Xiong et al.'s Theorem 1) and of
    dL/d(stream) at the block's input; and the RMS of the stream the last block hands on (Pre-LN's
    final norm divides its gradient by this)."""
    model.eval()
    model.zero_grad(set_to_none=True)
    inputs, outputs = [], []

    def keep(m, a):
        a[0].retain_grad()
        inputs.append(a[0])

    handles = [b.register_forward_pre_hook(keep) for b in model.blocks]
    handles.append(model.blocks[-1].register_forward_hook(lambda m, a, out: outputs.append(out.detach())))
    try:
        _, loss = model(idx, tgt)
    finally:
        for h in handles:
            h.remove()
    loss.backward()
    blocks = [{"block": i + 1,
               "param_grad_norm": math.sqrt(sum(p.grad.pow(2).sum().item() for p in b.parameters())),
               "ffn_out_grad_norm": b.ffn.down.weight.grad.norm().item(),
               "attn_out_grad_norm": b.attn.proj.weight.grad.norm().item(),
               "stream_grad_norm": inputs[i].grad.norm().item()}
              for i, b in enumerate(model.blocks)]
    return {"loss": loss.item(), "blocks": blocks, "stream_rms_out": outputs[0].pow(2).mean().sqrt().item()}


# The step-0 controls: the same 4-layer models under Xiong et al.'s assumptions, one at a time.
INIT_CONTROLS = {
    "default": "our init: embedding N(0, 0.02), write-back matrices N(0, 0.02 / sqrt(2 n_layer))",
    "embed_unit": "the embedding's output multiplied so the stream starts at RMS 1 (embedding x 50; the tied head"
                  " unchanged)",
    "writes_02": "write-back matrices at N(0, 0.02), as large as every other matrix (no 1 / sqrt(2 n_layer))",
    "embed_unit_writes_02": "both",
    "xavier": "towards Xiong et al.'s premise: the stream starts at RMS 1 (as embed_unit) and every matrix in the"
              " blocks is Xavier-normal, std sqrt(2 / (fan_in + fan_out)): writes several times ours, still smaller"
              " than the stream",
}
EMBED_UNIT = 50.0  # 1 / 0.02: the embedding's std times this is 1


def control_model(vocab: int, block: int, dropout: float, depth: int, place: str, init: str, seed: int) -> GPT:
    """The model train.py would build for `seed`, under one of INIT_CONTROLS."""
    torch.manual_seed(seed)
    writes = {"out_init_std": 0.02} if init in ("writes_02", "embed_unit_writes_02") else {}
    model = GPT(make_config(vocab_size=vocab, block_size=block, dropout=dropout, n_layer=depth, norm_place=place,
                            **writes))
    if init in ("embed_unit", "embed_unit_writes_02", "xavier"):
        model.embed.register_forward_hook(lambda m, a, out: out * EMBED_UNIT)
    if init == "xavier":
        with torch.no_grad():
            for m in model.blocks.modules():
                if isinstance(m, torch.nn.Linear):
                    torch.nn.init.xavier_normal_(m.weight)
    return model


@torch.no_grad()
def head_input(model: GPT, idx: torch.Tensor, tgt: torch.Tensor) -> tuple[float, torch.Tensor]:
    """The loss on (idx, tgt) and what the output head reads (the normed stream), (B, T, C)."""
    seen = []
    hook = model.lm_head.register_forward_pre_hook(lambda m, a: seen.append(a[0].detach().clone()))
    try:
        _, loss = model(idx, tgt)
    finally:
        hook.remove()
    return loss.item(), seen[0]


def first_step(model: GPT, base: train.TrainConfig, lr: float, batch: tuple, idx: torch.Tensor) -> dict:
    """One AdamW step as train.py takes it (its groups, betas, decay and clip) at learning rate
    `lr` on the run's first batch: how far each group of weights moved, relative to its size and
    in units of lr, and how much the head's input (the normed stream) moved on the fixed batch
    `idx` (Liu et al. 2020: the same update moves a Post-LN model's output more)."""
    model.eval()  # dropout is 0; eval only keeps the probe forward passes deterministic
    opt = train.make_optimizer(model, base, lr)
    groups = {"write_back": [], "block_matrices": [], "embedding": [], "gains": []}
    for name, p in model.named_parameters():
        if name.endswith(("attn.proj.weight", "ffn.down.weight")):
            groups["write_back"].append(p)
        elif name == "embed.weight":
            groups["embedding"].append(p)
        elif p.dim() >= 2:
            groups["block_matrices"].append(p)
        else:
            groups["gains"].append(p)
    loss0, h0 = head_input(model, *idx)
    before = {k: [p.detach().clone() for p in v] for k, v in groups.items()}
    x, y = batch
    _, loss = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if base.grad_clip:
        torch.nn.utils.clip_grad_norm_(model.parameters(), base.grad_clip)
    opt.step()
    loss1, h1 = head_input(model, *idx)
    moved = {}
    for k, ps in groups.items():
        if not ps:
            continue
        delta = torch.cat([(p.detach() - b).flatten() for p, b in zip(ps, before[k])])
        size = torch.cat([b.flatten() for b in before[k]])
        moved[k] = {"relative": delta.norm().item() / size.norm().item(),
                    "mean_abs_over_lr": delta.abs().mean().item() / lr,
                    "init_rms": size.pow(2).mean().sqrt().item()}
    change = (h1 - h0).norm().item() / h0.norm().item()
    return {"groups": moved, "val_loss_before": loss0, "val_loss_after": loss1,
            "head_input_change": change}


def norm_modules(model: GPT) -> list[tuple[str, int | None, torch.nn.Module]]:
    """(position, 1-based block or None, module) of every norm in forward order."""
    out = []
    for i, b in enumerate(model.blocks):
        for pos, m in (("attention", b.norm1), ("ffn", b.norm2)):
            if isinstance(m, NORMS):
                out.append((pos, i + 1, m))
    if isinstance(model.norm_f, NORMS):
        out.append(("final", None, model.norm_f))
    return out


def quantiles(values: torch.Tensor, digits: int) -> dict:
    v = values.double()
    q = torch.quantile(v, torch.tensor([0.05, 0.25, 0.5, 0.75, 0.95], dtype=torch.float64)).tolist()
    return {k: finite(common.sig(x, digits)) for k, x in
            zip(("mean", "std", "min", "p05", "p25", "p50", "p75", "p95", "max"),
                [v.mean().item(), v.std().item(), v.min().item(), *q, v.max().item()])}


def gain_stats(model: GPT, digits: int) -> list[dict]:
    """The effective gain (g, or 1 + w) of every norm, its distribution over the d channels;
    for LayerNorm also its bias's."""
    rows = []
    for pos, block, m in norm_modules(model):
        row = {"position": pos, "block": block, "gain": quantiles(m.gain().detach(), digits)}
        row["bias"] = quantiles(m.bias.detach(), digits) if hasattr(m, "bias") else None
        rows.append(row)
    return rows


def decay_factor(cfg: train.TrainConfig, steps: int) -> float:
    """What AdamW's decoupled decay alone does to a weight over `steps` steps: prod(1 - lr_t * wd)."""
    f = 1.0
    for s in range(steps):
        f *= 1 - train.lr_at(s, cfg) * cfg.weight_decay
    return f


def speed(base: train.TrainConfig, vocab: int, data: torch.Tensor, rounds: int, steps: int, seed: int) -> dict:
    """Training steps of the baseline (RMSNorm) and of the LayerNorm variant, interleaved in one
    process (round by round, after 2 untimed steps each), so both see the same machine load; and
    one norm alone, forward + backward on a (batch, block, d) tensor, interleaved the same way."""
    device = train.resolve_device(base.device)
    models, opts, gens = {}, {}, {}
    for name in (BASELINE, "layernorm"):
        torch.manual_seed(seed)
        m = GPT(make_config(vocab_size=vocab, block_size=base.block_size, dropout=base.dropout,
                            **variant_overrides(name))).to(device).train()
        models[name] = m
        opts[name] = torch.optim.AdamW(m.parameters(), lr=base.lr, betas=(base.beta1, base.beta2))
        gens[name] = torch.Generator().manual_seed(seed)

    def steps_of(name, n):
        m, opt = models[name], opts[name]
        t0 = time.perf_counter()
        for _ in range(n):
            x, y = train.get_batch(data, base.batch_size, base.block_size, gens[name])
            _, loss = m(x.to(device), y.to(device))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), base.grad_clip)
            opt.step()
        return time.perf_counter() - t0

    per = {n: [] for n in models}
    for name in models:
        steps_of(name, 2)
    for _ in range(rounds):
        for name in models:
            per[name].append(base.batch_size * base.block_size * steps / steps_of(name, steps))
    d = models[BASELINE].cfg.d_model
    x = torch.randn(base.batch_size, base.block_size, d, device=device, requires_grad=True)
    norms = {BASELINE: models[BASELINE].norm_f, "layernorm": models["layernorm"].norm_f}
    op = {n: [] for n in norms}
    reps = 50
    for _ in range(rounds + 1):
        for name, m in norms.items():
            t0 = time.perf_counter()
            for _ in range(reps):
                m(x).sum().backward()
            op[name].append((time.perf_counter() - t0) / reps * 1000)
    op = {n: v[1:] for n, v in op.items()}  # the first round warms up
    return {"tokens_per_second": per, "norm_ms": op, "reps": reps, "shape": list(x.shape)}


# --- the command --------------------------------------------------------------------------------


def run(cfg: Config, prep: prepare.PrepareConfig, base: train.TrainConfig, out: str, invoked: str) -> dict:
    commit, dirty = common.git_lab_commit()  # the code as this process loaded it
    work = Path(prep.work_dir)
    print("norm config:", json.dumps(asdict(cfg), ensure_ascii=False))
    common.ensure_data(prep)
    names = selected(cfg)
    limit = cfg.budget_minutes * 60
    done_before = {n for n in [BASELINE, *names] if (common.run_dir(work, n, cfg.run_seed) / "result.json").exists()}
    baseline_cfg = replace(base, variant=BASELINE, seed=cfg.run_seed, out_dir=str(common.run_dir(work, BASELINE, cfg.run_seed)))
    results, skipped = {}, []
    baseline = train.run(baseline_cfg)
    for name in names:
        tc = train_config(name, cfg, base, work)
        steps = tc.stop_at or tc.steps
        new_s = sum(r["wall_seconds"] for r in results.values())
        if RUNS[name].optional and name not in done_before and not (Path(tc.out_dir) / "ckpt.pt").exists():
            need = estimate_seconds(results, steps)
            if new_s + need > limit:
                print(f"norm: skipping {name}: {new_s:.0f} s trained + ~{need:.0f} s > the {limit} s budget")
                skipped.append(name)
                continue
        results[name] = common.train_runs([tc])[0]
    extra = {(n, sd): common.train_runs([train_config(n, cfg, base, work, sd)])[0] for n, sd in seeded_runs(cfg)}
    check_settings({BASELINE: baseline, **results, **{f"{n} seed {sd}": r for (n, sd), r in extra.items()}})

    t0 = time.time()
    data = Path(base.data_dir)
    meta = json.loads((data / "meta.json").read_text())
    vocab = meta["tokenizer"]["vocab_size"]
    val = train.load_tokens(data, "val")
    block = base.block_size
    if cfg.grad_batch * block + 1 > len(val):
        raise SystemExit(f"grad_batch={cfg.grad_batch} windows of {block} tokens need more validation tokens")
    starts = [i * block for i in range(cfg.grad_batch)]
    idx = torch.stack([val[s:s + block] for s in starts])  # (B, T)
    tgt = torch.stack([val[s + 1:s + block + 1] for s in starts])  # (B, T)
    gradients = []
    mc_layers = make_config().n_layer  # the controls and the first step: our depth
    for depth in [int(d) for d in cfg.grad_depths.split(",") if d]:
        for place in ("pre", "post", "none"):
            torch.manual_seed(cfg.run_seed)  # the weights train.py would build for this seed
            model = GPT(make_config(vocab_size=vocab, block_size=block, dropout=base.dropout, n_layer=depth,
                                    norm_place=place))
            g = step0_gradients(model, idx, tgt)
            gradients.append({"norm_place": place, "n_layer": depth, "seed": cfg.run_seed, "init": "default",
                              "loss": round(g["loss"], 4), "blocks": common.sig_all(g["blocks"], cfg.digits),
                              "stream_rms_out": common.sig(g["stream_rms_out"], cfg.digits)})
    for init in INIT_CONTROLS:
        if init == "default":
            continue
        for place in ("pre", "post"):
            model = control_model(vocab, block, base.dropout, mc_layers, place, init, cfg.run_seed)
            g = step0_gradients(model, idx, tgt)
            gradients.append({"norm_place": place, "n_layer": mc_layers, "seed": cfg.run_seed, "init": init,
                              "loss": round(g["loss"], 4), "blocks": common.sig_all(g["blocks"], cfg.digits),
                              "stream_rms_out": common.sig(g["stream_rms_out"], cfg.digits)})
    train_data = train.load_tokens(data, "train")
    gen = torch.Generator().manual_seed(cfg.run_seed)  # the first batch train.py draws for this seed
    first_batch = train.get_batch(train_data, base.batch_size, base.block_size, gen)
    steps_first = []
    for place in ("pre", "post"):
        for warm in (True, False):
            lr = train.lr_at(0, replace(base, warmup_steps=base.warmup_steps if warm else 0))
            model = control_model(vocab, block, base.dropout, mc_layers, place, "default", cfg.run_seed)
            f = first_step(model, base, lr, first_batch, (idx, tgt))
            steps_first.append({"norm_place": place, "warmup": warm, "lr": lr,
                                "groups": {k: common.sig_all(v, cfg.digits) for k, v in f["groups"].items()},
                                **{k: common.sig(f[k], cfg.digits) for k in
                                   ("val_loss_before", "val_loss_after", "head_input_change")}})

    gains = []
    for name in [BASELINE, *results]:
        model = common.load_model(common.run_dir(work, name, cfg.run_seed))
        if not norm_modules(model):
            continue
        r = baseline if name == BASELINE else results[name]
        gains.append({"run": name, "steps_trained": steps_of(r), "norm_kind": model.cfg.norm_kind,
                      "norm_place": model.cfg.norm_place, "gain_form": model.cfg.norm_gain,
                      "decay_on_gains": r["config"].get("norm_weight_decay", False),
                      "norms": gain_stats(model, cfg.digits)})
    curves = {name: train_curve(common.run_dir(work, name, cfg.run_seed), cfg.curve_every) for name in [BASELINE, *results]}
    curves.update({(name, sd): train_curve(common.run_dir(work, name, sd), cfg.curve_every) for name, sd in extra})
    sp = speed(base, vocab, train_data, cfg.speed_rounds, cfg.speed_steps, cfg.run_seed)

    doc = build_export(cfg, baseline, results, skipped, done_before, meta, json.loads((data / "ngram.json").read_text()),
                       gradients, gains, curves, sp, idx, base, command=cfg.command or invoked, code=(commit, dirty),
                       measure_s=time.time() - t0, extra=extra, first=steps_first)
    write(doc, Path(out))
    return doc


def train_curve(run_dir: Path, every: int) -> list:
    """The mean training loss of each `every` consecutive steps, from the run's checkpoint."""
    losses = torch.load(run_dir / "ckpt.pt", map_location="cpu", weights_only=False)["state"]["losses"]
    return [finite(round(sum(losses[i:i + every]) / len(losses[i:i + every]), 4)) for i in range(0, len(losses), every)]


def run_row(name: str, r: dict, cfg: Config, curve: list, reused: bool) -> dict:
    tc, mc = r["config"], r["model_config"]
    spec = RUNS.get(name)
    return {
        "name": name,
        "description": spec.description if spec else "the baseline (Pre-LN RMSNorm, gain g), its full run",
        "variant": r["variant"],
        "norm_place": mc.get("norm_place", "pre"), "norm_kind": mc.get("norm_kind", "rms"),
        "gain_form": mc.get("norm_gain", "g"),
        "warmup_steps": tc["warmup_steps"], "lr": tc["lr"], "min_lr": tc["min_lr"],
        "lr_mult": cfg.high_lr_mult if spec and spec.high_lr else 1.0,
        "decay_on_gains": tc.get("norm_weight_decay", False),
        "params": r["params"], "seed": r["seed"], "steps_trained": steps_of(r),
        "val_loss": finite(r["val_loss"]), "train_loss": finite(r["train_loss"]),
        "finite": None not in curve and finite(r["val_loss"]) is not None,
        "history": [{**h, "train_loss": finite(h["train_loss"]), "val_loss": finite(h["val_loss"])} for h in common.one_book_history(r["history"])],
        "train_curve": curve,
        "probes": r.get("probes", []),
        "wall_seconds": r["wall_seconds"], "tokens_per_second": r["train_tokens_per_second"], "threads": r["threads"],
        "reused": reused,
    }


def choice_text(cfg: Config, results: dict, skipped: list, steps: int, extra: dict | None = None) -> str:
    """What was trained, from the runs themselves: the budget's choice as the model card states it."""
    placed = [n for n in PLACEMENT_RUNS if n in results]
    parts = [f"{len(placed)} short runs of the full {steps:,}-step schedule's first {cfg.short_steps} steps for"
             f" placement x warm-up x lr ({', '.join(placed)})"]
    decay = [n for n in results if RUNS[n].decay_gains]
    if decay:
        parts.append(f"{len(decay)} short run(s) with decay on the gains ({', '.join(decay)})")
    for n in results:
        if not RUNS[n].short or n not in placed + decay:
            parts.append(f"{n}: {steps_of(results[n]):,} steps")
    if cfg.stop_early:
        parts.append(f"steps set per run by stop_early={cfg.stop_early}")
    left = [n for n in RUNS if n not in results]
    if left:
        parts.append(f"not trained: {', '.join(left)}")
    extra = extra or {}
    if extra:
        parts.append(f"extra seeds {cfg.extra_seeds} of {cfg.seeded}, {cfg.short_steps} steps each ({len(extra)} runs)")
    every = [*results.values(), *extra.values()]
    new_s = sum(r["wall_seconds"] for r in every)
    steps = sum(steps_of(r) for r in every)
    if new_s > cfg.budget_minutes * 60:
        parts.append(f"over the {cfg.budget_minutes}-minute limit by {new_s - cfg.budget_minutes * 60:,.0f} s:"
                     f" {new_s / max(steps, 1):.2f} s per step on average over the {steps:,} new steps")
    threads = sorted({r["threads"] for r in results.values()})
    parts.append("the baseline's full run reused from the work dir (not counted); one run at a time, with"
                 f" {' or '.join(map(str, threads))} thread(s) (timing.runs has each run's)")
    return "; ".join(parts)


def build_export(cfg, baseline, results, skipped, done_before, meta, ngram, gradients, gains, curves, sp, idx, base,
                 command, code, measure_s, extra=None, first=None) -> dict:
    tc, mc = baseline["config"], baseline["model_config"]
    # The baseline's full run is shared with the other experiments (reused, not this export's new
    # training); every run of RUNS is this experiment's, whichever invocation of it trained it.
    runs = [run_row(BASELINE, baseline, cfg, curves[BASELINE], True)]
    runs += [run_row(n, r, cfg, curves[n], False) for n, r in results.items()]
    seed_rows = [run_row(n, r, cfg, curves[(n, sd)], False) for (n, sd), r in (extra or {}).items()]
    new = [r for r in runs + seed_rows if not r["reused"]]
    new_s = sum(r["wall_seconds"] for r in new)
    band = band_from_ablation(common.REPO_DIR / "data" / "real-model" / "ablation.json")
    tps = sp["tokens_per_second"]
    med = {n: statistics.median(v) for n, v in tps.items()}
    ms = {n: statistics.median(v) for n, v in sp["norm_ms"].items()}
    short = cfg.short_steps
    not_tested = [
        "one seed per run except the seeded runs (seed_runs): a difference is read by the seeds protocol against"
        " the baseline's seed band at the same step",
        f"the short runs are the first {short} steps of the {tc['steps']:,}-step schedule: what would happen"
        " later in those runs is not measured",
        "Post-LN was trained at our depth of 4 layers only; deeper models were measured at initialisation only"
        " (the step-0 gradients)",
        "the gain as 1 + w without weight decay was not trained: with w initialised at 0 its gradient and its"
        " Adam update equal g's, so it follows g's run up to rounding",
        "OLMo 2's norm at the sub-layer's output, QK-Norm, and batch normalisation were not trained",
        f"eps (norm_eps {make_config().norm_eps}) was not varied",
        f"speed was measured on this CPU only ({torch.get_num_threads()} thread(s), fp32), not on a GPU",
    ] + [f"{n} ({RUNS[n].description}) was not trained: the budget had no room left for it" for n in skipped] \
      + [f"{n} ({RUNS[n].description}) was not trained: left out of this export's runs= to fit the budget"
         for n in RUNS if n not in results and n not in skipped]
    card = {
        "name": f"{common.corpus_label(meta)}-norm-d{mc['d_model']}",
        "date": common.utc_date(),
        "command": command,
        "code": {"lab_commit": code[0], "lab_dirty": code[1]},
        "hardware": common.hardware(baseline, bf16_autocast=baseline["bf16_autocast"]),
        "corpus": meta["corpus"],
        "split": meta["split"],
        "tokenizer": {"type": meta["tokenizer"]["type"], "vocab_size": meta["tokenizer"]["vocab_size"],
                      "trained_on": meta["tokenizer"]["trained_on"]},
        "architecture": {"n_layer": mc["n_layer"], "n_head": mc["n_head"], "d_model": mc["d_model"],
                         "d_ff": mc["d_ff"], "vocab_size": mc["vocab_size"], "block_size": mc["block_size"],
                         "norm_eps": mc["norm_eps"],
                         "pre_ln": "x = x + attn(norm1(x)); x = x + ffn(norm2(x)); logits = head(norm_f(x))",
                         "post_ln": "x = norm1(x + attn(x)); x = norm2(x + ffn(x)); logits = head(x)",
                         "no_norm": "x = x + attn(x); x = x + ffn(x); logits = head(x)",
                         "rmsnorm": "x / sqrt(mean(x^2) + eps) * gain",
                         "layernorm": "(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * gain + bias",
                         "gain_forms": {"g": "gain = g, g initialised at 1", "1+w": "gain = 1 + w, w initialised at 0"}},
        "training": {"steps": tc["steps"], "short_steps": short, "batch_size": tc["batch_size"],
                     "block_size": tc["block_size"], "tokens_per_step": tc["batch_size"] * tc["block_size"],
                     "lr": tc["lr"], "min_lr": tc["min_lr"], "high_lr_mult": cfg.high_lr_mult,
                     "warmup_steps": tc["warmup_steps"], "weight_decay": tc["weight_decay"],
                     "grad_clip": tc["grad_clip"], "dropout": tc["dropout"],
                     "eval_every": {"short": cfg.short_eval_every, "full": tc["eval_every"]},
                     "precision": common.precision(baseline),
                     "same_for_every_run": "the baseline's data, batch order, schedule length and settings for every"
                                           " run (checked), except what its row sets: warm-up steps, lr and min_lr,"
                                           " decay on the gains; a short run trains the full schedule's first"
                                           " short_steps steps",
                     "seed": cfg.run_seed},
        "budget": {"limit_seconds": cfg.budget_minutes * 60, "new_runs_seconds": round(new_s, 1),
                   "measure_seconds": round(measure_s, 1),
                   "choice": choice_text(cfg, results, skipped, tc["steps"], extra)},
        "timing": common.run_timing(runs, measure_s),  # seed_runs rows carry their own wall_seconds
        "not_tested": not_tested,
        "configs": common.card_configs(meta, tc, "norm", cfg),
    }
    return {
        "schema_version": schema.NORM_SCHEMA_VERSION,
        "metric": "validation cross-entropy in nats per token over the full validation split",
        "references": {"unigram": round(ngram["unigram"], 4), "bigram": round(ngram["bigram"], 4)},
        "baseline_band": band,
        "runs": runs,
        "seed_runs": seed_rows,
        "placement": {"runs": [n for n in PLACEMENT_RUNS if n in results],
                      "rule": "Pre-LN and Post-LN, each with the baseline's warm-up and without, at the baseline's"
                              " lr and at high_lr_mult times it: the first short_steps steps of the full schedule"},
        "train_curve_rule": f"train_curve: the mean training loss of each {cfg.curve_every} consecutive steps"
                            " (null where a loss was not finite)",
        "gradients": {"rule": "one fixed batch (the first grad_batch non-overlapping validation windows), mean"
                              " cross-entropy, fp32, dropout off, the weights train.py initialises for the seed;"
                              " param_grad_norm: norm of the gradient of all a block's parameters; ffn_out_grad_norm:"
                              " of its FFN's output projection (W2 in Xiong et al. 2020, Theorem 1);"
                              " attn_out_grad_norm: of attention's output projection; stream_grad_norm: of"
                              " dL/d(stream) at the block's input; stream_rms_out: the RMS of the last block's"
                              " output. init: default (ours) or a step-0 control of INIT_CONTROLS at our depth",
                      "controls": INIT_CONTROLS,
                      "batch": {"sequences": idx.shape[0], "tokens": idx.numel()}, "models": gradients},
        "first_step": {"rule": "one AdamW step as train.py takes it (its groups, betas, decay, clip 1.0) from the"
                               " seed's init on the run's first training batch, at the lr of step 0 with the"
                               " baseline's warm-up and without: per group of weights ||dW|| / ||W||, mean |dW| / lr"
                               " and the init RMS; the head input's relative change ||dh|| / ||h|| and the loss on"
                               " the gradient batch before and after",
                       "n_layer": make_config().n_layer, "seed": cfg.run_seed, "models": first or []},
        "gains": {"rule": "the effective gain of each norm (g, or 1 + w) over its d channels, for every trained"
                          " model with norms; LayerNorm's bias too",
                  "decay_factor": {"rule": "prod over steps of (1 - lr_t * weight_decay): what AdamW's decoupled"
                                           " decay alone would do to a weight with no gradient",
                                   "short_run": common.sig(decay_factor(replace(base, stop_at=0), short), cfg.digits),
                                   "full_run": common.sig(decay_factor(replace(base, stop_at=0), base.steps), cfg.digits)},
                  "models": gains},
        "speed": {"rule": "training steps (forward, backward, clip, AdamW) of the baseline (RMSNorm) and the LayerNorm"
                          f" variant interleaved in one process: {cfg.speed_rounds} rounds of {cfg.speed_steps} steps"
                          " each after 2 untimed; and one norm alone, forward + backward on a random tensor,"
                          " interleaved the same way; medians",
                  "threads": torch.get_num_threads(),
                  "rmsnorm_tokens_per_second": [round(x, 1) for x in tps[BASELINE]],
                  "layernorm_tokens_per_second": [round(x, 1) for x in tps["layernorm"]],
                  "rmsnorm_median": round(med[BASELINE], 1), "layernorm_median": round(med["layernorm"], 1),
                  "layernorm_slower_by": common.sig(1 - med["layernorm"] / med[BASELINE], cfg.digits),
                  "norm_op": {"shape": sp["shape"], "reps": sp["reps"],
                              "rmsnorm_ms": common.sig(ms[BASELINE], cfg.digits),
                              "layernorm_ms": common.sig(ms["layernorm"], cfg.digits),
                              "rmsnorm_saves": common.sig(1 - ms[BASELINE] / ms["layernorm"], cfg.digits)}},
        "model_card": card,
    }


def write(doc: dict, out: Path) -> None:
    path = schema.write_validated(schema.NORM_FILE, doc, out)
    print(f"norm: wrote {path} ({path.stat().st_size:,} B)")
