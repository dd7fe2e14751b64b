"""activation-curves: ReLU, GELU (exact, x·Φ(x)), GELU's tanh form (GPT-2's) and SiLU (x·σ(x)) on one plot; a slider reads all four at one x.

The range is x in [-4, 4]: at its right end GELU is within 1.3e-4 of x and SiLU within 0.072, so
"for large x they are all ≈ x" shows, and on its left SiLU's dip and its slow way back to 0
fit. A second panel magnifies x in [-4, 1], where the curves differ. The minima and the
tanh form's largest error are searched for here (bisection on the slope, golden section on
the error), never typed. Standard library only, in the subset MicroPython shares (no f-strings).
"""
import math

from logchart import tenths
from numfmt import num, pct, sci

PARAMS = {"x": -1.0, "curves": ["relu", "gelu", "gelu_tanh", "silu"]}
X_RANGE = (-4.0, 4.0)
SLIDER_STEP = 0.05
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
SQRT_2 = math.sqrt(2.0)
# (key, name in the table and the legend, short name read out, formula); a tuple, so every
# runtime keeps the order
CURVES = (
    ("relu", "ReLU", "ReLU", "max(0, z)"),
    ("gelu", "GELU（精确）", "GELU", "z·Φ(z)"),
    ("gelu_tanh", "GELU（tanh 近似，GPT-2 用的）", "GELU 的 tanh 近似", "0.5z(1 + tanh(√(2/π)(z + 0.044715z³)))"),
    ("silu", "SiLU", "SiLU", "z·σ(z)"),
)
AT_MIN = 1e-6  # x came from a jump button (the model keeps 9 decimals); no slider step is this close
NEAR = 0.95  # "close to x" in the words below: both curves give at least this share of x
KEYS = tuple(c[0] for c in CURVES)
# (key, caption, x range, y range, y ticks): the whole plot, and the negative side magnified
PANELS = (
    ("full", "全貌：z 从 −4 到 4（虚线是 y = z）", (-4.0, 4.0), (-1.0, 4.0), (-1.0, 0.0, 1.0, 2.0, 3.0, 4.0)),
    ("zoom", "放大两条凹陷：z 从 −4 到 1", (-4.0, 1.0), (-0.35, 1.0), (-0.3, -0.2, -0.1, 0.0, 0.5, 1.0)),
)
W, H = 600, 300  # each panel's plot area in SVG units
SAMPLE = 0.05    # spacing of the polylines' points in x


def relu(x):
    """relu(-1.0), relu(2.0) -> (0.0, 2.0)"""
    return x if x > 0 else 0.0


def normal_cdf(x):
    """Φ(x), the standard normal's CDF. normal_cdf(0.0) -> 0.5"""
    return 0.5 * (1.0 + math.erf(x / SQRT_2))


def gelu(x):
    """GELU as Hendrycks & Gimpel define it: x·Φ(x). round(gelu(1.0), 4) -> 0.8413"""
    return x * normal_cdf(x)


def gelu_tanh(x):
    """GPT-2's GELU, the tanh form. round(gelu_tanh(1.0), 4) -> 0.8412"""
    return 0.5 * x * (1.0 + math.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))


def sigmoid(x):
    """σ(x) = 1 / (1 + e^-x), without overflow for large |x|. sigmoid(0.0) -> 0.5"""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def silu(x):
    """SiLU (Swish with β = 1): x·σ(x). round(silu(1.0), 4) -> 0.7311"""
    return x * sigmoid(x)


FUNCTIONS = {"relu": relu, "gelu": gelu, "gelu_tanh": gelu_tanh, "silu": silu}


def value(key, x):
    return FUNCTIONS[key](x)


def values(x):
    """All four curves at x, in CURVES order: values(-1.0) -> [0.0, -0.1587, -0.1588, -0.2689] (rounded)."""
    return [value(k, x) for k in KEYS]


def gelu_slope(x):
    """d/dx x·Φ(x) = Φ(x) + x·φ(x)."""
    return normal_cdf(x) + x * math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def silu_slope(x):
    """d/dx x·σ(x) = σ(x)·(1 + x·(1 − σ(x)))."""
    s = sigmoid(x)
    return s * (1.0 + x * (1.0 - s))


def bisect_root(f, lo, hi):
    """A root of f in [lo, hi], where f(lo) < 0 < f(hi): 80 halvings, far below float spacing."""
    if not f(lo) < 0 < f(hi):
        raise ValueError("no sign change of the slope in [" + repr(lo) + ", " + repr(hi) + "]")
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def gelu_min():
    """GELU's lowest point: where its slope crosses 0, between -3 and 0 (it falls, then rises).

    gelu_min() -> {'x': -0.7518..., 'y': -0.1699...}
    """
    x = bisect_root(gelu_slope, -3.0, 0.0)
    return {"x": x, "y": gelu(x)}


def silu_min():
    """SiLU's lowest point: where its slope crosses 0, between -3 and 0.

    silu_min() -> {'x': -1.2784..., 'y': -0.2784...}  (the slope is 0 where σ = 1 + 1/x, so y = x + 1 there)
    """
    x = bisect_root(silu_slope, -3.0, 0.0)
    return {"x": x, "y": silu(x)}


def tanh_form_error(x):
    """GPT-2's tanh form minus the exact GELU at x."""
    return gelu_tanh(x) - gelu(x)


def tanh_form_max_error(lo=-10.0, hi=10.0):
    """The largest |tanh form − exact GELU| over [lo, hi], and where.

    Both forms satisfy f(x) − f(−x) = x, so the error is even: it is searched over |x| (a grid
    of 2,000 steps, then a golden-section search between the best point's neighbours), and
    'both_signs' says whether −x is in the range too.
    tanh_form_max_error(-10, 10) -> {'x': 2.6989..., 'error': 0.000473..., 'both_signs': True}
    """
    lo, hi = float(lo), float(hi)
    if not lo < hi:
        raise ValueError("need lo < hi, got " + repr(lo) + ", " + repr(hi))
    if lo <= 0 <= hi:
        a, b = 0.0, max(-lo, hi)
    else:
        a, b = min(abs(lo), abs(hi)), max(abs(lo), abs(hi))
    steps = 2000
    grid = [a + (b - a) * i / steps for i in range(steps + 1)]
    best = 0
    for i in range(1, steps + 1):
        if abs(tanh_form_error(grid[i])) > abs(tanh_form_error(grid[best])):
            best = i
    left, right = grid[max(best - 1, 0)], grid[min(best + 1, steps)]
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(80):  # golden section on |error|, which has one peak between the neighbours
        c = right - ratio * (right - left)
        d = left + ratio * (right - left)
        if abs(tanh_form_error(c)) >= abs(tanh_form_error(d)):
            right = d
        else:
            left = c
    x = 0.5 * (left + right)
    if abs(tanh_form_error(grid[best])) > abs(tanh_form_error(x)):
        x = grid[best]  # the peak is at an end of the range
    signed_x = x if x <= hi else -x
    return {"x": signed_x, "error": tanh_form_error(x), "both_signs": -x >= lo and x <= hi}


def gap_to_identity(key, x):
    """How far below the line y = x a curve is at x: x − f(x)."""
    return x - value(key, x)


def small(v):
    """A value that may be tiny: 3 decimals, or scientific below 0.001 (so −1.3 × 10⁻⁴, not −0.000)."""
    if v != 0 and abs(v) < 0.001:
        return sci(v, 2)
    return num(v, 3)


def share(ratio):
    """A share of x as a percentage; never a rounded-up 100.0% for a curve that stays below x."""
    return "99.9% 以上" if ratio >= 0.9995 else pct(ratio)


def check(params):
    """The params as the model uses them, or ValueError naming what is wrong."""
    x = round(float(params["x"]), 9) + 0.0
    if not X_RANGE[0] <= x <= X_RANGE[1]:
        raise ValueError("x must be in [-4, 4], got " + repr(params["x"]))
    shown = params["curves"]
    if isinstance(shown, str) or any(k not in KEYS for k in shown):
        raise ValueError("curves must be a list of " + ", ".join(KEYS) + "; got " + repr(shown))
    return x, [k for k in KEYS if k in shown]


# What does not depend on x (the minima, the tanh form's largest error, every curve's polyline),
# computed on the first view and kept: on MicroPython a view costs a few ms instead of ~100.
MEMO = {}


def memo(key, compute):
    if key not in MEMO:
        MEMO[key] = compute()
    return MEMO[key]


def sx(panel, x):
    lo, hi = panel[2]
    return W * (x - lo) / (hi - lo)


def sy(panel, y):
    lo, hi = panel[3]
    return H * (hi - y) / (hi - lo)


def points(panel, key):
    lo, hi = panel[2]
    count = int(round((hi - lo) / SAMPLE))
    xs = [lo + (hi - lo) * i / count for i in range(count + 1)]
    return " ".join([tenths(sx(panel, x)) + "," + tenths(sy(panel, value(key, x))) for x in xs])


def panel_view(panel, x, shown, minima):
    key, caption, xr, yr, yticks = panel
    inside = xr[0] <= x <= xr[1]
    xticks = [float(t) for t in range(int(math.ceil(xr[0])), int(math.floor(xr[1])) + 1)]
    diagonal = None
    if key == "full":  # y = x, clipped to the panel's y range
        a, b = max(xr[0], yr[0]), min(xr[1], yr[1])
        diagonal = {"x1": tenths(sx(panel, a)), "y1": tenths(sy(panel, a)),
                    "x2": tenths(sx(panel, b)), "y2": tenths(sy(panel, b))}
    return {
        "key": key, "caption": caption, "w": W, "h": H,
        "x0": tenths(sx(panel, 0.0)), "y0": tenths(sy(panel, 0.0)),
        "xticks": [{"x": tenths(sx(panel, t)), "label": num(t)} for t in xticks],
        "yticks": [{"y": tenths(sy(panel, t)), "label": num(t, 0 if t == int(t) else 1)} for t in yticks],
        "diagonal": diagonal,
        "lines": [{"key": k, "points": memo(("points", key, k), lambda k=k: points(panel, k)), "shown": k in shown}
                  for k in KEYS],
        "markers": [{"key": k, "cx": tenths(sx(panel, x)), "cy": tenths(sy(panel, value(k, x))),
                     "shown": inside and k in shown} for k in KEYS],
        "minima": [] if key != "zoom" else [
            {"key": k, "cx": tenths(sx(panel, m["x"])), "cy": tenths(sy(panel, m["y"])),
             "label": num(m["y"], 3), "shown": k in shown} for k, m in minima],
    }


def here(x, gmin, smin):
    """What the four curves do at this x, in words."""
    if x == 0:
        return "z = 0：四条曲线都是 0。"
    if x < 0:
        text = ("z 是负数：ReLU 把它截成 0；GELU 给 " + small(gelu(x)) + "，SiLU 给 " + small(silu(x))
                + "，还让一点负值漏过去。")
        if abs(x - smin["x"]) < AT_MIN:
            text += "这里正是 SiLU 的最低点；GELU 的最低点在右边，它往左已经在回升。"
        elif abs(x - gmin["x"]) < AT_MIN:
            text += "这里正是 GELU 的最低点；SiLU 往左还在下降。"
        elif x < smin["x"]:
            text += "z 已经在两条曲线的最低点左边：再往左，GELU 和 SiLU 都回升，趋向 0。"
        elif x < gmin["x"]:
            text += "z 在 GELU 的最低点左边（GELU 往左回升了），还在 SiLU 的最低点右边（SiLU 往左还在下降）。"
        else:
            text += "再往左，两条都还在下降。"
        return text
    text = ("z 是正数：ReLU 原样输出；GELU 给 z·Φ(z)，是 z 的 " + share(normal_cdf(x)) + "；SiLU 给 z·σ(z)，是 z 的 "
            + share(sigmoid(x)) + "。")
    if sigmoid(x) >= NEAR:  # SiLU is the slower of the two to reach x (σ < Φ for x > 0)
        text += "四条都已贴近 z。"
    return text


def view(params):
    x, shown = check(params)
    gmin, smin = memo("gelu_min", gelu_min), memo("silu_min", silu_min)
    shown_range = memo("tanh_shown", lambda: tanh_form_max_error(X_RANGE[0], X_RANGE[1]))
    wide = memo("tanh_wide", lambda: tanh_form_max_error(-10.0, 10.0))
    at = values(x)
    names = [c[2] for c in CURVES]
    right, left = X_RANGE[1], X_RANGE[0]
    where = ("±" if shown_range["both_signs"] else "") + num(abs(shown_range["x"]), 3)
    same = abs(wide["error"] - shown_range["error"]) <= 1e-15
    out = {
        "x": num(x, 3),
        "diff": sci(tanh_form_error(x), 2) if abs(tanh_form_error(x)) > 0 else "0",
        "here": here(x, gmin, smin),
        "negative": ("负半轴：ReLU 处处是 0；GELU 最低降到 " + num(gmin["y"], 3) + "（z ≈ "
                     + num(gmin["x"], 3) + "），SiLU 更深，降到 " + num(smin["y"], 3) + "（z ≈ " + num(smin["x"], 3)
                     + "）。过了最低点再往左，两条都回到 0：z = " + num(left) + " 时 GELU 是 " + small(gelu(left))
                     + "，SiLU 还有 " + small(silu(left)) + "。"),
        "positive": ("正半轴：GELU、SiLU 都比 z 低（ReLU 就等于 z），低的正是负半轴上同一个 |z| 处的深度：z = " + num(right) + " 时 ReLU 正好是 " + num(right) + "，GELU 比它小 "
                     + small(gap_to_identity("gelu", right)) + "，SiLU 小 " + small(gap_to_identity("silu", right))
                     + "，和 z = " + num(left) + " 处一样。"),
        "tanh": ("两条 GELU 在图上重合：tanh 近似和精确式在 [" + num(left) + ", " + num(right) + "] 上最多差 "
                 + sci(abs(shown_range["error"]), 2) + "（z ≈ " + where + "）"
                 + ("，放宽到 [−10, 10] 也还是这么多。" if same else "；在 [−10, 10] 上最多差 " + sci(abs(wide["error"]), 2) + "。")),
    }
    rows = {}
    for k, v in zip(KEYS, at):
        rows[k] = {"value": num(v, 4), "data-shown": "true" if k in shown else "false"}
    return {
        "params": {"x": x, "curves": shown},
        "slider": {"min": X_RANGE[0], "max": X_RANGE[1], "step": SLIDER_STEP},
        "curves": [{"key": k, "name": name, "formula": formula, "checked": k in shown} for k, name, _, formula in CURVES],
        "jumps": [{"key": "gelu", "label": "跳到 GELU 的最低点", "x": gmin["x"]},
                  {"key": "silu", "label": "跳到 SiLU 的最低点", "x": smin["x"]}],
        "panels": [panel_view(p, x, shown, (("gelu", gmin), ("silu", smin))) for p in PANELS],
        "rows": rows,
        "out": out,
        "announce": "z = " + num(x, 3) + "：" + "，".join([n + " = " + num(v, 4) for n, v in zip(names, at)]) + "。",
    }
