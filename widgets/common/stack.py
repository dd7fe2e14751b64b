"""A stack of random sub-layers, forward and backward by hand: the lessons' depth experiments.

Shared by depth-signal (第 2 课: depth, residuals, activation) and norm-placement (第 3 课:
where the norm sits). Each of the `depth` layers holds two sub-layers (like attention and
FFN; both are small MLPs here, nothing mixes positions), each a random network
F(h) = act(h W1) W2 on vectors of width WIDTH. The stream x passes through every sub-layer,
with the norm (RMSNorm, gain 1) in one of four places:

    "none"     x <- x + F(x)            (or x <- F(x) without residual)
    "pre"      x <- x + F(norm(x))      Pre-LN: GPT-2, Llama, our model
    "post"     x <- norm(x + F(x))      Post-LN: the 2017 Transformer
    "output"   x <- x + norm(F(x))      the norm on the sub-layer's output: OLMo 2

`final_norm` adds one more norm before the readout (Pre-LN's final norm; Post-LN's stream is
already normalised). Init "unit": W1 ~ N(0, 2/WIDTH), W2 ~ N(0, 1/WIDTH) (He's init);
"scaled" also divides W2 by sqrt(2L), GPT-2's rule. Weights come from rng.py, one stream per
seed: sub-layer k is the same network at every depth.

The readout is L = mean over samples of u . x_final. simulate() reports the stream's RMS
after every write, the gradient's size at every layer's input (relative to the output's)
and the Frobenius norm of dL/dW2 for every sub-layer: the parameter gradient Xiong et al.
(2020) bound near the output. Standard library only, in the subset MicroPython shares.
"""
import math

from rng import Rng
from vec import add_outer, dots, transpose

WIDTH = 16          # the stream's width d: small, so Python in the browser stays quick
SAMPLES = 4         # input vectors pushed through together
INPUT_SEED = 2026   # the inputs and the readout direction: the same for every seed
EPS = 1e-12
PLACES = ("none", "pre", "post", "output")

_draws = {}  # seed -> (rng, [(w1, w1 columns, w2, w2 columns) per sub-layer]), extended as depth grows
_forwards = {}  # (seed, residual, place, relu, scale) -> the forward pass of every sample (forward())
_forward_keys = []  # those keys, oldest first
FORWARDS = 12  # forward passes kept, the least recently used dropped first (under 1 MB each at 128 sub-layers)


def base_layers(n_sub, seed=0):
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


def weights(n_sub, init, seed=0):
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


def rms(v):
    """Root mean square, with the norm's epsilon. rms([3, 4, 0, 0]) -> 2.5"""
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


def norm_forward(x):
    """RMSNorm with gain 1: (x / rms(x), rms(x))."""
    r = rms(x)
    return [v / r for v in x], r


def norm_backward(g, y, r):
    """The gradient through y = x / rms(x): (g - y * mean(g * y)) / rms(x)."""
    d = dot(y, g) / len(y)
    return [(p - q * d) / r for p, q in zip(g, y)]


def forward(n_sub, residual, place, scale, relu, seed):
    """The forward pass through the first n_sub sub-layers, for every sample: per sample, the
    stream's size after every write ("sizes") and what the backward pass reads at each sub-layer
    ("steps": the normalised input under "pre", the activations, the normalised output under
    "output", the stream after the write). Sub-layer k's weights do not depend on the depth, so
    with the same scale a deeper stack's pass begins with a shallower one's: it is kept
    (FORWARDS of them) and extended, and a slider dragged deeper only computes the new layers."""
    key = (seed, residual, place, relu, scale)
    fw = _forwards.get(key)
    if fw is None:
        if len(_forward_keys) >= FORWARDS:
            del _forwards[_forward_keys.pop(0)]
        xs, _ = inputs()
        fw = {"steps": [[] for _ in xs], "sizes": [[size(x)] for x in xs], "x": xs}
        _forwards[key] = fw
    else:
        _forward_keys.remove(key)
    _forward_keys.append(key)
    layers = base_layers(n_sub, seed)
    R = range(WIDTH)
    for s in range(SAMPLES):
        steps, sizes, x = fw["steps"][s], fw["sizes"][s], fw["x"][s]
        for k in range(len(steps), n_sub):
            _, w1t, _, w2t = layers[k]
            h, r_in = norm_forward(x) if place == "pre" else (x, 1.0)
            z = dots(h, w1t)
            a = [v if v > 0 else 0.0 for v in z] if relu else [sigmoid(v) for v in z]
            f = dots(a, w2t)
            if scale != 1.0:
                f = [v * scale for v in f]
            fo, r_f = norm_forward(f) if place == "output" else (f, 1.0)
            x_in = x
            x = [x_in[i] + fo[i] for i in R] if residual else fo
            r_s = 1.0
            if place == "post":
                x, r_s = norm_forward(x)
            # what the backward pass reads; a (not z) holds ReLU's mask: a > 0 exactly where z > 0
            steps.append((h if place == "pre" else None, r_in, a, fo if place == "output" else None, r_f, x, r_s))
            sizes.append(size(x))
        fw["x"][s] = x
    return fw


def simulate(depth, residual=True, place="pre", init="unit", activation="relu", seed=0, final_norm=False,
             weight_grads=True):
    """Forward and backward through the stack (the forward pass from forward(), kept between calls).

    Returns {"rms": [after embedding, after write 1, ...] (2 * depth + 1 values),
             "grad": [at layer 1's input, ..., at layer depth's input, at the output] (depth + 1),
             "wgrad": [|dL/dW2| of sub-layer 1, ..., of sub-layer 2 * depth] (weight_grads=True), or
                      [|dL/dW2| of layer 1's FFN, ..., of layer depth's] (weight_grads="ffn": the
                      second sub-layer of each layer only), or absent (weight_grads=False)},
    rms and grad averaged over the samples, grad relative to the output's. The sums run in the
    same order whatever is kept, so the numbers are the same to the last bit.
    """
    if place not in PLACES:
        raise ValueError("place must be one of %s, got %s" % (list(PLACES), place))
    n_sub = 2 * depth
    layers = base_layers(n_sub, seed)
    scale = write_scale(n_sub, init)
    relu = activation == "relu"
    fw = forward(n_sub, residual, place, scale, relu, seed)
    _, u = inputs()
    R = range(WIDTH)
    rms_sum = [0.0] * (n_sub + 1)
    for sizes in fw["sizes"]:
        for k in range(n_sub + 1):
            rms_sum[k] += sizes[k]
    grad_sq = [0.0] * (depth + 1)
    wgrad = [[[0.0] * WIDTH for _ in R] for _ in range(n_sub)] if weight_grads else None
    every = 2 if weight_grads == "ffn" else 1  # the FFN is a layer's second sub-layer (odd k)
    for steps in fw["steps"]:
        g = [v / SAMPLES for v in u]  # dL/d(readout input) for L = mean_s u . readout
        if final_norm:
            y_final, r_final = norm_forward(steps[n_sub - 1][5])
            g = norm_backward(g, y_final, r_final)
        grad_sq[depth] += sum([v * v for v in g])
        for k in range(n_sub - 1, -1, -1):
            w1, _, w2, _ = layers[k]
            h, r_in, a, fo, r_f, y, r_s = steps[k]
            if place == "post":
                g = norm_backward(g, y, r_s)  # now dL/ds, s = x + F
            gf = norm_backward(g, fo, r_f) if place == "output" else g  # dL/dF
            if weight_grads and k % every == every - 1:
                add_outer(wgrad[k], a, gf)  # dL/dW2 += a^T gf, W2 as the stack uses it (times the scale)
            ga = dots(gf, w2)
            if scale != 1.0:
                ga = [v * scale for v in ga]
            if relu:
                gz = [ga[i] if a[i] > 0 else 0.0 for i in R]
            else:  # sigmoid' = s (1 - s), at most 1/4
                gz = [ga[i] * a[i] * (1 - a[i]) for i in R]
            gh = dots(gz, w1)
            if place == "pre":
                gh = norm_backward(gh, h, r_in)
            g = [g[i] + gh[i] for i in R] if residual else gh
            if k % 2 == 0:
                grad_sq[k // 2] += sum([v * v for v in g])
    out_norm = math.sqrt(grad_sq[depth])
    out = {"rms": [v / SAMPLES for v in rms_sum], "grad": [math.sqrt(v) / out_norm for v in grad_sq]}
    if weight_grads:
        out["wgrad"] = [math.sqrt(sum([v * v for row in m for v in row])) for m in wgrad[every - 1::every]]
    return out
