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

KEY = "real-model/induction/copy-task"
SCAN_KEY = "real-model/induction/induction"
CURVES_KEY = "real-model/induction/curves"
HEAD_SHARE = 0.10
REPEAT_GAIN = -0.5


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
            "steps": runs[0]["points"][-1]["step"]}


def copy_task_facts(doc):
    uniform = doc["task"]["uniform_loss"]
    arms = {}
    for r in doc["runs"]:
        arms.setdefault(r["variant"], []).append(r)
    return {"data": doc, "task": doc["task"], "uniform": uniform,
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
    return {"data": doc, "arms": arms, "reference": doc["reference"], "sequences": doc["sequences"],
            "any_induction_head": any(a["with_induction_head"] for a in arms.values())}


def curve_row(r):
    points = r["points"]
    last = points[-1]
    first_previous = next((p["step"] for p in points if p["previous"]["share"] >= HEAD_SHARE), None)
    formed = next((p["step"] for p in points if induction_head(p["repeat_gain"], p["prefix_matching"]["share"])), None)
    return {"seed": r["seed"], "steps": r["steps"], "val_loss": r["val_loss"], "n_layer": r["n_layer"],
            "points": points, "gain": last["repeat_gain"], "icl": last["icl"],
            "prefix": last["prefix_matching"], "previous": last["previous"],
            "icl_start": points[1]["icl"] if len(points) > 1 else None,
            "prefix_peak": max(p["prefix_matching"]["share"] for p in points),
            "gain_best": min(p["repeat_gain"] for p in points),
            "first_previous_head": first_previous, "induction_formed": formed,
            "previous_head": last["previous"]["share"] >= HEAD_SHARE,
            "induction_head": induction_head(last["repeat_gain"], last["prefix_matching"]["share"])}


def curves_facts(doc):
    arms = by_variant([(r["variant"], curve_row(r)) for r in doc["runs"]])
    for a in arms.values():
        a["prefix_peak"] = max(r["prefix_peak"] for r in a["runs"])
        a["gain_best"] = min(r["gain_best"] for r in a["runs"])
        a["formed"] = [r["induction_formed"] for r in a["runs"]]
        a["first_previous_head"] = [r["first_previous_head"] for r in a["runs"]]
    return {"data": doc, "arms": arms, "reference": doc["reference"],
            "tokens_per_step": doc["model_card"]["train_config"]["batch_size"]
            * doc["model_card"]["train_config"]["block_size"]}


def facts(data):
    return {"copy_task": copy_task_facts(data[KEY]) if KEY in data else None,
            "induction_scan": scan_facts(data[SCAN_KEY]) if SCAN_KEY in data else None,
            "induction_curves": curves_facts(data[CURVES_KEY]) if CURVES_KEY in data else None}
