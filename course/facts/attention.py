"""Facts of our model's attention (data/real-model/attention/attention.json, `python -m lab attention`):
facts.attention, or None before its first export. Lesson c3/l1's 真模型 reads only these.

A head is *named* for a measure by one rule, written here once: it puts at least NAME_SHARE of its
weight on that kind of position, averaged over every query of the book's validation text, and at
least NAME_RATIO times what the content-blind prefix average puts there on the same queries.

The control (every head's weights replaced by the prefix average) is read against the baseline by
seeds protocol v2 (widgets/common/seeds.py) at every evaluation, on both losses: the health check's
failed runs are listed, not read. Its primary comparison (PRIMARY) is declared here after the fact:
the runs were trained before v2. The baseline takes the seeds trained for it later
(baseline-seeds.json, through _baseline.extend_row).
"""
import math
import random

from course.widgets import common_module

from . import _baseline
from ..errors import CourseError

numfmt = common_module("numfmt")  # first: seeds imports it
seeds = common_module("seeds")  # the seeds protocol (v2), the one rule every lesson reads runs by


KEY = "real-model/attention/attention"
CARD = "real-model/model-card"  # the baseline's init scales, for what a score is before training
FAILED_RUN = "real-model/attention/failed-run"  # the same measures of a baseline run v2 flags as failed
NAME_SHARE = 0.3  # at least this share of the head's weight, on average ...
NAME_RATIO = 5.0  # ... and this many times the prefix average's share
# A head the table cannot tell from the prefix average: each share column within NEAR_SHARE of
# the average's, and how far back it looks on average within NEAR_DISTANCE tokens of it.
NEAR_SHARE = 0.01
NEAR_DISTANCE = 2.0
TABLE_SHARES = ("previous", "same_token", "punctuation", "first")  # the page table's share columns
PEAK = 900  # per mille: a query whose largest weight is at least this puts nearly all on one key
NAMED = (  # (measure, what the page calls a head named for it)
    ("previous", "前一个 token 头"),
    ("same_token", "同 token 头"),
    ("induction", "归纳头"),
    ("punctuation", "标点头"),
    ("first", "起点头"),
    ("self", "自身头"),
)


def named_heads(heads, blind):
    """Per measure of NAMED, the heads that pass the rule, strongest first; and each head's name (its
    strongest passing measure by ratio, None when none passes).

    named_heads([{"layer": 1, "head": 1, "previous": 0.6, "self": 0.1}], {"previous": 0.02, "self": 0.02})
    -> ({"previous": [{"layer": 1, "head": 1, "share": 0.6, "ratio": 30.0}], "self": []}, {(1, 1): "previous"})
    """
    by_measure, names = {}, {}
    for m, _ in NAMED:
        if m not in blind:
            continue
        passing = [{"layer": h["layer"], "head": h["head"], "share": h[m], "ratio": h[m] / blind[m]}
                   for h in heads if h[m] >= NAME_SHARE and h[m] >= NAME_RATIO * blind[m]]
        by_measure[m] = sorted(passing, key=lambda r: (-r["share"], r["layer"], r["head"]))
    for h in heads:
        best = None
        for m, rows in by_measure.items():
            for r in rows:
                if (r["layer"], r["head"]) == (h["layer"], h["head"]) and (best is None or r["ratio"] > best[1]):
                    best = (m, r["ratio"])
        names[(h["layer"], h["head"])] = best[0] if best else None
    return by_measure, names


def near_average(heads, blind):
    """The heads that every column of the page's table puts within NEAR_SHARE / NEAR_DISTANCE of
    the prefix average: on these measures they look like plain averaging.

    near_average([{"layer": 1, "head": 1, "previous": 0.02, "same_token": 0.01, "punctuation": 0.06,
                   "first": 0.02, "distance": 63.0}], {"previous": 0.02, "same_token": 0.014,
                   "punctuation": 0.058, "first": 0.02, "distance": 63.9}) -> [(1, 1)]
    """
    return [(h["layer"], h["head"]) for h in heads
            if all(abs(h[m] - blind[m]) < NEAR_SHARE for m in TABLE_SHARES)
            and abs(h["distance"] - blind["distance"]) < NEAR_DISTANCE]


def passage_queries(doc, layer, head):
    """Over the widget's passages, one head: how many queries (each passage's first token aside,
    it has nothing before it) put at least PEAK per mille on one key, and what the head does at
    each passage's last token (its weight on the token before it and its largest weight, per mille)."""
    queries = peaked = 0
    ends = []
    for p in doc["passages"]:
        rows = p["weights"][layer - 1][head - 1]
        for t in range(1, len(rows)):
            queries += 1
            peaked += max(rows[t]) >= PEAK
        last = rows[-1]
        ends.append({"text": p["tokens"][-1]["text"], "punct": p["tokens"][-1]["punct"],
                     "previous": last[-2] / 1000, "top": max(last) / 1000, "top_is_previous": last.index(max(last)) == len(last) - 2})
    return {"queries": queries, "peaked": peaked, "ends": ends}


def init_scores(card, head_dim):
    """What a score q.k is at initialisation in our model: RMSNorm hands W_Q and W_K inputs of unit
    mean square, their entries are N(0, init_std^2), so each component of q or k has variance
    d_model * init_std^2, and q.k (a sum of d_k such products) a standard deviation of sqrt(d_k)
    times that variance.

    init_scores({"architecture": {"d_model": 256, "init_std": 0.02}}, 64)["raw_std"] -> 0.8192 (to float error)
    """
    arch = card["architecture"]
    var = arch["d_model"] * arch["init_std"] ** 2
    raw = head_dim ** 0.5 * var
    return {"component_var": var, "raw_std": raw, "scaled_std": raw / head_dim ** 0.5,
            "init_std": arch["init_std"], "d_model": arch["d_model"]}


def strongest(heads, m):
    """The head with the largest measure m (the first of a tie)."""
    return max(heads, key=lambda h: (h[m], -h["layer"], -h["head"]))


def seeds_phrase(n):
    """How the page says how many runs stand behind a figure. seeds_phrase(1) -> '1 个种子'"""
    return f"{n} 个种子"


# The lesson's primary comparison, read by seeds protocol v2 (widgets/common/seeds.py). Declared
# post hoc: the control and the baseline were trained before v2 existed, so the page says it reads
# them after the fact. Arms are compared as (a, b): gap = a - b; "step" None is the last evaluation.
PRIMARY = ({"a": "control", "b": "baseline", "loss": "val_loss", "step": None},)
LOSSES = ("val_loss", "train_loss")
ARM_NAMES = {"baseline": "基线", "control": "对照"}


def read_at(arms, step, key, a="control", b="baseline"):
    """v2 at one evaluation: arms {name: export row} -> (its reading over every arm, contrast a - b)."""
    reading = seeds.read({n: seeds.history_by_seed(row, step, key) for n, row in arms.items()})
    return reading, seeds.contrast(reading, a, b)


def failed_course(arms, steps, arm, seed, other):
    """What a failed run (of `arm`, failed at the last evaluation) did over the run, on validation
    loss: its lag behind its arm's median (every run of the arm, itself included, as the health check
    measures it) at every evaluation ("lag" {step: lag}),
    the evaluations where the health check flags it, the first step from which it stays flagged
    ("since") and the evaluation before it ("before", with its lag and that step's threshold), its
    lag from "since" on, and where it stands against every run of the `other` arm (the evaluations
    where it is worse than all of them; their range at the last evaluation)."""
    lag, flagged, worse = {}, [], []
    at = {r["step"]: r for r in steps}
    for step, r in at.items():
        own = seeds.history_by_seed(arms[arm], step, "val_loss")
        if seed not in own:
            continue
        # the rule's own yardstick: the run against its whole arm's median (itself included)
        lag[step] = own[seed] - seeds.median(list(own.values())) if len(own) > 1 else None
        if seed in r["readings"]["val_loss"]["failed"].get(arm, {}):
            flagged.append(step)
        theirs = seeds.history_by_seed(arms[other], step, "val_loss")
        if theirs and own[seed] > max(theirs.values()):
            worse.append(step)
    order = sorted(lag)
    since = None
    for step in reversed(order):  # the flagged stretch that ends the run starts here
        if step not in flagged:
            break
        since = step
    i = order.index(since) if since is not None else None
    before = order[i - 1] if i else None
    held = [lag[s] for s in order[i:]] if i is not None else []
    last = seeds.history_by_seed(arms[other], order[-1], "val_loss")
    final = seeds.history_by_seed(arms[arm], order[-1], "val_loss")[seed]
    # A lag that falls at every evaluation from its peak to the end: a run catching up late, which
    # the rule still fails (the page says so instead of "never caught up").
    lags = [(s, lag[s]) for s in order if lag[s] is not None]
    peak = max(range(len(lags)), key=lambda j: lags[j][1]) if lags else None
    tail = [v for _, v in lags[peak:]] if lags else []
    shrinking = len(tail) >= 3 and all(b < a for a, b in zip(tail, tail[1:]))
    own_last = seeds.history_by_seed(arms[arm], order[-1], "val_loss")
    margin = lags[-1][1] - at[order[-1]]["readings"]["val_loss"]["threshold"]
    return {"lag": lag, "flagged": flagged, "since": since, "before": before, "margin": margin,
            "shrinking": shrinking, "peak_step": lags[peak][0] if lags else None,
            "peak_lag": lags[peak][1] if lags else None, "last_lag": lags[-1][1] if lags else None,
            "lag_before": lag[before] if before is not None else None,
            "threshold_before": at[before]["readings"]["val_loss"]["threshold"] if before is not None else None,
            "held_min": min(held) if held else None, "held_max": max(held) if held else None,
            "other": other, "other_name": ARM_NAMES[other], "worse_than_other": worse,
            "worse_than_other_before_last": len(order) > 1 and all(s in worse for s in order[:-1]),
            "other_min": min(last.values()), "other_max": max(last.values()),
            "within_other": min(last.values()) <= final <= max(last.values())}


def control_facts(doc, extra=None):
    """The control (attention replaced by the prefix average) against the baseline, by seeds protocol
    v2: at every evaluation, on validation and training loss, with the health check's failed runs.
    The baseline row takes the seeds trained for it later (baseline-seeds.json, `extra`). None without
    a control."""
    c = doc.get("control")
    if not c:
        return None
    base, ctl = _baseline.extend_row(c["baseline"], extra), c["control"]
    arms = {"baseline": base, "control": ctl}
    steps = []
    for row in ctl["histories"][0]:
        readings, contrasts = {}, {}
        for key in LOSSES:
            readings[key], contrasts[key] = read_at(arms, row["step"], key)
        steps.append({"step": row["step"], "tokens": row["tokens"], "readings": readings,
                      "val": contrasts["val_loss"], "train": contrasts["train_loss"],
                      "failed": failed_runs(readings)})
    last = steps[-1]
    primary = seeds.holm([read_at(arms, last["step"] if p["step"] is None else p["step"], p["loss"], p["a"], p["b"])[1]
                          for p in PRIMARY])[0]
    final, final_train = last["val"], last["train"]
    failed = last["failed"]
    for f in failed:
        other = next(n for n in arms if n != f["arm"])
        f["course"] = failed_course(arms, steps, f["arm"], f["seed"], other)

    def from_on(key, direction):  # the first evaluation from which every later one is measured that way
        out = None
        for r in reversed(steps):
            if not (r[key]["measured"] and r[key]["direction"] == direction):
                break
            out = r["step"]
        return out

    val = last["readings"]["val_loss"]
    # The same contrast with no run left out (a threshold no run exceeds): does the verdict lean on the exclusions?
    every = {n: seeds.history_by_seed(row, last["step"], "val_loss") for n, row in arms.items()}
    all_runs = seeds.contrast(seeds.read(every, floor=float("inf")), "control", "baseline")
    return {
        "all_runs": all_runs,
        "rule": c["rule"], "seeds": len(ctl["seeds"]), "base_seeds": len(base["seeds"]), "seed_list": ctl["seeds"],
        "params": ctl["params"], "base_params": base["params"], "d_ff": ctl["model_config"]["d_ff"],
        "base_d_ff": base["model_config"]["d_ff"],
        "last_step": last["step"], "primary": primary, "primary_count": len(PRIMARY),
        "final": final, "final_train": final_train, "threshold": val["threshold"],
        "threshold_train": last["readings"]["train_loss"]["threshold"],
        "runs": {n: {"trained": val["runs"][n], "failed": len(val["failed"][n]), "name": ARM_NAMES[n]} for n in arms},
        "failed": failed, "steps": steps,
        "worse_from": from_on("val", 1), "worse_from_train": from_on("train", 1),
        "better_at": [r["step"] for r in steps if r["val"]["direction"] < 0],
        "better_at_train": [r["step"] for r in steps if r["train"]["direction"] < 0],
        "t": seeds.t_quantile(final["df"]) if final["df"] else None,
        "fail_scales": seeds.FAIL_SCALES, "fail_floor": seeds.FAIL_FLOOR, "robust": seeds.ROBUST, "level": 1 - seeds.ALPHA,
        "minutes": sum(ctl["wall_seconds"]) / 60,
        "say": seeds.say,
    }


def failed_runs(readings):
    """The health check's failed runs at one evaluation, one entry per (arm, seed) failed on either
    loss, with its loss on each (None where that loss passed), baseline first, then by seed."""
    runs = {}
    for key in LOSSES:
        for arm, bad in readings[key]["failed"].items():
            for seed, loss in bad.items():
                runs.setdefault((arm, seed), {"arm": arm, "name": ARM_NAMES.get(arm, arm), "seed": seed,
                                              "val_loss": None, "train_loss": None})[key] = loss
    return [runs[k] for k in sorted(runs, key=lambda k: (k[0] != "baseline", k[0], k[1]))]


def typical_query(doc, layer, head):
    """In the first passage, the last query whose largest weight in (layer, head) is on the token
    right before it: the widget opens there, on what the head usually does (None when no query does)."""
    rows = doc["passages"][0]["weights"][layer - 1][head - 1]
    hits = [t for t, row in enumerate(rows) if t >= 1 and row.index(max(row)) == t - 1]
    return hits[-1] if hits else None


def failed_run_heads(control, other):
    """The head measures of a failed baseline run (failed-run.json), next to the page's table: how
    many of its heads are near the prefix average (near_average) and how many the naming rule names.
    None without that export, or when the run it measured is not one the health check lists as failed."""
    if not other or not control:
        return None
    cfg = other["export_config"]
    if cfg["variant"] != "baseline" or not any(f["arm"] == "baseline" and f["seed"] == cfg["seed"]
                                                for f in control["failed"]):
        return None
    heads, blind = other["measures"]["heads"], other["measures"]["prefix_average"]
    _, names = named_heads(heads, blind)
    out = {"seed": cfg["seed"], "heads": len(heads), "near": near_average(heads, blind),
           "named_count": sum(1 for n in names.values() if n),
           "previous": strongest(heads, "previous"), "punctuation": strongest(heads, "punctuation"),
           "distance": sum(h["distance"] for h in heads) / len(heads), "blind_distance": blind["distance"]}
    # Where it differs from a healthy run: the weight its first layer's heads put on the query itself.
    out["first_layer_self"] = [h["self"] for h in heads if h["layer"] == 1]
    out["picking"] = [h for h in with_off(other["content"]["heads"]) if reaches(h["off"], NAME_SHARE)]
    k = other["knockout"]
    out["knock_all"] = k["all_heads"]["delta"]
    out["first_layer_knock"] = [h["delta"] for h in k["heads"] if h["layer"] == 1]
    return out


def self_weights(heads):
    """The first layer's weights on the query itself, and the largest over every head."""
    return {"first_layer": [h["self"] for h in heads if h["layer"] == 1], "max": max(h["self"] for h in heads),
            "distance": sum(h["distance"] for h in heads) / len(heads)}


def attention_facts(doc, card=None, extra=None, failed_run=None):
    ms = doc["measures"]
    heads, blind = ms["heads"], ms["prefix_average"]
    by_measure, names = named_heads(heads, blind)
    labels = dict(NAMED)
    table = [{**h, "name": labels[names[(h["layer"], h["head"])]] if names[(h["layer"], h["head"])] else ""}
             for h in heads]
    best = {m: strongest(heads, m) for m in ("previous", "same_token", "induction", "punctuation", "first", "self")}
    spread = {m: {"min": min(h[m] for h in heads), "max": max(h[m] for h in heads)} for m in blind}
    unnamed = [h for h in table if not h["name"]]
    out = {
        "data": doc,
        "model": doc["model"], "model_config": doc["model_config"], "corpus": doc["corpus"],
        "command": doc["command"], "date": doc["date"],
        "windows": ms["windows"], "queries": ms["queries"],
        "blind": blind, "heads": table, "best": best, "spread": spread,
        "named": by_measure, "named_count": sum(1 for h in table if h["name"]), "unnamed": unnamed,
        "rule": {"share": NAME_SHARE, "ratio": NAME_RATIO},
        "passages": [{"text": p["text"], "tokens": len(p["tokens"])} for p in doc["passages"]],
        "selection": doc["selection"],
        "control": control_facts(doc, extra),
        "failed_heads": None,
        "seeds_phrase": seeds_phrase,
        "near": near_average(heads, blind), "near_rule": {"share": NEAR_SHARE, "distance": NEAR_DISTANCE},
        "self_weights": self_weights(heads),
        "in_passages": passage_queries(doc, best["previous"]["layer"], best["previous"]["head"]),
        "init": init_scores(card, doc["model_config"]["head_dim"]) if card else None,
        "open_query": typical_query(doc, best["previous"]["layer"], best["previous"]["head"]),
    }
    out["failed_heads"] = failed_run_heads(out["control"], failed_run)
    out["content"] = content_facts(doc, best["previous"])
    out["knockout"] = knockout_facts(doc)
    out["scores"] = score_facts(doc, doc["model_config"]["head_dim"])
    add_noise_reading(out["content"], out["scores"], out["knockout"], card)
    d = doc["model_config"]["d_model"]
    out["value_out"] = {"free": d * d, "nominal": 2 * d * d}  # the control's W_V W_O: one d x d product a layer
    return out


# A head's knockout "matters" from this rise in validation loss (nats per token): with hundreds of windows
# of the same text, even +0.001 is beyond its error, so the page names a size, not only a sign.
KNOCK_SIZE = 0.01


def add_noise_reading(content, scores, knockout, card):
    """The content measure beside what noise reads: each head's distance from the prefix average against
    noise_tv at the head's own score SD (the largest difference over heads), the SD at which noise
    reaches the page's 30 % line, what the untrained model's unscaled scores would read; and "useful":
    the heads at or above the line whose knockout also costs KNOCK_SIZE or more."""
    rows = [{**h, "noise": noise_tv(scores["by_head"][(h["layer"], h["head"])]["score_sd"])} for h in content["heads"]]
    content["noise_gap"] = max(abs(h["tv_prefix"] - h["noise"]) for h in rows)
    content["noise_at_1"] = noise_tv(1.0)
    content["init_unscaled_noise"] = noise_tv(scores["init"]["unscaled"]["sd"])
    content["useful"] = [h for h in content["picking"]
                         if knockout["by_head"][(h["layer"], h["head"])]["delta"] >= KNOCK_SIZE]


# A head picks by content, by a measure that needs no category: at least CONTENT_SHARE of its weight
# (total variation, averaged over every query of the book) sits where its best position-only weights
# (one score per look-back distance, fitted to the head over the whole book) do not put it.
CONTENT_SHARE = NAME_SHARE


def by_head(rows):
    return {(r["layer"], r["head"]): r for r in rows}


def reaches(share, line):
    """share >= line as the page prints it (whole percent): a head shown as 30% is not left off a 30% list."""
    return round(share * 100) >= round(line * 100)


def noise_tv(sd, longest=256, step=4, draws=16):
    """The mean distance (total variation) from the prefix average of softmax weights whose scores are
    independent Gaussian noise with this SD, over prefixes of 2..longest keys (every `step`-th), `draws`
    draws each: what the category-free measure reads for a head whose scores vary with the tokens but
    pick nothing in particular. Deterministic (its own seeded generator). One draw per length (as
    before) left the figure about 1 point off the many-draw value at SD 1; 16 leave about 0.3."""
    rng = random.Random(0)
    total, count = 0.0, 0
    for n in range(2, longest + 1, step):
        for _ in range(draws):
            w = [math.exp(rng.gauss(0.0, sd)) for _ in range(n)]
            z = sum(w)
            total += 0.5 * sum(abs(x / z - 1 / n) for x in w)
            count += 1
    return total / count


def with_off(heads):
    """Each head with off: its distance to the nearer of two distance-only weightings, the
    cross-entropy-closest fit and the prefix average (every distance scored alike). The fit minimises
    cross-entropy, not this distance, so the prefix average is sometimes nearer; either way off is an
    upper bound on the distance to the nearest distance-only weights."""
    return [{**h, "off": min(h["tv_position"], h["tv_prefix"])} for h in heads]


def content_facts(doc, previous):
    """The category-free measure (doc["content"]): each head's distance from its best position-only
    weights (tv_position) and from the prefix average (tv_prefix), and off (with_off), ranked by off; the
    heads whose off is at or above CONTENT_SHARE; those nearer the prefix average than the fit; the
    previous-token head's pair."""
    c = doc["content"]
    heads = with_off(c["heads"])
    ranked = sorted(heads, key=lambda h: (-h["off"], h["layer"], h["head"]))
    picking = [h for h in ranked if reaches(h["off"], CONTENT_SHARE)]
    low = sorted(heads, key=lambda h: (h["off"], h["layer"], h["head"]))
    prev = by_head(heads)[(previous["layer"], previous["head"])]
    return {"heads": heads, "by_head": by_head(heads), "ranked": ranked, "picking": picking, "share": CONTENT_SHARE,
            "previous": prev, "lowest": low[0], "queries": c["queries"],
            "place_gap": max(h["tv_position"] - h["tv_place"] for h in heads),
            "prefix_closer": [h for h in heads if h["tv_prefix"] < h["tv_position"]]}


def knockout_facts(doc):
    """The per-head knockout (doc["knockout"]): each head's loss rise when its weights become the prefix
    average, with h = t(0.975, windows - 1) * se (the spread over the windows of the same text: the same
    model, so no seed noise), ranked; the heads whose rise exceeds h, those within it, those whose
    loss falls beyond it; every head at once."""
    k = doc["knockout"]
    t = seeds.t_quantile(k["windows"] - 1)
    heads = [{**h, "h": t * h["se"]} for h in k["heads"]]
    ranked = sorted(heads, key=lambda h: (-h["delta"], h["layer"], h["head"]))
    rises = [h for h in ranked if h["delta"] > h["h"]]
    large = [h for h in rises if h["delta"] >= KNOCK_SIZE]
    within = [h for h in heads if abs(h["delta"]) <= h["h"]]
    falls = [h for h in heads if h["delta"] < -h["h"]]
    every = {**k["all_heads"], "h": t * k["all_heads"]["se"]}
    return {"heads": heads, "by_head": by_head(heads), "ranked": ranked, "rises": rises, "within": within,
            "large": large, "size": KNOCK_SIZE,
            "falls": falls, "all": every, "val_loss": k["val_loss"], "book": k["book"], "tokens": k["tokens"],
            "windows": k["windows"], "t": t, "sum_single": sum(h["delta"] for h in heads)}


def score_facts(doc, head_dim):
    """The scores q.k / sqrt(d_k) (doc["scores"]): per head after training, their spread over the keys a
    query sees, the mean largest weight and the share of saturated queries; at initialisation (the same
    recipe, seed for seed) the same scaled and unscaled (no division), averaged over the heads."""
    sc = doc["scores"]
    trained, init = sc["trained"]["heads"], sc["init"]

    def mean(rows, key):
        return sum(r[key] for r in rows) / len(rows)

    sharpest = max(trained, key=lambda h: (h["saturated"], h["top_weight"], -h["layer"], -h["head"]))
    widest = max(trained, key=lambda h: (h["score_sd"], -h["layer"], -h["head"]))
    return {"heads": trained, "by_head": by_head(trained), "saturated_at": sc["saturated_at"],
            "sd_min": min(h["score_sd"] for h in trained), "sd_max": max(h["score_sd"] for h in trained),
            "widest": widest, "sharpest": sharpest,
            "saturating": [h for h in trained if round(h["saturated"] * 1000) > 0],  # shown as 0.1% or more
            "saturating_hidden": [h for h in trained if h["saturated"] > 0 and round(h["saturated"] * 1000) == 0],
            "init": {k: {"sd": mean(init[k]["heads"], "score_sd"), "top": mean(init[k]["heads"], "top_weight"),
                         "top_max": max(h["top_weight"] for h in init[k]["heads"]),
                         "saturated": max(h["saturated"] for h in init[k]["heads"]),
                         "slope": mean(init[k]["heads"], "slope")} for k in ("scaled", "unscaled")},
            "prefix_average": sc["prefix_average"], "sqrt_dk": head_dim ** 0.5}


def baseline_extra(doc, data):
    """baseline-seeds.json's runs for the control's baseline, None without them. They join only a
    baseline that is ablation.json's (same seeds, same losses): another edition is refused by name."""
    extra = data.get(_baseline.EXTRA)
    if not extra or not doc.get("control"):
        return None
    ours = doc["control"]["baseline"]
    theirs = next(v for v in data[_baseline.ABLATION]["variants"] if v["name"] == "baseline")
    same = dict(zip(theirs["seeds"], theirs["val_losses"]))
    if any(s not in same or abs(same[s] - v) > 1e-9 for s, v in zip(ours["seeds"], ours["val_losses"])):
        raise CourseError(f"data/{KEY}.json", "the control's baseline row is not the baseline of "
                          f"data/{_baseline.ABLATION}.json (seeds {ours['seeds']}, other losses), so the runs of "
                          f"data/{_baseline.EXTRA}.json cannot join it: re-export the control against that baseline")
    return extra


def facts(data):
    if KEY not in data:
        return {"attention": None}
    doc = data[KEY]
    return {"attention": attention_facts(doc, data.get(CARD), baseline_extra(doc, data), data.get(FAILED_RUN))}
