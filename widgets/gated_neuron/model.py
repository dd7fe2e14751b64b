"""gated-neuron: one neuron, ŷ = w_o · act(g) · u, where the gate g and the up reading u each read p and n.

    g = a_g·p + b_g·n + c_g      u = a_u·p + b_u·n + c_u      m = act(g)·u      ŷ = w_o·m

act is applied to the gate only: ReLU, GELU, SiLU, σ or none. With u a constant it is an
ordinary neuron without a gate (a ReLU neuron, a GELU neuron, ...); otherwise it is one unit of
ReGLU, GEGLU, SwiGLU, GLU or Bilinear. The six readings are sliders; w_o is not: for each setting
it is the least-squares weight, w_o = Σ y·m / Σ m² (one number, in closed form).

Two tasks:
- reviews: 第 1 课's four reviews, p and n each 0 or 1, target p + n − 2pn (one of the two holds).
  One neuron with a monotone activation (ReLU, σ, none) cannot fit them (the lesson's step 1);
  GELU and SiLU are not monotone and come close without a gate. A product fits them exactly:
  g = p + n, u = 2 − p − n, with no activation, ReLU, SiLU or GELU on the gate; σ has no exact fit.
- graded: p and n any strength in [0, 1], target pn (how much both hold), scored on a 5 × 5 grid.
  No neuron without a gate fits it, whatever its activation: its output is constant where g is,
  and pn is not. One product fits it exactly: g = p, u = n, with no activation or ReLU (p ≥ 0);
  σ, SiLU and GELU gates have no exact fit.

First state: the reviews, a ReLU neuron without a gate (u = 1), the case step 1 proves. Every
sentence the view prints is built from the setting's numbers. Standard library only, in the
subset MicroPython shares (no f-strings).
"""
import math

from numfmt import MINUS, num, sci
from reviews import REVIEWS

PARAMS = {"task": "reviews", "activation": "relu", "gate": [1.0, 1.0, 0.0], "up": [0.0, 0.0, 1.0]}
SLIDER = (-2.0, 2.0, 0.25)  # min, max, step of each reading's weights and bias
# (key, radio label, target's formula)
TASKS = (
    ("reviews", "四句评价：p、n 只取 0 或 1", "p + n − 2pn"),
    ("graded", "连续强度：p、n 取 0 到 1 之间的任何值", "pn"),
)
# (key, radio label, the function's name in a formula, the gated unit's name in Shazeer 2020, monotone)
ACTIVATIONS = (
    ("relu", "ReLU", "ReLU", "ReGLU", True),
    ("gelu", "GELU", "GELU", "GEGLU", False),
    ("silu", "SiLU", "SiLU", "SwiGLU", False),
    ("sigmoid", "σ", "σ", "GLU", True),
    ("none", "无（g 直接乘 u）", "", "Bilinear", True),
)
KEYS = tuple(a[0] for a in ACTIVATIONS)
TASK_KEYS = tuple(t[0] for t in TASKS)
GRID = (0.0, 0.25, 0.5, 0.75, 1.0)  # the graded task's strengths, for p and for n
EXACT = {  # (gate, up) that fit the task exactly, with the activations they fit it with
    "reviews": ([1.0, 1.0, 0.0], [-1.0, -1.0, 2.0], ("relu", "gelu", "silu", "none")),
    "graded": ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], ("relu", "none")),
}
EXACT_GATE, EXACT_UP = EXACT["reviews"][0], EXACT["reviews"][1]
FAR_GATE = [-2.0, -2.0, 0.0]  # without a gate, GELU and SiLU nearly split the reviews here (the dip)
SIGMOID_NEAR = ([-2.0, -2.0, -2.0], [-2.0, -2.0, 0.0])  # a σ gate's close miss on the reviews
SMALL_GATE = [0.25, 0.0, 0.0]  # a SiLU or GELU gate reading 0.25p: nearly straight on the graded task
READINGS = ("a", "b", "c")    # weight on p, weight on n, bias
READ_LABELS = ("p 的权重", "n 的权重", "偏置")
_BEST = {}  # best_ungated's results, (task, activation) -> result: it tries 4,913 settings
TINY = 1e-20  # an MSE below this is float dust on an exact fit (w_o·m rounds to 1 within an ulp)
SQRT_2 = math.sqrt(2.0)


def sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def act(activation, g):
    """The gate's activation. act("silu", 1.0) -> 0.7310585786300049, act("gelu", 1.0) -> 0.8413447460685429"""
    if activation == "none":
        return g
    if activation == "relu":
        return g if g > 0 else 0.0
    if activation == "gelu":
        return g * 0.5 * (1.0 + math.erf(g / SQRT_2))
    if activation == "sigmoid":
        return sigmoid(g)
    return g * sigmoid(g)


def reading(w, p, n):
    """A linear reading of the two features: reading([1, 1, 0], 1, 1) -> 2"""
    return w[0] * p + w[1] * n + w[2]


def points(task):
    """(label, p, n, target) for every point the task scores: the four reviews, or the 5 × 5 grid row by row (n, then p)."""
    if task == "reviews":
        return [(name, p, n, y) for name, p, n, y in REVIEWS]
    return [("n" + str(i) + "p" + str(j), p, n, p * n) for i, n in enumerate(GRID) for j, p in enumerate(GRID)]


def steps(task, activation, gate, up):
    """Per point, in points(task) order: g, act(g), u and m = act(g)·u."""
    out = []
    for name, p, n, y in points(task):
        g, u = reading(gate, p, n), reading(up, p, n)
        a = act(activation, g)
        out.append({"g": g, "act": a, "u": u, "m": a * u})
    return out


def fit(task, activation, gate, up):
    """The least-squares output weight for this gate and up reading, the outputs and the MSE.

    fit("reviews", "none", [1, 1, 0], [-1, -1, 2]) -> {'w_o': 1.0, 'out': [1.0, 0.0, 0.0, 1.0], 'mse': 0.0}
    """
    ms = [s["m"] for s in steps(task, activation, gate, up)]
    ys = [r[3] for r in points(task)]
    norm = sum(m * m for m in ms)
    w_o = sum(y * m for y, m in zip(ys, ms)) / norm if norm > 0 else 0.0  # m ≡ 0: no weight helps
    out = [w_o * m for m in ms]
    return {"w_o": w_o, "out": out, "mse": sum((o - y) ** 2 for o, y in zip(out, ys)) / len(ys)}


def mse(task, activation, gate, up):
    """The MSE with the best w_o. mse("reviews", "relu", [1, 1, 0], [0, 0, 1]) -> 0.3333..."""
    return fit(task, activation, gate, up)["mse"]


def baseline(task):
    """The MSE when every output is 0: the mean of the squared targets."""
    ys = [r[3] for r in points(task)]
    return sum(y * y for y in ys) / len(ys)


def exact_solution(task, activation):
    """Readings that fit the task exactly with this gate activation, with their w_o and MSE; None where none exist.

    exact_solution("reviews", "silu")["w_o"] -> 1.3678... (1 / SiLU(1): the gate is SiLU(1) where one feature holds)
    """
    gate, up, fits = EXACT[task]
    if activation not in fits:
        return None
    found = fit(task, activation, gate, up)
    return {"gate": list(gate), "up": list(up), "w_o": found["w_o"], "mse": found["mse"]}


def ticks():
    lo, hi, step = SLIDER
    return [lo + step * k for k in range(int(round((hi - lo) / step)) + 1)]


def best_ungated(task, activation):
    """The smallest MSE a neuron without a gate (u = 1) reaches on the sliders' grid, and where.

    Every slider setting of the gate is tried (17³ of them): for the build and the tests, not the browser.
    best_ungated("reviews", "relu")["mse"] -> 0.25
    """
    if (task, activation) in _BEST:
        return _BEST[(task, activation)]
    best = None
    for a in ticks():
        for b in ticks():
            for c in ticks():
                value = mse(task, activation, [a, b, c], [0.0, 0.0, 1.0])
                if best is None or value < best["mse"] - 1e-15:
                    best = {"mse": value, "gate": [a, b, c]}
    _BEST[(task, activation)] = best
    return best


def best_ungated_any(task):
    """best_ungated over every activation: the best a neuron without a gate does on the sliders, with its activation."""
    best = None
    for key in KEYS:
        found = best_ungated(task, key)
        if best is None or found["mse"] < best["mse"]:
            best = {"mse": found["mse"], "gate": found["gate"], "activation": key}
    return best


def multilinear(values):
    """Any function on the four reviews as α + β·p + γ·n + δ·pn (p and n are 0 or 1, so this is exact).

    multilinear([1, 0, 0, 1]) -> [0, 1, 1, -2]  (in REVIEWS order: 好吃, 不好吃, 难吃, 不难吃)
    """
    at = {}
    for (name, p, n, y), v in zip(REVIEWS, values):
        at[(p, n)] = v
    f00, f10, f01, f11 = at[(0, 0)], at[(1, 0)], at[(0, 1)], at[(1, 1)]
    return [f00, f10 - f00, f01 - f00, f11 - f10 - f01 + f00]


def linear_text(coefs, names, const, decimals=None):
    """linear_text([-1, -1], ["p", "n"], 2) -> '−p − n + 2'; all zero -> '0'. decimals="short": 0.25, not 0.250."""
    parts = []
    for coef, name in zip(coefs, names):
        if abs(coef) < 1e-12:
            continue
        size = "" if abs(abs(coef) - 1) < 1e-12 else number(abs(coef), decimals)
        parts.append((coef < 0, size + name))
    if abs(const) > 1e-12 or not parts:
        parts.append((const < -1e-12, number(abs(const), decimals)))
    text = ""
    for i, part in enumerate(parts):
        sign = MINUS if part[0] else "+"
        text = ((MINUS if part[0] else "") + part[1]) if i == 0 else text + " " + sign + " " + part[1]
    return text


def number(x, decimals):
    return short(x) if decimals == "short" else num(x, decimals)


def reading_text(w):
    """A slider reading as a formula: reading_text([0.25, -1, 2]) -> '0.25p − n + 2'"""
    return linear_text(w[:2], ("p", "n"), w[2], "short")


def mse_text(x):
    """An MSE as the page shows it: three decimals, or powers of ten below 0.0005 (never a bare 0.000 that is not 0)."""
    if x < TINY:
        return "0"
    return sci(x, 2) if x < 0.0005 else num(x, 3)


def short(x):
    """A grid value without trailing zeros: 0.0625, 0.25, 1 (every target is a multiple of 1/16)."""
    text = num(x, 4)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def spec(activation):
    return [a for a in ACTIVATIONS if a[0] == activation][0]


def task_spec(task):
    return [t for t in TASKS if t[0] == task][0]


def kind(up):
    """How u reads: 'zero' (u ≡ 0), 'ungated' (a nonzero constant: no gate at all) or 'gated'."""
    if abs(up[0]) < 1e-12 and abs(up[1]) < 1e-12:
        return "zero" if abs(up[2]) < 1e-12 else "ungated"
    return "gated"


def unit_name(activation, up):
    key, label, prefix, unit, monotone = spec(activation)
    k = kind(up)
    if k == "zero":
        return "u 恒为 0"
    if k == "ungated":
        return "不带门的线性读数" if activation == "none" else "不带门的 " + prefix + " 神经元"
    return unit + ("（门不过激活）" if activation == "none" else "（门过 " + prefix + "）")


def check(params):
    """The params as the model uses them, or ValueError naming what is wrong."""
    task = params.get("task", "reviews")
    if task not in TASK_KEYS:
        raise ValueError("task must be one of " + ", ".join(TASK_KEYS) + ", got " + repr(task))
    activation = params["activation"]
    if activation not in KEYS:
        raise ValueError("activation must be one of " + ", ".join(KEYS) + ", got " + repr(activation))
    readings = []
    for key in ("gate", "up"):
        w = [round(float(v), 9) + 0.0 for v in params[key]]  # slider float dust: 0.75, not 0.7500000001
        if len(w) != 3 or any(not SLIDER[0] <= v <= SLIDER[1] for v in w):
            raise ValueError(key + " must be 3 numbers in [-2, 2], got " + repr(params[key]))
        readings.append(w)
    return task, activation, readings[0], readings[1]


def exact_names(task):
    """The gate activations with an exact solution on the task, as the radios name them: 'ReLU、GELU、SiLU 或「无」'."""
    names = []
    for key, label, prefix, unit, monotone in ACTIVATIONS:
        if exact_solution(task, key) is not None:
            names.append(prefix if prefix else "「无」")
    if len(names) == 1:
        return names[0]
    return "、".join(names[:-1]) + " 或" + ("" if names[-1].startswith("「") else " ") + names[-1]


def exact_note(task):
    """Why the task's exact readings are exact, with the products computed on its points."""
    gate, up, fits = EXACT[task]
    if task == "graded":
        return ("精确解：门读 g = " + reading_text(gate) + "，上投影读 u = " + reading_text(up) + "，乘积 g·u 就是目标 pn，w_o = "
                + num(fit(task, "none", gate, up)["w_o"]) + "。门过 ReLU 也一样：p 不会是负的，ReLU(p) = p。")
    parts = []
    for label, count in (("恰好一个成立", 1), ("两个都成立", 2), ("都不成立", 0)):
        name, p, n, y = [r for r in REVIEWS if r[1] + r[2] == count][0]
        parts.append(label + "时 g·u = " + num(reading(gate, p, n)) + " × " + num(reading(up, p, n))
                     + " = " + num(reading(gate, p, n) * reading(up, p, n)))
    silu_one, gelu_one = act("silu", 1.0), act("gelu", 1.0)
    return ("精确解：门 g = " + reading_text(gate) + "（有几个特征成立），上投影 u = " + reading_text(up)
            + "（离两个都成立还差几个）。" + "；".join(parts) + "：正是目标 p + n − 2pn。门过 ReLU 时一样（g 从不为负）。"
            "门过 SiLU 或 GELU，同一组读数也精确：SiLU(0) = GELU(0) = 0，门在「难吃」上照样关死；SiLU(1) = "
            + num(silu_one, 3) + "、GELU(1) = " + num(gelu_one, 3) + "，w_o 取它们的倒数（" + num(1.0 / silu_one, 3) + "、"
            + num(1.0 / gelu_one, 3) + "）补回来。")


def limit_note(task):
    """Which neurons have no exact solution on the task, and why; with the near misses computed."""
    if task == "graded":
        small = mse(task, "silu", SMALL_GATE, EXACT["graded"][1])
        return ("没有门（u 是常数）时，输出只看 g 一个数，g 相同的点输出一定相同。g 相同的点排成直线；过正方形中心 "
                "(0.5, 0.5) 的任何一条直线上，pn 都不是常数。所以在整个正方形上，不管激活是什么、权重取多少，误差都有一个到不了 0 的下限。"
                "门过 σ、SiLU 或 GELU 也到不了 0：在 p = 0 和 n = 0 两条边上，目标处处是 0。σ 永远不是 0，"
                "只能让 u 在两条边上都是 0，u 就处处是 0；SiLU、GELU 只在 0 处是 0，剩下的办法只有一路读 p、另一路读 n，"
                "这时要 SiLU 或 GELU 在一段上和它的输入成正比，可它们在任何一段上都不是直线。SiLU、GELU 在 0 附近接近直线，"
                "门的权重很小时能很接近：门读 " + reading_text(SMALL_GATE) + "、上投影读 n 时，SiLU 门的 MSE 是 "
                + mse_text(small) + "。")
    gate, up = SIGMOID_NEAR
    return ("没有门（u 是常数）而激活单调（ReLU、σ、不过激活）时没有精确解：这是第一步的论证。SiLU、GELU 不单调，"
            "不在此列：门读 " + reading_text(FAR_GATE) + " 时，SiLU 神经元的 MSE 是 " + mse_text(mse(task, "silu", FAR_GATE, [0.0, 0.0, 1.0]))
            + "，GELU 神经元是 " + mse_text(mse(task, "gelu", FAR_GATE, [0.0, 0.0, 1.0])) + "。"
            "σ 门也没有精确解：σ(g) 总在 0 和 1 之间，到不了 0，也不变号。要让「难吃」(0, 0) 和「不好吃」(1, 1) 输出 0，"
            "只能让 u 在这两句上都是 0（u 的偏置为 0，p、n 的权重相加为 0），于是 u 在「好吃」和「不难吃」上一正一负，"
            "乘上总为正的门，两句的输出也一正一负，不可能都是 1。精确读数配上 σ 门，MSE 是 "
            + mse_text(mse(task, "sigmoid", EXACT_GATE, EXACT_UP)) + "（σ(0) = " + num(sigmoid(0.0), 1)
            + "，门在「难吃」上关不上）；权重越大可以越接近，但到不了 0：门读 " + reading_text(gate) + "、上投影读 "
            + reading_text(up) + " 时是 " + mse_text(mse(task, "sigmoid", gate, up)) + "。")


def reason(task, activation, gate, up, is_exact):
    """One sentence on what this setting can and cannot do, true for every setting."""
    key, label, prefix, unit, monotone = spec(activation)
    k = kind(up)
    if k == "zero":
        return "u 恒为 0：乘积处处是 0，输出全是 0。"
    if k == "ungated":
        if task == "graded":
            return ("u 是常数，这是一个不带门的神经元，输出只看 g 一个数；在整个正方形上（不只这 25 个点），"
                    "g 相同、目标 pn 不同的点总是有的，所以换什么激活、取什么权重都有到不了 0 的误差（证明在下面的答案里）。")
        if monotone:
            what = "没有激活，输出就是 g 的倍数" if activation == "none" else prefix + " 不会打乱 g 的大小顺序"
            return "u 是常数，这是一个不带门的神经元。" + what + "：第一步证明了这样分不开四句评价，MSE 到不了 0。"
        return ("u 是常数，这是一个不带门的神经元。但 " + prefix + " 先降后升，不是单调的，第一步的论证管不到它：门读 "
                + reading_text(FAR_GATE) + " 时 MSE 是 " + mse_text(mse(task, activation, FAR_GATE, [0.0, 0.0, 1.0])) + "。")
    if is_exact:
        return "这组读数正好给出目标（为什么，见下面的答案）。"
    if exact_solution(task, activation) is not None:
        return "这个组合有精确解：先自己拖，卡住了再按「精确解」。"
    return prefix + " 门在这个任务上没有精确解，只能接近（为什么，见下面的答案）。"


def view(params):
    task, activation, gate, up = check(params)
    key, label, prefix, unit, monotone = spec(activation)
    found = fit(task, activation, gate, up)
    exact = exact_solution(task, activation)
    is_exact = found["mse"] < TINY
    rows = {}
    if task == "reviews":
        per = steps(task, activation, gate, up)
        for (name, p, n, y), s, o in zip(REVIEWS, per, found["out"]):
            rows[name] = {"g": num(s["g"], 2), "act": num(s["act"], 3), "u": num(s["u"], 2), "out": num(o, 3),
                          "data-exact": "true" if abs(o - y) < 1e-9 else "false"}
        poly = multilinear(found["out"])
        # The pn coefficient is the point of the task: say it even when it is 0.
        poly_text = ("在这四句上，输出可以写成 ŷ = " + linear_text(poly[1:], ("p", "n", "pn"), poly[0])
                     + "（p、n 只取 0 和 1 时，任何输出都能写成 α + βp + γn + δ·pn）；这组读数的 pn 系数 δ 是 "
                     + short(round(poly[3], 9) + 0.0) + "，目标 p + n − 2pn 的是 −2。")
    else:
        for i in range(len(GRID)):
            row = {}
            for j in range(len(GRID)):
                row["p" + str(j)] = num(found["out"][i * len(GRID) + j], 3)
            rows["n" + str(i)] = row
        poly_text = "每格上面是输出 ŷ，下面是目标 pn；MSE 是这 " + str(len(GRID) * len(GRID)) + " 格的平均。"
    act_of = prefix + "(" + reading_text(gate) + ")"
    name = unit_name(activation, up)
    formula = "ŷ = " + num(found["w_o"], 3) + " · " + act_of + " · (" + reading_text(up) + ")"
    verdict = ("输出都等于目标：精确解，MSE = 0。" if is_exact else
               "MSE = " + mse_text(found["mse"]) + "（全部输出 0 时是 " + num(baseline(task), 3) + "）。")
    out = {
        "unit": name,
        "gate": reading_text(gate),
        "up": reading_text(up),
        "w_o": num(found["w_o"], 3),
        "formula": formula,
        "target": "目标 y = " + task_spec(task)[2],
        "poly": poly_text,
        "mse": mse_text(found["mse"]),
        "verdict": verdict,
        "reason": reason(task, activation, gate, up, is_exact),
        "exact-note": exact_note(task),
        "limit-note": limit_note(task),
        "button-note": ((unit_name(activation, [1.0, 0.0, 0.0]) + "在这个任务上没有精确解，按钮不可用；门的激活换成 "
                         + exact_names(task) + " 再按。") if exact is None
                        else "按下去：把六个滑块设成这个激活的一组精确解" + (
                            "。这组解要让上投影也读 p、n：按下去，它就不再是不带门的神经元（第二步）。"
                            if kind(up) == "ungated" else "。")),
    }
    for r_name, w in (("gate", gate), ("up", up)):
        for i, r in enumerate(READINGS):
            out[r_name + "-" + r] = num(w[i], 2)
    return {
        "params": {"task": task, "activation": activation, "gate": gate, "up": up},
        "slider": {"min": SLIDER[0], "max": SLIDER[1], "step": SLIDER[2]},
        "tasks": [{"value": k, "label": lab, "checked": k == task} for k, lab, _ in TASKS],
        "activations": [{"value": k, "label": lab, "checked": k == activation} for k, lab, _, _, _ in ACTIVATIONS],
        "readings": [{"name": r_name, "short": short_name, "sliders": [
            {"key": r_name + "-" + r, "label": what, "value": w[i]} for i, (r, what) in enumerate(zip(READINGS, READ_LABELS))]}
            for r_name, short_name, w in (("gate", "门 g", gate), ("up", "上投影 u", up))],
        "exact": exact,
        "exact_available": exact is not None,
        "reviews": [{"name": r_name, "p": p, "n": n, "y": y} for r_name, p, n, y in REVIEWS],
        "grid": {"values": [short(v) for v in GRID],
                 "rows": [{"key": "n" + str(i), "n": short(n), "cells": [
                     {"key": "p" + str(j), "target": short(p * n)} for j, p in enumerate(GRID)]} for i, n in enumerate(GRID)]},
        "rows": rows,
        "out": out,
        "announce": (name + "：g = " + reading_text(gate) + "，u = " + reading_text(up) + "，w_o = "
                     + num(found["w_o"], 3) + "：" + ("精确解，MSE = 0" if is_exact else "MSE = " + mse_text(found["mse"])) + "。"),
    }
