"""gated-neuron: one gated neuron on 第 1 课's four reviews, ŷ = w_o · act(g) · u, where the gate g and the up reading u each read p and n.

    g = a_g·p + b_g·n + c_g      u = a_u·p + b_u·n + c_u      m = act(g)·u      ŷ = w_o·m

act is applied to the gate only: none (Bilinear), σ (GLU) or SiLU (SwiGLU). The six readings
are sliders; w_o is not: for each setting it is the least-squares weight on the four reviews,
w_o = Σ y·m / Σ m² (one number, solved in closed form), so what the sliders decide is whether
m has the target's shape. First state: u = 1, an ordinary SiLU neuron, which cannot fit the
XOR. The exact solution (none or SiLU): g = p + n, u = 2 − p − n, whose product is 1 when
exactly one feature holds and 0 otherwise. A σ gate has none: it never reaches 0 and never
changes sign. Standard library only, in the subset MicroPython shares (no f-strings).
"""
import math

from numfmt import MINUS, num
from reviews import REVIEWS

PARAMS = {"activation": "silu", "gate": [1.0, 1.0, 0.0], "up": [0.0, 0.0, 1.0]}
SLIDER = (-2.0, 2.0, 0.25)  # min, max, step of each reading's weights and bias
# (key, radio label, the function's name in a formula, the unit's name in Shazeer 2020)
ACTIVATIONS = (
    ("none", "无（Bilinear：g 直接乘 u）", "", "Bilinear"),
    ("sigmoid", "σ（GLU）", "σ", "GLU"),
    ("silu", "SiLU（SwiGLU）", "SiLU", "SwiGLU"),
)
KEYS = tuple(a[0] for a in ACTIVATIONS)
EXACT_GATE = [1.0, 1.0, 0.0]  # g = p + n: how many of the two features hold
EXACT_UP = [-1.0, -1.0, 2.0]  # u = 2 − p − n: how many are still missing
READINGS = ("a", "b", "c")    # weight on p, weight on n, bias
READ_LABELS = ("p 的权重", "n 的权重", "偏置")
TINY = 1e-20  # an MSE below this is float dust on an exact fit (w_o·m rounds to 1 within an ulp)


def sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def act(activation, g):
    """The gate's activation. act("silu", 1.0) -> 0.7310585786300049"""
    if activation == "none":
        return g
    if activation == "sigmoid":
        return sigmoid(g)
    return g * sigmoid(g)


def reading(w, p, n):
    """A linear reading of the two features: reading([1, 1, 0], 1, 1) -> 2"""
    return w[0] * p + w[1] * n + w[2]


def steps(activation, gate, up):
    """Per review, in REVIEWS order: g, act(g), u and m = act(g)·u."""
    out = []
    for name, p, n, y in REVIEWS:
        g, u = reading(gate, p, n), reading(up, p, n)
        a = act(activation, g)
        out.append({"g": g, "act": a, "u": u, "m": a * u})
    return out


def fit(activation, gate, up):
    """The least-squares output weight for this gate and up reading, the four outputs and the MSE.

    fit("none", [1, 1, 0], [-1, -1, 2]) -> {'w_o': 1.0, 'out': [1.0, 0.0, 0.0, 1.0], 'mse': 0.0}
    """
    ms = [s["m"] for s in steps(activation, gate, up)]
    ys = [r[3] for r in REVIEWS]
    norm = sum(m * m for m in ms)
    w_o = sum(y * m for y, m in zip(ys, ms)) / norm if norm > 0 else 0.0  # m ≡ 0: no weight helps
    out = [w_o * m for m in ms]
    return {"w_o": w_o, "out": out, "mse": sum((o - y) ** 2 for o, y in zip(out, ys)) / len(ys)}


def mse(activation, gate, up):
    """The MSE on the four reviews with the best w_o. mse("silu", [1, 1, 0], [0, 0, 1]) -> 0.3719..."""
    return fit(activation, gate, up)["mse"]


def exact_solution(activation):
    """Readings that fit the four reviews exactly, with their w_o and MSE; None for σ (it has none).

    exact_solution("silu")["w_o"] -> 1.3678... (1 / SiLU(1): the gate is SiLU(1) where one feature holds)
    """
    if activation == "sigmoid":
        return None
    found = fit(activation, EXACT_GATE, EXACT_UP)
    return {"gate": list(EXACT_GATE), "up": list(EXACT_UP), "w_o": found["w_o"], "mse": found["mse"]}


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
    """linear_text([-1, -1], ["p", "n"], 2) -> '−p − n + 2'; all zero -> '0'."""
    parts = []
    for coef, name in zip(coefs, names):
        if abs(coef) < 1e-12:
            continue
        size = "" if abs(abs(coef) - 1) < 1e-12 else num(abs(coef), decimals)
        parts.append((coef < 0, size + name))
    if abs(const) > 1e-12 or not parts:
        parts.append((const < -1e-12, num(abs(const), decimals)))
    text = ""
    for i, part in enumerate(parts):
        sign = MINUS if part[0] else "+"
        text = ((MINUS if part[0] else "") + part[1]) if i == 0 else text + " " + sign + " " + part[1]
    return text


def reading_text(w):
    return linear_text(w[:2], ("p", "n"), w[2])


def spec(activation):
    return [a for a in ACTIVATIONS if a[0] == activation][0]


def check(params):
    """The params as the model uses them, or ValueError naming what is wrong."""
    activation = params["activation"]
    if activation not in KEYS:
        raise ValueError("activation must be one of " + ", ".join(KEYS) + ", got " + repr(activation))
    readings = []
    for key in ("gate", "up"):
        w = [round(float(v), 9) + 0.0 for v in params[key]]  # slider float dust: 0.75, not 0.7500000001
        if len(w) != 3 or any(not SLIDER[0] <= v <= SLIDER[1] for v in w):
            raise ValueError(key + " must be 3 numbers in [-2, 2], got " + repr(params[key]))
        readings.append(w)
    return activation, readings[0], readings[1]


def exact_note():
    """Why g = p + n, u = 2 − p − n is exact, with the products computed on the four reviews."""
    parts = []
    for label, count in (("恰好一个成立", 1), ("两个都成立", 2), ("都不成立", 0)):
        name, p, n, y = [r for r in REVIEWS if r[1] + r[2] == count][0]
        parts.append(label + "时 g·u = " + num(reading(EXACT_GATE, p, n)) + " × " + num(reading(EXACT_UP, p, n))
                     + " = " + num(reading(EXACT_GATE, p, n) * reading(EXACT_UP, p, n)))
    silu_one = act("silu", 1.0)
    return ("精确解：门 g = " + reading_text(EXACT_GATE) + "（有几个特征成立），上投影 u = " + reading_text(EXACT_UP)
            + "（离两个都成立还差几个）。" + "；".join(parts) + "：正是目标 p + n − 2pn。换成 SiLU 门，同一组读数也精确："
            "SiLU(0) = 0，门在「难吃」上照样关死；SiLU(1) = " + num(silu_one, 3) + "，w_o 取 1 ÷ " + num(silu_one, 3)
            + " = " + num(1.0 / silu_one, 3) + " 补回来。")


def sigmoid_note():
    """Why a σ gate has no exact solution, and what the exact readings give with it."""
    with_sigmoid = mse("sigmoid", EXACT_GATE, EXACT_UP)
    return ("σ 门没有精确解：σ(g) 总在 0 和 1 之间，到不了 0，也不变号。要让「难吃」(0, 0) 和「不好吃」(1, 1) 输出 0，"
            "只能让 u 在这两句上都是 0（u 的偏置为 0，p、n 的权重相加为 0），于是 u 在「好吃」和「不难吃」上一正一负，"
            "乘上总为正的门，两句的输出也一正一负，不可能都是 1。把上面的精确读数配上 σ 门，MSE 是 "
            + num(with_sigmoid, 3) + "：σ(0) = " + num(sigmoid(0.0), 1) + "，门在「难吃」上关不上。")


def view(params):
    activation, gate, up = check(params)
    key, label, prefix, unit = spec(activation)
    found = fit(activation, gate, up)
    per = steps(activation, gate, up)
    exact = exact_solution(activation)
    poly = multilinear(found["out"])
    is_exact = found["mse"] < TINY
    rows = {}
    for (name, p, n, y), s, o in zip(REVIEWS, per, found["out"]):
        rows[name] = {"g": num(s["g"], 2), "act": num(s["act"], 3), "u": num(s["u"], 2), "out": num(o, 3),
                      "data-exact": "true" if abs(o - y) < 1e-9 else "false"}
    act_of = prefix + "(" + reading_text(gate) + ")"
    baseline = sum(r[3] * r[3] for r in REVIEWS) / len(REVIEWS)  # every output 0
    formula = "ŷ = " + num(found["w_o"], 3) + " · " + act_of + " · (" + reading_text(up) + ")"
    verdict = ("四句的输出都等于目标：精确解，MSE = 0。" if is_exact else
               "MSE = " + num(found["mse"], 3) + "（四句一律输出 0 时是 " + num(baseline, 3) + "）。")
    out = {
        "unit": unit,
        "gate": reading_text(gate),
        "up": reading_text(up),
        "act-of": act_of,
        "w_o": num(found["w_o"], 3),
        "formula": formula,
        "poly": ("在这四句上，输出可以写成 ŷ = " + linear_text(poly[1:], ("p", "n", "pn"), poly[0])
                 + "（p、n 只取 0 和 1，任何输出都能这样写）；目标是 p + n − 2pn。"),
        "mse": num(found["mse"], 3),
        "verdict": verdict,
        "exact-note": exact_note(),
        "sigmoid-note": sigmoid_note(),
        "button-note": ("σ 门没有精确解（见下），按钮不可用；换成「无」或 SiLU 再按。" if exact is None
                        else "按下去：把六个滑块设成精确解。"),
    }
    for name, w in (("gate", gate), ("up", up)):
        for i, r in enumerate(READINGS):
            out[name + "-" + r] = num(w[i], 2)
    return {
        "params": {"activation": activation, "gate": gate, "up": up},
        "slider": {"min": SLIDER[0], "max": SLIDER[1], "step": SLIDER[2]},
        "activations": [{"value": k, "label": lab, "checked": k == activation} for k, lab, _, _ in ACTIVATIONS],
        "readings": [{"name": name, "short": short, "sliders": [
            {"key": name + "-" + r, "label": what, "value": w[i]} for i, (r, what) in enumerate(zip(READINGS, READ_LABELS))]}
            for name, short, w in (("gate", "门 g", gate), ("up", "上投影 u", up))],
        "exact": exact,
        "exact_available": exact is not None,
        "reviews": [{"name": name, "p": p, "n": n, "y": y} for name, p, n, y in REVIEWS],
        "rows": rows,
        "out": out,
        "announce": (unit + "：g = " + reading_text(gate) + "，u = " + reading_text(up) + "，w_o = "
                     + num(found["w_o"], 3) + "：" + ("精确解，MSE = 0" if is_exact else "MSE = " + num(found["mse"], 3)) + "。"),
    }
