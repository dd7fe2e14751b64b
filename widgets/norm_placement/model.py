"""norm-placement: where the norm sits, on a small random stack (widgets/common/stack.py,
the same stack as 第 2 课's depth-signal), and what each placement does to the residual
stream and to the gradients near the output.

Three placements of RMSNorm (gain 1), with residuals, as the lesson names them:

    pre      x <- x + F(norm(x)), a final norm before the readout (GPT-2, Llama, our model)
    post     x <- norm(x + F(x)), no final norm (the stream is normalised already): 2017
    output   x <- x + norm(F(x)), a final norm (OLMo 2's reordered norm)

For each: the stream's RMS after every write, and |dL/dW2| of each layer's FFN sub-layer
(its second sub-layer), the parameter gradient that Xiong et al. (2020, Theorem 1) bound:
independent of depth near the output for Post-LN, shrinking like 1/sqrt(L) for Pre-LN.
The readout is linear (L = mean u . x); weights at init, width stack.WIDTH. Standard
library only, in the subset MicroPython shares.

Functions a lesson can quote (model("norm-placement")):
    simulate(place, depth, seed=0, weight_grads=True, stream_grads=True) -> stack.simulate()'s dict, with the
        placement's final norm
    last_layer_grad(place, depth, seed=0), first_layer_grad(place, depth, seed=0) -> float
    mean_over_seeds(fn, place, depth) -> float (the mean over SEEDS)
"""
import stack
from logchart import chart
from numfmt import num

PARAMS = {"depth": 12, "place": "post", "seed": 0}
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


def simulate(place, depth, seed=0, weight_grads=True, stream_grads=True):
    where, final, _ = PLACES[place]
    return stack.simulate(depth, True, where, "unit", "relu", seed, final, weight_grads, stream_grads)


def ffn_grads(sim):
    """|dL/dW2| of every layer's FFN sub-layer (the second of its two)."""
    return sim["wgrad"][1::2]


def last_layer_grad(place, depth, seed=0):
    """|dL/dW2| of the last layer's FFN."""
    return simulate(place, depth, seed, weight_grads="ffn", stream_grads=False)["wgrad"][-1]


def first_layer_grad(place, depth, seed=0):
    """|dL/dW2| of the first layer's FFN."""
    return simulate(place, depth, seed, weight_grads="ffn", stream_grads=False)["wgrad"][0]


def mean_over_seeds(fn, place, depth):
    return sum([fn(place, depth, s) for s in SEEDS]) / len(SEEDS)


def check(params):
    depth = int(params["depth"])
    if not DEPTH[0] <= depth <= DEPTH[1]:
        raise ValueError("depth must be %d..%d, got %d" % (DEPTH[0], DEPTH[1], depth))
    if params["place"] not in PLACES:
        raise ValueError("place must be one of %s, got %s" % (sorted(PLACES), params["place"]))
    seed = int(params.get("seed", 0))
    if seed not in SEEDS:
        raise ValueError("seed must be one of %s, got %s" % (list(SEEDS), seed))
    return {"depth": depth, "place": params["place"], "seed": seed}


def reading(rows):
    """What the table shows, in one sentence chosen by its numbers."""
    post, pre = rows["post"], rows["pre"]
    if post["last"] > pre["last"] and post["first"] < post["last"]:
        return ("Post-LN 离输出最近那一层的梯度最大，越往前越小；Pre-LN 和输出端归一化最后一层的梯度比它小。"
                "把层数拖大，看最后一层的数怎么变。")
    return "这一组随机权重下，三种放法最后一层的梯度差别不大：换个种子或把层数拖大再看。"


def view(params):
    p = check(params)
    rows = {}
    for name in ORDER:
        sim = simulate(name, p["depth"], p["seed"], weight_grads="ffn", stream_grads=False)  # what it shows only
        grads = sim["wgrad"]
        rows[name] = {"sim": sim, "last": grads[-1], "first": grads[0], "rms": sim["rms"][-1]}
    chosen = rows[p["place"]]
    grad_chart = chart(chosen["sim"]["wgrad"])
    grad_chart.pop("y")
    rms_chart = chart(chosen["sim"]["rms"])
    rms_chart.pop("y")
    label = PLACES[p["place"]][2]
    text = reading(rows)
    table = {name: {"last": num(r["last"], 2), "first": num(r["first"], 3), "rms": num(r["rms"], 2),
                    "data-selected": "true" if name == p["place"] else "false"} for name, r in rows.items()}
    return {
        "params": p,
        "width": stack.WIDTH,
        "slider": {"min": DEPTH[0], "max": DEPTH[1], "step": DEPTH[2]},
        "places": [{"value": k, "label": PLACES[k][2], "who": WHO[k], "checked": k == p["place"]} for k in ORDER],
        "seeds": [{"value": s, "checked": s == p["seed"]} for s in SEEDS],
        "grad_chart": grad_chart,
        "rms_chart": rms_chart,
        "rows": table,
        "out": {"depth": str(p["depth"]), "place": label, "setup": "宽度 %d，随机种子 %d，权重是初始化时的样子" % (stack.WIDTH, p["seed"]),
                "last": num(chosen["last"], 2), "first": num(chosen["first"], 3), "rms-final": num(chosen["rms"], 2),
                "reading": text},
        "announce": "%s，%d 层：最后一层 FFN 的梯度 %s，第 1 层 %s，残差流 RMS %s。%s" % (
            label, p["depth"], num(chosen["last"], 2), num(chosen["first"], 3), num(chosen["rms"], 2), text),
    }
