"""Facts of our model's residual experiment (data/real-model/residual/residual.json, lab/'s
`python -m lab residual`): facts.residual, or None before its first export; and of its
mechanism runs (mechanism.json, `python -m lab mechanism`): facts.residual.mechanism, or None.

The baseline is the FFN experiment's (residual.json carries its five runs), extended by the
seeds trained for it later (course/facts/_baseline.py): every reading sees every baseline seed.
Comparisons are read by seeds protocol v2 (widgets/common/seeds.py) in the widget models that
write the page's sentences (residual-evidence, skip-mechanism); this module adds what the page
says once: the health check and the noise at the last step (facts.residual.protocol), and the
primary comparisons, declared post hoc with Holm's correction over them (PRIMARY).
"""
import math

from course.widgets import common_module, load_model

from . import _baseline

numfmt = common_module("numfmt")  # first: seeds imports it
seeds = common_module("seeds")

KEY = "real-model/residual/residual"
MECHANISM_KEY = "real-model/residual/mechanism"
ATTENTION_KEY = "real-model/attention/attention"  # C3 第 1 课's prefix-mean control, which the failed run ties

# The lesson's primary comparisons, on validation loss at the last step, gap = a - b. Declared post
# hoc: every run was trained before v2 existed, so the page says it reads them after the fact. They
# are the two halves of the thesis about our model: no skips at all, and the skip's gradient cut.
PRIMARY = (("no_residual", "baseline"), ("detached_skip", "baseline"))


def stream_facts(model):
    """One model's stream: RMS after each write relative to the embedding's, beside the two
    predictions: sqrt(writes + 1) (every write as large as the embedding, all independent) and
    the measured writes' sizes added as if independent."""
    points = model["points"]
    base = points[0]["stream_rms"]
    return {"variant": model["variant"], "state": model["state"], "seed": model["seed"],
            "writes": [p["writes"] for p in points], "labels": [p["write"] for p in points],
            "relative": [p["stream_rms"] / base for p in points],
            "sqrt_rule": [math.sqrt(p["writes"] + 1) for p in points],
            "independent": [p["rms_if_independent"] / base for p in points],
            "write_relative": [p["write_rms"] / base for p in points]}


def gradient_facts(model):
    """Step-0 gradients of one model: the parameters' (what an optimiser step reads) per block,
    and dL/d(stream) at each block's input."""
    params = [b["param_grad_norm"] for b in model["blocks"]]
    stream = [b["stream_grad_norm"] for b in model["blocks"]]
    return {"variant": model["variant"], "n_layer": len(params), "norms": params, "stream_norms": stream,
            "first_over_last": params[0] / params[-1], "max_over_min": max(params) / min(params)}


def mechanism_facts(data, no_skip=None, baseline=None, no_skip_precision=None):
    """The mechanism runs by name, each with its probes at step 0 and at its last evaluation.
    `no_skip` is residual.json's no_residual variant: that run is the mechanism export's no-skip
    model too (its loss and curve from there, its step-0 probes from mechanism.json).
    `baseline` is the baseline's row (every seed it has): its runs are the baseline arm of every
    reading here (seeds protocol v2), unless its precision differs from this export's, when the
    arm is this export's own baseline run; `no_skip_precision` is residual.json's precision."""
    steps = data["model_card"]["training"]["steps"]
    variants = {}
    for v in data["variants"]:
        variants[v["name"]] = {**v, "init": v["probes"][0], "end": v["probes"][-1],
                               "stopped_early": v["steps_trained"] < steps, "elsewhere": False}
    order = [v["name"] for v in data["variants"]]
    if no_skip is not None:
        variants["no_residual"] = {"name": "no_residual", "seed": no_skip["seeds"][0], "val_loss": no_skip["val_losses"][0],
                                   "history": no_skip["histories"][0], "steps_trained": steps,
                                   "init": data["no_skip_init"]["probe"], "end": None, "stopped_early": False,
                                   "elsewhere": True}
        order.insert(1, "no_residual")
    # The same seed of the baseline in both exports, where their precisions differ: how far the
    # two precisions move one run (None when both are the same run, trained once).
    precision_gap = None
    first = data["variants"][0]
    if (baseline is not None and first["seed"] in baseline["seeds"]
            and no_skip_precision not in (None, data["model_card"]["training"]["precision"])):
        precision_gap = first["val_loss"] - baseline["val_losses"][baseline["seeds"].index(first["seed"])]
    same_runs = baseline is not None and precision_gap is None
    runs = ([{"seed": s, "history": h} for s, h in zip(baseline["seeds"], baseline["histories"])] if same_runs
            else [{"seed": first["seed"], "history": first["history"]}])
    return {"variants": variants, "order": order, "precision_gap": precision_gap, "baseline_runs": runs,
            "references": data["references"], "card": data["model_card"],
            "gradients": {m["variant"]: m for m in data["gradients"]["models"]},
            "grad_batch": data["gradients"]["batch"], "probe_batch": data["probes"]}


def failed_course(row, seed, step, healthy_seeds):
    """A failed baseline run over its evaluations: how far it lies behind the mean of the runs
    that are healthy at the last step, [(step, lag), ...], and where that lag peaks."""
    course = []
    for h in row["histories"][row["seeds"].index(seed)]:
        others = [seeds.at_step(row["histories"][row["seeds"].index(s)], h["step"], "val_loss") for s in healthy_seeds]
        others = [x for x in others if x is not None]
        if others and h["step"] <= step:
            course.append((h["step"], h["val_loss"] - sum(others) / len(others)))
    peak = max(range(len(course)), key=lambda k: course[k][1])
    after = [lag for _, lag in course[peak:]]
    return {"lags": course, "first": course[0], "peak": course[peak], "least_after_peak": min(after), "last": course[-1]}


def protocol_facts(variants, mechanism, control):
    """What the page says once about reading these runs by seeds protocol v2, at the last step on
    validation loss: the baseline's runs, the failed ones (health check) with their course, the
    healthy ones, the noise (from the arms with two or more healthy runs: the baseline alone here),
    the interval of a one-seed run against the baseline, and the primary comparisons after Holm."""
    evidence = load_model("residual-evidence")
    base = variants["baseline"]
    step = evidence.last_step(base)
    r = evidence.reading(variants, step)
    healthy = r["healthy"]["baseline"]
    failed = [{"seed": s, "loss": r["failed"]["baseline"][s],
               "course": failed_course(base, s, step, sorted(healthy))} for s in sorted(r["failed"]["baseline"])]
    noisy = sorted(n for n, a in r["healthy"].items() if len(a) > 1 and n not in r["split"])
    one_seed = seeds.t_quantile(r["df"]) * r["sd"] * (1 + 1 / len(healthy)) ** 0.5 if r["sd"] is not None else None
    if mechanism is not None:
        sm = load_model("skip-mechanism")
        primary = [sm.judge(mechanism, a, b, step) for a, b in PRIMARY]
    else:
        primary = [evidence.contrast(variants, a, b, step) for a, b in PRIMARY if a in variants]
    primary = [{**c, "said": seeds.say(c)} for c in seeds.holm(primary)]
    return {"step": step, "runs": len(base["seeds"]), "threshold": r["threshold"], "failed": failed,
            "healthy": [healthy[s] for s in sorted(healthy)], "healthy_seeds": sorted(healthy),
            "sd": r["sd"], "df": r["df"], "noise_arms": noisy, "one_seed_half_width": one_seed,
            "primary": primary, "primary_measured": all(c["measured"] for c in primary), "control": control}


def residual_facts(data, mechanism=None, extra=None, control=None):
    """`extra`: baseline-seeds.json (the baseline's later seeds) or None; `control`: C3 第 1 课's
    prefix-mean control's final validation losses, or None."""
    card = data["model_card"]
    steps = card["training"]["steps"]
    rows = [_baseline.extend_row(v, extra) if v["name"] == "baseline" else v for v in data["variants"]]
    variants = {v["name"]: {**v, "steps_trained": v["histories"][0][-1]["step"], "full_steps": steps} for v in rows}
    stream = [stream_facts(m) for m in data["stream"]["models"]]
    mech = mechanism_facts(mechanism, variants.get("no_residual"), variants.get("baseline"),
                           card["training"].get("precision")) if mechanism else None
    return {
        "card": card,
        "variants": variants,
        "protocol": protocol_facts(variants, mech, control),
        "trained_stream": next(s for s in stream if s["variant"] == "baseline" and s["state"] == "trained"),
        "stream": stream,
        "gradients": {m["variant"]: gradient_facts(m) for m in data["gradients"]["models"]},
        "grad_batch": data["gradients"]["batch"],
        # What the comparison chart (the ablation widget) draws: the baseline with every seed it has.
        "comparison": {
            # the widget's page_params keeps what the page needs; full_steps marks a run cut short
            "variants": [{**v, "full_steps": card["training"]["steps"]} for v in rows],
            "references": data["references"], "metric": data["metric"],
            "tokens_per_run": data["tokens_per_run"], "date": card["date"],
        },
        "evidence": {"stream": stream, "gradients": [gradient_facts(m) for m in data["gradients"]["models"]]},
        "mechanism": mech,
    }


def control_losses(data):
    """C3 第 1 课's prefix-mean control's final validation losses, or None before that export."""
    doc = data.get(ATTENTION_KEY) or {}
    control = (doc.get("control") or {}).get("control")
    return list(control["val_losses"]) if control else None


def facts(data):
    return {"residual": residual_facts(data[KEY], data.get(MECHANISM_KEY), data.get(_baseline.EXTRA),
                                       control_losses(data)) if KEY in data else None}
