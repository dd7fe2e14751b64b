"""Facts of our model's attention (data/real-model/attention/attention.json, `python -m lab attention`):
facts.attention, or None before its first export. Lesson c3/l1's 真模型 reads only these.

A head is *named* for a measure by one rule, written here once: it puts at least NAME_SHARE of its
weight on that kind of position, averaged over every query of the book's validation text, and at
least NAME_RATIO times what the content-blind prefix average puts there on the same queries.
"""
KEY = "real-model/attention/attention"
NAME_SHARE = 0.3  # at least this share of the head's weight, on average ...
NAME_RATIO = 5.0  # ... and this many times the prefix average's share
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


def strongest(heads, m):
    """The head with the largest measure m (the first of a tie)."""
    return max(heads, key=lambda h: (h[m], -h["layer"], -h["head"]))


def attention_facts(doc):
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
    }


def facts(data):
    return {"attention": attention_facts(data[KEY]) if KEY in data else None}
