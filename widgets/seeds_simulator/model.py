"""seeds-simulator: simulated experiments read by the old rule (the baseline's range over its seeds)
and by seeds protocol v2 (health check, pooled SD, gap ± h), to see how often each calls a gap
"measured" when runs sometimes fail.

Each experiment trains a baseline arm (true loss 0, n_base seeds) and a variant arm (true loss
`gap` higher, n_variant seeds); every run adds Gaussian seed noise (sd) and, with probability
`fail`, fails: its loss ends `stall` higher (in the baseline only, or in both arms). Both rules read
it (widgets/common/seeds_sim.py, which reads by widgets/common/seeds.py), and the widget counts,
over every experiment drawn so far, how often each rule said "measured" in the right direction and
in the wrong one; the last experiment is drawn run by run. A call draws BATCH experiments: the
page passes back the counts it was given (tally) with the next batch number, so a click adds a
batch without redrawing the earlier ones; any other change starts the counts again.

Standard library only, in the subset every runtime runs (CPython, Pyodide, MicroPython): the same
random numbers (rng.py) and the same text everywhere.
"""
from numfmt import fixed, num, pct, superscript
from rng import Rng
import seeds
import seeds_sim

BATCH = 50  # experiments a call draws: 15-25 ms in MicroPython-in-Node here, under 100 ms on the phone estimate
PARAMS = {"gap": 0.1, "sd": 0.023, "fail": 0.2, "stall": 0.37, "where": "base", "n_base": 5, "n_variant": 4,
          "seed": 10, "batch": 0, "tally": None}  # seed 10: its first 50 draws land near the long-run rates
# (key, label, min, max, step, decimals): the sliders, in the page's order
SLIDERS = (
    ("gap", "真实差距：变体比基线高多少", 0.0, 0.3, 0.01, 2),
    ("sd", "换种子的噪声（标准差）", 0.005, 0.05, 0.001, 3),
    ("fail", "每次训练失败的概率", 0.0, 0.5, 0.05, 2),
    ("stall", "一次失败让损失高出多少", 0.1, 0.6, 0.01, 2),
    ("n_base", "基线训几个种子", 2, 10, 1, 0),
    ("n_variant", "变体训几个种子", 1, 10, 1, 0),
)
WHERE = (("base", "只有基线会失败"), ("both", "两边都会失败"))
SHOWN = ("gap", "sd", "fail", "stall", "where", "n_base", "n_variant", "seed")  # the params a state carries back
COUNTS = ("n", "v1", "v1_wrong", "v2", "v2_wrong", "sd", "sd_wrong", "base_failed", "base_failed_v1")
OPTIONAL = ("sd", "sd_wrong")  # counts a tally may lack (the third counter came later)
W, ROW = 360, 40  # the chart: width (narrow, so its labels stay legible on a phone), the height of a row
BASE_Y, VAR_Y, GAP_Y = 26, 26 + ROW, 26 + 2 * ROW + 12


def check(params):
    """The params as numbers, or ValueError naming the first one out of range."""
    out = {}
    for key, _, lo, hi, step, decimals in SLIDERS:
        v = params.get(key, PARAMS[key])
        if isinstance(v, bool) or not (isinstance(v, int) or isinstance(v, float)):
            raise ValueError(key + " must be a number, got " + repr(v))
        if v < lo - 1e-9 or v > hi + 1e-9:
            raise ValueError(key + " must be in " + num(lo, decimals) + " .. " + num(hi, decimals) + ", got " + repr(v))
        out[key] = int(round(v)) if decimals == 0 else float(v)
    where = params.get("where", PARAMS["where"])
    if where not in [w for w, _ in WHERE]:
        raise ValueError("where must be 'base' or 'both', got " + repr(where))
    out["where"] = where
    for key in ("seed", "batch"):
        v = params.get(key, PARAMS[key])
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(key + " must be a whole number, 0 or more, got " + repr(v))
        out[key] = v
    tally = params.get("tally")
    if tally is not None:
        if isinstance(tally, dict):  # a tally from before the third counter starts it at 0
            tally = dict([(k, tally.get(k, 0) if k in OPTIONAL else tally.get(k)) for k in COUNTS if k in tally or k in OPTIONAL])
        if not isinstance(tally, dict) or any(k not in tally for k in COUNTS):
            raise ValueError("tally must hold " + ", ".join(COUNTS) + " (what the last call returned)")
        for k in COUNTS:
            if isinstance(tally[k], bool) or not isinstance(tally[k], int) or tally[k] < 0:
                raise ValueError("tally." + k + " must be a whole number, 0 or more")
        tally = dict([(k, tally[k]) for k in COUNTS])
    out["tally"] = tally
    return out


def rates(p):
    """(baseline, variant) failure probabilities for params p."""
    return p["fail"], (p["fail"] if p["where"] == "both" else 0.0)


def run_batch(p):
    """Draw batch p["batch"] of BATCH experiments, add them to p["tally"] (or to zero counts) and
    return (the counts, the last experiment)."""
    counts = dict(p["tally"]) if p["tally"] else dict([(k, 0) for k in COUNTS])
    r = Rng(p["seed"] * 100003 + p["batch"])
    base_rate, var_rate = rates(p)
    last = None
    for _ in range(BATCH):
        last = seeds_sim.experiment(r, p["gap"], p["n_base"], p["n_variant"], p["sd"], base_rate, var_rate, p["stall"])
        seeds_sim.tally(counts, p["gap"], last["v2"]["direction"], last["v1"]["direction"], last["sd"]["direction"])
        counts["n"] += 1
        if last["base_stalled"]:
            counts["base_failed"] += 1
            if last["v1"]["measured"]:
                counts["base_failed_v1"] += 1
    return counts, last


def cap(p):
    """The chance that none of the baseline's runs fails: (1 - fail) ** n_base."""
    return (1.0 - p["fail"]) ** p["n_base"]


def domain(p):
    """The chart's loss axis (relative to the baseline's true loss): room for the noise, the gap and,
    when runs can fail, a failed run."""
    lo = -4 * p["sd"] - 0.02
    hi = max(p["gap"], 0.0) + 4 * p["sd"] + (p["stall"] if p["fail"] > 0 else 0.0) + 0.02
    return lo, max(hi, lo + 0.15)


def tick_step(width):
    """A round tick spacing for an axis `width` nats wide: tick_step(0.5) -> 0.1"""
    for s in (0.02, 0.05, 0.1, 0.2, 0.25, 0.5):
        if width / s <= 7:
            return s
    return 1.0


def chart(p, e):
    """The last experiment drawn: each arm's runs as dots (failed ones, as v2's health check found
    them, hollow), each arm's healthy mean, and in the third row the gap with v2's interval beside
    the old rule's band (drawn from 0 toward the gap's side: the gap must reach beyond it)."""
    lo, hi = domain(p)

    def x(v):
        return max(0.0, min(float(W), W * (v - lo) / (hi - lo)))

    step = tick_step(hi - lo)
    ticks = []
    k = int(lo / step) - 1
    while k * step <= hi + 1e-9:
        v = k * step
        if v >= lo - 1e-9:
            ticks.append({"x": fixed(x(v)), "label": num(v, 2) if step < 0.1 else num(v, 1), "zero": abs(v) < 1e-9})
        k += 1
    failed = e["reading"]["failed"]
    dots = []
    for arm, y, runs in (("baseline", BASE_Y, e["base"]), ("variant", VAR_Y, e["other"])):
        for s in range(len(runs)):
            dots.append({"x": fixed(x(runs[s])), "y": y, "failed": s in failed[arm]})
    c, old = e["v2"], e["v1"]
    means = []
    for y, m in ((BASE_Y, c["mean_b"]), (VAR_Y, c["mean_a"])):
        if m is not None:
            means.append({"x": fixed(x(m)), "y1": y - 13, "y2": y + 13})
    out = {"w": W, "h": GAP_Y + 44, "ticks": ticks, "dots": dots, "means": means, "zero": fixed(x(0.0)),
           "truth": fixed(x(p["gap"])), "rows": [{"y": BASE_Y, "label": "基线"}, {"y": VAR_Y, "label": "变体"},
                                                 {"y": GAP_Y, "label": "差"}],
           "gap": None, "band": None}
    if c["gap"] is not None:
        g = {"x": fixed(x(c["gap"])), "y": GAP_Y}
        if c["half_width"] is not None:
            g["x1"], g["x2"] = fixed(x(c["gap"] - c["half_width"])), fixed(x(c["gap"] + c["half_width"]))
        out["gap"] = g
    if old["band"] is not None:
        side = -1.0 if c["gap"] is not None and c["gap"] < 0 else 1.0
        a, b = x(0.0), x(side * old["band"])
        out["band"] = {"x": fixed(min(a, b)), "width": fixed(abs(b - a)), "y": GAP_Y + 10}
    return out


def old_text(old):
    """The old rule on the last experiment, in words."""
    band = num(old["band"], 3)
    if old["pairs"] == 1:
        return ("旧规则：只有 1 对，差要到极差 " + band + " 的 " + str(seeds_sim.ONE_SEED) + " 倍才算：" +
                ("测到" if old["measured"] else "分不出"))
    if old["measured"]:
        return "旧规则：极差 " + band + "，每一对同号、平均差超出它：测到"
    if not old["same_sign"]:
        return "旧规则：极差 " + band + "，配对的差有正有负：分不出"
    return "旧规则：极差 " + band + "，平均差 " + num(abs(old["gap"]), 3) + " 没超出它：分不出"


def last_text(p, e):
    """What happened in the last experiment: which runs failed, and whether v2 found them."""
    parts = []
    for arm, name, stalled in (("baseline", "基线", e["base_stalled"]), ("variant", "变体", e["other_stalled"])):
        flagged = e["reading"]["failed"][arm]
        if stalled:
            found = len([s for s in stalled if s in flagged])
            parts.append(name + " " + str(len(stalled)) + " 次训练失败" +
                         ("，健康检查都找到了" if found == len(stalled) else "，健康检查找到 " + str(found) + " 次"))
        extra = [s for s in flagged if s not in stalled]
        if extra:
            parts.append(name + " " + str(len(extra)) + " 次没失败的训练被误判为失败")
    if not parts:
        return "最后这次实验没有训练失败。"
    return "最后这次实验：" + "；".join(parts) + "。"


def v2_text(c):
    """v2 on the last experiment, in words: 「v2：变体比基线高 0.093 ± 0.028（变体 4 个、基线 3 个健康的种子）：测到」."""
    if c["status"] in ("split", "none"):
        return "v2：" + seeds.say(c)
    fmt = lambda x: num(x, 3)  # noqa: E731
    return ("v2：变体比基线" + seeds.gap_text(c, fmt) + "（变体 " + str(c["n_a"]) + " 个、基线 " + str(c["n_b"]) +
            " 个健康的种子）：" + seeds.VERDICT[c["status"]])


def count_text(k, n):
    return str(k) + " 次（" + pct(k / n, 0) + "）"


def view(params):
    """Draw one more batch of experiments (or the first) and everything the widget shows."""
    p = check(params)
    counts, e = run_batch(p)
    n = counts["n"]
    c = e["v2"]
    null = p["gap"] == 0
    out = {
        "n": str(n), "gap-value": num(p["gap"], 2), "sd-value": num(p["sd"], 3), "fail-value": pct(p["fail"], 0),
        "stall-value": num(p["stall"], 2), "n_base-value": str(p["n_base"]), "n_variant-value": str(p["n_variant"]),
        "measure": "误报（真实差距是 0，判「测到」都是错的）" if null else "判「测到」，方向也对",
        "v1": count_text(counts["v1"] + (counts["v1_wrong"] if null else 0), n),
        "v2": count_text(counts["v2"] + (counts["v2_wrong"] if null else 0), n),
        "v1-wrong": "" if null or not counts["v1_wrong"] else "；方向判反 " + str(counts["v1_wrong"]) + " 次",
        "v2-wrong": "" if null or not counts["v2_wrong"] else "；方向判反 " + str(counts["v2_wrong"]) + " 次",
        "sd": count_text(counts["sd"] + (counts["sd_wrong"] if null else 0), n),
        "sd-wrong": "" if null or not counts["sd_wrong"] else "；方向判反 " + str(counts["sd_wrong"]) + " 次",
        "last": last_text(p, e),
        "last-v1": old_text(e["v1"]),
        "last-v2": v2_text(c),
        "more": "再做 " + str(BATCH) + " 次",
    }
    if p["fail"] > 0:
        out["cap"] = ("基线 " + str(p["n_base"]) + " 个种子一个都不失败的概率是 (1 − " + num(p["fail"], 2) + ")" +
                      superscript(p["n_base"]) + " = " + pct(cap(p), 0) + "。到现在为止，基线里有训练失败的实验 " +
                      count_text(counts["base_failed"], n) + "，旧规则在其中判「测到」" + str(counts["base_failed_v1"]) + " 次。")
    else:
        out["cap"] = "训练不会失败：两条规则都只和换种子的噪声较量。"
    announce = ("已做 " + str(n) + " 次实验：旧规则" + out["measure"] + " " + out["v1"] + "，合并标准差、不做健康检查 " +
                out["sd"] + "，v2 " + out["v2"] + "。")
    params_out = dict([(k, p[k]) for k in SHOWN])
    return {
        "params": params_out,
        "tally": counts, "batch": p["batch"] + 1,
        "sliders": [{"key": key, "label": label, "min": lo, "max": hi, "step": step, "value": p[key]}
                    for key, label, lo, hi, step, _ in SLIDERS],
        "where": [{"value": w, "label": label, "checked": w == p["where"]} for w, label in WHERE],
        "chart": chart(p, e),
        "out": out,
        "announce": announce,
    }


def long_run(params, draws=2000, seed=7):
    """The three readings' rates over many experiments with these params (seeds_sim.simulate), for the
    lesson's prose: {"v1", "v1_wrong", "v2", "v2_wrong", "sd", "sd_wrong"} fractions."""
    p = check(params)
    base_rate, var_rate = rates(p)
    return seeds_sim.simulate(p["gap"], "A", p["n_base"], p["n_variant"], draws, seed, p["sd"], p["stall"],
                              base_rate, var_rate)


def as_seeds(arms):
    """{arm: [loss, ...]} (the exercises' form: a run is its place in the list) -> {arm: {i: loss}}."""
    return dict([(name, dict([(i, float(v)) for i, v in enumerate(losses)])) for name, losses in arms.items()])


def health_check(arms):
    """v2's health check (seeds.health) on {arm: [loss, ...]}: [T, {arm: [failed run indices]}].
    What C14 第 1 课's health-check exercise asks for."""
    h = seeds.health(as_seeds(arms))
    return [h["threshold"], dict([(name, sorted(f)) for name, f in h["failed"].items()])]


def pooled_interval(arms, a, b):
    """v2's noise and reading (seeds.pooled, seeds.contrast) on {arm: [loss, ...]} whose runs are all
    healthy: [s, df, gap a - b, h]. What C14 第 1 课's pooled-interval exercise asks for."""
    runs = as_seeds(arms)
    s, df = seeds.pooled(runs)
    reading = {"healthy": runs, "failed": {}, "split": {}, "sd": s, "df": df}
    c = seeds.contrast(reading, a, b)
    return [s, df, c["gap"], c["half_width"]]


def t975(most=30):
    """[None, t(0.975, 1), ..., t(0.975, most)]: the table the pooled-interval exercise gives."""
    return [None] + [seeds.t_quantile(df) for df in range(1, most + 1)]
