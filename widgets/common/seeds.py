"""The seeds protocol: when a difference between two arms of our model's runs counts as measured.

Version 2 (AUTHORING.md states it once; C3 第 1 课 explains it to students), for one loss at one
evaluation step over every arm of one experiment ({arm: {seed: loss}}):

1. Health check, declared before the runs (`health`): a run more than T above its arm's median is
   a failed run, T = max(FAIL_SCALES x the pooled robust scale of the residuals to each arm's
   median, FAIL_FLOOR). Failed runs are listed and counted per arm and left out of the reading. An
   arm with a run more than T *below* its median, or with half its runs or more failed, is split:
   nothing is read from it until it has more seeds.
2. Noise (`pooled`): the pooled within-arm standard deviation of the healthy runs, with its
   degrees of freedom.
3. Reading (`contrast`): gap = mean_A - mean_B over healthy runs, half-width
   h = t(0.975, df) * s * sqrt(1/n_A + 1/n_B); measured when |gap| > h and both arms have two or
   more healthy runs. A one-seed gap beyond h awaits a second seed; nothing rests on one seed.
4. Primary comparisons, declared before training: Holm's correction over them (`holm`); every
   other reading is description.

The old rule (the baseline's max - min over its seeds; every paired difference one sign and their
mean beyond it) went with v2: one failed run set that range for the whole course. seeds_sim.py keeps
it, only to show students what it misses.

Standard library only, in the subset every runtime runs (CPython, Pyodide, MicroPython): the
t distribution is computed in closed form for whole degrees of freedom (math.atan/sin/cos).
"""
import math

from numfmt import num


# ---- reading an export ----------------------------------------------------------------------


def at_step(history, step, key):
    """The value of `key` ("train_loss" or "val_loss") at evaluation `step` of one run's history, or None."""
    for row in history:
        if row["step"] == step:
            return row[key]
    return None


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


# ---- the rule --------------------------------------------------------------------------------

FAIL_SCALES = 6  # a failed run sits this many robust scales above its arm's median ...
FAIL_FLOOR = 0.1  # ... and at least this many nats above it
ROBUST = 1.4826  # MAD -> standard deviation for normal noise
ALPHA = 0.05  # two-sided level of every interval and test


def median(xs):
    """median([3, 1, 2]) -> 2; median([1, 2, 3, 4]) -> 2.5"""
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2


def health(arms, floor=FAIL_FLOOR):
    """The health check over an experiment's arms ({arm: {seed: loss}}).

    Returns {"threshold" T, "scale" (the pooled robust scale, None when no arm has 3 runs),
    "failed" {arm: {seed: loss}}, "split" {arm: "low" | "half_failed"}, "healthy" {arm: {seed: loss}}}.

    health({"a": {0: 5.0, 1: 5.01, 2: 5.02, 3: 5.6}})["failed"] -> {"a": {3: 5.6}}
    """
    medians = {n: median(a.values()) for n, a in arms.items() if a}
    residuals = [v - medians[n] for n, a in arms.items() if len(a) >= 3 for v in a.values()]
    scale = ROBUST * median([abs(r) for r in residuals]) if residuals else None
    threshold = max(FAIL_SCALES * scale, floor) if scale is not None else floor
    failed, split, healthy = {}, {}, {}
    for n, a in arms.items():
        failed[n] = {s: v for s, v in a.items() if v - medians[n] > threshold}
        healthy[n] = {s: v for s, v in a.items() if s not in failed[n]}
        if failed[n] and 2 * len(failed[n]) >= len(a):
            split[n] = "half_failed"
        elif any(v - medians[n] < -threshold for v in a.values()):
            split[n] = "low"
    return {"threshold": threshold, "scale": scale, "failed": failed, "split": split, "healthy": healthy}


def pooled(healthy):
    """(s, df): the pooled within-arm SD of the healthy runs of every arm with two or more,
    df = sum(n_k - 1); (None, 0) when no arm has two. pooled({"a": {0: 1.0, 1: 3.0}}) -> (1.414..., 1)"""
    ss, df = 0.0, 0
    for a in healthy.values():
        v = list(a.values())
        if len(v) > 1:
            m = sum(v) / len(v)
            ss += sum((x - m) ** 2 for x in v)
            df += len(v) - 1
    return ((ss / df) ** 0.5 if df else None), df


def t_within(t, df):
    """P(|T| < t) for Student's t with a whole number df >= 1, in closed form
    (Abramowitz & Stegun 26.7.3-4). t_within(12.706, 1) -> 0.95 (to 4 decimals)"""
    t = abs(t)
    theta = math.atan(t / math.sqrt(df))
    s, c2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 0:  # sin(th) * (1 + c2/2 + 1*3/(2*4) c2^2 + ... up to c2^((df-2)/2))
        term, total = 1.0, 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return s * total
    if df == 1:
        return 2 * theta / math.pi
    term, total = 1.0, 1.0  # (2/pi)(th + sin cos (1 + 2/3 c2 + 2*4/(3*5) c2^2 + ...))
    for k in range(1, (df - 1) // 2):
        term *= c2 * (2 * k) / (2 * k + 1)
        total += term
    return 2 / math.pi * (theta + s * math.cos(theta) * total)


_QUANTILES = {}  # (df, level) -> t: a simulation asks for the same few thousands of times


def t_quantile(df, level=1 - ALPHA):
    """The t such that P(|T| < t) = level (two-sided), by bisection. t_quantile(14) -> 2.1448 (4 decimals)"""
    key = (df, level)
    if key not in _QUANTILES:
        _QUANTILES[key] = _bisect_quantile(df, level)
    return _QUANTILES[key]


def _bisect_quantile(df, level):
    lo, hi = 0.0, 1.0
    while t_within(hi, df) < level:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        if t_within(mid, df) < level:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def read(arms, floor=FAIL_FLOOR):
    """One experiment's reading at one step and loss: the health check and the pooled noise.
    arms: {arm: {seed: loss}}. Returns health()'s dict with "sd", "df", "runs" {arm: n trained}."""
    out = health(arms, floor)
    usable = {n: a for n, a in out["healthy"].items() if n not in out["split"]}
    out["sd"], out["df"] = pooled(usable)
    out["runs"] = {n: len(a) for n, a in arms.items()}
    return out


def contrast(reading, a, b):
    """Arm a against arm b in a reading (read()): gap = mean_a - mean_b over healthy runs, its 95 %
    half-width, and what may be said.

    "status": "measured" (|gap| > h, two or more healthy runs in each arm), "within" (|gap| <= h),
    "one_seed" (|gap| > h but an arm has one healthy run: awaits a second seed), "split" (an arm
    is split: not read) or "none" (no noise estimate, or an arm without a healthy run).
    Also "p" (two-sided, from the t distribution; None where not computed) and "direction"
    (+1 a higher, -1 lower, 0 unless measured).
    """
    A, B = reading["healthy"].get(a, {}), reading["healthy"].get(b, {})
    n_a, n_b = len(A), len(B)
    failed_a, failed_b = reading["failed"].get(a, {}), reading["failed"].get(b, {})
    out = {"a": a, "b": b, "n_a": n_a, "n_b": n_b, "failed_a": failed_a, "failed_b": failed_b,
           "sd": reading["sd"], "df": reading["df"], "gap": None, "half_width": None, "p": None,
           "mean_a": sum(A.values()) / n_a if n_a else None, "mean_b": sum(B.values()) / n_b if n_b else None,
           "split": [n for n in (a, b) if n in reading["split"]], "direction": 0, "measured": False}
    if n_a and n_b:
        out["gap"] = out["mean_a"] - out["mean_b"]
    if out["split"]:
        out["status"] = "split"
    elif not (n_a and n_b) or reading["sd"] is None or reading["df"] < 1:
        out["status"] = "none"
    else:
        se = reading["sd"] * (1 / n_a + 1 / n_b) ** 0.5
        out["half_width"] = t_quantile(reading["df"]) * se
        out["p"] = 1 - t_within(out["gap"] / se, reading["df"]) if se > 0 else 0.0
        beyond = abs(out["gap"]) > out["half_width"]
        if beyond and min(n_a, n_b) >= 2:
            out["status"], out["measured"] = "measured", True
            out["direction"] = 1 if out["gap"] > 0 else -1
        else:
            out["status"] = "one_seed" if beyond else "within"
    return out


def holm(contrasts, alpha=ALPHA):
    """Holm's step-down correction over an experiment's primary contrasts (declared before its
    runs): each keeps "measured" only if it survives; adds "holm" (True / False) and returns the
    list. A contrast that was not measured stays unmeasured."""
    order = sorted(range(len(contrasts)), key=lambda i: contrasts[i]["p"] if contrasts[i]["p"] is not None else 2)
    m, going = len(contrasts), True
    out = [dict(c) for c in contrasts]
    for rank, i in enumerate(order):
        c = out[i]
        going = going and c["measured"] and c["p"] is not None and c["p"] <= alpha / (m - rank)
        c["holm"] = going
        if not going:
            c["measured"], c["direction"] = False, 0
            if c["status"] == "measured":
                c["status"] = "holm"
    return out


def seeds_counts(c):
    """「4、5 个种子」 (healthy runs in a and b), or 「各 4 个种子」 when equal."""
    return f"各 {c['n_a']} 个种子" if c["n_a"] == c["n_b"] else f"{c['n_a']}、{c['n_b']} 个种子"


def gap_text(c, fmt):
    """「高 0.060 ± 0.021」: a's side against b, the gap and its half-width; 「差 0.000 ± ...」 when
    the gap rounds to nothing (no side to name)."""
    shown = fmt(abs(c["gap"]))
    side = "差" if not shown.strip("0.") else ("高" if c["gap"] > 0 else "低")
    return f"{side} {shown} ± {fmt(c['half_width'])}" if c["half_width"] is not None else f"{side} {shown}"


VERDICT = {"measured": "测到", "within": "在误差之内，分不出", "one_seed": "一个种子，待第二个种子确认",
           "holm": "单看超出误差，但按事先约定的几项主比较一起校正（Holm）后不算测到"}


def say(c, digits=3, names=None):
    """How every page says a v2 contrast: 「高 0.060 ± 0.021（各 4 个种子）：测到」. names: {arm: how the
    page names it}, for a split arm (the arm's key otherwise)."""
    def fmt(x):
        return num(x, digits)
    if c["status"] == "split":
        return f"{'、'.join((names or {}).get(n, n) for n in c['split'])} 的种子分成了两拨，暂不读"
    if c["status"] == "none":
        if c["gap"] is None:
            return "没有健康的训练可比，不读"
        return f"{gap_text(c, fmt)}（{seeds_counts(c)}），没有可估计的噪声，不读"
    return f"{gap_text(c, fmt)}（{seeds_counts(c)}）：{VERDICT[c['status']]}"
