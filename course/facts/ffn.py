"""Readings of the FFN experiment (data/real-model/ablation.json, `python -m lab ffn`): facts.ffn,
or None before its first export. Lesson c4/l1's 真模型 reads every comparison from here; the
ablation widget (widgets/ablation) only draws the runs.

Every comparison is read by seeds protocol v2 (widgets/common/seeds.py) over all four arms of the
experiment (baseline, linear_ffn, no_ffn, attn_only_12l) at one evaluation step and one loss. The
baseline arm is ablation.json's seeds plus those trained for it later (course/facts/_baseline.py),
so a seed added there joins every reading here. The runs were trained before v2 was declared, so
they are read after the fact, and the lesson's primary comparisons (PRIMARY) are declared here,
after the runs, and read through seeds.holm.
"""
from course.widgets import common_module

from . import _baseline

common_module("numfmt")  # first: seeds imports it
seeds = common_module("seeds")

CARD = "real-model/model-card"
CONTROL = "real-model/attention/attention"  # C3 第 1 课's content-blind control (same recipe, same batches)
KEYS = ("val_loss", "train_loss")
BASE = "baseline"
# Declared post hoc (the runs predate v2): the lesson's thesis rests on these two, on validation
# loss at the last evaluation: does the FFN help, and does a linear one do as well.
PRIMARY = (("linear_ffn", BASE), ("no_ffn", BASE))
PRIMARY_KEY = "val_loss"
# Every comparison the page reads, a - b: each control against the baseline; what the linear map
# alone recovers (no FFN against the linear FFN); the deep attention-only stack against the
# shallow model without FFN.
PAIRS = (("linear_ffn", BASE), ("no_ffn", BASE), ("attn_only_12l", BASE), ("no_ffn", "linear_ffn"),
         ("attn_only_12l", "no_ffn"))
SHORT = {"baseline": "基线", "linear_ffn": "线性 FFN", "no_ffn": "去掉 FFN", "attn_only_12l": "纯注意力 12 层"}


def name(arm, variant=None):
    """How the page names an arm. The deep stack's layer count comes from the export when given."""
    if arm == "attn_only_12l" and variant:
        return f"纯注意力 {variant['n_layer']} 层"
    return SHORT.get(arm, arm)


def lead(text):
    """A name followed by a space when it ends in Latin letters or digits, so Chinese can follow it:
    lead("线性 FFN") -> '线性 FFN '; lead("基线") -> '基线'"""
    return text + " " if text and text[-1].isascii() and text[-1].isalnum() else text


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs)


def steps_of(variants):
    """The evaluation steps of the baseline's runs, in order."""
    return [e["step"] for e in variants[BASE]["histories"][0]]


def arms_at(variants, step, key):
    """{arm: {seed: loss}} at one evaluation, every arm that reached it."""
    out = {}
    for n, v in variants.items():
        at = seeds.history_by_seed(v, step, key)
        if at:
            out[n] = at
    return out


def contrast(reading, a, b):
    """seeds.contrast with the page's phrase ("say") and both arms' names."""
    c = seeds.contrast(reading, a, b)
    c["say"] = seeds.say(c)
    return c


def read_step(variants, step, key):
    """v2 at one evaluation and loss: the reading (health check, pooled noise) and every pair."""
    reading = seeds.read(arms_at(variants, step, key))
    pairs = {f"{a}-{b}": contrast(reading, a, b) for a, b in PAIRS if a in reading["runs"] and b in reading["runs"]}
    return {"step": step, "reading": reading, "pairs": pairs, "threshold": reading["threshold"],
            "sd": reading["sd"], "df": reading["df"], "failed": failed_list(reading),
            "medians": {n: seeds.median(a.values()) for n, a in reading["healthy"].items() if a}}


def failed_list(reading):
    """The health check's failed runs at one reading, baseline first, then by arm and seed."""
    out = []
    for arm in sorted(reading["failed"], key=lambda n: (n != BASE, n)):
        for seed in sorted(reading["failed"][arm]):
            out.append({"arm": arm, "seed": seed, "loss": reading["failed"][arm][seed]})
    return out


def healthy_means(reading):
    """{arm: mean of its healthy runs} at one reading."""
    return {n: mean(a.values()) for n, a in reading["healthy"].items() if a}


def failed_course(variants, steps, by_step, arm, seed):
    """What a run the health check fails at the last evaluation did over the run, on validation
    loss: how far it sits above its arm's median at every evaluation (the health check's own
    residual: the median of every run of the arm, itself included), the evaluations
    that flag it, the first step of the flagged stretch that ends the run ("since"), the lag at the
    evaluation before ("lag_before", and whether that step's check passed it), and the lag's range
    from "since" on ("held_min", "held_max")."""
    lag, flagged = {}, []
    for step in steps:
        own = seeds.history_by_seed(variants[arm], step, "val_loss")
        if seed not in own:
            continue
        lag[step] = own[seed] - seeds.median(own.values())
        if seed in by_step[step]["reading"]["failed"].get(arm, {}):
            flagged.append(step)
    order = sorted(lag)
    since = None
    for step in reversed(order):
        if step not in flagged:
            break
        since = step
    i = order.index(since) if since is not None else None
    before = order[i - 1] if i else None
    held = [lag[s] for s in order[i:]] if i is not None else []
    return {"lag": lag, "flagged": flagged, "since": since, "before": before,
            "lag_before": lag[before] if before is not None else None,
            "threshold_before": by_step[before]["threshold"] if before is not None else None,
            "held_min": min(held) if held else None, "held_max": max(held) if held else None}


def control_level(control_doc, step, loss, sd):
    """C3 第 1 课's content-blind control (attention replaced by the prefix average) at `step`: its
    runs' range, and whether `loss` lies within it widened by the pooled SD `sd`; None without it."""
    if not control_doc or not control_doc.get("control"):
        return None
    ctl = control_doc["control"]["control"]
    at = list(seeds.history_by_seed(ctl, step, "val_loss").values())
    if not at:
        return None
    lo, hi = min(at), max(at)
    return {"min": lo, "max": hi, "seeds": len(at), "level": lo - (sd or 0) <= loss <= hi + (sd or 0)}


def split(end, key):
    """The FFN's gain (no FFN against the baseline) split at the linear FFN: what the linear map
    recovers (no FFN against the linear FFN) and the rest (the linear FFN against the baseline),
    each a v2 contrast on the healthy runs' means, so the parts add up to the whole."""
    p = end[key]["pairs"]
    total, recovered, rest = p["no_ffn-baseline"], p["no_ffn-linear_ffn"], p["linear_ffn-baseline"]
    t = total["gap"]
    return {"total": total, "recovered": recovered, "rest": rest,
            "recovered_share": recovered["gap"] / t if t else 0.0, "rest_share": rest["gap"] / t if t else 0.0,
            "ffn_helps": total["measured"] and total["direction"] > 0,
            "linear_helps": recovered["measured"] and recovered["direction"] > 0,
            "rest_measured": rest["measured"] and rest["direction"] > 0,
            "linear_better": rest["measured"] and rest["direction"] < 0}


def fit(variants, end, card):
    """Training against validation loss on the baseline's runs healthy on both losses at the end:
    their means and gap, the gap mid-run, whether each still fell over the last interval, and the
    controls' gaps (their healthy runs)."""
    healthy = {n: set(end["val_loss"]["reading"]["healthy"].get(n, {}))
               & set(end["train_loss"]["reading"]["healthy"].get(n, {})) for n in variants}
    base = variants[BASE]
    hs = {s: h for s, h in zip(base["seeds"], base["histories"]) if s in healthy[BASE]}
    runs = list(hs.values())
    train = mean(h[-1]["train_loss"] for h in runs)
    val = mean(h[-1]["val_loss"] for h in runs)
    gaps = [(e["step"], mean(h[i]["val_loss"] - h[i]["train_loss"] for h in runs)) for i, e in enumerate(runs[0])]
    mid = gaps[len(gaps) // 2]
    falls = [h[-2]["val_loss"] - h[-1]["val_loss"] for h in runs] if len(runs[0]) > 1 else []
    controls = []
    for n, v in variants.items():
        if n == BASE:
            continue
        keep = [i for i, s in enumerate(v["seeds"]) if s in healthy[n]]
        if keep:
            controls.append({"arm": n, "name": name(n, v),
                             "gap": mean(v["val_losses"][i] for i in keep) - mean(v["train_losses"][i] for i in keep)})
    return {"seeds": sorted(hs), "train": train, "val": val, "gap": val - train,
            "mid_step": mid[0], "mid_gap": mid[1],
            "every_seed_fell": bool(falls) and min(falls) > 0,
            "fall_from": mean(h[-2]["val_loss"] for h in runs) if falls else None,
            "fall_to": val, "fall_tokens": runs[0][-1]["tokens"] - runs[0][-2]["tokens"] if falls else None,
            "controls": controls, "controls_smaller": all(c["gap"] < val - train for c in controls),
            "train_tokens": card["split"]["train_tokens"], "epochs": card["training"]["epochs"]}


def curve(by_step, steps, pair="linear_ffn-baseline", key="val_loss"):
    """One pair at every evaluation by v2, with the runs that step's health check leaves out:
    [{"step", "c" (contrast), "failed"}], and the first step from which every later evaluation is
    measured with the sign of the last one ("steady_from")."""
    rows = [{"step": s, "c": by_step[key][s]["pairs"][pair], "failed": by_step[key][s]["failed"]}
            for s in steps if pair in by_step[key][s]["pairs"]]
    last = rows[-1]["c"]
    steady = None
    if last["measured"]:
        for r in reversed(rows):
            if not (r["c"]["measured"] and r["c"]["direction"] == last["direction"]):
                break
            steady = r["step"]
    held = [r for r in rows if steady is not None and r["step"] >= steady]
    gaps = [abs(r["c"]["gap"]) for r in held]
    end_failed = {(f["arm"], f["seed"]) for f in rows[-1]["failed"]}
    return {"rows": rows, "steady_from": steady,
            "before": [r for r in rows if steady is None or r["step"] < steady], "held": held,
            # the gap grows at every evaluation of the held stretch
            "widening": len(gaps) > 1 and all(b > a for a, b in zip(gaps, gaps[1:])),
            # runs an earlier step's health check leaves out that the last one does not
            "other_failed": [{**f, "step": r["step"]} for r in rows for f in r["failed"]
                             if (f["arm"], f["seed"]) not in end_failed]}


def ffn_facts(data):
    doc = _baseline.ablation(data)
    variants = {v["name"]: v for v in doc["variants"]}
    steps = steps_of(variants)
    last = steps[-1]
    by_step = {key: {s: read_step(variants, s, key) for s in steps} for key in KEYS}
    end = {key: by_step[key][last] for key in KEYS}
    primary = seeds.holm([end[PRIMARY_KEY]["pairs"][f"{a}-{b}"] for a, b in PRIMARY])
    for c in primary:
        c["say"] = seeds.say(c)
    val = end["val_loss"]
    failed = []
    for f in val["failed"]:
        train = end["train_loss"]["reading"]["failed"].get(f["arm"], {})
        failed.append({**f, "name": name(f["arm"], variants[f["arm"]]),
                       # the health check's own median: of every run of the arm, the failed one included
                       "median": seeds.median(seeds.history_by_seed(variants[f["arm"]], last, "val_loss").values()),
                       "train_loss": train.get(f["seed"]),
                       "train_median": seeds.median(
                           seeds.history_by_seed(variants[f["arm"]], last, "train_loss").values()),
                       "train_failed": f["seed"] in train,
                       "course": failed_course(variants, steps, by_step["val_loss"], f["arm"], f["seed"]),
                       "control": control_level(data.get(CONTROL), last, f["loss"], val["sd"])})
    train_only = [f for f in end["train_loss"]["failed"]
                  if not any(g["arm"] == f["arm"] and g["seed"] == f["seed"] for g in val["failed"])]
    arms = {}
    for n, v in variants.items():
        arms[n] = {"name": name(n, v), "lead": lead(name(n, v)), "trained": len(v["seeds"]), "seeds": v["seeds"],
                   "params": v["params"], "n_layer": v["n_layer"],
                   "failed": len(val["reading"]["failed"].get(n, {})),
                   "healthy": {key: sorted(end[key]["reading"]["healthy"].get(n, {})) for key in KEYS},
                   "mean": {key: healthy_means(end[key]["reading"]).get(n) for key in KEYS}}
    deep, shallow = variants.get("attn_only_12l"), variants.get("no_ffn")
    return {
        "last": last, "steps": steps, "arms": arms, "order": list(variants),
        "end": end, "by_step": by_step,
        "val": val["pairs"], "train": end["train_loss"]["pairs"],
        "primary": primary, "primary_pairs": [f"{a}-{b}" for a, b in PRIMARY],
        "primary_all": all(c["measured"] for c in primary), "primary_key": PRIMARY_KEY,
        "failed": failed, "train_only_failed": train_only,
        "failed_runs": sum(a["failed"] for a in arms.values()),
        "controls_trained": sum(a["trained"] for n, a in arms.items() if n != BASE),
        "controls_failed": sum(a["failed"] for n, a in arms.items() if n != BASE),
        "controls_most_seeds": max(a["trained"] for n, a in arms.items() if n != BASE),
        "one_seed": [n for n, a in arms.items() if n != BASE and a["trained"] == 1],
        "split": {key: split(end, key) for key in KEYS},
        "fit": fit(variants, end, data[CARD]),
        "curve": curve(by_step, steps),
        "depth": {"ratio": deep["params"] / shallow["params"]} if deep and shallow else None,
        "references": doc["references"],
        "t": seeds.t_quantile(val["df"]) if val["df"] else None,
        "fail_scales": seeds.FAIL_SCALES, "fail_floor": seeds.FAIL_FLOOR, "level": 1 - seeds.ALPHA,
    }


def facts(data):
    """facts.ffn, or None before lab/ has exported the FFN experiment."""
    if CARD not in data or _baseline.ABLATION not in data:
        return {"ffn": None}
    return {"ffn": ffn_facts(data)}
