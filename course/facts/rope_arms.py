"""Facts of the positions lesson's training arms (data/real-model/rope/arms.json, `python -m lab rope part=arms`):
facts.rope_arms, or None before its first export. Lesson c3/l2 reads the arms only through these.

The arms (no position, one head of 256, learned absolute positions) are read against the baseline by seeds
protocol v2 (widgets/common/seeds.py): one reading per loss at the declared step over the baseline (every seed
it has: course/facts/_baseline.py) and every arm, its health check, the pooled SD, and gap +- h per arm minus
the baseline. The primary comparisons were declared in lab/experiments/rope.py before the arms trained and are
recorded in the export (`primary`): they are Holm-corrected together on their key; the other loss is
description. A baseline run in the export must be the baseline's own run of that seed (same final losses as
ablation.json / baseline-seeds.json), or the arms are refused: they would pair with another model.

facts.rope_arms:
  primary      the declaration: pairs, key, step, predictions, declared (date)
  runs         {arm: [seeds finished]}; missing: the declared (arm, seed) pairs not finished yet; missing_by_arm
               {arm: [seeds]}
  readings     {key: {"arms": {arm: {seed: loss}}, "failed", "split", "sd", "df", "contrasts": {"a-b": contrast}}}
               (the primary key's contrasts Holm-corrected, each with "primary": True)
  said         {"a-b": seeds.say(...) on the primary key}
  head_seed    the seed whose heads are measured
  heads        per variant with head measures: the head with the largest previous-token share and the one with
               the largest punctuation share (layer, head, share), and the prefix average's shares
"""
from course.widgets import common_module

from . import _baseline
from ..errors import CourseError

numfmt = common_module("numfmt")  # first: seeds imports it
seeds = common_module("seeds")

KEY = "real-model/rope/arms"
KEYS = ("val_loss", "train_loss")
TOLERANCE = 1e-9  # a baseline run in the export is the baseline's own when its final losses match this closely


def check_pairs_with_baseline(doc, base):
    """Every baseline run in the export is the baseline row's run of that seed (the same final losses)."""
    own = dict(zip(base["seeds"], zip(base["val_losses"], base["train_losses"])))
    for r in doc["runs"]:
        if r["variant"] != "baseline" or r["seed"] not in own:
            continue
        val, train = own[r["seed"]]
        if abs(r["val_loss"] - val) > TOLERANCE or abs(r["train_loss"] - train) > TOLERANCE:
            raise CourseError(f"data/{KEY}.json", f"baseline seed {r['seed']} ends at (val, train)"
                              f" ({r['val_loss']}, {r['train_loss']}) but ablation.json's baseline at ({val}, {train}):"
                              " the arms were trained beside another baseline")


def reading(doc, base, key, step, primary):
    arms = {"baseline": seeds.history_by_seed(base, step, key)}
    for v in doc["variants"]:
        rows = [r for r in doc["runs"] if r["variant"] == v["name"]]
        if v["name"] != "baseline" and rows:
            arms[v["name"]] = seeds.runs_by_seed(rows, step, key)
    arms = {n: a for n, a in arms.items() if a}
    read = seeds.read(arms)
    pairs = [(a, b) for a, b in primary if a in arms and b in arms]
    contrasts = [seeds.contrast(read, a, b) for a, b in pairs]
    if key == doc["primary"]["key"]:
        contrasts = [dict(c, primary=True) for c in seeds.holm(contrasts)]
    return {"arms": arms, "failed": read["failed"], "split": read["split"], "sd": read["sd"], "df": read["df"],
            "contrasts": {f"{c['a']}-{c['b']}": c for c in contrasts}}


def best(heads, measure):
    h = max(heads, key=lambda h: (h[measure], -h["layer"], -h["head"]))
    return {"layer": h["layer"], "head": h["head"], "share": h[measure]}


def heads_facts(block):
    return {m["variant"]: {"previous": best(m["heads"], "previous"), "punctuation": best(m["heads"], "punctuation"),
                           "n_head": m["n_head"], "blind": m["prefix_average"]} for m in block["models"]}


def arms_facts(doc, base):
    check_pairs_with_baseline(doc, base)
    p = doc["primary"]
    primary = [tuple(x) for x in p["pairs"]]
    readings = {key: reading(doc, base, key, p["step"], primary) for key in KEYS}
    runs = {}
    for r in doc["runs"]:
        runs.setdefault(r["variant"], []).append(r["seed"])
    main = readings[p["key"]]["contrasts"]
    missing_by_arm = {}
    for arm, seed in doc["missing"]:
        missing_by_arm.setdefault(arm, []).append(seed)
    return {"primary": p, "runs": runs, "missing": doc["missing"], "missing_by_arm": missing_by_arm, "readings": readings,
            "said": {name: seeds.say(c) for name, c in main.items()}, "heads": heads_facts(doc["heads"]),
            "head_seed": doc["heads"]["seed"]}


def facts(data):
    if KEY not in data:
        return {"rope_arms": None}
    return {"rope_arms": arms_facts(data[KEY], _baseline.baseline_row(data))}
