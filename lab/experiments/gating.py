"""The gating experiment (C4 第 4 课): the gate against the activation, at equal parameters.

    python -m lab gating --corpus PATH --work DIR --out data/real-model/gating [key=value ...]

prepare (only when the work dir has no data yet: the same data as `all`) -> train every run of
RUNS, one at a time with every core, resumable, while the budget allows -> measure (the FFN's
pre-activations and hidden values of every trained model over the whole validation split, against
the clamps of the configs in data/frontier-models.json and the limits of fp16 and bf16) -> write
out/gating.json, validated first with data/schemas/real-model/gating/gating.schema.json.

Runs (seed `run_seed` each; the baseline's own full run, SwiGLU of width 688, is reused from the work dir,
and its other seeds are the FFN experiment's, in ablation.json): a GELU FFN and a ReLU FFN of two
matrices of width 1,032 (2 x 256 x 1,032 = 3 x 256 x 688 weights, exactly the baseline's) and a
Bilinear FFN (SwiGLU without its SiLU: the gate alone), all with the baseline's TrainConfig
(checked). A run that would overrun the budget at the pace of the runs before it trains the
schedule's first steps that fit (whole evaluation intervals: the others' histories have the same
steps to compare with), or is not started; the export says which.

Extra seeds are a second export beside the first, out/seeds.json, so that they can be trained (and
resumed) apart from seed 0's runs and measurements:

    python -m lab gating --corpus PATH --work DIR --out data/real-model/gating extra_seeds=1,2

reads out/gating.json, trains seeds 1 and 2 of each variant it trained in full (the whole schedule
whatever the budget: the seeds protocol pairs each with the baseline's same seed, same batches),
checks their data and settings against gating.json's, and writes out/seeds.json only. It trains
every full variant (a runs= that leaves one out is refused): the site pairs each table row with the
same baseline seeds. A seeds.json already there, paired with the same gating.json, is added to: its
other seeds' rows are kept, and its card's `earlier` says which command trained them.

A variant added after gating.json (an arm: the ungated SiLU FFN, which tells the gate from the
activation) is a third export, out/arms.json, every seed of it including run_seed:

    python -m lab gating --corpus PATH --work DIR --out data/real-model/gating arm=silu_ffn arm_seeds=0,1,2

It checks the corpus and training settings against gating.json's before training, trains the seeds
one at a time (resumable), and adds them to an arms.json already there (its other rows kept).
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch
import torch.nn.functional as F

from lab import prepare, schema, train
from lab.experiments import common
from lab.experiments.common import band_from_ablation, estimate_seconds, finite, steps_of
from lab.model import GATING_VARIANTS, GPT, LinearFFN, SwiGLU

NAME = "gating"  # python -m lab gating
DEFAULT_OUT = "data/real-model/gating"
BASELINE = "baseline"  # the full SwiGLU run, reused from the work dir (`all`, `mechanism`, `norm` trained it)
# In training order: Shazeer's main comparison first, then his test of "the gate, not the activation".
DESCRIPTIONS = {
    "gelu_ffn": "GELU FFN (exact, erf), two matrices of width 1,032: the baseline's FFN parameter count",
    "bilinear_ffn": "Bilinear FFN: (x W_gate) * (x W_up), no activation, width 688 (SwiGLU without SiLU)",
    "relu_ffn": "ReLU FFN, two matrices of width 1,032: the original Transformer's FFN at the same count",
    "silu_ffn": "SiLU FFN, two matrices of width 1,032: SwiGLU's activation without its gate, at the same count",
}
assert list(DESCRIPTIONS) == list(GATING_VARIANTS)
FFN_FORMULAS = {
    "swiglu": "down(silu(x W_gate) * (x W_up))", "bilinear": "down((x W_gate) * (x W_up))",
    "gelu": "down(gelu(x W_up)), gelu exact: x * Phi(x)", "relu": "down(relu(x W_up))",
    "silu": "down(silu(x W_up)), silu: x * sigmoid(x)",
}
FP16_MAX = torch.finfo(torch.float16).max  # 65504
BF16_MAX = torch.finfo(torch.bfloat16).max  # 3.39e38
FRONTIER = common.REPO_DIR / "data" / "frontier-models.json"  # the configs' clamps (swiglu_limit)


@dataclass
class Config:
    run_seed: int = 0  # every run's seed (the baseline's full run has seed 0)
    runs: str = ""  # a comma-separated subset of RUNS to train and export ("" = all)
    extra_seeds: str = ""  # "1,2": train these seeds of gating.json's full variants and write seeds.json only
    arm: str = ""  # "silu_ffn": a variant gating.json does not hold, trained at arm_seeds; writes arms.json only
    arm_seeds: str = "0,1,2"  # the arm's seeds, each paired with the baseline's same seed
    budget_minutes: int = 60  # new training time; a run that would overrun it is cut to what fits (or not started)
    top_share: float = 1e-4  # the measurement's upper quantile: the value exceeded by this share of entries
    digits: int = 4  # significant digits of exported measurements
    command: str = ""  # the command the model card records; "" = this process's command line


def selected(cfg: Config) -> list[str]:
    """selected(Config(runs="relu_ffn,gelu_ffn")) -> ['gelu_ffn', 'relu_ffn']"""
    want = [r for r in cfg.runs.split(",") if r]
    unknown = sorted(set(want) - set(GATING_VARIANTS))
    if unknown:
        raise SystemExit(f"runs: unknown {unknown}; known: {list(GATING_VARIANTS)}")
    return [n for n in GATING_VARIANTS if not want or n in want]


def extra_seeds(cfg: Config) -> list[int]:
    """extra_seeds(Config(extra_seeds="1,2")) -> [1, 2]"""
    seeds = [int(x) for x in cfg.extra_seeds.split(",") if x]
    if cfg.run_seed in seeds:
        raise SystemExit(f"extra_seeds: {cfg.run_seed} is run_seed already")
    return seeds


def clamp_limits(path: Path = FRONTIER) -> dict[str, float]:
    """{model name: swiglu_limit} of every frontier config that clamps its SwiGLU."""
    models = json.loads(path.read_text(encoding="utf-8"))
    return {m["name"]: float(m["config"]["swiglu_limit"]) for m in models.values()
            if "swiglu_limit" in m.get("config", {})}


# --- the measurement (no training) ----------------------------------------------------------


def ffn_readings(ffn: torch.nn.Module, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The FFN's inside for its input x (the normed stream, (N, C)), fp32: gate and up
    pre-activations and the hidden value the down projection reads."""
    if isinstance(ffn, SwiGLU):
        g, u = ffn.gate(x), ffn.up(x)  # (N, d_ff) each
        h = (ffn.gate_act(g) if ffn.gate_act else g) * u
        return {"gate": g, "up": u, "hidden": h}
    assert isinstance(ffn, LinearFFN), type(ffn)
    u = ffn.up(x)  # (N, d_ff)
    return {"up": u, "hidden": ffn.act(u) if ffn.act else u}


class Reading:
    """One reading's statistics over the validation windows, gathered window by window (the whole split's
    entries at once took 1.4 GB per reading and half an hour on two cores): max |.|, max, min, the k largest
    |.| (so the top `share` quantile is exact), and per limit how many entries a clamp would change."""

    def __init__(self, k: int):
        self.k, self.entries = k, 0
        self.max_abs, self.max, self.min = -float("inf"), -float("inf"), float("inf")
        self.top = torch.empty(0)
        self.over = {}  # limit name -> entries the clamp changes

    def add(self, v: torch.Tensor, limits: dict[str, float], one_sided: bool) -> None:
        a = v.abs().flatten()
        self.entries += a.numel()
        self.max_abs, self.max, self.min = max(self.max_abs, a.max().item()), max(self.max, v.max().item()), \
            min(self.min, v.min().item())
        self.top = torch.cat([self.top, a.topk(min(self.k, a.numel())).values]).topk(
            min(self.k, self.top.numel() + a.numel())).values
        for name, lim in limits.items():  # gpt-oss clamps the gate from above only, up on both sides
            changed = (v > lim) if one_sided else (a > lim)
            self.over[name] = self.over.get(name, 0) + int(changed.sum().item())

    def row(self) -> dict:
        return {"max_abs": self.max_abs, "max": self.max, "min": self.min, "top_abs": self.top[-1].item()}


@torch.no_grad()
def ffn_ranges(model: GPT, val: torch.Tensor, limits: dict[str, float], share: float, digits: int,
               segments=None) -> list[dict]:
    """Per layer, over every validation token (the val loss's non-overlapping windows): the largest
    gate and up pre-activations and hidden values, their top `share` quantile, and the share of
    entries a clamp at each limit would change (gpt-oss clamps the gate from above only and up on
    both sides)."""
    block = model.cfg.block_size
    windows = [(s, min(s + block, end)) for first, end in segments or [(0, len(val))] for s in range(first, end, block)]
    tokens = sum(end - s for s, end in windows)
    stats: list[dict[str, Reading]] = [{} for _ in model.blocks]

    def read(i, ffn, x, out):
        r = ffn_readings(ffn, x)
        assert torch.allclose(ffn.down(r["hidden"]), out, atol=1e-5), "readings do not give the FFN output"
        for name, v in r.items():
            k = max(1, int(round(tokens * v.shape[-1] * share)))
            stats[i].setdefault(name, Reading(k)).add(v, limits if name != "hidden" else {}, one_sided=name == "gate")

    hooks = [b.ffn.register_forward_hook(lambda m, a, out, i=i: read(i, m, a[0][0].float(), out[0].float()))
             for i, b in enumerate(model.blocks)]
    try:
        for s, end in windows:  # per book: a window never crosses one
            model(val[s:end][None])
    finally:
        for h in hooks:
            h.remove()
    rows = []
    for i, readings in enumerate(stats):
        row = {"block": i + 1, "tokens": tokens}
        for name, st in readings.items():
            row[name] = st.row()
        row["clamped_share"] = {}
        for model_name in limits:
            c = {"up": readings["up"].over[model_name] / readings["up"].entries}
            if "gate" in readings:
                c["gate"] = readings["gate"].over[model_name] / readings["gate"].entries
            row["clamped_share"][model_name] = c
        rows.append(common.sig_all(row, digits))
    return rows


# --- the command --------------------------------------------------------------------------------


def run(cfg: Config, prep: prepare.PrepareConfig, base: train.TrainConfig, out: str, invoked: str) -> dict:
    print("gating config:", json.dumps(asdict(cfg), ensure_ascii=False))
    if cfg.arm:
        return run_arm(cfg, prep, base, out, invoked)
    if cfg.extra_seeds:
        return run_seeds(cfg, prep, base, out, invoked)
    commit, dirty = common.git_lab_commit()  # the code as this process loaded it
    work = Path(prep.work_dir)
    common.ensure_data(prep)
    limit = cfg.budget_minutes * 60
    baseline = train.run(replace(base, variant=BASELINE, seed=cfg.run_seed,
                                 out_dir=str(common.run_dir(work, BASELINE, cfg.run_seed))))
    results, skipped = {}, []
    for name in selected(cfg):
        tc = replace(base, variant=name, seed=cfg.run_seed, out_dir=str(common.run_dir(work, name, cfg.run_seed)))
        stop = started_stop(Path(tc.out_dir))
        if stop is None:  # not started: it must fit what is left of the budget
            stop = budget_stop(tc, limit - sum(r["wall_seconds"] for r in results.values()),
                               estimate_seconds(results, tc.steps) / tc.steps)
        if stop is None:
            print(f"gating: not starting {name}: the {limit} s budget has no room for {tc.eval_every} steps")
            skipped.append(name)
            continue
        if stop:
            print(f"gating: {name} trains the schedule's first {stop} steps: what the budget has room for")
        results[name] = common.train_runs([replace(tc, stop_at=stop)])[0]
    try:
        common.check_same_settings([baseline, *results.values()])
    except ValueError as e:
        raise SystemExit(f"a run differs from the baseline in its training settings: {e}") from None

    t0 = time.time()
    data = Path(base.data_dir)
    meta = json.loads((data / "meta.json").read_text())
    val = train.load_tokens(data, "val")
    segments = [b[1:] for b in prepare.val_segments(meta)]  # each book's val tokens, as train.py scores them
    limits = clamp_limits()
    ranges = []
    for name in [BASELINE, *results]:
        model = common.load_model(common.run_dir(work, name, cfg.run_seed))
        ranges.append({"run": name, "ffn": model.cfg.ffn, "layers": ffn_ranges(model, val, limits, cfg.top_share,
                                                                             cfg.digits, segments)})
    doc = build_export(cfg, baseline, results, skipped, meta, json.loads((data / "ngram.json").read_text()), ranges,
                       limits, command=cfg.command or invoked, code=(commit, dirty), measure_s=time.time() - t0)
    write(doc, Path(out))
    return doc


def started_stop(out_dir: Path) -> int | None:
    """stop_at of a run already started (its checkpoint's or result's config), None if not started:
    a rerun keeps the length the budget gave it."""
    if (out_dir / "result.json").exists():
        return json.loads((out_dir / "result.json").read_text())["config"].get("stop_at", 0)
    if (out_dir / "ckpt.pt").exists():
        return torch.load(out_dir / "ckpt.pt", map_location="cpu", weights_only=False)["config"].get("stop_at", 0)
    return None


def budget_stop(tc: train.TrainConfig, left_s: float, per_step_s: float) -> int | None:
    """0 (the full schedule) when it fits in left_s at per_step_s (0 = no pace known yet: the first
    run), else the most whole evaluation intervals that fit, else None (not started).

    budget_stop(TrainConfig(steps=1400, eval_every=200), 700.0, 1.0) -> 600
    """
    if per_step_s <= 0 or tc.steps * per_step_s <= left_s:
        return 0
    fit = max(0, int(left_s / per_step_s)) // tc.eval_every * tc.eval_every
    return fit or None


def ffn_params(model_config: dict) -> int:
    """Weights of one layer's FFN, counted from its module. ffn_params({"d_ff": 688, ...}) -> 528384"""
    model = GPT(common.make_config(**{k: v for k, v in model_config.items()}))
    return sum(p.numel() for p in model.blocks[0].ffn.parameters())


def run_row(name: str, r: dict, reused: bool) -> dict:
    mc = r["model_config"]
    return {
        "name": name,
        "description": DESCRIPTIONS.get(name, "the baseline: SwiGLU of width 688, its full run"),
        "variant": r["variant"], "ffn": mc.get("ffn", "swiglu"), "formula": FFN_FORMULAS[mc.get("ffn", "swiglu")],
        "d_ff": mc["d_ff"], "matrices": 3 if mc.get("ffn", "swiglu") in ("swiglu", "bilinear") else 2,
        "ffn_params_per_layer": ffn_params(mc), "params": r["params"], "seed": r["seed"],
        "steps_trained": steps_of(r), "val_loss": finite(r["val_loss"]), "train_loss": finite(r["train_loss"]),
        "history": [{**h, "train_loss": finite(h["train_loss"]), "val_loss": finite(h["val_loss"])} for h in common.one_book_history(r["history"])],
        "wall_seconds": r["wall_seconds"], "tokens_per_second": r["train_tokens_per_second"], "threads": r["threads"],
        "reused": reused,
    }


def build_export(cfg, baseline, results, skipped, meta, ngram, ranges, limits, command, code, measure_s) -> dict:
    tc, mc = baseline["config"], baseline["model_config"]
    runs = [run_row(BASELINE, baseline, True)] + [run_row(n, r, False) for n, r in results.items()]
    new_s = sum(r["wall_seconds"] for r in runs if not r["reused"])
    band = band_from_ablation(common.REPO_DIR / "data" / "real-model" / "ablation.json")
    not_tested = [
        (f"seed {cfg.run_seed} of every variant here; more seeds, paired with the baseline's same seeds from the FFN"
         " experiment, are the extra_seeds export beside this file (seeds.json), read by the seeds protocol"),
        "GEGLU, ReGLU and GLU (sigmoid gate) were not trained",
        "the clamps were measured against, not trained with: no run clamps its FFN",
        f"one model size ({mc['n_layer']} layers, d = {mc['d_model']}) and one schedule"
        f" ({tc['steps']:,} steps): how the gaps change with scale or longer training is not measured",
    ] + [f"{n} ({DESCRIPTIONS[n]}) was not trained: the budget had no room left for it" for n in skipped] \
      + [f"{n} ({DESCRIPTIONS[n]}) was not trained: left out of this export's runs=" for n in GATING_VARIANTS
         if n not in results and n not in skipped]
    over = new_s - cfg.budget_minutes * 60
    cut = {n: steps_of(r) for n, r in results.items() if steps_of(r) < tc["steps"]}
    not_tested += [f"{n} trained the schedule's first {k:,} of {tc['steps']:,} steps (the budget's room): it is"
                   f" compared with the others at step {k:,}" for n, k in cut.items()]
    choice = (f"seed {cfg.run_seed}, the {tc['steps']:,}-step schedule: "
              + ", ".join(f"{n} {steps_of(r):,} steps" for n, r in results.items())
              + (f"; not started for the budget: {', '.join(skipped)}" if skipped else "")
              + (f"; over the {cfg.budget_minutes}-minute limit by {over:,.0f} s" if over > 0 else "")
              + "; the baseline's full run reused from the work dir (not counted); one run at a time")
    card = {
        "name": f"{common.corpus_label(meta)}-gating-d{mc['d_model']}",
        **common.provenance(command, code),
        "hardware": common.hardware(baseline, bf16_autocast=baseline["bf16_autocast"]),
        "corpus": meta["corpus"], "split": meta["split"],
        "tokenizer": {"type": meta["tokenizer"]["type"], "vocab_size": meta["tokenizer"]["vocab_size"],
                      "trained_on": meta["tokenizer"]["trained_on"]},
        "architecture": {"n_layer": mc["n_layer"], "n_head": mc["n_head"], "d_model": mc["d_model"],
                         "vocab_size": mc["vocab_size"], "block_size": mc["block_size"],
                         "norm": "pre-norm RMSNorm", "ffn_formulas": FFN_FORMULAS},
        "training": {"steps": tc["steps"], "batch_size": tc["batch_size"], "block_size": tc["block_size"],
                     "tokens_per_step": tc["batch_size"] * tc["block_size"], "lr": tc["lr"], "min_lr": tc["min_lr"],
                     "warmup_steps": tc["warmup_steps"], "weight_decay": tc["weight_decay"],
                     "grad_clip": tc["grad_clip"], "dropout": tc["dropout"], "precision": common.precision(baseline),
                     "same_for_every_run": "the baseline's data, batch order, schedule and settings for every run"
                                           " (checked); only the FFN differs",
                     "seed": cfg.run_seed},
        "budget": {"limit_seconds": cfg.budget_minutes * 60, "new_runs_seconds": round(new_s, 1),
                   "measure_seconds": round(measure_s, 1), "choice": choice},
        "timing": common.run_timing(runs, measure_s),
        "not_tested": not_tested,
        "configs": common.card_configs(meta, tc, "gating", cfg),
    }
    return {
        "schema_version": schema.GATING_SCHEMA_VERSION,
        "metric": "validation cross-entropy in nats per token over the full validation split",
        "references": {"unigram": round(ngram["unigram"], 4), "bigram": round(ngram["bigram"], 4)},
        "baseline_band": band,
        "runs": runs,
        "ranges": {"rule": "every validation token, in the val loss's non-overlapping windows, fp32: per layer the"
                           " FFN's gate and up pre-activations (x W_gate, x W_up) and the hidden value the down"
                           " projection reads; max_abs, max, min, and top_abs: the |value| that a top_share of"
                           " the entries reach; clamped_share: the share of entries a config's swiglu_limit would"
                           " change (the gate clamped from above, up on both sides, as gpt-oss does)",
                   "top_share": cfg.top_share, "limits": limits, "fp16_max": FP16_MAX, "bf16_max": BF16_MAX,
                   "models": ranges},
        "model_card": card,
    }


def write(doc: dict, out: Path, name: str = schema.GATING_FILE) -> None:
    path = schema.write_validated(name, doc, out)
    print(f"gating: wrote {path} ({path.stat().st_size:,} B)")


# --- the extra seeds: out/seeds.json -------------------------------------------------------------


def run_seeds(cfg: Config, prep: prepare.PrepareConfig, base: train.TrainConfig, out: str, invoked: str) -> dict:
    """Train `extra_seeds` of every variant out/gating.json trained in full, one run at a time and
    resumable, and write out/seeds.json."""
    commit, dirty = common.git_lab_commit()
    first_path = Path(out) / Path(schema.GATING_FILE).name
    if not first_path.exists():
        raise SystemExit(f"extra_seeds: {first_path} is missing: export seed {cfg.run_seed} first (the same command"
                         " without extra_seeds)")
    first = json.loads(first_path.read_text(encoding="utf-8"))
    schema.validate(schema.GATING_FILE, first)
    card = first["model_card"]
    if card["training"]["seed"] != cfg.run_seed:
        raise SystemExit(f"extra_seeds: {first_path} holds seed {card['training']['seed']}, not run_seed {cfg.run_seed}")
    common.ensure_data(prep)
    data = Path(base.data_dir)
    meta = json.loads((data / "meta.json").read_text())
    if common.corpus_shas(meta["corpus"]) != common.corpus_shas(card["corpus"]):
        raise SystemExit(f"extra_seeds: the work dir's corpus is not {first_path}'s")
    steps = first["runs"][0]["steps_trained"]
    full = [r["name"] for r in first["runs"][1:] if r["steps_trained"] == steps]
    if not full:
        raise SystemExit(f"extra_seeds: {first_path} has no variant trained over the whole schedule")
    names = [n for n in full if n in selected(cfg)]
    if names != full:  # the site pairs every row with the same baseline seeds (course/facts/gating.py)
        raise SystemExit(f"extra_seeds: seeds.json needs these seeds of every variant {first_path} trained in full"
                         f" ({', '.join(full)}); runs= leaves out {', '.join(n for n in full if n not in names)}")
    try:  # before training: a run with other settings would pair with nothing
        same_as_card(asdict(base), card["configs"]["train"])
    except ValueError as e:
        raise SystemExit(f"extra_seeds: these training settings differ from {first_path}'s runs: {e}") from None
    kept, kept_timing, earlier = kept_seeds(Path(out) / Path(schema.GATING_SEEDS_FILE).name, first, meta,
                                            extra_seeds(cfg), names, base)
    work = Path(prep.work_dir)
    extra = {(n, sd): common.train_runs([replace(base, variant=n, seed=sd,
                                                 out_dir=str(common.run_dir(work, n, sd)))])[0]
             for sd in extra_seeds(cfg) for n in names}
    try:
        common.check_same_settings(list(extra.values()))
    except ValueError as e:
        raise SystemExit(f"an extra seed differs from the others in its training settings: {e}") from None
    doc = build_seeds_export(cfg, extra, first, meta, command=cfg.command or invoked, code=(commit, dirty),
                             kept=(kept, kept_timing, earlier), order=names)
    write(doc, Path(out), schema.GATING_SEEDS_FILE)
    return doc


def kept_seeds(path: Path, first: dict, meta: dict, seeds: list[int], names: list[str], base) -> tuple:
    """What this export keeps of an earlier seeds.json: the rows and timings of its other seeds, and who
    made them (the card's `earlier`), so that a later session adds seeds without the earlier ones'
    checkpoints. Nothing when there is none, or when it pairs with another gating.json (replaced)."""
    if not path.exists():
        return [], [], []
    old = json.loads(path.read_text(encoding="utf-8"))
    schema.validate(schema.GATING_SEEDS_FILE, old)
    fc = first["model_card"]
    if old["pairs_with"] != {"file": Path(schema.GATING_FILE).name, "date": fc["date"], "run_seed": fc["training"]["seed"]}:
        print(f"extra_seeds: {path.name} pairs with another gating.json ({old['pairs_with']}): it is replaced, not added to")
        return [], [], []
    card = old["model_card"]
    if common.corpus_shas(card["corpus"]) != common.corpus_shas(meta["corpus"]):
        raise SystemExit(f"extra_seeds: {path} was trained on another corpus: move it away to start a new one")
    try:
        same_as_card(asdict(base), card["configs"]["train"])
    except ValueError as e:
        raise SystemExit(f"extra_seeds: {path} was trained with other settings: {e}") from None
    rows = [r for r in old["seed_runs"] if r["seed"] not in seeds]
    if sorted({r["name"] for r in rows}) != sorted(names) and rows:
        raise SystemExit(f"extra_seeds: {path} holds variants {sorted({r['name'] for r in rows})}, this export"
                         f" {sorted(names)}")
    timing = [t for t in card["timing"]["runs"] if t["seed"] not in seeds]
    kept = {r["seed"] for r in rows}
    mine = kept - {sd for e in card.get("earlier", []) for sd in e["seeds"]}
    earlier = [{**e, "seeds": [sd for sd in e["seeds"] if sd in kept]} for e in card.get("earlier", [])]
    earlier += [{"date": card["date"], "command": card["command"], "code": card["code"], "seeds": sorted(mine)}]
    for e in earlier:
        e["runs_seconds"] = round(sum(t["wall_seconds"] for t in timing if t["seed"] in e["seeds"]), 1)
    return rows, timing, [e for e in earlier if e["seeds"]]


def same_as_card(config: dict, card_train: dict) -> None:
    """Raise ValueError unless a run's training settings are those a model card records (the
    settings that do not change a trajectory aside)."""
    ignore = set(common.TRAJECTORY_FREE)
    mine = common.portable_config({k: v for k, v in {**train.LATER_FIELDS, **config}.items() if k not in ignore})
    theirs = {k: v for k, v in {**train.LATER_FIELDS, **card_train}.items() if k not in ignore}
    diff = {k: (theirs.get(k), mine.get(k)) for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k)}
    if diff:
        raise ValueError(f"(gating.json, this run): {diff}")


def build_seeds_export(cfg, extra, first, meta, command, code, kept=([], [], []), order=()) -> dict:
    """seeds.json: the runs trained now, and those kept from an earlier seeds.json (`kept`: rows,
    their timings, `earlier` provenance), seed by seed in gating.json's variant order."""
    new = [run_row(n, r, False) for (n, _), r in extra.items()]
    old_rows, old_timing, earlier = kept
    place = {n: i for i, n in enumerate(order)}

    def seed_then_variant(seed, name):
        return seed, place.get(name, len(place))

    rows = sorted(old_rows + new, key=lambda r: seed_then_variant(r["seed"], r["name"]))
    timing = sorted(old_timing + common.run_timing(new, 0.0)["runs"], key=lambda t: seed_then_variant(t["seed"], t["run"]))
    r0 = next(iter(extra.values()))
    new_s = sum(r["wall_seconds"] for r in new)
    choice = (f"seeds {cfg.extra_seeds} of {', '.join(dict.fromkeys(n for n, _ in extra))}, each the whole"
              f" {new[0]['steps_trained']:,}-step schedule whatever the budget (a cut run has no baseline step to"
              " pair with); one run at a time")
    if earlier:
        choice += ("; seeds " + ",".join(str(sd) for e in earlier for sd in e["seeds"])
                   + " kept from the earlier seeds.json (model_card.earlier says who trained them)")
    return {
        "schema_version": schema.GATING_SEEDS_SCHEMA_VERSION,
        "metric": first["metric"],
        "pairs_with": {"file": Path(schema.GATING_FILE).name, "date": first["model_card"]["date"],
                       "run_seed": cfg.run_seed},
        "seed_runs": rows,
        "model_card": {
            "name": f"{first['model_card']['name']}-seeds",
            **common.provenance(command, code),
            "hardware": common.hardware(r0, bf16_autocast=r0["bf16_autocast"]),
            "corpus": meta["corpus"], "split": meta["split"],
            "budget": {"new_runs_seconds": round(new_s, 1), "choice": choice},
            "timing": {"runs": timing},
            "configs": common.card_configs(meta, r0["config"], "gating", cfg),
            **({"earlier": earlier} if earlier else {}),
        },
    }


# --- later arms: out/arms.json ---------------------------------------------------------------------


def arm_seed_list(cfg: Config) -> list[int]:
    """arm_seed_list(Config(arm="silu_ffn", arm_seeds="0,1,2")) -> [0, 1, 2]"""
    try:
        seeds = [int(x) for x in cfg.arm_seeds.split(",") if x]
    except ValueError:
        raise SystemExit(f"arm_seeds: expected seeds such as 0,1,2, got {cfg.arm_seeds!r}") from None
    if not seeds or len(set(seeds)) != len(seeds) or min(seeds) < 0:
        raise SystemExit(f"arm_seeds: expected distinct seeds such as 0,1,2, got {cfg.arm_seeds!r}")
    return seeds


def run_arm(cfg: Config, prep: prepare.PrepareConfig, base: train.TrainConfig, out: str, invoked: str) -> dict:
    """Train `arm_seeds` of the variant `arm`, which gating.json does not hold, and write out/arms.json."""
    commit, dirty = common.git_lab_commit()
    if cfg.arm not in GATING_VARIANTS:
        raise SystemExit(f"arm: unknown {cfg.arm!r}; known: {list(GATING_VARIANTS)}")
    if cfg.extra_seeds or cfg.runs:
        raise SystemExit("arm: trains one variant's seeds alone; leave extra_seeds and runs unset")
    first_path = Path(out) / Path(schema.GATING_FILE).name
    if not first_path.exists():
        raise SystemExit(f"arm: {first_path} is missing: an arm is added to an export of the gating experiment")
    first = json.loads(first_path.read_text(encoding="utf-8"))
    schema.validate(schema.GATING_FILE, first)
    if cfg.arm in {r["name"] for r in first["runs"]}:
        raise SystemExit(f"arm: {first_path} holds {cfg.arm} already: its seeds are extra_seeds=")
    card = first["model_card"]
    common.ensure_data(prep)
    meta = json.loads((Path(base.data_dir) / "meta.json").read_text())
    if common.corpus_shas(meta["corpus"]) != common.corpus_shas(card["corpus"]):
        raise SystemExit(f"arm: the work dir's corpus is not {first_path}'s")
    try:  # before training: a run with other settings would pair with nothing
        same_as_card(asdict(base), card["configs"]["train"])
    except ValueError as e:
        raise SystemExit(f"arm: these training settings differ from {first_path}'s runs: {e}") from None
    seeds = arm_seed_list(cfg)
    rows, timing, earlier = kept_arms(Path(out) / Path(schema.GATING_ARMS_FILE).name, first, meta, cfg.arm, seeds, base)
    work = Path(prep.work_dir)
    runs = {sd: common.train_runs([replace(base, variant=cfg.arm, seed=sd,
                                           out_dir=str(common.run_dir(work, cfg.arm, sd)))])[0] for sd in seeds}
    try:
        common.check_same_settings(list(runs.values()))
    except ValueError as e:
        raise SystemExit(f"an arm's seed differs from the others in its training settings: {e}") from None
    new = [run_row(cfg.arm, r, False) for r in runs.values()]
    order = {n: i for i, n in enumerate(GATING_VARIANTS)}
    rows = sorted(rows + new, key=lambda r: (order[r["name"]], r["seed"]))
    timing = sorted(timing + common.run_timing(new, 0.0)["runs"], key=lambda t: (order[t["run"]], t["seed"]))
    r0 = next(iter(runs.values()))
    choice = (f"seeds {','.join(map(str, seeds))} of {cfg.arm}, each the whole {new[0]['steps_trained']:,}-step"
              " schedule whatever the budget; one run at a time")
    if earlier:
        choice += "; the other rows kept from the earlier arms.json (model_card.earlier says who trained them)"
    doc = {
        "schema_version": schema.GATING_ARMS_SCHEMA_VERSION,
        "metric": first["metric"],
        "pairs_with": {"file": Path(schema.GATING_FILE).name, "date": card["date"], "run_seed": cfg.run_seed},
        "seed_runs": rows,
        "model_card": {
            "name": f"{card['name']}-arms",
            **common.provenance(cfg.command or invoked, (commit, dirty)),
            "hardware": common.hardware(r0, bf16_autocast=r0["bf16_autocast"]),
            "corpus": meta["corpus"], "split": meta["split"],
            "budget": {"new_runs_seconds": round(sum(r["wall_seconds"] for r in new), 1), "choice": choice},
            "timing": {"runs": timing},
            "configs": common.card_configs(meta, r0["config"], "gating", cfg),
            **({"earlier": earlier} if earlier else {}),
        },
    }
    write(doc, Path(out), schema.GATING_ARMS_FILE)
    return doc


def kept_arms(path: Path, first: dict, meta: dict, arm: str, seeds: list[int], base) -> tuple:
    """The rows of an earlier arms.json that this export does not train again, their timings, and who
    trained them (`earlier`); nothing when there is none or when it pairs with another gating.json."""
    if not path.exists():
        return [], [], []
    old = json.loads(path.read_text(encoding="utf-8"))
    schema.validate(schema.GATING_ARMS_FILE, old)
    fc = first["model_card"]
    if old["pairs_with"] != {"file": Path(schema.GATING_FILE).name, "date": fc["date"], "run_seed": fc["training"]["seed"]}:
        print(f"arm: {path.name} pairs with another gating.json ({old['pairs_with']}): it is replaced, not added to")
        return [], [], []
    card = old["model_card"]
    if common.corpus_shas(card["corpus"]) != common.corpus_shas(meta["corpus"]):
        raise SystemExit(f"arm: {path} was trained on another corpus: move it away to start a new one")
    try:
        same_as_card(asdict(base), card["configs"]["train"])
    except ValueError as e:
        raise SystemExit(f"arm: {path} was trained with other settings: {e}") from None
    again = {(arm, sd) for sd in seeds}
    rows = [r for r in old["seed_runs"] if (r["name"], r["seed"]) not in again]
    timing = [t for t in card["timing"]["runs"] if (t["run"], t["seed"]) not in again]
    kept = {(r["name"], r["seed"]) for r in rows}
    before = {(x["name"], x["seed"]) for e in card.get("earlier", []) for x in e["runs"]}
    earlier = [{**e, "runs": [x for x in e["runs"] if (x["name"], x["seed"]) in kept]} for e in card.get("earlier", [])]
    earlier += [{"date": card["date"], "command": card["command"], "code": card["code"],
                 "runs": [{"name": n, "seed": sd} for n, sd in sorted(kept - before)]}]
    for e in earlier:
        mine = {(x["name"], x["seed"]) for x in e["runs"]}
        e["runs_seconds"] = round(sum(t["wall_seconds"] for t in timing if (t["run"], t["seed"]) in mine), 1)
    return rows, timing, [e for e in earlier if e["runs"]]
