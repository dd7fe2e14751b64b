"""Facts of the induction lesson (C3 第 3 课), from data/real-model/induction/ (`python -m lab copytask` and
`python -m lab induction`); each is None before its first export.

facts.copy_task (copy-task.json; the widget copy-task takes its data): per arm (attn_only_2l, attn_only_1l,
smeared_1l), over its seeds, the copy loss at the start and the end (range over seeds), the first evaluation step
where a seed's copy loss is below half of ln(vocab) (the cliff; None where none), and the best previous-token and
prefix-matching shares at the end (range over seeds).

facts.induction_scan (induction.json, finished runs) and facts.induction_curves (curves.json, the runs' snapshots):
per variant, each seed's repeat gain (second half's loss minus the first's on random tokens repeated), best
prefix-matching and previous-token heads and ICL score, with their ranges over seeds.

What counts as a head of a kind is declared here, before the lesson's runs were read: a head holds at least
HEAD_SHARE of its weight on the token after the earlier copy (prefix matching) or on the previous token, ten times
what the content-blind prefix average puts there (1.08 % on 64-token repeats); an induction head also needs the
repeat to be easier by at least REPEAT_GAIN nats (the copy task's two-layer models gain about 3).
"""

# Declared on 2026-12-06 after seed 0 of each arm had trained (attn_only_2l seed 1 running) and before the
# other seeds: the page's primary comparisons, the repeat gain at the last snapshot (a - b; negative: a copies
# more), read by seeds protocol v2 with the health check on validation loss, Holm-corrected over these two.
PRIMARY = (("attn_only_2l", "attn_only_1l"), ("smeared_1l", "attn_only_1l"))

import math

from course.widgets import common_module

numfmt = common_module("numfmt")  # first: seeds imports it
seeds = common_module("seeds")  # the seeds protocol (v2)

KEY = "real-model/induction/copy-task"
SCAN_KEY = "real-model/induction/induction"
CURVES_KEY = "real-model/induction/curves"
HEAD_SHARE = 0.10
REPEAT_GAIN = -0.5


def plateau(runs, uniform):
    """The last evaluation step at which every seed's copy loss is still within 10 % of ln(vocab) (the plateau
    before the cliff; None where a seed starts below it), and the seeds' copy loss range there."""
    steps = [p["step"] for p in runs[0]["points"]]
    on = [s for i, s in enumerate(steps) if all(r["points"][i]["copy_loss"] >= 0.9 * uniform for r in runs)]
    if not on or on[0] != steps[0]:
        return None
    last = next((s for s in steps if s not in on), None)
    step = on[-1] if last is None else max(s for s in on if s < last)
    at = [next(p["copy_loss"] for p in r["points"] if p["step"] == step) for r in runs]
    return {"step": step, "lo": min(at), "hi": max(at)}


def arm_facts(runs, uniform):
    ends = [r["points"][-1] for r in runs]
    cliffs = [next((p["step"] for p in r["points"] if p["copy_loss"] < uniform / 2), None) for r in runs]
    return {"seeds": [r["seed"] for r in runs],
            "start": max(r["points"][0]["copy_loss"] for r in runs),
            "end_lo": min(p["copy_loss"] for p in ends), "end_hi": max(p["copy_loss"] for p in ends),
            "cliff": cliffs, "cliff_lo": min((c for c in cliffs if c is not None), default=None),
            "cliff_hi": max(cliffs) if None not in cliffs else None,
            "prefix_lo": min(p["prefix_matching"]["share"] for p in ends),
            "prefix_hi": max(p["prefix_matching"]["share"] for p in ends),
            "previous_lo": min(p["previous"]["share"] for p in ends),
            "previous_hi": max(p["previous"]["share"] for p in ends),
            "steps": runs[0]["points"][-1]["step"], "plateau": plateau(runs, uniform)}


def seen_symbols_floor(task):
    """The lowest copy loss a model can reach that knows which symbols the first copy holds but not their order:
    all its probability spread evenly over the distinct symbols seen, ln D; D's distribution for L uniform draws
    from `vocab` symbols by the occupancy recursion, averaged over L = min_len..max_len weighted by the L - 1
    predictions each sequence's repeat makes (copy_loss pools them). For vocab 32, L 8..24: 2.5725."""
    V, total, weight = task["vocab"], 0.0, 0
    for L in range(task["min_len"], task["max_len"] + 1):
        p = [1.0] + [0.0] * L  # p[d]: d distinct symbols after k draws
        for _ in range(L):
            p = [p[d] * d / V + (p[d - 1] * (V - d + 1) / V if d else 0.0) for d in range(L + 1)]
        total += (L - 1) * sum(p[d] * math.log(d) for d in range(1, L + 1))
        weight += L - 1
    return total / weight


def copy_task_facts(doc):
    uniform = doc["task"]["uniform_loss"]
    arms = {}
    for r in doc["runs"]:
        arms.setdefault(r["variant"], []).append(r)
    return {"data": doc, "task": doc["task"], "uniform": uniform, "seen_floor": seen_symbols_floor(doc["task"]),
            "arms": {v: arm_facts(runs, uniform) for v, runs in arms.items()}}


def spread(values):
    return {"lo": min(values), "hi": max(values)}


def best(heads, key):
    h = max(heads, key=lambda h: h[key])
    return {"layer": h["layer"], "head": h["head"], "share": h[key]}


def induction_head(gain, prefix_share):
    return gain <= REPEAT_GAIN and prefix_share >= HEAD_SHARE


def scan_row(r):
    prefix, previous = best(r["heads"], "prefix_matching"), best(r["heads"], "previous")
    return {"seed": r["seed"], "val_loss": r["val_loss"], "steps": r["step"], "n_layer": r["n_layer"],
            "gain": r["repeat"]["gain"], "first": r["repeat"]["first"], "second": r["repeat"]["second"],
            "prefix": prefix, "previous": previous, "icl": r["icl"]["score"],
            "previous_head": previous["share"] >= HEAD_SHARE,
            "induction_head": induction_head(r["repeat"]["gain"], prefix["share"])}


def by_variant(rows):
    out = {}
    for variant, row in rows:
        out.setdefault(variant, []).append(row)
    return {v: {"seeds": [r["seed"] for r in rs], "runs": rs,
                **{k: spread([r[k] for r in rs]) for k in ("gain", "icl", "val_loss")},
                "prefix": spread([r["prefix"]["share"] for r in rs]),
                "previous": spread([r["previous"]["share"] for r in rs]),
                "with_previous_head": sum(r["previous_head"] for r in rs),
                "with_induction_head": sum(r["induction_head"] for r in rs)} for v, rs in out.items()}


def scan_facts(doc):
    arms = by_variant([(r["variant"], scan_row(r)) for r in doc["runs"]])
    tc = doc["model_card"]["train_config"]
    per_step = tc["batch_size"] * tc["block_size"]
    for a in arms.values():
        for r in a["runs"]:
            r["tokens"] = r["steps"] * per_step
    text = doc["text"]
    return {"data": doc, "arms": arms, "reference": doc["reference"], "sequences": doc["sequences"],
            "guess": math.log(doc["sequences"]["drawn_from"]), "tokens_per_step": per_step,
            "text": {**text, **{k: text[k] / text["positions"] for k in ("repeated", "copy_right", "bigram_right",
                                                                          "both_right")},
                     "copy_only": (text["copy_right"] - text["both_right"]) / text["positions"]},
            "any_induction_head": any(a["with_induction_head"] for a in arms.values())}


def curve_row(r):
    points = r["points"]
    last = points[-1]
    first_previous = next((p["step"] for p in points if p["previous"]["share"] >= HEAD_SHARE), None)
    formed = next((p["step"] for p in points if induction_head(p["repeat_gain"], p["prefix_matching"]["share"])), None)
    return {"variant": r["variant"], "seed": r["seed"], "steps": r["steps"], "val_loss": r["val_loss"],
            "n_layer": r["n_layer"], "points": points, "gain": last["repeat_gain"], "icl": last["icl"],
            "prefix": last["prefix_matching"], "previous": last["previous"],
            "icl_start": points[1]["icl"] if len(points) > 1 else None,
            "prefix_peak": max(p["prefix_matching"]["share"] for p in points),
            "gain_best": min(p["repeat_gain"] for p in points),
            "first_previous_head": first_previous, "induction_formed": formed,
            "previous_head": last["previous"]["share"] >= HEAD_SHARE,
            "induction_head": induction_head(last["repeat_gain"], last["prefix_matching"]["share"])}


def metric_reading(rows_by_arm, key):
    """v2 on a measure other than the loss: the health check is the declared one, on each run's validation loss;
    the measure `key` of the healthy runs gives the pooled noise and the contrasts (seeds.contrast reads this)."""
    health = seeds.health({a: {r["seed"]: r["val_loss"] for r in rows} for a, rows in rows_by_arm.items()})
    healthy = {a: {r["seed"]: r[key] for r in rows if r["seed"] not in health["failed"][a]}
               for a, rows in rows_by_arm.items()}
    usable = {a: v for a, v in healthy.items() if a not in health["split"]}
    sd, df = seeds.pooled(usable)
    return {**health, "healthy": healthy, "sd": sd, "df": df, "runs": {a: len(r) for a, r in rows_by_arm.items()}}


def primary_contrasts(rows_by_arm, key="gain"):
    """PRIMARY read on `key` (the repeat gain at the last snapshot), Holm-corrected; [] until every arm has run."""
    if not all(a in rows_by_arm for pair in PRIMARY for a in pair):
        return []
    reading = metric_reading({a: rows_by_arm[a] for pair in PRIMARY for a in pair}, key)
    out = seeds.holm([seeds.contrast(reading, a, b) for a, b in PRIMARY])
    for c in out:
        c["say"] = seeds.say(c)
    return out


def curves_facts(doc):
    arms = by_variant([(r["variant"], curve_row(r)) for r in doc["runs"]])
    for a in arms.values():
        a["prefix_peak"] = max(r["prefix_peak"] for r in a["runs"])
        a["gain_best"] = min(r["gain_best"] for r in a["runs"])
        a["formed"] = [r["induction_formed"] for r in a["runs"]]
        a["first_previous_head"] = [r["first_previous_head"] for r in a["runs"]]
    rows = {v: a["runs"] for v, a in arms.items()}
    return {"data": doc, "arms": arms, "reference": doc["reference"], "primary": primary_contrasts(rows),
            "tokens_per_step": doc["model_card"]["train_config"]["batch_size"]
            * doc["model_card"]["train_config"]["block_size"]}


def facts(data):
    return {"copy_task": copy_task_facts(data[KEY]) if KEY in data else None,
            "induction_scan": scan_facts(data[SCAN_KEY]) if SCAN_KEY in data else None,
            "induction_curves": curves_facts(data[CURVES_KEY]) if CURVES_KEY in data else None,
            "induction_head_share": HEAD_SHARE}
