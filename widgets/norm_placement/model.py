"""norm-placement: where the norm sits, on a small random stack (widgets/common/stack.py,
the same stack as 第 2 课's depth-signal), and what each placement does to the residual
stream and to the gradients of every layer.

Three placements of RMSNorm (gain 1), with residuals, as the lesson names them:

    pre      x <- x + F(norm(x)), a final norm before the readout (GPT-2, Llama, our model)
    post     x <- norm(x + F(x)), no final norm (the stream is normalised already): 2017
    output   x <- x + norm(F(x)), a final norm (OLMo 2's reordered norm)

Two inits (stack.py): "unit", every sub-layer's write about as large as the stream it is added
to (Xiong et al.'s setting), and "scaled", every write-back matrix W2 divided by sqrt(2L)
(GPT-2's rule; the inputs stay at RMS 1). For each: the stream's RMS after every write, and
|dL/dW2| of each layer's FFN sub-layer (its second sub-layer), the parameter gradient that
Xiong et al. (2020, Theorem 1) bound: independent of depth near the output for Post-LN,
shrinking like 1/sqrt(L) for Pre-LN. Under "unit" the stack shows both; under "scaled" both
mostly vanish, and under either the largest Post-LN gradient need not be the last layer's:
every sentence the widget prints is chosen and filled from the numbers it shows (reading()).
The readout is linear (L = mean u . x); weights at init, width stack.WIDTH. Standard
library only, in the subset MicroPython shares.

Functions a lesson can quote (model("norm-placement")):
    simulate(place, depth, seed=0, weight_grads=True, stream_grads=True, init="unit") ->
        stack.simulate()'s dict, with the placement's final norm
    last_layer_grad(place, depth, seed=0, init="unit"), first_layer_grad(...) -> float
    mean_over_seeds(fn, place, depth, init="unit") -> float (the mean over SEEDS)
    profile(place, depth, init="unit") -> [|dL/dW2| of layer 1's FFN, ..., of layer depth's],
        each the mean over SEEDS
    largest_layer(place, depth, seed=None, init="unit") -> the layer (1..depth) whose FFN gets
        the largest gradient: of one seed, or of profile() when seed is None
    post_over_pre(depth, seed=0, init="unit") -> Post-LN's last-layer gradient over Pre-LN's;
        post_over_pre_range(init) -> its (min, max) over every depth 1..32 and every seed
    final_rms(place, depth, seed=0, init="unit") -> the stream's RMS after the last write
And the exercise c4/l3/pre-post-stack's math, on plain lists:
    rms(x), rms_norm(x, eps=NORM_EPS), sublayer(w1, w2) -> f with f(h) = relu(h W1) W2,
    stack_rms(x, f, n, place) -> the stream's RMS after each of n writes ("pre" or "post")
"""
import math

import stack
from logchart import chart
from numfmt import num

PARAMS = {"depth": 12, "place": "post", "seed": 0, "init": "unit"}
DEPTH = (1, 32, 1)  # slider: layers (each has two sub-layers)
SEEDS = (0, 1, 2)
WIDTH = stack.WIDTH
PLACES = {  # name -> (the stack's place, final norm, label)
    "pre": ("pre", True, "Pre-LN：x + F(norm(x))"),
    "post": ("post", False, "Post-LN：norm(x + F(x))"),
    "output": ("output", True, "输出端归一化：x + norm(F(x))"),
}
ORDER = ("pre", "post", "output")  # the table's rows (MicroPython's dicts keep no order)
WHO = {"pre": "GPT-2、Llama、Qwen、我们的模型", "post": "2017 年的原版 Transformer", "output": "OLMo 2"}
SHORT = {"pre": "Pre-LN", "post": "Post-LN", "output": "输出端归一化"}
SPACE = {"pre": " ", "post": " ", "output": ""}  # between a name and the Chinese after it
INITS = {  # name -> (radio label, the regime as the reading names it)
    "unit": ("每次写入和流一样大（Xiong 定理的设定）", "每次写入和流一样大时（Xiong 定理的设定）"),
    "scaled": ("写回矩阵按层数缩小（GPT-2 式的写回规则；嵌入仍是 RMS 1，不像我们的模型那么小）", "写回矩阵按层数缩小时（GPT-2 式，÷√(2L)）"),
}
INIT_ORDER = ("unit", "scaled")
NORM_EPS = 1e-5  # the exercise's RMSNorm epsilon (the stack's own is stack.EPS)


def simulate(place, depth, seed=0, weight_grads=True, stream_grads=True, init="unit"):
    where, final, _ = PLACES[place]
    return stack.simulate(depth, True, where, init, "relu", seed, final, weight_grads, stream_grads)


def ffn_grads(sim):
    """|dL/dW2| of every layer's FFN sub-layer (the second of its two)."""
    return sim["wgrad"][1::2]


def layer_grads(place, depth, seed=0, init="unit"):
    """|dL/dW2| of every layer's FFN, first layer first."""
    return simulate(place, depth, seed, "ffn", False, init)["wgrad"]


def last_layer_grad(place, depth, seed=0, init="unit"):
    """|dL/dW2| of the last layer's FFN."""
    return layer_grads(place, depth, seed, init)[-1]


def first_layer_grad(place, depth, seed=0, init="unit"):
    """|dL/dW2| of the first layer's FFN."""
    return layer_grads(place, depth, seed, init)[0]


def mean_over_seeds(fn, place, depth, init="unit"):
    return sum([fn(place, depth, s, init) for s in SEEDS]) / len(SEEDS)


def profile(place, depth, init="unit"):
    """The mean over SEEDS of every layer's FFN |dL/dW2|, first layer first."""
    runs = [layer_grads(place, depth, s, init) for s in SEEDS]
    return [sum([r[k] for r in runs]) / len(runs) for k in range(depth)]


def post_over_pre(depth, seed=0, init="unit"):
    """Post-LN's last-layer FFN |dL/dW2| over Pre-LN's, one seed."""
    return last_layer_grad("post", depth, seed, init) / last_layer_grad("pre", depth, seed, init)


def post_over_pre_range(init="unit"):
    """(min, max) of post_over_pre over every depth of the slider and every seed: whether one
    placement's last layer is larger everywhere, and by how much."""
    r = [post_over_pre(d, s, init) for d in range(DEPTH[0], DEPTH[1] + 1) for s in SEEDS]
    return (min(r), max(r))


def final_rms(place, depth, seed=0, init="unit"):
    """The stream's RMS after its last write (what the final norm divides by), one seed."""
    return simulate(place, depth, seed, False, False, init)["rms"][-1]


def argmax(values):
    """The index of the largest value (the first of equal ones). argmax([1, 3, 2]) -> 1"""
    best = 0
    for k in range(1, len(values)):
        if values[k] > values[best]:
            best = k
    return best


def largest_layer(place, depth, seed=None, init="unit"):
    """The layer (1..depth) whose FFN gets the largest |dL/dW2|: for one seed, or for the mean over
    SEEDS (profile()) when seed is None."""
    grads = profile(place, depth, init) if seed is None else layer_grads(place, depth, seed, init)
    return argmax(grads) + 1


# ------------------------------------------------------------------ the exercise's stack, on lists

def rms(x):
    """The RMS of a vector, without epsilon. rms([3.0, 4.0, 0.0, 0.0]) -> 2.5"""
    return math.sqrt(sum([v * v for v in x]) / len(x))


def rms_norm(x, eps=NORM_EPS):
    """RMSNorm with gain 1: x / sqrt(mean(x^2) + eps)."""
    r = math.sqrt(sum([v * v for v in x]) / len(x) + eps)
    return [v / r for v in x]


def sublayer(w1, w2):
    """The function h -> relu(h W1) W2 (W1: len(h) rows; W2: one row per hidden unit)."""
    def f(h):
        a = []
        for j in range(len(w1[0])):
            z = 0.0
            for i in range(len(h)):
                z += h[i] * w1[i][j]
            a.append(z if z > 0 else 0.0)
        out = []
        for k in range(len(w2[0])):
            s = 0.0
            for j in range(len(a)):
                s += a[j] * w2[j][k]
            out.append(s)
        return out
    return f


def stack_rms(x, f, n, place):
    """n writes of the sub-layer f into the stream x, as Pre-LN (x <- x + f(rms_norm(x))) or
    Post-LN (x <- rms_norm(x + f(x))): the stream's RMS after each write (n values)."""
    if place not in ("pre", "post"):
        raise ValueError("place must be pre or post, got %s" % place)
    out = []
    for _ in range(n):
        if place == "pre":
            w = f(rms_norm(x))
            x = [x[i] + w[i] for i in range(len(x))]
        else:
            w = f(x)
            x = rms_norm([x[i] + w[i] for i in range(len(x))])
        out.append(rms(x))
    return out


# The exercise's example: one token of width 4 (RMS about 1.89) and one sub-layer.
STACK_EXAMPLE = {
    "x": [2.0, -1.0, 0.5, 3.0],
    "w1": [[0.9, -0.4, 0.3, -1.1], [-0.6, 0.8, 1.0, 0.2], [0.5, 0.7, -0.9, 0.4], [-0.3, -1.2, 0.6, 0.8]],
    "w2": [[0.6, -0.3, 0.4, 0.2], [-0.2, 0.5, 0.1, -0.6], [0.3, 0.4, -0.5, 0.3], [0.5, -0.1, 0.2, 0.6]],
    "n": 6,
}


def check(params):
    depth = int(params["depth"])
    if not DEPTH[0] <= depth <= DEPTH[1]:
        raise ValueError("depth must be %d..%d, got %d" % (DEPTH[0], DEPTH[1], depth))
    if params["place"] not in PLACES:
        raise ValueError("place must be one of %s, got %s" % (sorted(PLACES), params["place"]))
    seed = int(params.get("seed", 0))
    if seed not in SEEDS:
        raise ValueError("seed must be one of %s, got %s" % (list(SEEDS), seed))
    init = params.get("init", "unit")
    if init not in INITS:
        raise ValueError("init must be one of %s, got %s" % (list(INIT_ORDER), init))
    return {"depth": depth, "place": params["place"], "seed": seed, "init": init}


def times(r):
    """A ratio as the reading prints it: two decimals, fewer for large ones, three for small ones.
    times(7.0531) -> '7.05', times(104.63) -> '105', times(0.0123) -> '0.012'"""
    if r >= 100:
        return num(r, 0)
    if r >= 10:
        return num(r, 1)
    if r >= 0.1:
        return num(r, 2)
    return num(r, 3)


def monotone(values):
    """1 if the values rise all the way, -1 if they fall all the way, else 0."""
    rises = [values[k + 1] > values[k] for k in range(len(values) - 1)]
    falls = [values[k + 1] < values[k] for k in range(len(values) - 1)]
    return 1 if all(rises) else -1 if all(falls) else 0


def reading(p, grads):
    """What the curves and the table show, every clause chosen and filled from the numbers:
    grads maps each placement to its layers' FFN |dL/dW2| (first layer first). Returns
    {"text": the sentences, and what each claims, for the tests}."""
    place, depth = p["place"], p["depth"]
    g = grads[place]
    name = SHORT[place]
    top = argmax(g)
    claims = {"init": p["init"], "place": place, "largest": top + 1, "shape": 0, "ratios": {}}
    text = INITS[p["init"]][1] + "："
    if depth == 1:
        text += "只有 1 层，%s%s这一层 FFN 写回矩阵的梯度是 %s。" % (name, SPACE[place], num(g[0], 2))
    else:
        text += "%s%s的 %d 层里，FFN 写回矩阵梯度最大的是" % (name, SPACE[place], depth)
        if top == depth - 1:
            text += "最后一层（%s）" % num(g[top], 2)
        elif top == 0:
            text += "第 1 层（%s），最后一层只有 %s" % (num(g[top], 2), num(g[-1], 2))
        else:
            text += "第 %d 层（%s），不是最后一层（%s）" % (top + 1, num(g[top], 2), num(g[-1], 2))
        if depth >= 3:
            claims["shape"] = monotone(g)
            if claims["shape"] == 1:
                text += "，从第 1 层往后一路变大"
            elif claims["shape"] == -1:
                text += "，从第 1 层往后一路变小"
        text += "。最后一层是第 1 层的几倍："
        shown = ["post", "pre"] + (["output"] if place == "output" else [])
        parts = []
        for k in shown:
            r = grads[k][-1] / grads[k][0]
            claims["ratios"][k] = times(r)
            parts.append("%s %s 倍" % (SHORT[k], times(r)))
        text += "，".join(parts) + "。"
    q = grads["post"][-1] / grads["pre"][-1]
    claims["post_over_pre"] = times(q)
    text += "最后一层的梯度，Post-LN 是 Pre-LN 的 %s 倍" % times(q)
    if times(q) == "1.00":
        claims["compare"] = 0
        text += "，两者差不多。"
    elif q > 1:
        claims["compare"] = 1
        text += "，Post-LN 的更大。"
    else:
        claims["compare"] = -1
        text += "，Pre-LN 的更大。"
    if place == "output" and p["init"] == "scaled":
        text += ("输出端归一化把每次写入都拉回 RMS 1，写回矩阵缩小多少，前向都不变；它的梯度是对缩小后的 W₂ 求的，"
                 "所以正好是另一种初始化下的 √(2L) = %s 倍。" % num(math.sqrt(2 * depth), 2))
    return {"text": text, "claims": claims}


def view(params):
    p = check(params)
    rows, grads = {}, {}
    for name in ORDER:
        sim = simulate(name, p["depth"], p["seed"], "ffn", False, p["init"])  # what it shows only
        grads[name] = sim["wgrad"]
        rows[name] = {"sim": sim, "last": sim["wgrad"][-1], "first": sim["wgrad"][0], "rms": sim["rms"][-1],
                      "top": argmax(sim["wgrad"]) + 1}
    chosen = rows[p["place"]]
    grad_chart = chart(chosen["sim"]["wgrad"])
    grad_chart.pop("y")
    rms_chart = chart(chosen["sim"]["rms"])
    rms_chart.pop("y")
    label = PLACES[p["place"]][2]
    text = reading(p, grads)["text"]
    table = {}
    for name in ORDER:
        r = rows[name]
        table[name] = {"last": num(r["last"], 2), "first": num(r["first"], 3), "top": str(r["top"]),
                       "rms": num(r["rms"], 2), "data-selected": "true" if name == p["place"] else "false"}
    return {
        "params": p,
        "width": stack.WIDTH,
        "slider": {"min": DEPTH[0], "max": DEPTH[1], "step": DEPTH[2]},
        "places": [{"value": k, "label": PLACES[k][2], "who": WHO[k], "checked": k == p["place"]} for k in ORDER],
        "inits": [{"value": k, "label": INITS[k][0], "checked": k == p["init"]} for k in INIT_ORDER],
        "seeds": [{"value": s, "checked": s == p["seed"]} for s in SEEDS],
        "grad_chart": grad_chart,
        "rms_chart": rms_chart,
        "rows": table,
        "out": {"depth": str(p["depth"]), "place": label,
                "setup": "宽度 %d，随机种子 %d，%s，权重是初始化时的样子" % (stack.WIDTH, p["seed"], INITS[p["init"]][0]),
                "last": num(chosen["last"], 2), "first": num(chosen["first"], 3), "rms-final": num(chosen["rms"], 2),
                "reading": text},
        "announce": "%s，%d 层：最后一层 FFN 的梯度 %s，第 1 层 %s，残差流 RMS %s。%s" % (
            label, p["depth"], num(chosen["last"], 2), num(chosen["first"], 3), num(chosen["rms"], 2), text),
    }
