"""norm-token: one token's vector of 4 numbers through LayerNorm and RMSNorm, side by side, step by step.

LayerNorm subtracts the token's own mean mu, divides by sqrt(var + eps) (var: the mean of
(x - mu)^2, the biased variance, as torch.nn.functional.layer_norm computes it), multiplies
by the gain and adds a bias beta. RMSNorm skips the mean and beta: it divides by
sqrt(mean(x^2) + eps) and multiplies by the gain. The gain is zero-centred, 1 + w with w
starting at 0, as in the anchor model and lab/model.py's norm_gain="1+w"; beta is 0 here.
eps sits inside the square root, as in Llama's RMSNorm and lab/model.py (x * rsqrt(ms + eps)):
it matters only when the variance or mean square is not much larger than eps, e.g. a vector
whose every entry is close to 0, which it keeps from being blown up to unit scale.
Presets: an ordinary vector, one outlier dimension, all entries near 0.
Standard library only, in the subset MicroPython shares with CPython (no f-strings).
"""
import math

from numfmt import num, sci

PARAMS = {"x": [1.0, 2.0, 3.0, 6.0], "w": 0.0, "eps": 1e-5, "preset": None}
DIMS = 4
SLIDER = (-1.0, 1.0, 0.1)  # w, the gain being 1 + w
EPS_CHOICES = (1e-5, 1e-2, 1.0)
X_LIMIT = 1000.0  # what a number input may hold
PRESETS = (  # (key, button label, vector); a list, not a dict, so every runtime keeps the order
    ("plain", "普通", [1.0, 2.0, 3.0, 6.0]),
    ("outlier", "一个离群维", [0.5, -0.3, 0.2, 40.0]),
    ("near-zero", "全接近 0", [0.001, -0.002, 0.001, 0.0]),
)


def layer_norm(x, w=0.0, eps=1e-5):
    """LayerNorm of one token, beta = 0: each step's value.

    layer_norm([1, 2, 3, 6])["out"] -> [-1.069..., -0.534..., 0.0, 1.603...]
    """
    n = len(x)
    mean = sum(x) / n
    centred = [v - mean for v in x]
    var = sum(c * c for c in centred) / n
    denom = math.sqrt(var + eps)
    normed = [c / denom for c in centred]
    out = [v * (1.0 + w) + 0.0 for v in normed]  # beta = 0
    return {"mean": mean, "centred": centred, "var": var, "denom": denom, "normed": normed, "out": out}


def rms_norm(x, w=0.0, eps=1e-5):
    """RMSNorm of one token (no mean, no beta): each step's value.

    rms_norm([1, 2, 3, 6])["out"] -> [0.282..., 0.565..., 0.848..., 1.697...]
    """
    ms = sum(v * v for v in x) / len(x)
    denom = math.sqrt(ms + eps)
    normed = [v / denom for v in x]
    out = [v * (1.0 + w) for v in normed]
    return {"ms": ms, "denom": denom, "normed": normed, "out": out}


def fig(v):
    """A step's value: 3 decimals, 4 below 0.01, scientific below 0.0001 (a tiny variance stays visible)."""
    if abs(v) < 1e-12:
        return "0"
    if abs(v) < 1e-4:
        return sci(v, 3)
    return num(v, 4 if abs(v) < 0.01 else 3)


def input_text(v):
    """A number input's value as the browser writes String(v): 40 not 40.0."""
    return str(int(v)) if v == int(v) else repr(v)


def x_text(v):
    """An input as typed: whole numbers bare, 3 decimals, scientific below 0.001."""
    return num(v) if v == 0 or abs(v) >= 0.001 else sci(v, 3)


def eps_label(eps):
    """1 × 10⁻⁵, 0.01, 1: as the select shows it."""
    if eps < 0.001:
        return sci(eps, 2)
    return num(eps) if eps == round(eps) else num(eps, 6).rstrip("0")


def vec_text(values):
    return "、".join(fig(v) for v in values)


def preset_of(x):
    for key, label, vector in PRESETS:
        if vector == x:
            return key
    return None


def check(params):
    """The params as numbers, or ValueError with what is wrong."""
    preset = params.get("preset")
    if preset is not None:
        found = [p for p in PRESETS if p[0] == preset]
        if not found:
            raise ValueError("no preset " + repr(preset) + "; presets: " + ", ".join(p[0] for p in PRESETS))
        x = list(found[0][2])
    else:
        x = [float(v) for v in params["x"]]
    if len(x) != DIMS or any(not abs(v) <= X_LIMIT for v in x):
        raise ValueError("x must be " + str(DIMS) + " numbers within +-" + num(X_LIMIT) + ", got " + repr(params["x"]))
    w = round(float(params["w"]), 9) + 0.0
    if not SLIDER[0] <= w <= SLIDER[1]:
        raise ValueError("w must be in [-1, 1], got " + repr(params["w"]))
    eps = float(params["eps"])
    if not 0 < eps <= 10:
        raise ValueError("eps must be in (0, 10], got " + repr(params["eps"]))
    return [v + 0.0 for v in x], w, eps


def share_text(share):
    """eps's share of the denominator, after "的": 不到 0.01% / 86.96% / 超过 99.99%."""
    if 100 * share < 0.01:
        return "不到 0.01%"
    if 100 * share > 99.99:
        return "超过 99.99%"
    return " " + num(100 * share, 2) + "%"


def eps_note(name, stat_name, stat, eps, with_eps, without_eps):
    """What eps does to this norm here: its share of the denominator, and the output without it,
    both before the gain (the output column shows them times 1 + w)."""
    share = eps / (stat + eps)
    if stat < 1e-12:
        return (name + "：" + stat_name + " 是 0，不加 ε 就是 0/0；有了 ε，分母是 √ε = " + fig(math.sqrt(eps))
                + "，乘增益之前的输出是 " + vec_text(with_eps) + "。")
    if share < 0.01:
        return (name + "：ε 只占 " + stat_name + " + ε 的" + share_text(share) + "，几乎不改变结果"
                "（不加 ε，乘增益之前绝对值最大的一维是 " + fig(max(without_eps, key=abs)) + "）。")
    return (name + "：ε 占了 " + stat_name + " + ε 的" + share_text(share) + "，分母被 ε 撑大，输出被压小："
            "乘增益之前，绝对值最大的一维是 " + fig(max(with_eps, key=abs)) + "，不加 ε 会是 " + fig(max(without_eps, key=abs)) + "。")


def view(params):
    x, w, eps = check(params)
    ln = layer_norm(x, w, eps)
    rms = rms_norm(x, w, eps)
    gain = 1.0 + w
    ln_zero = ln["normed"] if ln["var"] < 1e-12 else [c / math.sqrt(ln["var"]) for c in ln["centred"]]
    rms_zero = rms["normed"] if rms["ms"] < 1e-12 else [v / math.sqrt(rms["ms"]) for v in x]
    eps_options = list(EPS_CHOICES) if eps in EPS_CHOICES else sorted(list(EPS_CHOICES) + [eps])
    square_sum = sum(v * v for v in x)
    big = max(range(DIMS), key=lambda k: abs(x[k]))
    big_share = x[big] * x[big] / square_sum if square_sum > 0 else 0.0
    share_decimals = 2 if 0.999 < big_share < 1 else 1  # 99.98%, not a rounded 100.0%
    rows = {}
    for k in range(DIMS):
        rows["ln-" + str(k)] = {"x": x_text(x[k]), "centred": fig(ln["centred"][k]), "normed": fig(ln["normed"][k]),
                                "out": fig(ln["out"][k])}
        rows["rms-" + str(k)] = {"x": x_text(x[k]), "normed": fig(rms["normed"][k]), "out": fig(rms["out"][k])}
    current = preset_of(x)
    out = {
        "w": num(w, 1),
        "gain": num(gain, 1),
        "ln-mean": fig(ln["mean"]),
        "ln-var": fig(ln["var"]),
        "ln-denom": fig(ln["denom"]),
        "ln-std-out": fig(math.sqrt(sum(v * v for v in ln["out"]) / DIMS)),
        "rms-ms": fig(rms["ms"]),
        "rms-denom": fig(rms["denom"]),
        "rms-rms-out": fig(math.sqrt(sum(v * v for v in rms["out"]) / DIMS)),
        "rms-mean-out": fig(sum(rms["out"]) / DIMS),
        "big": ("绝对值最大的是第 " + str(big + 1) + " 维，占了 Σx² 的 " + num(100 * big_share, share_decimals) + "%。"
                "归一化之后，单独一维最大也只能到 √3 ≈ 1.732（LayerNorm，4 维减掉均值）和 √4 = 2（RMSNorm），再乘增益。"),
        "ln-eps": eps_note("LayerNorm", "σ²", ln["var"], eps, ln["normed"], ln_zero),
        "rms-eps": eps_note("RMSNorm", "mean(x²)", rms["ms"], eps, rms["normed"], rms_zero),
    }
    return {
        "params": {"x": x, "w": w, "eps": eps, "preset": params.get("preset")},
        "limit": X_LIMIT,
        "inputs": [input_text(v) for v in x],
        "slider": {"min": SLIDER[0], "max": SLIDER[1], "step": SLIDER[2]},
        "presets": [{"key": key, "label": label, "x": vector, "pressed": "true" if key == current else "false"}
                    for key, label, vector in PRESETS],
        "current": current or "",
        "eps_options": [{"value": repr(e), "label": eps_label(e), "selected": e == eps} for e in eps_options],
        "rows": rows,
        "out": out,
        "ln": ln,
        "rms": rms,
        "announce": ("x = " + "、".join(x_text(v) for v in x) + "，增益 1 + w = " + num(gain, 1)
                     + "，ε = " + eps_label(eps) + "：LayerNorm 输出 " + vec_text(ln["out"]) + "；RMSNorm 输出 " + vec_text(rms["out"]) + "。"),
    }
