"""depth-signal: a stack of random layers, and what depth does to the signal and its gradient.

Each of the L layers holds two sub-layers (like attention and FFN; both are small MLPs here,
nothing mixes positions), and each sub-layer is a random network F(h) = act(h W1) W2 on
vectors of width WIDTH, with act = ReLU or sigmoid. The stream x passes through every
sub-layer:

    plain stack:   x <- F(x)                   (no residual)
    residual:      x <- x + F(x)               (each sub-layer writes into the stream)
    normalised:    F reads rms_norm(x) instead of x (Pre-LN, as in our model)

Init: "unit" draws W1 ~ N(0, 2/WIDTH), W2 ~ N(0, 1/WIDTH) (He's init), so a ReLU sub-layer
that reads a unit-RMS input writes about unit variance (the lesson's thought experiment:
with Pre-LN and residuals the stream's RMS grows like sqrt(writes + 1)); "scaled" also
divides W2 by sqrt(2L), GPT-2's rule for the matrices that write into the residual stream.
The weights come from widgets/common/rng.py, one stream per seed (SEEDS): the draw of
sub-layer k depends only on k and the seed, so layer k is the same network at every depth,
for both activations and both inits.

What the widget must not hide (review of 第 2 课, B1): the stack is narrow (WIDTH = 16, our
model has 256). In a plain ReLU stack the gradient's size at layer 1 is then a product of
many random factors whose spread grows with depth / width: it swings by orders of
magnitude from seed to seed, and at width 256 the same 16-layer stack keeps it near 1 (as
ResNet's authors said of their BN plain nets: "neither forward nor backward signals
vanish"). A sigmoid stack (derivative at most 1/4) loses it at every seed and width: that
is the vanishing gradient of the sigmoid era. The widget shows the width and the seed, and
its note says which case the reader is looking at.

The forward pass records the stream's RMS after every write; the backward pass (written
out by hand, checked against finite differences in the tests) carries the gradient of a
fixed readout L = mean over samples of u . x_final back to every layer's input, and
reports its size relative to the output's. Standard library only (and the subset that
MicroPython shares), deterministic.

Functions a lesson can quote (model("depth-signal")):
    simulate(depth, residual, norm, init, activation="relu", seed=0)
        -> {"rms": [...], "grad": [...]}: grad[0] is layer 1's gradient relative to the output's
    first_layer_gradient(depth, residual, norm=True, init="unit", activation="relu", seed=0) -> float
    spread(depth, residual, norm=True, init="unit", activation="relu") -> [grad[0] for each seed in SEEDS]
    ratio(x) -> text ("0.50", "2 × 10⁻⁹"), verdict(g) -> (kind, text)
"""
import math

from numfmt import num, sci
from rng import Rng
from vec import dots, transpose

PARAMS = {"depth": 16, "residual": False, "norm": True, "init": "unit", "activation": "relu", "seed": 0}
DEPTH = (1, 64, 1)  # slider: min, max, step (layers; each has two sub-layers)
WIDTH = 16          # the stream's width d: small, so Python in the browser stays quick
OUR_WIDTH = 256     # our model's d_model (data/real-model/model-card.json; a test pins it)
SAMPLES = 4         # input vectors pushed through together
SEEDS = (0, 1, 2)   # the weight draws the reader can pick (rng.Rng(seed))
INPUT_SEED = 2026   # the inputs and the readout direction: the same for every seed
EPS = 1e-12
INITS = {"unit": "标准（ReLU 时每次写入方差约为 1）", "scaled": "写回矩阵再 ÷√(2L)（GPT-2）"}
ACTIVATIONS = {"relu": "ReLU", "sigmoid": "sigmoid"}
VANISHED, EXPLODED = 1e-3, 1e3  # a gradient this many times smaller / larger than at the output
SUPERSCRIPT = {"-": "⁻", "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷",
               "8": "⁸", "9": "⁹"}

_draws = {}  # seed -> (rng, [(w1, w1 columns, w2, w2 columns) per sub-layer]), extended as depth grows


def base_layers(n_sub, seed=SEEDS[0]):
    """The first n_sub sub-layers' unscaled weights for a seed, drawn once per page and extended
    lazily: (w1, w1t, w2, w2t) with the transposes kept for the forward pass."""
    if seed not in _draws:
        _draws[seed] = (Rng(seed), [])
    rng, layers = _draws[seed]
    s1, s2 = math.sqrt(2 / WIDTH), math.sqrt(1 / WIDTH)
    while len(layers) < n_sub:
        w1 = rng.gauss_matrix(WIDTH, WIDTH, s1)
        w2 = rng.gauss_matrix(WIDTH, WIDTH, s2)
        layers.append((w1, transpose(w1), w2, transpose(w2)))
    return layers[:n_sub]


def write_scale(n_sub, init):
    """1 for "unit"; 1/sqrt(2L) = 1/sqrt(n_sub) for "scaled" (GPT-2)."""
    return 1 / math.sqrt(n_sub) if init == "scaled" else 1.0


def weights(n_sub, init, seed=SEEDS[0]):
    """W1, W2 of each sub-layer, as the stack uses them ("scaled" divides every W2 by sqrt(n_sub))."""
    scale = write_scale(n_sub, init)
    return [(w1, [[v * scale for v in row] for row in w2]) for w1, _, w2, _ in base_layers(n_sub, seed)]


def inputs():
    """SAMPLES unit-variance input vectors and the unit readout direction u."""
    rng = Rng(INPUT_SEED)
    xs = rng.gauss_matrix(SAMPLES, WIDTH)
    u = [rng.gauss() for _ in range(WIDTH)]
    norm = math.sqrt(sum([v * v for v in u]))
    return xs, [v / norm for v in u]


def dot(a, b):
    """dot([1, 2], [3, 4]) -> 11.0"""
    s = 0.0
    for p, q in zip(a, b):
        s += p * q
    return s


def matvec(v, w):
    """Row vector times matrix. matvec([1, 2], [[1, 0], [0, 1]]) -> [1.0, 2.0]"""
    return dots(v, transpose(w))


def vecmat_t(g, w):
    """g times the transpose of w: the backward pass of matvec. vecmat_t([1, 2], [[1, 0], [0, 1]]) -> [1.0, 2.0]"""
    return dots(g, w)


def rms(v):
    """Root mean square. rms([3, 4, 0, 0]) -> 2.5"""
    return math.sqrt(sum([x * x for x in v]) / len(v) + EPS)


def size(v):
    """The stream's RMS as reported (no epsilon, so a vanished signal reads as tiny, not as 1e-6)."""
    return math.sqrt(sum([x * x for x in v]) / len(v))


def sigmoid(z):
    """1 / (1 + e^-z), without overflow for large |z|. sigmoid(0) -> 0.5"""
    if z >= 0:
        return 1 / (1 + math.exp(-z))
    e = math.exp(z)
    return e / (1 + e)


def simulate(depth, residual, norm, init, activation="relu", seed=SEEDS[0]):
    """Forward RMS after every write and the gradient's size at every layer's input.

    Returns {"rms": [after embedding, after write 1, ...] (2 * depth + 1 values),
             "grad": [at layer 1's input, ..., at layer depth's input, at the output] (depth + 1),
             both averaged over the samples; grad relative to the output's}.
    """
    n_sub = 2 * depth
    layers = base_layers(n_sub, seed)
    scale = write_scale(n_sub, init)
    relu = activation == "relu"
    xs, u = inputs()
    rms_sum = [0.0] * (n_sub + 1)
    grad_sq = [0.0] * (depth + 1)
    for x in xs:
        cache = []
        rms_sum[0] += size(x)
        for k in range(n_sub):
            _, w1t, _, w2t = layers[k]
            r = rms(x)
            h = [v / r for v in x] if norm else x
            z = dots(h, w1t)
            a = [v if v > 0 else 0.0 for v in z] if relu else [sigmoid(v) for v in z]
            f = dots(a, w2t)
            if scale != 1.0:
                f = [v * scale for v in f]
            cache.append((r, h, z, a))
            x = [p + q for p, q in zip(x, f)] if residual else f
            rms_sum[k + 1] += size(x)
        g = [v / SAMPLES for v in u]  # dL/dx_final for L = mean_s u . x_final
        grad_sq[depth] += sum([v * v for v in g])
        for k in range(n_sub - 1, -1, -1):
            w1, _, w2, _ = layers[k]
            r, h, z, a = cache[k]
            ga = dots(g, w2)
            if scale != 1.0:
                ga = [v * scale for v in ga]
            if relu:
                gz = [p if zz > 0 else 0.0 for p, zz in zip(ga, z)]
            else:  # sigmoid' = s (1 - s), at most 1/4
                gz = [p * s * (1 - s) for p, s in zip(ga, a)]
            gh = dots(gz, w1)
            if norm:  # d(x / rms(x)) / dx = (I - h h^T / d) / rms
                d = dot(h, gh) / WIDTH
                gh = [(p - hh * d) / r for p, hh in zip(gh, h)]
            g = [p + q for p, q in zip(g, gh)] if residual else gh
            if k % 2 == 0:
                grad_sq[k // 2] += sum([v * v for v in g])
    out_norm = math.sqrt(grad_sq[depth])
    return {"rms": [v / SAMPLES for v in rms_sum],
            "grad": [math.sqrt(v) / out_norm for v in grad_sq]}


def first_layer_gradient(depth, residual, norm=True, init="unit", activation="relu", seed=SEEDS[0]):
    """Layer 1's gradient relative to the output's, for the lesson's prose."""
    return simulate(depth, residual, norm, init, activation, seed)["grad"][0]


def spread(depth, residual, norm=True, init="unit", activation="relu"):
    """Layer 1's gradient for every seed in SEEDS (computed on demand: a lesson's sentence, not the view)."""
    return [first_layer_gradient(depth, residual, norm, init, activation, s) for s in SEEDS]


def check(params):
    depth = int(params["depth"])
    if not DEPTH[0] <= depth <= DEPTH[1]:
        raise ValueError("depth must be %d..%d, got %d" % (DEPTH[0], DEPTH[1], depth))
    if params["init"] not in INITS:
        raise ValueError("init must be one of %s, got %s" % (sorted(INITS), params["init"]))
    activation = params.get("activation", PARAMS["activation"])
    if activation not in ACTIVATIONS:
        raise ValueError("activation must be one of %s, got %s" % (sorted(ACTIVATIONS), activation))
    seed = int(params.get("seed", PARAMS["seed"]))
    if seed not in SEEDS:
        raise ValueError("seed must be one of %s, got %s" % (list(SEEDS), seed))
    return {"depth": depth, "residual": bool(params["residual"]), "norm": bool(params["norm"]),
            "init": params["init"], "activation": activation, "seed": seed}


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


def explain(p, g):
    """Which case the reader is looking at, so that no setting teaches a false lesson."""
    if p["residual"]:
        if g > EXPLODED:
            return "残差保住了直通路，但不归一化时残差流越写越大，梯度跟着变大：这是第 ④ 部分要解决的尺度问题。"
        return "残差让每个子层的导数变成 1 + F′：梯度总有一条不经过任何子层的直路，连乘不会趋于 0。"
    if p["activation"] == "sigmoid":
        if g < VANISHED:
            return ("sigmoid 的导数最大只有 1/4：梯度每经过一个子层都要再乘一次，几十个子层后就只剩零头。"
                    "换哪个随机种子都一样，这就是深层 sigmoid 网络的「梯度消失」。")
        return "sigmoid 的导数最大只有 1/4，每个子层都让梯度缩小一截：把层数往上拖。"
    if p["init"] == "scaled":
        return ("÷√(2L) 是为残差流设计的：没有残差时，它只是把每个子层的输出再缩小一截"
                + ("；归一化会把前向的信号放大回来。" if p["norm"] else "，信号和梯度跟着一层层缩小。"))
    return ("宽度只有 %d：ReLU 普通栈的梯度是几十个随机矩阵的连乘，层越多、宽度越窄，涨落越大，"
            "换个种子能差几个数量级。换成宽度 %d（我们模型的宽度），同样 16 层，第 1 层的梯度还是 1 的量级；"
            "ResNet 的作者也说，他们加了 BN 的普通网络「前向、反向的信号都没有消失」。" % (WIDTH, OUR_WIDTH))


def superscript(n):
    """superscript(-12) -> '⁻¹²'"""
    return "".join([SUPERSCRIPT[c] for c in str(n)])


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

    points = " ".join(["%s,%s" % (round(width * i / n, 1), y(lv)) for i, lv in enumerate(logs)])
    ticks = [{"y": y(t), "label": "1" if t == 0 else "10" + superscript(t)} for t in range(lo, hi + 1, step)]
    return {"points": points, "ticks": ticks, "w": width, "h": height, "lo": lo, "hi": hi, "y": y}


def stack_text(p):
    f = "F(RMSNorm(x))" if p["norm"] else "F(x)"
    return "x ← x + " + f if p["residual"] else "x ← " + f


def view(params):
    """Everything the widget shows: both curves, the key numbers, the verdict and what it means."""
    p = check(params)
    sim = simulate(p["depth"], p["residual"], p["norm"], p["init"], p["activation"], p["seed"])
    writes = 2 * p["depth"]
    final, g1 = sim["rms"][-1], sim["grad"][0]
    kind, grad_text = verdict(g1)
    rms_chart = chart(sim["rms"])
    y = rms_chart.pop("y")
    predicted = p["residual"] and p["norm"] and p["activation"] == "relu"
    if predicted:
        prediction = [math.sqrt(k + 1) * sim["rms"][0] for k in range(writes + 1)]
        rms_chart["prediction"] = " ".join([
            "%s,%s" % (round(rms_chart["w"] * k / max(writes, 1), 1), min(max(y(math.log10(v)), -20), rms_chart["h"] + 20))
            for k, v in enumerate(prediction)])
    else:
        rms_chart["prediction"] = ""
    grad_chart = chart(sim["grad"])
    grad_chart.pop("y")
    stack = stack_text(p)
    act = ACTIVATIONS[p["activation"]]
    rms_final = num(final, 2) if 0.01 <= final < 1e4 else sci(final)
    prediction = num(math.sqrt(writes + 1), 2)
    if not p["residual"]:
        compare = "没有残差：每个子层的输出替换掉输入，写入不累加"
    elif p["activation"] == "relu":
        compare = "√(写入次数 + 1) = " + prediction
    else:
        compare = "sigmoid 每次写入的方差小于 1，不和 √(写入次数 + 1) 比"
    note = explain(p, g1)
    setup = "宽度 %d，随机种子 %d" % (WIDTH, p["seed"])
    return {
        "params": p,
        "width": WIDTH,
        "our_width": OUR_WIDTH,
        "slider": dict(zip(("min", "max", "step"), DEPTH)),
        "inits": [{"value": k, "label": v, "checked": k == p["init"]} for k, v in INITS.items()],
        "activations": [{"value": k, "label": v, "checked": k == p["activation"]} for k, v in ACTIVATIONS.items()],
        "seeds": [{"value": s, "checked": s == p["seed"]} for s in SEEDS],
        "rms_chart": rms_chart,
        "grad_chart": grad_chart,
        "out": {
            "depth": str(p["depth"]),
            "writes": str(writes),
            "stack": stack,
            "formula": "F(h) = %s(h W₁) W₂" % act,
            "setup": setup,
            "rms-final": rms_final,
            "prediction": prediction,
            "compare": compare,
            "grad-first": ratio(g1),
            "grad-verdict": grad_text,
            "grad-note": note,
            "data-verdict": kind,
        },
        "announce": "%s 层，%s，%s，%s：%d 次写入后残差流 RMS %s；第 1 层的梯度是输出端的 %s 倍，%s。%s" % (
            p["depth"], stack, act, setup, writes, rms_final, ratio(g1), grad_text, note),
    }
