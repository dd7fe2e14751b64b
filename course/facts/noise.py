"""Facts of the noise floor (C14 第 1 课): how far runs that differ only in their seed land apart,
read by seeds protocol v2 (widgets/common/seeds.py) over every export that trained an arm more
than once: facts.noise, or None before the FFN experiment's export.

The baseline arm is read only through _baseline.py (ablation.json's seeds plus baseline-seeds.json's
later ones), so every figure here follows the seeds as they are added: which run fails is found by
v2's health check, never assumed. Three experiments have arms of several seeds, each read over
all of its own arms at its last evaluation:

    ffn        ablation.json: baseline, linear_ffn, no_ffn, attn_only_12l (C4 第 1 课)
    attention  attention.json's content-blind control beside the baseline (C3 第 1 课)
    gating     gating.json and gating/seeds.json: GELU, Bilinear, ReLU beside the baseline and
               the linear FFN (C4 第 4 课)

Each lesson's primary comparisons (LESSONS) are those its own fact module declares (PRIMARY, after
the fact: the runs predate v2), read here the same way and Holm-corrected within the lesson;
tests/build/test_lesson_noise.py checks that the two lists agree.
"""
import math

from course.widgets import common_module

from . import _baseline, attention, ffn, gating

numfmt = common_module("numfmt")  # first: seeds imports it
seeds = common_module("seeds")
common_module("rng")  # before seeds_sim, which imports it (and seeds)
seeds_sim = common_module("seeds_sim")  # the old range rule lives there now, to show what it misses

ABLATION = _baseline.ABLATION
ATTENTION = "real-model/attention/attention"
GATING = "real-model/gating/gating"
GATING_SEEDS = "real-model/gating/seeds"
GATING_ARMS = "real-model/gating/arms"
SEED_PAGE = "seed-page"
PAPERS = "papers"
KEYS = ("val_loss", "train_loss")
BASE = "baseline"
NAMES = {"baseline": "基线", "linear_ffn": "线性 FFN", "no_ffn": "去掉 FFN", "attn_only_12l": "12 层纯注意力",
         "control": "前缀平均注意力", "gelu_ffn": "GELU", "bilinear_ffn": "Bilinear", "relu_ffn": "ReLU",
         "silu_ffn": "SiLU"}
EXPERIMENTS = ("ffn", "attention", "gating")
EXPERIMENT_NAMES = {"ffn": "FFN 实验", "attention": "注意力对照", "gating": "门控实验"}
# Each lesson's primary comparisons (a - b on validation loss at the last evaluation), read from the
# PRIMARY its fact module declares (one source): course/facts/attention.py, ffn.py, gating.py.
LESSONS = (
    {"lesson": "c3/l1", "experiment": "attention", "pairs": tuple((p["a"], p["b"]) for p in attention.PRIMARY)},
    {"lesson": "c4/l1", "experiment": "ffn", "pairs": tuple(ffn.PRIMARY)},
    {"lesson": "c4/l4", "experiment": "gating", "pairs": tuple(gating.PRIMARY)},
)
PRIMARY_KEY = "val_loss"
RANGE_NS = (3, 5, 10)  # ⑥: the expected range of this many normal draws, in standard deviations
WINDOW = 10  # the per-step chart averages this many optimizer steps into one point
FAILED_RUN = "real-model/attention/failed-run"  # the failed baseline run's attention head measures
V2_DATE = "2026-12-06"  # v2 committed to widgets/common/seeds.py (dfb283f); seeds 0-4 trained before it
DECLARED_SEEDS = (6, 7)  # the first runs whose test was declared before they ended (see the lesson's ④)
# The baseline when the test was declared (commit 1f45a1e: seeds 0-5 exported, seed 4 failed).
DECLARED_AT = {"trained": 6, "failed": 1}
SELF_HIGH = 0.3  # a head that puts at least this share of its weight on the query itself
REPRODUCED = 0.01  # a rerun whose evaluations differ by more than this is not drawn as the failed run
LEVEL = 0.95  # the failure rate's exact (Clopper-Pearson) interval


def mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs) if xs else None


def sd(xs):
    """The sample standard deviation (n - 1), None below two values."""
    xs = list(xs)
    if len(xs) < 2:
        return None
    m = mean(xs)
    return (sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5


def spread(xs):
    """max - min, None below two values."""
    xs = list(xs)
    return max(xs) - min(xs) if len(xs) > 1 else None


def at(history, step, key):
    return next((row[key] for row in history if row["step"] == step), None)


def by_seed(pairs, step, key):
    """{seed: `key` at `step`} over (seed, history) pairs, runs that reached the step."""
    out = {}
    for seed, history in pairs:
        value = at(history, step, key)
        if value is not None:
            out[seed] = value
    return out


def row_pairs(row):
    """(seed, history) of an export's variant row (seeds, histories)."""
    return list(zip(row["seeds"], row["histories"]))


def experiments(data):
    """{experiment: {arm: [(seed, history)]}} for every experiment exported so far."""
    ab = _baseline.ablation(data)
    variants = {v["name"]: v for v in ab["variants"]}
    base = row_pairs(variants[BASE])
    out = {"ffn": {n: row_pairs(v) for n, v in variants.items()}}
    if ATTENTION in data:
        out["attention"] = {BASE: base, "control": row_pairs(data[ATTENTION]["control"]["control"])}
    if GATING in data:
        rows = list(data[GATING]["runs"]) + [r for k in (GATING_SEEDS, GATING_ARMS) if k in data
                                             for r in data[k]["seed_runs"]]
        arms = {BASE: base}
        for r in rows:
            if r["name"] != BASE:
                arms.setdefault(r["name"], []).append((r["seed"], r["history"]))
        for name in arms:
            arms[name] = sorted(arms[name], key=lambda p: p[0])
        if "linear_ffn" in variants:
            arms["linear_ffn"] = row_pairs(variants["linear_ffn"])
        out["gating"] = arms
    return out


def last_step(arms):
    """The last evaluation the baseline's runs share."""
    return min(max(row["step"] for row in h) for _, h in arms[BASE])


def read(arms, step, key):
    """v2 over every arm at one step and loss: seeds.read's dict."""
    losses = {n: by_seed(pairs, step, key) for n, pairs in arms.items()}
    return seeds.read({n: a for n, a in losses.items() if a})


def pooled_summary(arms, step):
    """Per loss: the pooled SD of the healthy runs over every arm, its df, the threshold, and per
    arm how many runs it trained, how many are healthy and which failed."""
    out = {}
    failed = read(arms, step, PRIMARY_KEY)["failed"]  # a run's verdict, on the loss the course reads
    for key in KEYS:
        r = read(arms, step, key)
        healthy = {n: {sd_: v for sd_, v in by_seed(arms[n], step, key).items() if sd_ not in failed.get(n, {})}
                   for n in arms if n in r["runs"]}
        s_, df = seeds.pooled(healthy)
        rows = [{"arm": n, "name": NAMES.get(n, n), "trained": r["runs"][n], "healthy": len(healthy[n]),
                 "failed": sorted(failed.get(n, {})), "sd": sd(healthy[n].values())}
                for n in arms if n in r["runs"]]
        out[key] = {"sd": s_, "df": df, "threshold": r["threshold"], "scale": r["scale"],
                    "arms": rows, "runs": sum(x["trained"] for x in rows),
                    "failed": sum(len(x["failed"]) for x in rows), "split": sorted(r["split"])}
    return out


def expected_range(n, lo=-9.0, hi=9.0, steps=18000):
    """E[max - min] of n independent standard normal draws, in standard deviations:
    the integral of 1 - Phi(x)^n - (1 - Phi(x))^n over x (midpoint rule). expected_range(2) -> 1.128 (2/sqrt(pi))"""
    dx = (hi - lo) / steps
    total = 0.0
    for i in range(steps):
        x = lo + (i + 0.5) * dx
        phi = 0.5 * (1 + math.erf(x / math.sqrt(2)))
        total += 1 - phi ** n - (1 - phi) ** n
    return total * dx


def binomial_cdf(k, n, p):
    """P(X <= k) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))


def exact_interval(k, n, level=LEVEL):
    """Clopper-Pearson interval of a rate seen k times in n: (lo, hi), by bisection on the binomial.
    exact_interval(0, 10)[1] -> 0.3085 (to 4 decimals); exact_interval(1, 5) -> (0.0051, 0.7164)"""
    tail = (1 - level) / 2

    def solve(f, target):  # f increasing in p: the p where it reaches target
        lo, hi = 0.0, 1.0
        for _ in range(80):
            mid = (lo + hi) / 2
            if f(mid) < target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2
    low = 0.0 if k == 0 else solve(lambda p: 1 - binomial_cdf(k - 1, n, p), tail)  # P(X >= k) = tail
    high = 1.0 if k == n else solve(lambda p: 1 - binomial_cdf(k, n, p), 1 - tail)  # P(X <= k) = tail
    return low, high


def baseline_runs(data, steps):
    """Every baseline seed in seed order: its losses at each evaluation and where it came from."""
    row = _baseline.baseline_row(data)
    first = set(next(v for v in data[ABLATION]["variants"] if v["name"] == BASE)["seeds"])
    out = []
    for seed, history in sorted(row_pairs(row), key=lambda p: p[0]):
        out.append({"seed": seed, "later": seed not in first,
                    "val": [at(history, s, "val_loss") for s in steps],
                    "train": [at(history, s, "train_loss") for s in steps]})
    return out


def flagged_by_step(arms, steps, key):
    """Per evaluation: the threshold and the baseline's failed seeds there ({seed: residual})."""
    out = []
    for step in steps:
        r = read(arms, step, key)
        base = by_seed(arms[BASE], step, key)
        med = seeds.median(base.values())
        out.append({"step": step, "threshold": r["threshold"],
                    "failed": {s: base[s] - med for s in sorted(r["failed"].get(BASE, {}))}})
    return out


def failed_story(seed, runs, flags, steps, control):
    """What one failed baseline run did over the run: its lag behind the mean of the healthy seeds
    at each evaluation (healthy: not failed at the last evaluation), the first step from which v2
    flags it at every later evaluation ("since"), and where it stands against the content-blind
    control's seeds at each evaluation (on both losses)."""
    mine = next(r for r in runs if r["seed"] == seed)
    healthy = [r for r in runs if r["seed"] not in flags[-1]["failed"]]
    lag = {}
    for key, short in (("val_loss", "val"), ("train_loss", "train")):
        lag[key] = [mine[short][i] - mean(r[short][i] for r in healthy) for i in range(len(steps))]
    flagged = [f["step"] for f in flags if seed in f["failed"]]
    since = None
    for i in range(len(steps) - 1, -1, -1):
        if steps[i] in flagged:
            since = steps[i]
        else:
            break
    before = steps[steps.index(since) - 1] if since and steps.index(since) > 0 else None
    over = [f["failed"][seed] for f in flags if since and f["step"] >= since]  # residual to its arm's median
    out = {"seed": seed, "val": mine["val"][-1], "train": mine["train"][-1], "lag": lag,
           "lag_end": {k: v[-1] for k, v in lag.items()}, "flagged": flagged, "since": since, "before": before,
           "lag_before": lag["val_loss"][steps.index(before)] if before else None,
           "lag_after": [min(lag["val_loss"][steps.index(since):]), max(lag["val_loss"][steps.index(since):])]
           if since else None,
           "residual_range": [min(over), max(over)] if over else None,
           "healthy_mean": {"val_loss": mean(r["val"][-1] for r in healthy),
                            "train_loss": mean(r["train"][-1] for r in healthy)}}
    if control:
        rows = []
        for i, step in enumerate(steps):
            row = {"step": step}
            for key, short in (("val_loss", "val"), ("train_loss", "train")):
                c = by_seed(control, step, key)
                row[key] = {"own": mine[short][i], "min": min(c.values()), "max": max(c.values()), "n": len(c)}
            rows.append(row)
        end = rows[-1]
        out["control"] = {"by_step": rows, "seeds": len(control),
                          "worse_steps": [r["step"] for r in rows if r["val_loss"]["own"] > r["val_loss"]["max"]],
                          "end": end,
                          "end_within": {k: end[k]["min"] <= end[k]["own"] <= end[k]["max"] for k in KEYS},
                          "end_above": {k: end[k]["own"] - end[k]["max"] for k in KEYS},
                          "end_spread": {k: end[k]["max"] - end[k]["min"] for k in KEYS}}
    return out


def growth(runs, key, failed):
    """The baseline's seeds taken in seed order, k = 2 .. all: the old rule's band (max - min of
    all k runs), the healthy ones among them (`failed`: the seeds the page's health check fails, on
    the whole FFN experiment at the last step, so that every table on the page agrees), their SD and
    the half-width h of a comparison with another arm of as many healthy seeds and the same noise
    (t(0.975, n - 1) * s * sqrt(2 / n))."""
    short = "val" if key == "val_loss" else "train"
    out = []
    for k in range(2, len(runs) + 1):
        first = {r["seed"]: r[short][-1] for r in runs[:k]}
        healthy = {sd_: v for sd_, v in first.items() if sd_ not in failed}
        n = len(healthy)
        s = sd(healthy.values())
        h = seeds.t_quantile(n - 1) * s * (2 / n) ** 0.5 if s is not None else None
        out.append({"k": k, "seeds": sorted(first), "band": spread(first.values()), "healthy": n,
                    "failed": sorted(set(first) & set(failed)), "sd": s, "half_width": h})
    return out


def across(exps, steps_of, seed, key=PRIMARY_KEY):
    """One baseline seed in each experiment's reading at its last step: how far above the baseline's
    median it is, the threshold and the margin, the first evaluation from which the check fails it at
    every later one, and the threshold with this run left out (a failed run widens the MAD that
    judges it)."""
    out = []
    for name in EXPERIMENTS:
        arms = exps.get(name)
        if not arms or seed not in dict(arms[BASE]):
            continue
        steps = [row["step"] for row in dict(arms[BASE])[seed]]
        step = steps_of[name]
        r = read(arms, step, key)
        base = by_seed(arms[BASE], step, key)
        res = base[seed] - seeds.median(base.values())
        without = {n: [p for p in pairs if not (n == BASE and p[0] == seed)] for n, pairs in arms.items()}
        since = None
        for st in reversed([x for x in steps if x <= step]):
            if seed not in read(arms, st, key)["failed"].get(BASE, {}):
                break
            since = st
        out.append({"experiment": name, "name": EXPERIMENT_NAMES[name], "residual": res,
                    "threshold": r["threshold"], "margin": res - r["threshold"],
                    "failed": seed in r["failed"].get(BASE, {}), "since": since,
                    "threshold_without": read(without, step, key)["threshold"]})
    return out


def kept_healthy(exps, steps_of, seed, a, b, key=PRIMARY_KEY):
    """Pair a - b in the gating experiment with `seed` of the baseline counted healthy (the other
    failed runs still out): what the reading would be had the check not failed it."""
    arms = exps.get("gating")
    if not arms:
        return None
    r = read(arms, steps_of["gating"], key)
    if seed not in r["failed"].get(BASE, {}):
        return None
    healthy = {n: dict(h) for n, h in r["healthy"].items()}
    healthy[BASE][seed] = r["failed"][BASE][seed]
    sd_, df = seeds.pooled(healthy)
    failed = {n: {k: v for k, v in f.items() if not (n == BASE and k == seed)} for n, f in r["failed"].items()}
    c = seeds.contrast({**r, "healthy": healthy, "failed": failed, "sd": sd_, "df": df}, a, b)
    c["say"] = within_say(c)
    return c


def gelu_rate(pooled, failed_base, trained_base):
    """GELU's failed and trained runs in the gating experiment, and Fisher's test of the baseline's
    failures against GELU's: does SwiGLU fail more often (① asks whether the gap is GELU's or luck)?"""
    row = next((r for r in pooled.get("gating", {}).get("val_loss", {}).get("arms", []) if r["arm"] == "gelu_ffn"), None)
    if not row:
        return None
    k = len(row["failed"])
    return {"failed": k, "trained": row["trained"], "p": fisher_two_sided(failed_base, trained_base, k, row["trained"])}


def margins(arms, steps, key, seed):
    """One baseline seed at every evaluation: how far above its arm's median it is, and the threshold."""
    out = []
    for step in steps:
        base = by_seed(arms[BASE], step, key)
        out.append({"step": step, "residual": base[seed] - seeds.median(base.values()),
                    "threshold": read(arms, step, key)["threshold"]})
    return out


def window_means(values, every=WINDOW):
    """Means of consecutive windows of `every` values (the last one may be shorter)."""
    return [mean(values[i:i + every]) for i in range(0, len(values), every)]


def per_step(data, failed_seeds):
    """The per-step training losses of baseline-seeds.json beside each other, when it holds a failed
    seed's rerun and at least one healthy seed: each series averaged over WINDOW steps, and the
    window from which the failed run stays more than seeds.FAIL_FLOOR above the healthy runs' median
    to the end. None otherwise."""
    rows = {r["seed"]: r for r in _baseline.extra_runs(data)}
    failed = [rows[s] for s in failed_seeds if s in rows]
    healthy = [r for s, r in sorted(rows.items()) if s not in failed_seeds]
    if not failed or not healthy:
        return None
    f = failed[0]
    if f["rerun"] and (f["rerun_max_diff"] or 0.0) > REPRODUCED:
        # the rerun is not the run the page reads: its per-step losses would describe another run
        return {"unreproduced": True, "failed_seed": f["seed"], "rerun_max_diff": f["rerun_max_diff"]}
    length = min(len(r["step_losses"]) for r in [f] + healthy)
    series = [{"seed": r["seed"], "failed": r is f, "values": window_means(r["step_losses"][:length])}
              for r in [f] + healthy]
    med = [seeds.median(s["values"][i] for s in series[1:]) for i in range(len(series[0]["values"]))]
    lag = [series[0]["values"][i] - med[i] for i in range(len(med))]
    start = None
    for i in range(len(lag) - 1, -1, -1):
        if lag[i] > seeds.FAIL_FLOOR:
            start = i
        else:
            break
    first = next((i for i, x in enumerate(lag) if x > seeds.FAIL_FLOOR), None)
    first_end = first
    while first_end is not None and first_end + 1 < len(lag) and lag[first_end + 1] > seeds.FAIL_FLOOR:
        first_end += 1
    return {"first_over": None if first is None else first * WINDOW,
            "first_over_to": None if first is None else (first_end + 1) * WINDOW,
            "unreproduced": False, "every": WINDOW, "steps": length, "failed_seed": f["seed"], "healthy_seeds": [r["seed"] for r in healthy],
            "series": series, "lag": lag, "apart_from": None if start is None else start * WINDOW,
            "lag_end": lag[-1], "rerun": f["rerun"], "rerun_max_diff": f["rerun_max_diff"]}


def curves(runs, steps, failed_seeds, control):
    """The seed-curves widget's data: every baseline seed's validation and training loss at each
    evaluation (a failed one marked), and the content-blind control's seeds beside them."""
    series = []
    for r in runs:
        series.append({"key": "s" + str(r["seed"]), "label": "种子 " + str(r["seed"]),
                       "kind": "failed" if r["seed"] in failed_seeds else "healthy",
                       "points": {"val": [[s, v] for s, v in zip(steps, r["val"])],
                                  "train": [[s, v] for s, v in zip(steps, r["train"])]}})
    for seed, history in control or []:
        series.append({"key": "c" + str(seed), "label": "对照种子 " + str(seed), "kind": "control",
                       "points": {"val": [[s, at(history, s, "val_loss")] for s in steps],
                                  "train": [[s, at(history, s, "train_loss")] for s in steps]}})
    return {"title": "基线的每个种子：每次评估时的损失",
            "x_label": "训练步数",
            "losses": [{"key": "val", "label": "验证损失"}, {"key": "train", "label": "训练损失"}],
            "series": series,
            "kind_labels": {"healthy": "基线：健康的种子", "failed": "基线：健康检查判为失败的种子",
                            "control": "对照：注意力只取前缀平均（每条一个种子）"},
            "caption": "每条线是一次训练，只差随机种子（初始权重和批次顺序）；同一个种子号的基线和对照读的是同样的批次。"}


def per_step_curves(ps):
    """The seed-curves widget's data for the per-step chart (None without per_step)."""
    if not ps or ps["unreproduced"]:
        return None
    return {"title": "每一步的训练损失（每 " + str(ps["every"]) + " 步取平均）",
            "x_label": "训练步数",
            "losses": [{"key": "train", "label": "训练损失"}],
            "series": [{"key": "s" + str(s["seed"]), "label": "种子 " + str(s["seed"]),
                        "kind": "failed" if s["failed"] else "healthy",
                        "points": {"train": [[min((i + 1) * ps["every"], ps["steps"]), v] for i, v in enumerate(s["values"])]}}
                       for s in ps["series"]],
            "kind_labels": {"healthy": "健康的种子", "failed": "失败的种子（重训一次，记下每一步）"},
            "caption": "训练损失每一步只读一个批次，起伏比评估时的大；这里每 " + str(ps["every"]) + " 步取一次平均。"}


def old_rule(baseline, b, a):
    """The old range rule on a - b, its band the baseline's max - min whichever arms are compared
    (seeds_sim.old_rule), with the paired differences by seed and a verdict in words."""
    band = spread(baseline.values())
    out = dict(seeds_sim.old_rule(b, a))
    out["band"] = band
    values = [d for _, d in out["diffs"]]
    if band is not None and values:  # the band of the baseline, not of b, when b is another arm
        if len(values) == 1:
            out["measured"] = abs(out["gap"]) >= seeds_sim.ONE_SEED * band
        else:
            out["measured"] = out["same_sign"] and abs(out["gap"]) > band
        out["direction"] = (1 if out["gap"] > 0 else -1) if out["measured"] else 0
    out["by_seed"] = [{"seed": s, "diff": d} for s, d in out["diffs"]]
    n = out["pairs"]
    if out["measured"]:
        out["say"] = f"{n} 对，每一对同号，平均差 {numfmt.signed(out['gap'], 3)} 超出极差 {numfmt.num(band, 3)}：测到"
    elif not out["same_sign"]:
        out["say"] = f"{n} 对的差有正有负：分不出"
    else:
        out["say"] = (f"{n} 对方向一致，但平均差 {numfmt.signed(out['gap'], 3)} 没有超出极差 "
                      f"{numfmt.num(band, 3)}：分不出")
    return out


def within_say(c):
    """seeds.say, but a gap inside its interval is given with its sign and no side:
    「差 +0.008 ± 0.019（…）：在误差之内，分不出」."""
    if c["status"] != "within":
        return seeds.say(c)
    return (f"差 {numfmt.signed(c['gap'], 3)} ± {numfmt.num(c['half_width'], 3)}（{seeds.seeds_counts(c)}）："
            f"{seeds.VERDICT['within']}")


def primaries(exps, steps_of):
    """Each lesson's primary comparisons, read by v2 in its own experiment and Holm-corrected."""
    out = []
    for entry in LESSONS:
        arms = exps.get(entry["experiment"])
        if not arms:
            continue
        step = steps_of[entry["experiment"]]
        r = read(arms, step, PRIMARY_KEY)
        losses = {n: by_seed(pairs, step, PRIMARY_KEY) for n, pairs in arms.items()}
        # a pair whose arm is not exported yet (declared before its runs) is left out until it is
        cs = seeds.holm([seeds.contrast(r, a, b) for a, b in entry["pairs"] if a in arms and b in arms])
        for c in cs:
            c["say"] = within_say(c)
            c["a_name"], c["b_name"] = NAMES.get(c["a"], c["a"]), NAMES.get(c["b"], c["b"])
            c["old"] = old_rule(losses[BASE], losses[c["b"]], losses[c["a"]])
            A, B = r["healthy"].get(c["a"], {}), r["healthy"].get(c["b"], {})
            c["welch"] = welch(A.values(), B.values()) if len(A) > 1 and len(B) > 1 else None
            c["all_runs"] = no_health(losses, c["a"], c["b"])
            c["two_arm"] = two_arm(losses, c["a"], c["b"])
        out.append({"lesson": entry["lesson"], "experiment": entry["experiment"], "step": step, "contrasts": cs})
    return out


def worked(exps, steps_of, key="val_loss"):
    """⑤'s example: C3 第 1 课's comparison (the content-blind control against the baseline) at its
    last evaluation, step by step: each arm's losses, median and residuals, the robust scale and the
    threshold, the failed runs, the pooled SD, the gap and h; and the old rule on the same runs
    (band, paired differences, its verdict). None without the attention export."""
    arms = exps.get("attention")
    if not arms:
        return None
    step = steps_of["attention"]
    losses = {n: by_seed(pairs, step, key) for n, pairs in arms.items()}
    r = seeds.read(losses)
    medians = {n: seeds.median(a.values()) for n, a in losses.items()}
    residuals = {n: {s: v - medians[n] for s, v in a.items()} for n, a in losses.items()}
    c = seeds.contrast(r, "control", BASE)
    c["say"] = seeds.say(c)
    old = old_rule(losses[BASE], losses[BASE], losses["control"])
    all_res = sorted(abs(x) for n, a in residuals.items() if len(a) >= 3 for x in a.values())
    return {"step": step, "key": key, "losses": losses, "medians": medians, "residuals": residuals,
            "abs_residuals": all_res, "mad": seeds.median(all_res), "scale": r["scale"], "threshold": r["threshold"],
            "six_scales": seeds.FAIL_SCALES * r["scale"], "failed": {n: sorted(f) for n, f in r["failed"].items()},
            "healthy": r["healthy"], "sd": r["sd"], "df": r["df"], "t": seeds.t_quantile(r["df"]) if r["df"] else None,
            "means": {"control": c["mean_a"], BASE: c["mean_b"]}, "contrast": c, "old": old,
            "seeds": sorted(set(s for a in losses.values() for s in a))}


def seed_page(data):
    doc = data.get(SEED_PAGE)
    return dict(doc["noise_floor"]) if doc else None


def raffel(data):
    paper = data[PAPERS].get("raffel2020") if PAPERS in data else None
    if not paper:
        return None
    row = paper["rows"][0]
    return {"runs": paper["baseline_runs"], "within_sd": paper["bold_within_sd"], "glue": row["glue_mean"],
            "glue_sd": row["glue_std"], "superglue": row["superglue_mean"], "superglue_sd": row["superglue_std"]}


def fisher_two_sided(k1, n1, k2, n2):
    """Fisher's exact test on k1 of n1 against k2 of n2: the two-sided p (the sum of every table with
    the same margins no likelier than the one seen). fisher_two_sided(1, 6, 0, 23) -> 0.2069"""
    k, n = k1 + k2, n1 + n2

    def prob(x):
        return math.comb(n1, x) * math.comb(n2, k - x) / math.comb(n, k)
    seen = prob(k1)
    return sum(prob(x) for x in range(max(0, k - n2), min(k, n1) + 1) if prob(x) <= seen * (1 + 1e-9))


def t_quantile_real(df, level=1 - seeds.ALPHA):
    """t(0.975) at a df that need not be whole (Welch's), by linear interpolation between the
    neighbouring whole dfs (enough for three decimals of a half-width)."""
    lo = max(1, int(math.floor(df)))
    if df <= lo:
        return seeds.t_quantile(lo, level)
    a, b = seeds.t_quantile(lo, level), seeds.t_quantile(lo + 1, level)
    return a + (b - a) * (df - lo)


def welch(A, B):
    """Welch's reading of mean(A) - mean(B) (each arm's own SD): {"gap", "half_width", "df", "measured"}."""
    A, B = list(A), list(B)
    va, vb = sd(A) ** 2 / len(A), sd(B) ** 2 / len(B)
    df = (va + vb) ** 2 / (va ** 2 / (len(A) - 1) + vb ** 2 / (len(B) - 1))
    h = t_quantile_real(df) * (va + vb) ** 0.5
    gap = mean(A) - mean(B)
    return {"gap": gap, "half_width": h, "df": df, "measured": abs(gap) > h}


def no_health(losses, a, b):
    """v2's contrast a - b on these two arms with every run kept (no health check): the pooled SD
    of all their runs, the simulator's third reading (seeds_sim.no_health)."""
    usable = {n: losses[n] for n in (a, b) if losses[n]}
    s, df = seeds.pooled(usable)
    reading = {"healthy": usable, "failed": {}, "split": {}, "sd": s, "df": df}
    c = seeds.contrast(reading, a, b)
    c["say"] = seeds.say(c)
    return c


def two_arm(losses, a, b):
    """v2's contrast a - b read on these two arms alone (the exercise's setting)."""
    r = seeds.read({a: losses[a], b: losses[b]})
    c = seeds.contrast(r, a, b)
    c["say"] = seeds.say(c)
    return c


def failed_heads(data, failed_seed):
    """The failed run's attention head measures (failed-run.json) beside seed 0's (attention.json):
    heads near the prefix average (facts.attention's rule), its strongest previous-token and
    punctuation heads, the heads that put most weight on the query itself, the mean distance.
    None without the export or when it measured another seed."""
    other = data.get(FAILED_RUN)
    if not other or ATTENTION not in data or other["export_config"]["seed"] != failed_seed:
        return None
    from . import attention as att
    mine, ours = other["measures"], data[ATTENTION]["measures"]
    blind = mine["prefix_average"]

    def top(heads, m):
        h = max(heads, key=lambda h: h[m])
        return {"layer": h["layer"], "head": h["head"], "share": h[m]}
    selfish = sorted((h for h in mine["heads"] if h["self"] >= SELF_HIGH), key=lambda h: -h["self"])
    return {"seed": failed_seed, "heads": len(mine["heads"]), "seed0": data[ATTENTION]["model"]["seed"],
            "near": len(att.near_average(mine["heads"], blind)),
            "near0": len(att.near_average(ours["heads"], ours["prefix_average"])),
            "previous": top(mine["heads"], "previous"), "punctuation": top(mine["heads"], "punctuation"),
            "previous0": top(ours["heads"], "previous"), "punctuation0": top(ours["heads"], "punctuation"),
            "self_heads": [{"layer": h["layer"], "head": h["head"], "share": h["self"]} for h in selfish],
            "self_layers": sorted(set(h["layer"] for h in selfish)), "self_rule": SELF_HIGH,
            "self_max0": max(h["self"] for h in ours["heads"]),
            "distance": mean(h["distance"] for h in mine["heads"]),
            "distance0": mean(h["distance"] for h in ours["heads"]), "distance_blind": blind["distance"]}


def same_batches(exps, steps_of, seed, key="val_loss"):
    """Where else the failed seed's number trained (its init and batches): per experiment arm other
    than the baseline, its loss at the last step and whether v2 finds it healthy there."""
    out = []
    for name in ("gating", "attention"):
        arms = exps.get(name)
        if not arms:
            continue
        r = read(arms, steps_of[name], key)
        for arm in arms:
            if arm in (BASE, "linear_ffn"):
                continue
            v = by_seed(arms[arm], steps_of[name], key)
            if seed in v:
                out.append({"arm": arm, "name": NAMES.get(arm, arm), "loss": v[seed],
                            "healthy": seed in r["healthy"].get(arm, {})})
    return out


def declared(data, exps, steps_of, primary):
    """The test declared before seeds 6 and 7 ended: both pass the health check at the last step,
    and GELU - SwiGLU stays measured. {"seeds", "present", "healthy", "gelu", "passed"}."""
    have = [s for s in DECLARED_SEEDS if s in dict(exps["ffn"][BASE])]
    out = {"seeds": list(DECLARED_SEEDS), "present": have, "complete": len(have) == len(DECLARED_SEEDS)}
    if have:
        r = read(exps["ffn"], steps_of["ffn"], "val_loss")
        out["healthy"] = [s for s in have if s in r["healthy"][BASE]]
        gate = next((p for p in primary if p["lesson"] == "c4/l4"), None)
        gl = gate["contrasts"][0] if gate else None
        out["gelu"] = gl["say"] if gl else None
        out["passed"] = len(out["healthy"]) == len(have) and bool(gl and gl["measured"] and gl["gap"] > 0)
    return out


def noise_facts(data):
    exps = experiments(data)
    ffn = exps["ffn"]
    last = last_step(ffn)
    steps = [row["step"] for row in ffn[BASE][0][1]]
    runs = baseline_runs(data, steps)
    flags = {key: flagged_by_step(ffn, steps, key) for key in KEYS}
    end = {key: read(ffn, last, key) for key in KEYS}
    failed_val = sorted(end["val_loss"]["failed"].get(BASE, {}))
    control = exps.get("attention", {}).get("control")
    failed = [failed_story(s, runs, flags["val_loss"], steps, control) for s in failed_val]
    healthy = {}
    for key in KEYS:
        # A failed run is a run's verdict (on validation loss, the loss the course reads): both losses
        # describe the same healthy runs.
        everyone = by_seed(ffn[BASE], last, key)
        h = {sd_: v for sd_, v in everyone.items() if sd_ not in failed_val}
        worst = max(everyone.values())
        healthy[key] = {"n": len(h), "seeds": sorted(h), "range": spread(h.values()), "sd": sd(h.values()),
                        "mean": mean(h.values()), "band_all": spread(everyone.values()),
                        "sd_all": sd(everyone.values()), "n_all": len(everyone),
                        "worst_z_all": (worst - mean(everyone.values())) / sd(everyone.values())}
    steps_of = {name: last_step(arms) for name, arms in exps.items()}
    pooled = {name: pooled_summary(arms, steps_of[name]) for name, arms in exps.items()}
    # failures over distinct runs: the baseline's seeds once, every other arm of every experiment once
    trained_base = len(runs)
    failed_base = len(failed_val)
    others = {}
    for name in EXPERIMENTS:
        for row in pooled.get(name, {}).get("val_loss", {}).get("arms", []):
            if row["arm"] != BASE and row["trained"] >= 3:  # the check can flag a run only beside two others
                others[row["arm"]] = row
    other_trained = sum(r["trained"] for r in others.values())
    other_failed = sum(len(r["failed"]) for r in others.values())
    first_seeds = next(v for v in data[ABLATION]["variants"] if v["name"] == BASE)["seeds"]
    sp = seed_page(data)
    ps = per_step(data, failed_val)
    grow = growth(runs, "val_loss", failed_val)
    jump = next((i for i, g in enumerate(grow) if g["failed"]), None)
    primary = primaries(exps, steps_of)
    arm_sds = [a["sd"] for n in EXPERIMENTS if n in pooled for a in pooled[n]["val_loss"]["arms"] if a["sd"] is not None]
    robust = {n: {"scale": pooled[n]["val_loss"]["scale"], "six": seeds.FAIL_SCALES * pooled[n]["val_loss"]["scale"],
                  "ratio": pooled[n]["val_loss"]["scale"] / pooled[n]["val_loss"]["sd"],
                  "floor_decides": pooled[n]["val_loss"]["threshold"] <= seeds.FAIL_FLOOR + 1e-12}
              for n in EXPERIMENTS if n in pooled}
    ratios = [pooled[n]["train_loss"]["sd"] / pooled[n]["val_loss"]["sd"] for n in EXPERIMENTS
              if n in pooled and pooled[n]["val_loss"]["sd"]]
    return {
        "steps": steps, "last": last, "runs": runs, "seeds": [r["seed"] for r in runs],
        "first_seeds": list(first_seeds), "later_seeds": [r["seed"] for r in runs if r["later"]],
        "flags": flags, "threshold": {k: end[k]["threshold"] for k in KEYS}, "scale": {k: end[k]["scale"] for k in KEYS},
        "failed": failed, "failed_seeds": failed_val,
        "failed_train_seeds": sorted(end["train_loss"]["failed"].get(BASE, {})),
        "healthy": healthy, "seed_page": sp,
        "times_seed_page": healthy["val_loss"]["range"] / sp["range"] if sp else None,
        "pooled": pooled, "step_of": steps_of, "experiments": [n for n in EXPERIMENTS if n in exps],
        "experiment_names": EXPERIMENT_NAMES, "names": NAMES,
        "growth": {key: growth(runs, key, failed_val) for key in KEYS},
        # the failed seeds after the first, evaluation by evaluation (a failure found only at the end)
        "margins": {s: margins(ffn, steps, "val_loss", s) for s in failed_val[1:]},
        "across": {s: across(exps, steps_of, s) for s in failed_val[1:]},
        "kept_healthy": {s: kept_healthy(exps, steps_of, s, "gelu_ffn", BASE) for s in failed_val[1:]},
        "declared_at": DECLARED_AT,
        "gelu_rate": gelu_rate(pooled, failed_base, trained_base),
        "jump": None if jump is None else {"seed": grow[jump]["failed"][0], "k": grow[jump]["k"],
                                           "after": grow[jump]["band"],
                                           "before": grow[jump - 1]["band"] if jump > 0 else None,
                                           "before_k": grow[jump - 1]["k"] if jump > 0 else None},
        "train_over_val": [min(ratios), max(ratios)] if ratios else None,
        "range_factor": [{"n": n, "times": expected_range(n)} for n in RANGE_NS],
        "alpha": seeds.ALPHA,
        "rate": {"baseline": {"failed": failed_base, "trained": trained_base,
                              "interval": exact_interval(failed_base, trained_base)},
                 "others": {"failed": other_failed, "trained": other_trained, "arms": len(others),
                            "interval": exact_interval(other_failed, other_trained) if other_trained else None},
                 "level": LEVEL},
        "primary": primary,
        "arm_sd": {"min": min(arm_sds), "max": max(arm_sds)} if arm_sds else None,
        "robust_by": robust,
        "robust_ratio": [min(r["ratio"] for r in robust.values()), max(r["ratio"] for r in robust.values())],
        "six_range": [min(r["six"] for r in robust.values()), max(r["six"] for r in robust.values())],
        "floor_everywhere": all(r["floor_decides"] for r in robust.values()),
        "floor_in_sd": seeds.FAIL_FLOOR / healthy["val_loss"]["sd"],
        "fisher": fisher_two_sided(failed_base, trained_base, other_failed, other_trained) if other_trained else None,
        "heads": failed_heads(data, failed_val[0]) if failed_val else None,
        "same_batches": same_batches(exps, steps_of, failed_val[0]) if failed_val else [],
        "v2_date": V2_DATE, "declared": declared(data, exps, steps_of, primary),
        "rerun_seeds": [r["seed"] for r in _baseline.extra_runs(data) if r.get("rerun")],
        "per_step": ps, "per_step_curves": per_step_curves(ps),
        "curves": curves(runs, steps, failed_val, control),
        "sim": {"sd": round(healthy["val_loss"]["sd"], 3),
                "stall": round(failed[0]["lag_end"]["val_loss"], 2) if failed else None},
        "raffel": raffel(data),
        # two single runs with no true difference: their gap has SD sqrt(2) sigma, so "within k sigma"
        # happens with P(|Z| < k / sqrt 2) = erf(k / 2)
        "raffel_within": math.erf(raffel(data)["within_sd"] / 2) if raffel(data) else None,
        "arms_end": {name: {key: {n: by_seed(pairs, steps_of[name], key) for n, pairs in arms.items()} for key in KEYS}
                     for name, arms in exps.items()},
        "worked": worked(exps, steps_of),
        "fail_scales": seeds.FAIL_SCALES, "fail_floor": seeds.FAIL_FLOOR, "robust": seeds.ROBUST,
    }


def facts(data):
    return {"noise": noise_facts(data) if ABLATION in data else None}
