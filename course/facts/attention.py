"""Facts of our model's attention (data/real-model/attention/attention.json, `python -m lab attention`):
facts.attention, or None before its first export. Lesson c3/l1's 真模型 reads only these.

A head is *named* for a measure by one rule, written here once: it puts at least NAME_SHARE of its
weight on that kind of position, averaged over every query of the book's validation text, and at
least NAME_RATIO times what the content-blind prefix average puts there on the same queries.
"""
from course.widgets import common_module

numfmt = common_module("numfmt")  # first: seeds imports it
seeds = common_module("seeds")  # the seeds protocol, the one rule every lesson reads runs by


KEY = "real-model/attention/attention"
CARD = "real-model/model-card"  # the baseline's init scales, for what a score is before training
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


def mean(xs):
    return sum(xs) / len(xs)


def control_facts(doc):
    """The control (attention replaced by the prefix average) against the baseline, by the seeds
    protocol: at the end and at every evaluation, on validation and training loss. None without one."""
    c = doc.get("control")
    if not c:
        return None
    base, ctl = c["baseline"], c["control"]
    final = seeds.compare(seeds.by_seed(base), seeds.by_seed(ctl), seeds.band(base["val_losses"]))
    final_train = seeds.compare(seeds.by_seed(base, "train_losses"), seeds.by_seed(ctl, "train_losses"),
                                seeds.band(base["train_losses"]))
    steps = []
    for row in ctl["histories"][0]:
        step = row["step"]
        per = {}
        for key in ("val_loss", "train_loss"):
            per[key] = seeds.compare(seeds.history_by_seed(base, step, key), seeds.history_by_seed(ctl, step, key),
                                     seeds.band_at(base["histories"], step, key))
        steps.append({"step": step, "tokens": row["tokens"], "val": per["val_loss"], "train": per["train_loss"]})
    paired = [x for s_, x in zip(base["seeds"], base["val_losses"]) if s_ in ctl["seeds"]]
    # A baseline seed far from the rest (more than twice their spread away) sets the band's width:
    # the page says so, and what the band of the others would be, without changing the rule.
    ranked = sorted(zip(base["val_losses"], base["seeds"]))
    far = None
    if len(ranked) >= 4:
        for x, rest in ((ranked[-1], ranked[:-1]), (ranked[0], ranked[1:])):
            spread = rest[-1][0] - rest[0][0]
            if min(abs(x[0] - rest[0][0]), abs(x[0] - rest[-1][0])) > 2 * spread:
                far = {"seed": x[1], "loss": x[0], "others": len(rest), "others_band": spread,
                       "paired": x[1] in ctl["seeds"]}
                break
    pairs = seeds.paired(seeds.by_seed(base), seeds.by_seed(ctl))
    if far:
        far["control_min"], far["control_max"] = min(ctl["val_losses"]), max(ctl["val_losses"])
    return {
        "rule": c["rule"], "seeds": len(ctl["seeds"]), "base_seeds": len(base["seeds"]), "pairs": pairs,
        "seed_list": ctl["seeds"],
        "params": ctl["params"], "base_params": base["params"], "d_ff": ctl["model_config"]["d_ff"],
        "base_d_ff": base["model_config"]["d_ff"], "final": final, "final_train": final_train,
        "control_mean": mean(ctl["val_losses"]), "baseline_paired_mean": mean(paired), "steps": steps,
        "worse_from": next((r["step"] for r in steps if r["val"]["measured"] and r["val"]["direction"] > 0), None),
        "better_at": [r["step"] for r in steps if r["val"]["measured"] and r["val"]["direction"] < 0],
        "ahead_at": [r["step"] for r in steps if r["val"]["same_sign"] and r["val"]["gap"] < 0],
        "minutes": sum(ctl["wall_seconds"]) / 60,
        "far": far,
        "say": seeds.verdict,
    }


def typical_query(doc, layer, head):
    """In the first passage, the last query whose largest weight in (layer, head) is on the token
    right before it: the widget opens there, on what the head usually does (None when no query does)."""
    rows = doc["passages"][0]["weights"][layer - 1][head - 1]
    hits = [t for t, row in enumerate(rows) if t >= 1 and row.index(max(row)) == t - 1]
    return hits[-1] if hits else None


def attention_facts(doc, card=None):
    ms = doc["measures"]
    heads, blind = ms["heads"], ms["prefix_average"]
    by_measure, names = named_heads(heads, blind)
    labels = dict(NAMED)
    table = [{**h, "name": labels[names[(h["layer"], h["head"])]] if names[(h["layer"], h["head"])] else ""}
             for h in heads]
    best = {m: strongest(heads, m) for m in ("previous", "same_token", "induction", "punctuation", "first", "self")}
    spread = {m: {"min": min(h[m] for h in heads), "max": max(h[m] for h in heads)} for m in blind}
    unnamed = [h for h in table if not h["name"]]
    return {
        "data": doc,
        "model": doc["model"], "model_config": doc["model_config"], "corpus": doc["corpus"],
        "command": doc["command"], "date": doc["date"],
        "windows": ms["windows"], "queries": ms["queries"],
        "blind": blind, "heads": table, "best": best, "spread": spread,
        "named": by_measure, "named_count": sum(1 for h in table if h["name"]), "unnamed": unnamed,
        "rule": {"share": NAME_SHARE, "ratio": NAME_RATIO},
        "passages": [{"text": p["text"], "tokens": len(p["tokens"])} for p in doc["passages"]],
        "selection": doc["selection"],
        "control": control_facts(doc),
        "seeds_phrase": seeds.seeds_phrase,
        "near": near_average(heads, blind), "near_rule": {"share": NEAR_SHARE, "distance": NEAR_DISTANCE},
        "in_passages": passage_queries(doc, best["previous"]["layer"], best["previous"]["head"]),
        "init": init_scores(card, doc["model_config"]["head_dim"]) if card else None,
        "open_query": typical_query(doc, best["previous"]["layer"], best["previous"]["head"]),
    }


def facts(data):
    return {"attention": attention_facts(data[KEY], data.get(CARD)) if KEY in data else None}
