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

import stack
from logchart import chart, tenths
from numfmt import num, sci
from stack import EPS, SAMPLES, WIDTH, _draws, base_layers, inputs, weights  # noqa: F401 (read by the tests)

PARAMS = {"depth": 16, "residual": False, "norm": True, "init": "unit", "activation": "relu", "seed": 0}
DEPTH = (1, 64, 1)  # slider: min, max, step (layers; each has two sub-layers)
OUR_WIDTH = 256     # our model's d_model (data/real-model/model-card.json; a test pins it)
SEEDS = (0, 1, 2)   # the weight draws the reader can pick (rng.Rng(seed))
INITS = {"unit": "标准（ReLU 时每次写入方差约为 1）", "scaled": "写回矩阵再 ÷√(2L)（GPT-2）"}
ACTIVATIONS = {"relu": "ReLU", "sigmoid": "sigmoid"}
ORDER = {"init": ("unit", "scaled"), "activation": ("relu", "sigmoid")}  # MicroPython's dicts keep no order
VANISHED, EXPLODED = 1e-3, 1e3  # a gradient this many times smaller / larger than at the output

def simulate(depth, residual, norm, init, activation="relu", seed=SEEDS[0]):
    """Forward RMS after every write and the gradient's size at every layer's input
    (widgets/common/stack.py, with the norm at each sub-layer's input when `norm`).

    Returns {"rms": [after embedding, after write 1, ...] (2 * depth + 1 values),
             "grad": [at layer 1's input, ..., at layer depth's input, at the output] (depth + 1),
             both averaged over the samples; grad relative to the output's}.
    """
    sim = stack.simulate(depth, residual, "pre" if norm else "none", init, activation, seed, weight_grads=False)
    return {"rms": sim["rms"], "grad": sim["grad"]}


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
            "%s,%s" % (tenths(rms_chart["w"] * k / max(writes, 1)), tenths(min(max(y(math.log10(v)), -20), rms_chart["h"] + 20)))
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
        "inits": [{"value": k, "label": INITS[k], "checked": k == p["init"]} for k in ORDER["init"]],
        "activations": [{"value": k, "label": ACTIVATIONS[k], "checked": k == p["activation"]}
                        for k in ORDER["activation"]],
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
