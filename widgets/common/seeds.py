"""The seeds protocol: when a difference between two arms of our model's runs counts as measured.

One rule, used by every lesson's sentences and widgets (AUTHORING.md explains it once, and the
page that first uses it explains it to students):

- The band is the baseline's spread over its seeds (max - min) at the same evaluation step, of
  the same loss (training or validation): how far two runs that differ only in their seed land apart.
- A variant is compared with the baseline seed for seed (same seed = same batches and, where
  every module has the baseline's shape, the same initial weights: one random stream draws them
  in module order, so one differently shaped module changes all that follow): one paired
  difference per shared seed.
- With two or more pairs, a difference counts as measured when every paired difference has the
  same sign and their mean is larger than the band.
- With one pair, it counts only when the gap is at least ONE_SEED_FACTOR times the band.
- Otherwise the comparison is unresolved: no direction is read from it.

Standard library only, in the subset every runtime runs (CPython, Pyodide, MicroPython).
"""
from numfmt import num

ONE_SEED_FACTOR = 5  # a one-seed gap must be this many bands wide to count
MIN_SEEDS = 3  # seeds per arm for a comparison a lesson's thesis rests on, unless the one-seed rule holds


def band(values):
    """max - min over the seeds; None with fewer than two. band([5.0, 5.2, 5.1]) -> 0.2 (to float error)"""
    values = list(values)
    return max(values) - min(values) if len(values) > 1 else None


def at_step(history, step, key):
    """The value of `key` ("train_loss" or "val_loss") at evaluation `step` of one run's history, or None."""
    for row in history:
        if row["step"] == step:
            return row[key]
    return None


def band_at(histories, step, key):
    """The band of `key` over the runs' histories at `step` (runs that did not reach it left out)."""
    values = [v for v in (at_step(h, step, key) for h in histories) if v is not None]
    return band(values)


def paired(base, other):
    """other - base for every seed both arms ran, in seed order. base, other: {seed: loss}.

    paired({0: 5.0, 1: 5.1}, {0: 5.3, 1: 5.35, 2: 5.0}) -> [(0, 0.3), (1, 0.25)] (to float error)
    """
    return [(s, other[s] - base[s]) for s in sorted(base) if s in other]


def compare(base, other, width):
    """Read other against base by the protocol. base, other: {seed: loss}; width: the baseline's
    band at that step (None when it is unknown: then nothing counts).

    Returns {"pairs", "gap" (mean of other - base), "diffs", "band", "times" (|gap| / band),
    "same_sign", "rule" ("paired" | "one_seed" | "none"), "measured", "direction" (+1 other is
    higher, -1 lower, 0 unresolved)}.

    compare({0: 5.0, 1: 5.1, 2: 5.0}, {0: 5.5, 1: 5.6, 2: 5.4}, 0.1)["direction"] -> 1
    compare({0: 5.0}, {0: 5.2}, 0.1)["measured"] -> False (one seed, only 2 bands)
    """
    pairs = paired(base, other)
    diffs = [d for _, d in pairs]
    n = len(diffs)
    gap = sum(diffs) / n if n else 0.0
    same_sign = n > 0 and (all(d > 0 for d in diffs) or all(d < 0 for d in diffs))
    if width is None or n == 0:
        rule, measured = "none", False
    elif n == 1:
        rule, measured = "one_seed", abs(gap) >= ONE_SEED_FACTOR * width
    else:
        rule, measured = "paired", same_sign and abs(gap) > width
    direction = (1 if gap > 0 else -1) if measured else 0
    times = abs(gap) / width if width else None
    return {"pairs": n, "gap": gap, "diffs": diffs, "band": width, "times": times, "same_sign": same_sign,
            "rule": rule, "measured": measured, "direction": direction}


def by_seed(variant, key="val_losses"):
    """{seed: final loss} of an export's variant row (seeds, val_losses or train_losses)."""
    return dict(zip(variant["seeds"], variant[key]))


def history_by_seed(variant, step, key):
    """{seed: loss at `step`} of an export's variant row, from its histories (seeds that reached it)."""
    out = {}
    for seed, history in zip(variant["seeds"], variant["histories"]):
        value = at_step(history, step, key)
        if value is not None:
            out[seed] = value
    return out


def runs_by_seed(rows, step, key):
    """{seed: loss at `step`} over exported run rows (each with "seed" and "history"), seeds that reached it.

    runs_by_seed([{"seed": 1, "history": [{"step": 2, "val_loss": 5.0}]}], 2, "val_loss") -> {1: 5.0}
    """
    out = {}
    for r in rows:
        value = at_step(r["history"], step, key)
        if value is not None:
            out[r["seed"]] = value
    return out


def seeds_phrase(n):
    """How a page says how many runs stand behind a figure. seeds_phrase(1) -> '1 个种子'"""
    return f"{n} 个种子"


def times_text(times):
    """A gap in bands after 的, one decimal; below 0.05 it would print a bare "0.0", which reads as no gap.
    times_text(2.04) -> ' 2.0 倍'; times_text(0.032) -> '不到 0.1 倍'; times_text(0.97) -> ' 0.97 倍'
    """
    if times < 0.05:
        return "不到 0.1 倍"
    # Near the paired rule's threshold one decimal would print "1.0" on both sides of it.
    return f" {num(times, 2 if 0.95 <= times < 1.05 else 1)} 倍"


def verdict_phrase(c, fmt):
    """The protocol's reading of compare()'s result in words; fmt formats a loss difference.

    verdict_phrase(compare({0: 5.0, 1: 5.1}, {0: 5.5, 1: 5.6}, 0.1), lambda x: f"{x:.2f}")
      -> '2 个种子配对，每一对都高，平均高 0.50，是基线种子带 0.10 的 5.0 倍：算测到了'
    """
    if c["rule"] == "none":
        return f"{seeds_phrase(c['pairs'])}，没有可比的种子带：不读方向"
    shown = fmt(abs(c["gap"]))
    # A gap that rounds to zero has no side to name: "低 0.000" would read a direction into nothing.
    size = f"差 {shown}" if not shown.strip("0.") else f"{'高' if c['gap'] > 0 else '低'} {shown}"
    times = f"基线种子带 {fmt(c['band'])} 的{times_text(c['times'])}" if c["band"] else f"基线种子带 {fmt(c['band'])}"
    if c["rule"] == "one_seed":
        head = f"只有 1 个种子，{size}，是{times}"
        if c["measured"]:
            return f"{head}（至少 {ONE_SEED_FACTOR} 倍）：一个种子也够，算测到了"
        return f"{head}，不到单种子所需的 {ONE_SEED_FACTOR} 倍：分不出高下"
    if c["measured"]:
        return f"{seeds_phrase(c['pairs'])}配对，每一对都{'高' if c['gap'] > 0 else '低'}，平均{size}，是{times}：算测到了"
    if not c["same_sign"]:
        return f"{seeds_phrase(c['pairs'])}配对，有的高有的低（平均{size}）：分不出高下"
    return f"{seeds_phrase(c['pairs'])}配对，方向一致但平均只{size}，没有超出基线种子带 {fmt(c['band'])}：分不出高下"


def verdict_brief(c, fmt):
    """verdict_phrase in a few words, for a page that has stated the rule once and reads many pairs.
    verdict_brief(compare({0: 5.0, 1: 5.1}, {0: 5.5, 1: 5.6}, 0.1), lambda x: f"{x:.2f}")
      -> '高 0.50（2 个种子，每一对都高，种子带的 5.0 倍：测到）'
    """
    if c["rule"] == "none":
        return f"{seeds_phrase(c['pairs'])}，没有可比的种子带"
    shown = fmt(abs(c["gap"]))
    side = "高" if c["gap"] > 0 else "低"
    size = f"差 {shown}" if not shown.strip("0.") else f"{side} {shown}"
    bands = "种子带的" + times_text(c["times"])  # 第 1 课's wording; 带宽 alone reads as bandwidth
    if c["rule"] == "paired" and not c["same_sign"]:  # no side: the pairs disagree
        return f"平均差 {'+' if c['gap'] > 0 else '−' if c['gap'] < 0 else ''}{shown}（{seeds_phrase(c['pairs'])}，有的高有的低：分不出）"
    agree = f"，每一对都{side}" if c["pairs"] > 1 and c["same_sign"] else ""
    return f"{size}（{seeds_phrase(c['pairs'])}{agree}，{bands}：{'测到' if c['measured'] else '分不出'}）"


def verdict(c, digits=3):
    """verdict_phrase with losses shown to `digits` decimals: how the lessons' fact modules say it."""
    return verdict_phrase(c, lambda x: num(x, digits))


def brief(c, digits=3):
    """verdict_brief with losses shown to `digits` decimals."""
    return verdict_brief(c, lambda x: num(x, digits))
