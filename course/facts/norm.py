"""Facts of our model's norm experiment (data/real-model/norm/norm.json, `python -m lab norm`):
facts.norm, or None before its first export. Lesson c4/l3's 真模型 reads only these.

Every comparison is read by the seeds protocol v2 (widgets/common/seeds.py: read, contrast, say,
holm), after the fact: the runs were trained before v2. One reading per step and loss over every
run of the experiment that reached that step with a finite loss (`arms_at`): the baseline's seeds
(the FFN experiment's, through course/facts/_baseline.py, so seeds added to the baseline join
here; its seed 0 is the norm export's `baseline` and `pre_ln_warmup` runs, which are not arms of
their own), the placement arms with their seed_runs, and every other run as its own arm. A run cut
short is read only at its last step, against the baseline at that step.

Helpers kept here, not in seeds.py: `arms_at` (the arms at one step), `read_at` (one reading and
its named contrasts), `say` and `contrast` (seeds.say / seeds.contrast, a split arm named as the
page names it), `arm_health` (an arm's seeds, failed runs and runs more than T below its median),
`failed_course` (how a failed baseline run fell behind the other seeds), `noise_sources` (which arms
a reading's pooled noise comes from, on the unigram plateau or off it), and PRIMARY, the lesson's
primary comparisons, declared post hoc, Holm-corrected in `comparisons`.
"""
import math
import statistics

from course.widgets import common_module

from . import _baseline

numfmt = common_module("numfmt")  # first: seeds imports it
seeds = common_module("seeds")

KEY = "real-model/norm/norm"
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
    "gain_decay": "增益 g 做权重衰减",
    "zero_centred_decay": "增益写成 1 + w、对 w 做权重衰减",
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


BASE_ARM = "pre_warm"  # the baseline is Pre-LN with warm-up
ARM_OF = {"pre_ln_no_warmup": "pre_cold", "post_ln_warmup": "post_warm", "post_ln_no_warmup": "post_cold"}
NOT_AN_ARM = ("baseline", "pre_ln_warmup")  # the norm export's reruns of the baseline's seed 0
ARM_LABELS = {BASE_ARM: "基线", "pre_cold": "Pre-LN 不预热", "post_warm": "Post-LN 有预热",
              "post_cold": "Post-LN 不预热"}
PAIRS = {  # name: (a, b), read as a - b
    "pre_cold-pre_warm": ("pre_cold", BASE_ARM), "post_warm-pre_warm": ("post_warm", BASE_ARM),
    "post_cold-post_warm": ("post_cold", "post_warm"), "post_warm-pre_cold": ("post_warm", "pre_cold"),
    "post_cold-pre_warm": ("post_cold", BASE_ARM), "post_cold-pre_cold": ("post_cold", "pre_cold")}
# The lesson's primary comparisons, declared post hoc (after the runs, when v2 came): validation
# loss at the short runs' step. Post-LN with warm-up against Pre-LN without (Xiong et al.'s), and
# warm-up within each placement. Holm's correction over the three; every other reading is description.
PRIMARY = ("post_warm-pre_cold", "post_cold-post_warm", "pre_cold-pre_warm")
PRIMARY_LOSS = "val_loss"


def arm_label(arm):
    return ARM_LABELS.get(arm) or LABELS.get(arm, arm)


def baseline_seeds(ablation, step, key="val_loss"):
    """{seed: the baseline's loss at evaluation `step`} over the baseline's seeds (finite ones)."""
    base = next(v for v in ablation["variants"] if v["name"] == "baseline")
    return {s: v for s, v in seeds.history_by_seed(base, step, key).items() if v is not None and math.isfinite(v)}


def arms_at(runs, seed_runs, ablation, step, key="val_loss"):
    """{arm: {seed: loss at `step`}}: every run of the experiment that reached `step` with a finite
    loss. The baseline's seeds are arm BASE_ARM; the placement runs go to their arms (ARM_OF) with
    their seed_runs; every other run is its own arm. A diverged run (finite False) is no arm: it is
    not a failed run of the health check, and the page says it diverged."""
    arms = {BASE_ARM: baseline_seeds(ablation, step, key)}
    for r in [*runs.values(), *seed_runs]:
        if r["name"] in NOT_AN_ARM or not r["finite"]:
            continue
        v = seeds.at_step(r["history"], step, key)
        if v is not None and math.isfinite(v):
            arms.setdefault(ARM_OF.get(r["name"], r["name"]), {})[r["seed"]] = v
    return {n: a for n, a in arms.items() if a}


def say(c):
    """seeds.say(c), except that a split arm is named as the page names it (seeds.say prints the
    arm's key): 「基线的种子在这一步分成了两拨，暂不读」."""
    if c["status"] == "split":
        return "、".join(arm_label(n) for n in c["split"]) + "的种子在这一步分成了两拨，暂不读"
    return seeds.say(c)


def contrast(reading, a, b):
    """seeds.contrast(reading, a, b) with its sentence (`say`)."""
    c = seeds.contrast(reading, a, b)
    return {**c, "say": say(c)}


def arm_health(reading, arms, arm):
    """One arm's seeds in a reading: losses, median, failed runs, runs more than T below the
    median, and whether the arm is split."""
    a = arms.get(arm, {})
    if not a:
        return None
    med = seeds.median(a.values())
    t = reading["threshold"]
    healthy = reading["healthy"].get(arm, {})
    return {"n": len(a), "seeds": sorted(a), "losses": dict(sorted(a.items())), "median": med,
            "min": min(a.values()), "max": max(a.values()),
            "failed": dict(sorted(reading["failed"].get(arm, {}).items())),
            "low": {s: v for s, v in sorted(a.items()) if v - med < -t},
            "split": reading["split"].get(arm), "healthy_n": len(healthy),
            "healthy_min": min(healthy.values()) if healthy else None,
            "healthy_max": max(healthy.values()) if healthy else None}


def failed_course(ablation, seed, upto, key="val_loss"):
    """How a failed baseline run fell behind: at each evaluation up to `upto`, its loss minus the
    median of the baseline's other seeds (`lags`); the step where that lag grew most (`opened`,
    after `before`, None when that is the first evaluation), and the lag's range from then on."""
    base = next(v for v in ablation["variants"] if v["name"] == "baseline")
    steps = sorted({h["step"] for h in base["histories"][base["seeds"].index(seed)] if h["step"] <= upto})
    lags = []
    for step in steps:
        at = baseline_seeds(ablation, step, key)
        others = [v for s, v in at.items() if s != seed]
        if seed in at and others:
            lags.append((step, at[seed] - seeds.median(others)))
    if not lags:
        return None
    grew = [(lags[i][1] - (lags[i - 1][1] if i else 0.0), i) for i in range(len(lags))]
    i = max(grew)[1]
    after = [g for _, g in lags[i:]]
    return {"seed": seed, "lags": lags, "opened": lags[i][0], "before": lags[i - 1][0] if i else None,
            "low": min(after), "high": max(after), "last": lags[-1][1]}


def read_at(runs, seed_runs, ablation, step, key="val_loss", pairs=None):
    """One v2 reading at `step` for `key`: the arms, the health check, the noise, and the named
    contrasts ({name: (a, b)}, those whose arms both ran)."""
    arms = arms_at(runs, seed_runs, ablation, step, key)
    r = seeds.read(arms)
    spread = [max(a.values()) - min(a.values()) for n, a in arms.items() if n != BASE_ARM and len(a) > 1]
    out = {"step": step, "key": key, "arms": arms, "threshold": r["threshold"], "sd": r["sd"], "df": r["df"],
           "failed": {n: f for n, f in r["failed"].items() if f}, "split": r["split"],
           "base": arm_health(r, arms, BASE_ARM), "others_spread": max(spread) if spread else None,
           "reading": r}
    for name, (a, b) in (pairs or {}).items():
        if a in arms and b in arms:
            out[name] = contrast(r, a, b)
    return out


def noise_sources(reading, unigram):
    """Where a reading's pooled noise comes from: each arm that enters it (healthy runs, not split,
    two or more), with its runs, df, range, SD and whether it sits on the unigram plateau (median
    within STUCK of it); the plateau arms' df and widest range; and the SD pooled over the arms off
    the plateau alone (`moving_sd`, `moving_df`), the noise of a group still falling."""
    usable = {n: a for n, a in reading["healthy"].items() if n not in reading["split"] and len(a) > 1}
    arms = []
    for n, a in sorted(usable.items()):
        sd, df = seeds.pooled({n: a})
        arms.append({"arm": n, "label": arm_label(n), "n": len(a), "df": df, "sd": sd,
                     "range": max(a.values()) - min(a.values()),
                     "stuck": seeds.median(a.values()) > unigram - STUCK})
    stuck = [a for a in arms if a["stuck"]]
    moving = [a for a in arms if not a["stuck"]]
    moving_sd, moving_df = seeds.pooled({a["arm"]: usable[a["arm"]] for a in moving})
    return {"arms": arms, "stuck_df": sum(a["df"] for a in stuck),
            "stuck_range": max((a["range"] for a in stuck), default=None),
            "moving": moving, "moving_sd": moving_sd, "moving_df": moving_df,
            "df": reading["df"], "sd": reading["sd"]}


def threshold_sources(reading, unigram):
    """Where a reading's (read_at) threshold T comes from: the residuals to each 3-run-or-more arm's median that
    set it (`n`), how many come from arms on the unigram plateau (`stuck`), how many are exactly 0
    (`zeros`; an odd arm's median run always is one), how many of those are on the plateau
    (`stuck_zeros`); and T with the arms off the plateau alone (`moving_threshold`) and the arms it
    splits then (`moving_split`), so a split can be told from the rule's low T."""
    arms = reading["arms"]
    rows = []
    for n, a in arms.items():
        if len(a) >= 3:
            med = seeds.median(a.values())
            rows += [(v - med, med > unigram - STUCK) for v in a.values()]
    moving = {n: a for n, a in arms.items() if seeds.median(a.values()) <= unigram - STUCK}
    h = seeds.health(moving)
    return {"n": len(rows), "stuck": sum(st for _, st in rows), "zeros": sum(r == 0 for r, _ in rows),
            "stuck_zeros": sum(r == 0 and st for r, st in rows),
            "moving_threshold": h["threshold"], "moving_split": sorted(n for n, v in h["split"].items() if v)}


def holds_on_moving_noise(c, noise):
    """Whether a measured contrast stays beyond its 95 % half-width when the noise is the off-plateau
    arms' alone (noise_sources' moving_sd, moving_df); None where that noise cannot be estimated."""
    if not c.get("measured") or not noise["moving_df"]:
        return None
    h = seeds.t_quantile(noise["moving_df"]) * noise["moving_sd"] * (1 / c["n_a"] + 1 / c["n_b"]) ** 0.5
    return abs(c["gap"]) > h


def comparisons(runs, seed_runs, ablation, short):
    """The placement comparisons the page reads at step `short` by v2, on val and on training loss;
    the primary ones (PRIMARY, on PRIMARY_LOSS) Holm-corrected."""
    out = {key: read_at(runs, seed_runs, ablation, short, key, PAIRS) for key in ("val_loss", "train_loss")}
    val, train = out["val_loss"], out["train_loss"]
    # Do the two losses agree, pair by pair (before Holm, which only the primary readings get)?
    out["agree"] = {n: val[n]["status"] == train[n]["status"] and val[n]["direction"] == train[n]["direction"]
                    for n in PAIRS if n in val and n in train}
    prim = out[PRIMARY_LOSS]
    names = [n for n in PRIMARY if n in prim]
    for name, c in zip(names, seeds.holm([prim[n] for n in names])):
        prim[name] = {**c, "primary": True, "say": say(c)}
    out["primary"] = names
    return out


def long_run(run, unigram, every, ablation, runs, seed_runs):
    """A run trained past the short length: its val loss at every evaluation, whether it ever left
    the unigram plateau, and, at its last step, the v2 reading of it against the baseline there."""
    points = [{"step": h["step"], "val_loss": h["val_loss"], "train_loss": h["train_loss"],
               "stuck": h["val_loss"] is None or h["val_loss"] > unigram - STUCK} for h in run["history"]]
    last = run["steps_trained"]
    at_last = read_at(runs, seed_runs, ablation, last)
    arm = ARM_OF.get(run["name"], run["name"])
    return {"name": run["name"], "steps": last, "points": points,
            "left_at": left_plateau(run["train_curve"], every, unigram),
            "left_val_at": next((p["step"] for p in points if not p["stuck"]), None),
            "base": at_last["base"], "threshold": at_last["threshold"],
            "failed_courses": [failed_course(ablation, s, last) for s in (at_last["base"] or {}).get("failed", {})],
            "vs_baseline": contrast(at_last["reading"], arm, BASE_ARM)}


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


def turn_degrees(change):
    """The head input's relative change ||dh|| / ||h|| as an angle: both placements' head reads a
    normed vector, whose length one step leaves (nearly) unchanged, so ||dh|| / ||h|| = 2 sin(theta / 2)
    with cos(theta) the mean cosine between each position's vector before and after; at most 2 (200%).
    turn_degrees(0.9354) -> 55.8"""
    return math.degrees(2 * math.asin(min(1.0, change / 2)))


LINEAR = 0.1  # the warm step scaled by the warm-up length within this share of the cold change


def scaled_step(change, factor):
    """A step on a normalised vector scaled by `factor` (the lr times factor): the update before the
    normalisation scales with the lr, so the turn's tangent does, not the angle or the change.
    Returns the scaled step's change and turn (degrees). scaled_step(0.0285, 60) -> about 0.99, 59.6"""
    theta = math.atan(factor * math.tan(math.radians(turn_degrees(change))))
    return {"change": 2 * math.sin(theta / 2), "turn": math.degrees(theta)}


def adam_facts(card, first_step):
    """What one AdamW step moves, from the lr schedule and the measured first step; the head input's
    change as an angle (`head_turn`), and per placement whether the cold step is the warm one scaled
    by the warm-up length (`linear`; `scaled_warm`: warm x warm-up steps, as a change and as an angle)."""
    t = card["training"]
    lr, w = t["lr"], t["warmup_steps"]
    models = {(m["norm_place"], m["warmup"]): m for m in first_step["models"]}
    cold, warm = models[("pre", False)], models[("pre", True)]
    wb = cold["groups"]["write_back"]
    head = {f"{p}-{'warm' if wm else 'cold'}": m["head_input_change"] for (p, wm), m in models.items()}
    places = sorted({p for p, _ in models})
    return {"lr": lr, "warmup": w, "first_warm_lr": lr / w,
            "ten_warm_steps": sum(lr * (s + 1) / w for s in range(10)),  # the lr of warm-up steps 0..9 summed
            "write_back_init_rms": wb["init_rms"], "write_back_share": lr / wb["init_rms"],
            "embedding_init_rms": cold["groups"]["embedding"]["init_rms"],  # the stream Post-LN's first block reads
            "embedding_share": lr / cold["groups"]["embedding"]["init_rms"],
            "models": models, "cold": cold, "warm": warm,
            "head_change": head, "head_turn": {k: turn_degrees(v) for k, v in head.items()},
            "scaled_warm": {p: scaled_step(head[f"{p}-warm"], w) for p in places},
            "linear": {p: abs(scaled_step(head[f"{p}-warm"], w)["change"] / head[f"{p}-cold"] - 1) < LINEAR
                       for p in places},
            "max_change": 2.0}


def short_probes(runs, seed_runs, short):
    """{run name: {seed: its probe at step `short`}} over seed 0 (runs) and the seed_runs."""
    out = {}
    for r in [*runs.values(), *seed_runs]:
        p = probe_at(r, short)
        if p is not None:
            out.setdefault(r["name"], {})[r["seed"]] = p
    return {n: dict(sorted(v.items())) for n, v in out.items()}


ONE_VECTOR = 0.9  # a probe with its modal prediction on more than this share of positions and its
                  # positions' cosine above this: one vector, one prediction everywhere


def one_vector(p):
    return p["modal_top1_share"] > ONE_VECTOR and p["cosine_final"] > ONE_VECTOR


def collapse(runs, seed_runs, names=("post_ln_warmup", "post_ln_no_warmup")):
    """For each run of `names` (every seed): its positions' cosine at the step-0 probe, and the first
    probe step where it is one vector with one prediction everywhere (one_vector), or None. The
    latest such step over the runs is `by` (every run had collapsed by then), `init_max` the
    largest step-0 cosine."""
    out = {}
    for r in [*runs.values(), *seed_runs]:
        if r["name"] in names and r.get("probes"):
            first = next((p["step"] for p in r["probes"] if one_vector(p)), None)
            out[(r["name"], r["seed"])] = {"init": r["probes"][0]["cosine_final"], "step": first}
    steps = [v["step"] for v in out.values()]
    return {"runs": {f"{n}-{s}": v for (n, s), v in sorted(out.items())}, "n": len(out),
            "all": bool(out) and None not in steps, "by": max(steps) if out and None not in steps else None,
            "init_max": max(v["init"] for v in out.values()) if out else None}


def block_cosines(probes, names=("post_ln_warmup", "post_ln_no_warmup")):
    """[(min, max)] per depth (0 = the embedding, k = after block k) of the positions' mean cosine over
    every seed's probe of `names` in `probes` ({name: {seed: probe}}, short_probes): how early the
    stream is one vector."""
    rows = [p["cosine_by_depth"] for n in names for p in probes.get(n, {}).values()]
    return [(min(c), max(c)) for c in zip(*rows)] if rows else []


def own_direction(probes, names=("post_ln_warmup", "post_ln_no_warmup"), depth=1):
    """How much of each position's own token embedding the stream keeps after block `depth`: the
    probes' own-embedding cosine there for the runs of `names` (every seed, `post`) and for every
    other run probed (`pre`, Pre-LN); `kept` counts the Post-LN runs above every Pre-LN value."""
    post = [p["own_embedding_cosine_by_depth"][depth] for n in names for p in probes.get(n, {}).values()]
    pre = [p["own_embedding_cosine_by_depth"][depth] for n, v in probes.items() if n not in names
           for p in v.values() if "own_embedding_cosine_by_depth" in p]
    if not post or not pre:
        return None
    return {"post": post, "pre_max": max(pre), "pre_min": min(pre), "n": len(post),
            "kept": sum(c > max(pre) for c in post), "kept_min": min((c for c in post if c > max(pre)), default=None),
            "kept_max": max(post)}


SAME_SCHEDULE_REF = "layernorm"  # the undecayed run with the decay runs' seed, batches and lr schedule


def gain_reference(gains, undecayed, decayed="gain_decay", ref=SAME_SCHEDULE_REF):
    """The decay run and the same-schedule undecayed reference (`ref`), each against `undecayed`, norm by
    norm (per-norm median gain minus undecayed's): the gaps' range, and how many norms the decay run
    is lower on; `ref_median_gap` is the reference's median minus undecayed's."""
    if undecayed is None or decayed not in gains or ref not in gains:
        return None
    base = [n["p50"] for n in undecayed["norms"]]
    d = [n["p50"] - b for n, b in zip(gains[decayed]["norms"], base)]
    r = [n["p50"] - b for n, b in zip(gains[ref]["norms"], base)]
    return {"label": LABELS[ref], "ref_median_gap": gains[ref]["median"] - undecayed["median"], "n": len(d),
            "decay_lower": sum(x < 0 for x in d), "decay_min": min(d), "decay_max": max(d),
            "ref_min": min(r), "ref_max": max(r), "ref_abs_max": max(abs(x) for x in r)}


def warmup_box(compare, late, runs, probes, untuned):
    """Everything the page says our model measured about warm-up, for its one box: Pre-LN with and
    without at the short step (both losses), Post-LN with and without at the short step (both
    losses, and each seed's pair gap, same seed and batches), Post-LN at the late step (one seed
    each) with what the warm run's last probe shows, and the untuned warm-up length (Ma & Yarats)."""
    out = {"untuned_warmup": untuned}
    for key in ("val_loss", "train_loss"):
        c = compare[key]
        arms = c["arms"]
        out[key] = {"pre": c.get("pre_cold-pre_warm"), "post": c.get("post_cold-post_warm"),
                    "post_pairs": {s: arms["post_cold"][s] - arms["post_warm"][s]
                                   for s in sorted(arms.get("post_cold", {})) if s in arms.get("post_warm", {})}}
    if late:
        warm, cold = (runs[n]["probes"][-1] for n in ("post_ln_warmup", "post_ln_no_warmup"))
        out["late"] = {**late, "warm_probe": warm, "cold_probe": cold,
                       "warm_one_vector": one_vector(warm), "cold_one_vector": one_vector(cold),
                       "drop": late["cold"] - late["warm"]}
    out["post_short_one_vector"] = all(one_vector(p) for n in ("post_ln_warmup", "post_ln_no_warmup")
                                       for p in probes.get(n, {}).values())
    out["post_short_seeds"] = sorted({s for n in ("post_ln_warmup", "post_ln_no_warmup") for s in probes.get(n, {})})
    return out


def curve_facts(runs, every, unigram, bigram, full_steps):
    """What the warmup-curves widget draws: each run's training-loss curve, first steps."""
    series = [{"name": n, "label": LABELS[n], "seed": runs[n]["seed"], "steps": runs[n]["steps_trained"],
               "values": runs[n]["train_curve"]} for n in CURVE_RUNS if n in runs]
    return {"every": every, "unigram": unigram, "bigram": bigram, "full_steps": full_steps, "series": series}


def norm_facts(data, ablation, untuned_factor=None):
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
    longer = [long_run(runs[r["name"]], unigram, every, ablation, runs, seed_runs) for r in rows if r["steps"] > short]
    compare = comparisons(runs, seed_runs, ablation, short)
    late = None  # Post-LN with and without warm-up where both runs went past the short length
    if {"post_ln_warmup", "post_ln_no_warmup"} <= {L["name"] for L in longer}:
        step = min(runs["post_ln_warmup"]["steps_trained"], runs["post_ln_no_warmup"]["steps_trained"])
        warm, cold = (loss_at(runs[n], step) for n in ("post_ln_warmup", "post_ln_no_warmup"))
        at = read_at(runs, seed_runs, ablation, step)
        late = {"step": step, "warm": warm, "cold": cold, **contrast(at["reading"], "post_cold", "post_warm"),
                **inside_facts(runs["post_ln_warmup"], runs["post_ln_no_warmup"], every),
                "noise": noise_sources(at["reading"], unigram)}  # where its band comes from
    for key in ("val_loss", "train_loss"):  # where each reading's noise comes from, and whether a measured
        c = compare[key]                       # gap holds on the off-plateau arms' noise alone
        c["noise"] = noise_sources(c["reading"], unigram)
        c["threshold_sources"] = threshold_sources(c, unigram)
        c["moving_holds"] = {n: holds_on_moving_noise(c[n], c["noise"]) for n in PAIRS if n in c and c[n]["measured"]}
    ln_at = read_at(runs, seed_runs, ablation, layernorm["steps_trained"]) if layernorm else None
    beta2 = card["configs"]["train"]["beta2"]
    untuned = None if untuned_factor is None else untuned_factor / (1 - beta2)  # Ma & Yarats' default length
    probes_short = short_probes(runs, seed_runs, short)
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
        "baseline_seed_count": len(baseline_seeds(ablation, short)),
        "compare": compare,
        "arm_labels": {n: arm_label(n) for n in compare["val_loss"]["arms"]},
        "longer": longer,
        "stuck_margin": STUCK,
        "leave_margin": LEAVE_MARGIN,
        "late": late,
        "left_at": {n: left_plateau(runs[n]["train_curve"], every, unigram) for n in runs},
        "probes": {n: {"short": probe_at(runs[n], short), "last": (runs[n].get("probes") or [None])[-1],
                       "init": probe_at(runs[n], 0)} for n in runs},
        "probes_short": probes_short,
        "collapse": collapse(runs, seed_runs),
        "block_cosines": block_cosines(probes_short),
        "own_direction": own_direction(probes_short),
        "beta2": beta2,
        "warmup": warmup_box(compare, late, runs, probes_short, untuned),
        "curves": curve_facts(runs, every, unigram, data["references"]["bigram"], card["training"]["steps"]),
        "adam": adam_facts(card, data["first_step"]) if "first_step" in data else None, "adam_linear": LINEAR,
        "not_run": [f"{p}-{'warm' if w else 'cold'}-{'high' if m == high else 'base'}" for p in ("pre", "post")
                    for w in (False, True) for m in (1.0, high) if (p, w, m) not in by],
        "layernorm": None if layernorm is None else {  # read at its last step, against the baseline there
            "steps": layernorm["steps_trained"], "val_loss": layernorm["val_loss"],
            "baseline_then": loss_at(baseline, layernorm["steps_trained"]),  # seed 0, the same batches
            "diff": layernorm["val_loss"] - loss_at(baseline, layernorm["steps_trained"]),
            "base": ln_at["base"], "compare": contrast(ln_at["reading"], "layernorm", BASE_ARM)},
        "gradients": gradient_facts(data["gradients"]["models"]),
        "gains": gains,
        "undecayed": undecayed,
        # the other runs trained as long as `undecayed` without decay on their gains (other set-ups):
        # the nearest reference for how much a gain median moves without decay
        "undecayed_others": [] if undecayed is None else [
            {**g, "label": LABELS[g["run"]]} for g in gains.values()
            if not g["decay"] and g["steps"] == undecayed["steps"] and g["run"] != undecayed["run"]],
        "gain_reference": gain_reference(gains, undecayed),
        "decay_factor": data["gains"]["decay_factor"],
        "speed": data["speed"],
        "new_minutes": card["budget"]["new_runs_seconds"] / 60,
        "budget_minutes": card["budget"]["limit_seconds"] / 60,
    }


OTHER_EXPORTS = ("real-model/residual/residual", "real-model/residual/mechanism")  # 第 2 课's runs, same batches


def seed0_histories(doc):
    """{variant name: seed 0's history} of an export's variants (one history, or one per seed)."""
    out = {}
    for v in doc.get("variants", []):
        if "history" in v and v.get("seed", 0) == 0:
            out[v["name"]] = v["history"]
        elif "histories" in v and 0 in v.get("seeds", [0]):
            out[v["name"]] = v["histories"][v.get("seeds", [0]).index(0)]
    return out


def shared_plateau(data, doc):
    """The seed-0 runs of this and 第 2 课's experiments (same data, batch order and schedule) that end
    the full schedule on the unigram plateau, Post-LN with warm-up left out: at each evaluation of the
    second half their spread (max - min); at the last step their spread, and how far the warm-up
    Post-LN run ends below the lowest of them. None where fewer than two such runs."""
    unigram, steps = doc["references"]["unigram"], doc["model_card"]["training"]["steps"]
    hist = {("norm", r["name"]): r["history"] for r in doc["runs"] if r["seed"] == 0}
    for key in OTHER_EXPORTS:
        if key in data:
            hist.update({(key.split("/")[-1], n): h for n, h in seed0_histories(data[key]).items()})

    def at(h, step):
        return next((p["val_loss"] for p in h if p["step"] == step and p["val_loss"] is not None), None)

    warm = hist.pop(("norm", "post_ln_warmup"), None)
    stuck = {k: h for k, h in hist.items() if k[1] != "baseline"
             and at(h, steps) is not None and at(h, steps) > unigram - STUCK}
    if len(stuck) < 2 or warm is None or at(warm, steps) is None:
        return None
    common = sorted(set.intersection(*[{p["step"] for p in h} for h in stuck.values()]))
    half = [st for st in common if st >= steps / 2]
    spread = {st: max(at(h, st) for h in stuck.values()) - min(at(h, st) for h in stuck.values()) for st in half}
    last = [at(h, steps) for h in stuck.values()]
    return {"n": len(stuck), "runs": sorted("%s.%s" % k for k in stuck), "others": len([k for k in stuck if k[0] != "norm"]),
            "from_step": half[0], "spread": max(spread.values()), "spread_last": max(last) - min(last),
            "warm_below": min(last) - at(warm, steps), "step": steps}


def untuned_factor(data):
    """Ma & Yarats' untuned linear warm-up length, in units of 1 / (1 - beta2) (data/papers.json)."""
    paper = data.get("papers", {}).get("ma2021")
    return paper["rows"][0]["warmup_times_one_over_one_minus_beta2"] if paper else None


def facts(data):
    if KEY not in data:
        return {"norm": None}
    out = norm_facts(data[KEY], _baseline.ablation(data), untuned_factor(data))
    out["warmup"]["plateau"] = shared_plateau(data, data[KEY])
    return {"norm": out}
