"""depth-signal: a stack of random layers, and what depth does to the signal and its gradient.

Each of the N layers holds two sub-layers (like attention and FFN), and each sub-layer is
a small random network F(h) = relu(h W1) W2 on vectors of width WIDTH. The stream x
passes through every sub-layer:

    plain stack:   x <- F(x)                   (no residual)
    residual:      x <- x + F(x)               (each sub-layer writes into the stream)
    normalised:    F reads rms_norm(x) instead of x (Pre-LN, as in our model)

Init: "unit" draws W1 ~ N(0, 2/WIDTH), W2 ~ N(0, 1/WIDTH), so a sub-layer that reads a
unit-RMS input writes about unit variance (the lesson's thought experiment: with Pre-LN
and residuals the stream's RMS grows like sqrt(writes + 1)); "scaled" also divides W2 by
sqrt(2N), GPT-2's rule for the matrices that write into the residual stream.

The forward pass records the stream's RMS after every write; the backward pass (written
out by hand, checked against finite differences in the tests) carries the gradient of a
fixed readout L = mean over samples of u . x_final back to every layer's input, and
reports its size relative to the output's. Standard library only, deterministic: the
same weights for a given depth and init every time (random.Random(SEED)).
"""
import math
import random

from numfmt import num, sci

PARAMS = {"depth": 16, "residual": False, "norm": True, "init": "unit"}
DEPTH = (1, 64, 1)  # slider: min, max, step (layers; each has two sub-layers)
WIDTH = 16          # the stream's width d: small, so Python in the browser stays quick
SAMPLES = 4         # input vectors pushed through together
SEED = 2026
EPS = 1e-12
INITS = {"unit": "每次写入方差约为 1", "scaled": "写回矩阵再 ÷√(2N)（GPT-2）"}
VANISHED, EXPLODED = 1e-3, 1e3  # a gradient this many times smaller / larger than at the output

_weights = {}  # (sub-layers, init) -> weights: the same draw for every call, made once per page


def weights(n_sub, init):
    """W1, W2 of each sub-layer. The draw depends only on the sub-layer's position, so
    layer k is the same network at every depth; "scaled" divides every W2 by sqrt(n_sub)."""
    key = (n_sub, init)
    if key not in _weights:
        rng = random.Random(SEED)
        s1, s2 = math.sqrt(2 / WIDTH), math.sqrt(1 / WIDTH)
        scale = 1 / math.sqrt(n_sub) if init == "scaled" else 1.0
        layers = []
        for _ in range(n_sub):
            w1 = [[rng.gauss(0, s1) for _ in range(WIDTH)] for _ in range(WIDTH)]
            w2 = [[rng.gauss(0, s2) * scale for _ in range(WIDTH)] for _ in range(WIDTH)]
            layers.append((w1, w2))
        _weights[key] = layers
    return _weights[key]


def inputs():
    """SAMPLES unit-variance input vectors and the unit readout direction u."""
    rng = random.Random(SEED + 1)
    xs = [[rng.gauss(0, 1) for _ in range(WIDTH)] for _ in range(SAMPLES)]
    u = [rng.gauss(0, 1) for _ in range(WIDTH)]
    norm = math.sqrt(sum(v * v for v in u))
    return xs, [v / norm for v in u]


def matvec(v, w):
    """Row vector times matrix. matvec([1, 2], [[1, 0], [0, 1]]) -> [1, 2]"""
    return [sum(v[i] * w[i][j] for i in range(len(v))) for j in range(len(w[0]))]


def vecmat_t(g, w):
    """g times the transpose of w: the backward pass of matvec. vecmat_t([1, 2], [[1, 0], [0, 1]]) -> [1, 2]"""
    return [sum(w[i][j] * g[j] for j in range(len(g))) for i in range(len(w))]


def rms(v):
    """Root mean square. rms([3, 4, 0, 0]) -> 2.5"""
    return math.sqrt(sum(x * x for x in v) / len(v) + EPS)


def size(v):
    """The stream's RMS as reported (no epsilon, so a vanished signal reads as tiny, not as 1e-6)."""
    return math.sqrt(sum(x * x for x in v) / len(v))


def simulate(depth, residual, norm, init):
    """Forward RMS after every write and the gradient's size at every layer's input.

    Returns {"rms": [after embedding, after write 1, ...] (2 * depth + 1 values),
             "grad": [at layer 1's input, ..., at layer depth's input, at the output] (depth + 1),
             both averaged over the samples; grad relative to the output's}.
    """
    n_sub = 2 * depth
    layers = weights(n_sub, init)
    xs, u = inputs()
    rms_sum = [0.0] * (n_sub + 1)
    grad_sq = [0.0] * (depth + 1)
    for x in xs:
        cache = []
        rms_sum[0] += size(x)
        for k, (w1, w2) in enumerate(layers):
            r = rms(x)
            h = [v / r for v in x] if norm else x
            z = matvec(h, w1)
            f = matvec([max(v, 0.0) for v in z], w2)
            cache.append((r, h, z))
            x = [a + b for a, b in zip(x, f)] if residual else f
            rms_sum[k + 1] += size(x)
        g = [v / SAMPLES for v in u]  # dL/dx_final for L = mean_s u . x_final
        grad_sq[depth] += sum(v * v for v in g)
        for k in range(n_sub - 1, -1, -1):
            w1, w2 = layers[k]
            r, h, z = cache[k]
            gz = [a if zz > 0 else 0.0 for a, zz in zip(vecmat_t(g, w2), z)]
            gh = vecmat_t(gz, w1)
            if norm:  # d(x / rms(x)) / dx = (I - h h^T / d) / rms
                dot = sum(a * b for a, b in zip(h, gh)) / WIDTH
                gh = [(a - hh * dot) / r for a, hh in zip(gh, h)]
            g = [a + b for a, b in zip(g, gh)] if residual else gh
            if k % 2 == 0:
                grad_sq[k // 2] += sum(v * v for v in g)
    out_norm = math.sqrt(grad_sq[depth])
    return {"rms": [v / SAMPLES for v in rms_sum],
            "grad": [math.sqrt(v) / out_norm for v in grad_sq]}


def check(params):
    depth = int(params["depth"])
    if not DEPTH[0] <= depth <= DEPTH[1]:
        raise ValueError(f"depth must be {DEPTH[0]}..{DEPTH[1]}, got {depth}")
    if params["init"] not in INITS:
        raise ValueError(f"init must be one of {sorted(INITS)}, got {params['init']!r}")
    return {"depth": depth, "residual": bool(params["residual"]), "norm": bool(params["norm"]),
            "init": params["init"]}


def ratio(x):
    """A gradient ratio as people read it: 0.5, 3.2, 2 × 10⁻⁹. ratio(6.4e-9) -> '6.4 × 10⁻⁹'"""
    return num(x, 2) if 0.01 <= x < 1000 else sci(x)


def verdict(g):
    """What a gradient ratio at layer 1 means. verdict(1e-5)[0] -> '消失'"""
    if g < VANISHED:
        return "消失", "梯度消失了：前面的层几乎收不到学习信号"
    if g > EXPLODED:
        return "爆炸", "梯度爆炸了：一步更新就可能把前面的层推飞"
    return "可用", "还在能训练的范围里"


def chart(values, width=600, height=180):
    """A log-scale polyline of positive values: points, y ticks at powers of ten, the axis range."""
    logs = [math.log10(max(v, 1e-300)) for v in values]
    lo, hi = math.floor(min(logs)), math.ceil(max(logs))
    if hi - lo < 2:
        lo, hi = lo - 1, hi + 1
    step = max(1, math.ceil((hi - lo) / 6))
    n = max(len(values) - 1, 1)

    def y(lv):
        return round(height * (hi - lv) / (hi - lo), 1)

    points = " ".join(f"{round(width * i / n, 1)},{y(lv)}" for i, lv in enumerate(logs))
    ticks = [{"y": y(t), "label": "1" if t == 0 else f"10{str(t).translate(str.maketrans('-0123456789', '⁻⁰¹²³⁴⁵⁶⁷⁸⁹'))}"}
             for t in range(lo, hi + 1, step)]
    return {"points": points, "ticks": ticks, "w": width, "h": height, "lo": lo, "hi": hi, "y": y}


def view(params):
    """Everything the widget shows: both curves, the key numbers and the verdict."""
    p = check(params)
    sim = simulate(**p)
    writes = 2 * p["depth"]
    final, g1 = sim["rms"][-1], sim["grad"][0]
    kind, grad_text = verdict(g1)
    rms_chart = chart(sim["rms"])
    prediction = [math.sqrt(k + 1) * sim["rms"][0] for k in range(writes + 1)]
    y = rms_chart.pop("y")
    pred_points = " ".join(f"{round(rms_chart['w'] * k / max(writes, 1), 1)},"
                           f"{min(max(y(math.log10(v)), -20), rms_chart['h'] + 20)}" for k, v in enumerate(prediction))
    grad_chart = chart(sim["grad"])
    grad_chart.pop("y")
    stack = ("x ← x + F(RMSNorm(x))" if p["norm"] else "x ← x + F(x)") if p["residual"] else \
        ("x ← F(RMSNorm(x))" if p["norm"] else "x ← F(x)")
    return {
        "params": p,
        "slider": dict(zip(("min", "max", "step"), DEPTH)),
        "inits": [{"value": k, "label": v, "checked": k == p["init"]} for k, v in INITS.items()],
        "rms_chart": {**rms_chart, "prediction": pred_points if p["residual"] and p["norm"] else ""},
        "grad_chart": grad_chart,
        "out": {
            "depth": str(p["depth"]),
            "writes": str(writes),
            "stack": stack,
            "rms-final": num(final, 2) if 0.01 <= final < 1e4 else sci(final),
            "prediction": num(math.sqrt(writes + 1), 2),
            "grad-first": ratio(g1),
            "grad-verdict": grad_text,
            "data-verdict": kind,
        },
        "announce": f"{p['depth']} 层，{stack}：{writes} 次写入后残差流 RMS {num(final, 2) if final < 1e4 else sci(final)}；"
                    f"第 1 层的梯度是输出端的 {ratio(g1)} 倍，{grad_text}。",
    }
