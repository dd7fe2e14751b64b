"""swiglu-clamp: SiLU(g) * u has no upper bound; where fp16 and bf16 run out, and what a clamp keeps.

SwiGLU multiplies a gate SiLU(g) = g * sigmoid(g) of the gate's reading g by the up projection's
reading u (the lesson's names). For large g, SiLU(g) ~ g, so with u = g the product grows like g^2:
it passes fp16's largest number near g = 256 and bf16's near g = 1.8e19. The formats' largest
numbers are worked out from their bits (5 exponent and 10 mantissa bits for fp16, 8 and 7 for
bf16): (2 - 2^-m) * 2^bias. The configs' clamps (data/frontier-models.json, passed in as `clamps`)
cap the gate from above, g <= limit, and clamp the up reading to [-limit, limit]; gpt-oss also
gates with g * sigmoid(1.702 g) and adds 1 to the up reading. A clamped product stays within the
corners of that box, computed here.
The student moves g and u (or ties u = g) and picks a clamp; a log-log chart shows |product|
over g > 0 against the two formats' limits. It opens at g = u = 20, no clamp: a value no clamp
produces, so the page does not look clamped before the student picks one.
Standard library only, in the subset MicroPython shares with CPython (no f-strings).
"""
import math

from logchart import superscript, tenths
from numfmt import num, sci

PARAMS = {"g": 20.0, "u": 20.0, "tied": True, "clamp": "none", "clamps": None}
FORMATS = (("fp16", 5, 10), ("bf16", 8, 7))  # (name, exponent bits, mantissa bits)
# The sliders' stops: 1-2-5 near the clamps and fp16's edge, then powers of ten out to bf16's.
STOPS = (-100.0, -20.0, -10.0, -5.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0,
         200.0, 300.0, 500.0, 1e3, 1e4, 1e5, 1e6, 1e8, 1e10, 1e12, 1e14, 1e16, 1e18, 1e19, 2e19, 1e20)
INPUT_LIMIT = 1e20
CHART = {"w": 600, "h": 220, "x_lo": -1, "x_hi": 20, "y_lo": -3, "y_hi": 40}  # log10 ranges of the axes
SAMPLES = 84  # chart points over x_lo..x_hi, a quarter decade each (the chart's x axis is g)


def sigmoid(u):
    """1 / (1 + e^-u) without overflow for any u (exp only of a non-positive number)."""
    if u >= 0:
        return 1.0 / (1.0 + math.exp(-u))
    e = math.exp(u)
    return e / (1.0 + e)


def act(g, alpha=1.0):
    """The gate g * sigmoid(alpha * g): SiLU for alpha = 1, gpt-oss's gate for 1.702. act(10.0) -> 9.9995..."""
    return g * sigmoid(alpha * g)


def silu(x):
    """x * sigmoid(x). silu(10.0) * 10.0 -> 99.995..."""
    return act(x, 1.0)


def product(g, u):
    """SwiGLU's product with no clamp: SiLU(g) * u."""
    return silu(g) * u


def float_max(exponent_bits, mantissa_bits):
    """The largest finite number of a binary float format: all mantissa bits set, the top exponent
    below the one kept for inf/NaN, so (2 - 2^-m) * 2^(2^(e-1) - 1). float_max(5, 10) -> 65504.0"""
    return (2.0 - 2.0 ** -mantissa_bits) * 2.0 ** (2 ** (exponent_bits - 1) - 1)


def fp16_max():
    """(2 - 2^-10) * 2^15 = 65504.0"""
    return float_max(5, 10)


def bf16_max():
    """(2 - 2^-7) * 2^127 = 3.3895313892515355e+38"""
    return float_max(8, 7)


def fp8_e4m3_max():
    """FP8 E4M3 as FP8 training uses it (OCP's E4M3FN): no infinities, the top exponent holds numbers
    too and only its all-ones mantissa is NaN, so the largest is (2 - 2 * 2^-3) * 2^8 = 448.0"""
    return (2.0 - 2 * 2.0 ** -3) * 2.0 ** (2 ** (4 - 1))


def format_formula(exponent_bits, mantissa_bits):
    """The max as text: (2 − 2⁻¹⁰)·2¹⁵."""
    return "(2 − 2" + superscript(-mantissa_bits) + ")·2" + superscript(2 ** (exponent_bits - 1) - 1)


def overflow_x(limit):
    """The x > 0 where SiLU(x) * x first exceeds limit (it rises monotonically there), by bisection
    on log x. overflow_x(fp16_max()) -> 255.94..."""
    lo, hi = 0.0, 30.0  # log10 x: SiLU(1) * 1 < limit < SiLU(1e30) * 1e30 for the limits here
    for _ in range(200):
        mid = (lo + hi) / 2
        if silu(10.0 ** mid) * 10.0 ** mid > limit:
            hi = mid
        else:
            lo = mid
    return 10.0 ** hi


def overflow_x_fp16():
    """Where SiLU(x) * x first exceeds fp16's max: 255.94... (about sqrt(65504))."""
    return overflow_x(fp16_max())


def overflow_x_bf16():
    """Where SiLU(x) * x first exceeds bf16's max: about 1.84e19 (sqrt of 3.39e38)."""
    return overflow_x(bf16_max())


def act_min(alpha=1.0):
    """The gate's lowest value, min of g * sigmoid(alpha g) = min of u * sigmoid(u) / alpha, where the
    derivative sigmoid(u) * (1 + u * (1 - sigmoid(u))) is 0. act_min() -> -0.2784..."""
    lo, hi = -5.0, 0.0  # the derivative is negative at -5 and positive at 0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 1.0 + mid * (1.0 - sigmoid(mid)) < 0:
            lo = mid
        else:
            hi = mid
    return act((lo + hi) / 2, 1.0) / alpha


def clamp_range(limit, alpha=1.0, bias=0.0):
    """(lowest, highest) a clamped product can take: the gate act(min(g, limit)) spans
    [act_min, act(limit)], the up reading clamp(u, -limit, limit) + bias spans [-limit + bias,
    limit + bias]; a product of two intervals has its extremes at their corners."""
    gates = (act_min(alpha), act(limit, alpha))
    linears = (-limit + bias, limit + bias)
    corners = [g * v for g in gates for v in linears]
    return min(corners), max(corners)


def clamped_max(limit, alpha=1.0, bias=0.0):
    """The largest clamped product: act(limit) * (limit + bias). clamped_max(10.0) -> 99.995...
    (DeepSeek-V4's form); clamped_max(7.0, 1.702, 1.0) -> 55.9996... (gpt-oss's)."""
    return clamp_range(limit, alpha, bias)[1]


def clamped(g, u, form):
    """The config's clamped SwiGLU: act(min(g, limit)) * (clamp(u, -limit, limit) + bias)."""
    limit = form["limit"]
    gate = min(g, limit)
    linear = max(-limit, min(limit, u)) + form["linear_bias"]
    return {"gate_in": gate, "gate": act(gate, form["alpha"]), "linear": linear,
            "value": act(gate, form["alpha"]) * linear}


def check(params):
    """(g, u, tied, clamp key, forms) as numbers, or ValueError with what is wrong."""
    if params.get("clamps") is None:
        raise ValueError('swiglu-clamp needs clamps from data/, e.g. widget("swiglu-clamp", clamps=facts.clamps.forms)')
    forms = []
    for f in params["clamps"]:
        if f.get("gate_clamp") != "max only" or f.get("linear_clamp") != "symmetric":
            raise ValueError("only a gate clamped from above and a symmetric linear clamp are drawn, got " + repr(f))
        limit, alpha, bias = float(f["limit"]), float(f["alpha"]), float(f["linear_bias"])
        if not (limit > 0 and alpha > 0 and abs(bias) < limit):
            raise ValueError("a clamp needs limit > 0, alpha > 0 and |bias| < limit, got " + repr(f))
        forms.append({"key": str(f["key"]), "name": str(f["name"]), "limit": limit, "alpha": alpha, "linear_bias": bias})
    g, u = float(params["g"]) + 0.0, float(params["u"]) + 0.0
    if not (abs(g) <= INPUT_LIMIT and abs(u) <= INPUT_LIMIT):
        raise ValueError("g and u must be within ±1e20, got " + repr(params["g"]) + ", " + repr(params["u"]))
    tied = bool(params["tied"])
    if tied:
        u = g
    key = params["clamp"]
    if key != "none" and key not in [f["key"] for f in forms]:
        raise ValueError("clamp must be 'none' or one of " + ", ".join([f["key"] for f in forms]) + ", got " + repr(key))
    return g, u, tied, key, forms


def value_text(v):
    """A value on any scale: 7, 99.9955, 255.94, 1 × 10⁴⁰, 0.0052."""
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1e6 or a < 1e-3:
        return sci(v, 4)
    if v == int(v):
        return num(v)
    if a >= 100:
        return num(v, 2)
    return num(v, 4)  # SiLU(10) = 9.9995, not a rounded 10.000


def clamp_text(v):
    """A clamped value, to 4 decimals: 55.9996 stays below 56 on the page."""
    return num(v, 4)


def stops_for(g, u, forms):
    """The sliders' stops with the clamps' limits and the current values, each once, ascending."""
    values = list(STOPS)
    for v in [f["limit"] for f in forms] + [g, u]:
        if v not in values:
            values.append(v)
    values.sort()
    return values


def px(lx):
    """The chart's x coordinate of log10 x."""
    c = CHART
    return c["w"] * (lx - c["x_lo"]) / (c["x_hi"] - c["x_lo"])


def py(v):
    """The chart's y coordinate of |v|, log scale; out of range (0 included) on the frame's edge."""
    c = CHART
    lv = math.log10(abs(v)) if v != 0 else c["y_lo"]
    lv = max(c["y_lo"], min(c["y_hi"], lv))
    return c["h"] * (c["y_hi"] - lv) / (c["y_hi"] - c["y_lo"])


def chart(u, tied, form):
    """|product| over g > 0 on log-log axes, unclamped and (with a form) clamped, as SVG points."""
    c = CHART
    plain, capped = [], []
    for i in range(SAMPLES + 1):
        lx = c["x_lo"] + (c["x_hi"] - c["x_lo"]) * i / SAMPLES
        g = 10.0 ** lx
        uu = g if tied else u
        plain.append(tenths(px(lx)) + "," + tenths(py(product(g, uu))))
        if form is not None:
            capped.append(tenths(px(lx)) + "," + tenths(py(clamped(g, uu, form)["value"])))
    lines = []
    for name, e, m in FORMATS:
        lines.append({"name": name, "y": tenths(py(float_max(e, m))), "label": name + " 最大值"})
    # g = 1 sits close to g = 0.1: on a phone, where the labels are drawn larger, it is left out
    x_ticks = [{"x": tenths(px(t)), "label": "1" if t == 0 else "10" + superscript(t), "crowded": t == 0}
               for t in (-1, 0, 5, 10, 15, 20)]
    y_ticks = [{"y": tenths(py(10.0 ** t)), "label": "1" if t == 0 else "10" + superscript(t)} for t in (0, 10, 20, 30, 40)]
    return {"w": c["w"], "h": c["h"], "plain": " ".join(plain), "clamped": " ".join(capped),
            "lines": lines, "x_ticks": x_ticks, "y_ticks": y_ticks}


def overflow_text(v, limit):
    return "超过了：在这种格式里变成 inf（溢出）" if abs(v) > limit else "没超过，装得下"


def view(params):
    g, u, tied, key, forms = check(params)
    form = None
    for f in forms:
        if f["key"] == key:
            form = f
    p = product(g, u)
    # The current g on the chart (g > 0 only: the axis is log g); the clamped dot only with a clamp.
    lx = math.log10(g) if g > 0 else CHART["x_lo"]
    marker = {"show": g > 0, "x": tenths(px(lx)), "y": tenths(py(p)),
              "cy": tenths(py(clamped(g, u, form)["value"] if form is not None else p)), "clamped": form is not None}
    stops = stops_for(g, u, forms)
    out = {"g": value_text(g), "u": value_text(u), "silu": value_text(silu(g)), "product": value_text(p),
           "g-note": ("g 本身就超过了 fp16 的最大值：在 fp16 里 g 已经是 inf。" if abs(g) > fp16_max() else "")}
    formats, rows = [], {}
    for name, e, m in FORMATS:
        limit = float_max(e, m)
        formats.append({"name": name, "formula": format_formula(e, m), "bits": "指数 " + str(e) + " 位，尾数 " + str(m) + " 位",
                        "max": value_text(limit) if limit < 1e6 else sci(limit, 3)})
        rows["fmt-" + name] = {"verdict": overflow_text(p, limit), "data-over": "true" if abs(p) > limit else "false"}
    if form is None:
        out["clamp"] = "不截断：SiLU(g) · u 没有上界，g、u 越大乘积越大。"
        out["clamped"] = "—（先选一种截断）"
        out["clamp-range"] = ""
    else:
        c = clamped(g, u, form)
        lo, hi = clamp_range(form["limit"], form["alpha"], form["linear_bias"])
        gate_fn = "SiLU" if form["alpha"] == 1 else "g·σ(" + num(form["alpha"], 3) + "g)"
        plus = "" if form["linear_bias"] == 0 else " + " + value_text(form["linear_bias"])
        out["clamp"] = (form["name"] + "：门的读数 min(g, " + value_text(form["limit"]) + ") = " + value_text(c["gate_in"])
                        + "，过 " + gate_fn + " 得 " + value_text(c["gate"]) + "；上投影的读数 clamp(u, −" + value_text(form["limit"])
                        + ", " + value_text(form["limit"]) + ")" + plus + " = " + value_text(c["linear"]) + "。"
                        + ("" if form["alpha"] == 1 and form["linear_bias"] == 0 else
                           "它的门和上投影的 +" + value_text(form["linear_bias"]) + " 都和上面的 SiLU(g) · u 不同，"
                           "所以还没到截断值时，虚线也不和实线重合。"))
        out["clamped"] = clamp_text(c["value"])
        out["clamp-range"] = ("截断后乘积只能落在 [" + clamp_text(lo) + ", " + clamp_text(hi) + "]，最大 " + clamp_text(hi)
                              + "，离 fp16 的 " + num(fp16_max()) + " 还远。")
    return {
        "params": {"g": g, "u": u, "tied": tied, "clamp": key, "clamps": forms},
        "stops": stops,
        "g_index": stops.index(g),
        "u_index": stops.index(u),
        "choices": [{"value": "none", "label": "不截断", "checked": key == "none"}]
                   + [{"value": f["key"], "label": f["name"] + "（" + value_text(f["limit"]) + "）", "checked": key == f["key"]}
                      for f in forms],
        "formats": formats,
        "chart": chart(u, tied, form),
        "marker": marker,
        "thresholds": {"fp16": value_text(overflow_x_fp16()), "bf16": sci(overflow_x_bf16(), 3)},
        "out": out,
        "rows": rows,
        "announce": ("g = " + out["g"] + "，u = " + out["u"] + "：SiLU(g) · u = " + out["product"]
                     + "；fp16 " + ("溢出" if abs(p) > fp16_max() else "装得下") + "，bf16 " + ("溢出" if abs(p) > bf16_max() else "装得下")
                     + ("" if form is None else "；" + form["name"] + " 截断后 = " + out["clamped"]) + "。"),
    }


def example(facts):
    """The gallery's params: the two configs' clamps from the course's facts."""
    return {"clamps": facts["clamps"]["forms"]}
