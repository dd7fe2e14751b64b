"""Facts of our model's norm experiment (data/real-model/norm/norm.json, `python -m lab norm`):
facts.norm, or None before its first export. Lesson c4/l3's 真模型 reads only these.

Every comparison is read by the seeds protocol (widgets/common/seeds.py) against the baseline's
seed band at the same step; the baseline's seeds are the FFN experiment's (ablation.json), whose
seed 0 is the norm export's baseline run.
"""
import statistics

from course.widgets import common_module

numfmt = common_module("numfmt")  # first: seeds imports it
seeds = common_module("seeds")

KEY = "real-model/norm/norm"
ABLATION = "real-model/ablation"
STUCK = 0.1  # a run whose val loss is within this of the unigram's has learnt nothing beyond token counts
LEAVE_MARGIN = 0.05  # a 10-step mean of training loss this far below the unigram has left its plateau
LABELS = {  # the page's names of the runs
    "baseline": "基线（Pre-LN，有预热，完整日程）",
    "pre_ln_warmup": "Pre-LN，有预热",
    "pre_ln_no_warmup": "Pre-LN，不预热",
    "post_ln_warmup": "Post-LN，有预热",
    "post_ln_no_warmup": "Post-LN，不预热",
    "pre_ln_warmup_high_lr": "Pre-LN，有预热，3 倍学习率",
    "pre_ln_no_warmup_high_lr": "Pre-LN，不预热，3 倍学习率",
    "post_ln_warmup_high_lr": "Post-LN，有预热，3 倍学习率",
    "post_ln_no_warmup_high_lr": "Post-LN，不预热，3 倍学习率",
    "layernorm": "LayerNorm（Pre-LN，有预热）",
}
CURVE_RUNS = ("baseline", "pre_ln_no_warmup", "post_ln_warmup", "post_ln_no_warmup", "layernorm",
              "post_ln_warmup_high_lr")  # the curve chart's runs, in its order



def loss_at(run, step, key="val_loss"):
    """The loss at the evaluation nearest `step` (None where not finite)."""
    points = [h for h in run["history"] if h[key] is not None]
    if not points:
        return None
    return min(points, key=lambda h: abs(h["step"] - step))[key]


def placement_rows(runs, placement, unigram, short):
    """The placement x warm-up x lr runs, each read at the short runs' length (`at_short`; a run
    trained longer also has its last `val_loss`) against the unigram floor."""
    rows = []
    for name in placement:
        r = runs[name]
        loss = loss_at(r, short)
        rows.append({"name": name, "label": LABELS[name], "place": r["norm_place"], "warmup": r["warmup_steps"] > 0,
                     "lr_mult": r["lr_mult"], "steps": r["steps_trained"], "at_short": loss,
                     "train_at_short": loss_at(r, short, "train_loss"),
                     "val_loss": r["val_loss"], "finite": r["finite"],
                     "stuck": loss is None or loss > unigram - STUCK})
    return rows


def left_plateau(curve, every, unigram):
    """The first step whose `every`-step mean of training loss is LEAVE_MARGIN below the unigram,
    or None: when a run stopped predicting by token counts alone."""
    for i, v in enumerate(curve):
        if v is not None and v < unigram - LEAVE_MARGIN:
            return (i + 1) * every
    return None


def gradient_facts(models):
    """Step-0 gradients of the FFN's output projection (Xiong et al.'s W2), per placement and depth,
    for our init; and the controls at our depth under Xiong's assumptions."""
    out, controls = {}, {}
    for m in models:
        ffn = [b["ffn_out_grad_norm"] for b in m["blocks"]]
        row = {"place": m["norm_place"], "n_layer": m["n_layer"], "init": m.get("init", "default"), "ffn": ffn,
               "last": ffn[-1], "first": ffn[0], "last_over_first": ffn[-1] / ffn[0],
               "stream_rms_out": m.get("stream_rms_out")}
        if row["init"] == "default":
            out[(m["norm_place"], m["n_layer"])] = row
        else:
            controls.setdefault(row["init"], {})[m["norm_place"]] = row
    depths = sorted({d for _, d in out})
    pre_over_post = {d: out[("pre", d)]["last"] / out[("post", d)]["last"]
                     for d in depths if ("post", d) in out and ("pre", d) in out}
    # Pre-LN's last block reaches the loss through the final norm, whose Jacobian is 1/RMS of the
    # stream it reads; Post-LN's stream is already at RMS about 1. So pre/post is about 1/RMS.
    predicted = {d: 1 / out[("pre", d)]["stream_rms_out"] for d in pre_over_post
                 if out[("pre", d)]["stream_rms_out"]}
    ctrl = {init: {"pre_over_post": c["pre"]["last"] / c["post"]["last"], "pre_rms": c["pre"]["stream_rms_out"],
                   "pre": c["pre"]["last"], "post": c["post"]["last"]}
            for init, c in controls.items() if "pre" in c and "post" in c}
    return {"by": {f"{p}-{d}": v for (p, d), v in out.items()}, "depths": depths,
            "post_over_pre_last": {d: 1 / r for d, r in pre_over_post.items()},
            "pre_over_post_last": pre_over_post, "predicted_pre_over_post": predicted, "controls": ctrl}


def gain_facts(models):
    """Each trained model's gains: the median over its norms of each norm's median gain, and the range."""
    out = {}
    for m in models:
        medians = [n["gain"]["p50"] for n in m["norms"]]
        out[m["run"]] = {"run": m["run"], "steps": m["steps_trained"], "form": m["gain_form"],
                         "decay": m["decay_on_gains"], "median": statistics.median(medians),
                         "lowest": min(n["gain"]["min"] for n in m["norms"]),
                         "highest": max(n["gain"]["max"] for n in m["norms"]),
                         "norms": [{"position": n["position"], "block": n["block"], "p50": n["gain"]["p50"],
                                    "p05": n["gain"]["p05"], "p95": n["gain"]["p95"]} for n in m["norms"]]}
    return out


def baseline_seeds(ablation, step, key="val_loss"):
    """{seed: the baseline's loss at evaluation `step`} over the FFN experiment's seeds."""
    base = next(v for v in ablation["variants"] if v["name"] == "baseline")
    return seeds.history_by_seed(base, step, key)


def seed_losses(name, runs, seed_runs, step, key="val_loss"):
    """{seed: loss at `step`} of one of this export's runs over its seeds (run_seed and seed_runs)."""
    return seeds.runs_by_seed([runs[name], *[s for s in seed_runs if s["name"] == name]], step, key)


def comparisons(runs, seed_runs, ablation, short):
    """Each placement comparison the page reads, at step `short`, by the seeds protocol, on val
    and on training loss. The Pre-LN-with-warm-up arm is the baseline itself (its seeds)."""
    out = {}
    for key in ("val_loss", "train_loss"):
        base = baseline_seeds(ablation, short, key)
        width = seeds.band(base.values())
        arms = {"pre_warm": base, **{k: seed_losses(n, runs, seed_runs, short, key) for k, n in
                (("pre_cold", "pre_ln_no_warmup"), ("post_warm", "post_ln_warmup"), ("post_cold", "post_ln_no_warmup"))
                if n in runs}}
        pairs = {"pre_cold-pre_warm": ("pre_warm", "pre_cold"), "post_warm-pre_warm": ("pre_warm", "post_warm"),
                 "post_cold-post_warm": ("post_warm", "post_cold"), "post_warm-pre_cold": ("pre_cold", "post_warm"),
                 "post_cold-pre_warm": ("pre_warm", "post_cold")}
        out[key] = {"band": width, "arms": arms, "base_seeds": sorted(base)}
        for name, (a, b) in pairs.items():
            if a in arms and b in arms:
                c = seeds.compare(arms[a], arms[b], width)
                out[key][name] = {**c, "say": seeds.verdict(c)}
    return out


def long_run(run, unigram, every, ablation):
    """A run trained past the short length: its val loss at every evaluation, against the
    baseline's seeds at the same steps, and whether it ever left the unigram plateau."""
    base = next(v for v in ablation["variants"] if v["name"] == "baseline")
    points = []
    for h in run["history"]:
        b = seeds.history_by_seed(base, h["step"], "val_loss")
        points.append({"step": h["step"], "val_loss": h["val_loss"], "train_loss": h["train_loss"],
                       "baseline_min": min(b.values()) if b else None, "baseline_max": max(b.values()) if b else None,
                       "stuck": h["val_loss"] is None or h["val_loss"] > unigram - STUCK})
    # Against the baseline's same seed at the run's last step, by the protocol's one-seed rule.
    last = run["steps_trained"]
    at_last = seeds.history_by_seed(base, last, "val_loss")
    c = seeds.compare({run["seed"]: at_last[run["seed"]]} if run["seed"] in at_last else {},
                      {run["seed"]: seeds.at_step(run["history"], last, "val_loss")}, seeds.band(at_last.values()))
    return {"name": run["name"], "steps": last, "points": points,
            "left_at": left_plateau(run["train_curve"], every, unigram),
            "left_val_at": next((p["step"] for p in points if not p["stuck"]), None),
            "vs_baseline": {**c, "say": seeds.verdict(c)}}


UNCOLLAPSE = 0.95  # cosine between positions after block 2 below this: the stream no longer one vector there
TAIL_POINTS = 5  # the last training-curve points compared pair by pair (same batches)


def inside_facts(warm, cold, every):
    """What the losses of two plateau runs hide: per run, the cosine between positions after each
    block at its last probe and the first probe step where block 2's fell below UNCOLLAPSE; and
    warm - cold over the last TAIL_POINTS training-curve means (the same batches, step by step)."""
    def uncollapse(run):  # the first probe below UNCOLLAPSE after one at or above it (step 0 is random init)
        collapsed = False
        for p in run.get("probes", []):
            collapsed = collapsed or p["cosine_by_depth"][2] >= UNCOLLAPSE
            if collapsed and p["cosine_by_depth"][2] < UNCOLLAPSE:
                return p["step"]
        return None
    tail = [w - c for w, c in zip(warm["train_curve"][-TAIL_POINTS:], cold["train_curve"][-TAIL_POINTS:])
            if w is not None and c is not None]
    return {"cos_last": {r["name"]: r["probes"][-1]["cosine_by_depth"][1:] for r in (warm, cold) if r.get("probes")},
            "uncollapse_at": {r["name"]: uncollapse(r) for r in (warm, cold)}, "uncollapse_below": UNCOLLAPSE,
            "tail_gaps": tail, "tail_steps": len(tail) * every}


def probe_at(run, step):
    return next((p for p in run.get("probes", []) if p["step"] == step), None)


def adam_facts(card, first_step):
    """What one AdamW step moves, from the lr schedule and the measured first step."""
    t = card["training"]
    lr, w = t["lr"], t["warmup_steps"]
    models = {(m["norm_place"], m["warmup"]): m for m in first_step["models"]}
    cold, warm = models[("pre", False)], models[("pre", True)]
    wb = cold["groups"]["write_back"]
    return {"lr": lr, "warmup": w, "first_warm_lr": lr / w,
            "ten_warm_steps": sum(lr * (s + 1) / w for s in range(10)),  # the lr of warm-up steps 0..9 summed
            "write_back_init_rms": wb["init_rms"], "write_back_share": lr / wb["init_rms"],
            "embedding_share": lr / cold["groups"]["embedding"]["init_rms"],
            "models": models, "cold": cold, "warm": warm,
            "head_change": {f"{p}-{'warm' if wm else 'cold'}": m["head_input_change"] for (p, wm), m in models.items()}}


def curve_facts(runs, every, unigram, bigram, full_steps):
    """What the warmup-curves widget draws: each run's training-loss curve, first steps."""
    series = [{"name": n, "label": LABELS[n], "seed": runs[n]["seed"], "steps": runs[n]["steps_trained"],
               "values": runs[n]["train_curve"]} for n in CURVE_RUNS if n in runs]
    return {"every": every, "unigram": unigram, "bigram": bigram, "full_steps": full_steps, "series": series}


def norm_facts(data, ablation):
    runs = {r["name"]: r for r in data["runs"]}
    seed_runs = data.get("seed_runs", [])
    unigram = data["references"]["unigram"]
    card = data["model_card"]
    short = card["training"]["short_steps"]
    every = int(data["train_curve_rule"].split("each ")[1].split(" ")[0])
    rows = placement_rows(runs, data["placement"]["runs"], unigram, short)
    by = {(r["place"], r["warmup"], r["lr_mult"]): r for r in rows}
    high = card["training"]["high_lr_mult"]
    baseline = runs["baseline"]
    layernorm = runs.get("layernorm")
    gains = gain_facts(data["gains"]["models"])
    undecayed = next((gains[r["name"]] for r in rows if r["place"] == "pre" and r["warmup"] and r["lr_mult"] == 1.0
                      and r["name"] in gains), None)
    longer = [long_run(runs[r["name"]], unigram, every, ablation) for r in rows if r["steps"] > short]
    band_short = seeds.band(baseline_seeds(ablation, short).values())
    late = None  # Post-LN with and without warm-up where both runs went past the short length
    if {"post_ln_warmup", "post_ln_no_warmup"} <= {L["name"] for L in longer}:
        step = min(runs["post_ln_warmup"]["steps_trained"], runs["post_ln_no_warmup"]["steps_trained"])
        warm, cold = (loss_at(runs[n], step) for n in ("post_ln_warmup", "post_ln_no_warmup"))
        c = seeds.compare({0: warm}, {0: cold}, seeds.band(baseline_seeds(ablation, step).values()))
        late = {"step": step, "warm": warm, "cold": cold, **c, "say": seeds.verdict(c),
                **inside_facts(runs["post_ln_warmup"], runs["post_ln_no_warmup"], every)}
    return {
        "card": card,
        "runs": runs,
        "seed_runs": seed_runs,
        "seeds_of": {n: sorted({runs[n]["seed"], *[s["seed"] for s in seed_runs if s["name"] == n]}) for n in runs},
        "references": data["references"],
        "rows": rows,
        "high_lr_mult": high,
        "cell": {f"{p}-{'warm' if w else 'cold'}-{'high' if m == high else 'base'}": r for (p, w, m), r in by.items()},
        "short_steps": short,
        "band_short": band_short,
        "baseline_seed_count": len(baseline_seeds(ablation, short)),
        "compare": comparisons(runs, seed_runs, ablation, short),
        "longer": longer,
        "stuck_margin": STUCK,
        "leave_margin": LEAVE_MARGIN,
        "late": late,
        "left_at": {n: left_plateau(runs[n]["train_curve"], every, unigram) for n in runs},
        "probes": {n: {"short": probe_at(runs[n], short), "last": (runs[n].get("probes") or [None])[-1],
                       "init": probe_at(runs[n], 0)} for n in runs},
        "curves": curve_facts(runs, every, unigram, data["references"]["bigram"], card["training"]["steps"]),
        "adam": adam_facts(card, data["first_step"]) if "first_step" in data else None,
        "not_run": [f"{p}-{'warm' if w else 'cold'}-{'high' if m == high else 'base'}" for p in ("pre", "post")
                    for w in (False, True) for m in (1.0, high) if (p, w, m) not in by],
        "layernorm": None if layernorm is None else {
            "steps": layernorm["steps_trained"], "val_loss": layernorm["val_loss"],
            "baseline_then": loss_at(baseline, layernorm["steps_trained"]),
            "diff": layernorm["val_loss"] - loss_at(baseline, layernorm["steps_trained"]),
            "band": seeds.band(baseline_seeds(ablation, layernorm["steps_trained"]).values()),
            "compare": seeds.compare({baseline["seed"]: loss_at(baseline, layernorm["steps_trained"])},
                                     {layernorm["seed"]: layernorm["val_loss"]},
                                     seeds.band(baseline_seeds(ablation, layernorm["steps_trained"]).values()))},
        "gradients": gradient_facts(data["gradients"]["models"]),
        "gains": gains,
        "undecayed": undecayed,
        "decay_factor": data["gains"]["decay_factor"],
        "speed": data["speed"],
        "new_minutes": card["budget"]["new_runs_seconds"] / 60,
        "budget_minutes": card["budget"]["limit_seconds"] / 60,
    }


def facts(data):
    return {"norm": norm_facts(data[KEY], data[ABLATION]) if KEY in data else None}
