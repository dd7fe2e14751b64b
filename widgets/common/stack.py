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
from vec import dots, transpose

WIDTH = 16          # the stream's width d: small, so Python in the browser stays quick
SAMPLES = 4         # input vectors pushed through together
INPUT_SEED = 2026   # the inputs and the readout direction: the same for every seed
EPS = 1e-12
PLACES = ("none", "pre", "post", "output")

_draws = {}  # seed -> (rng, [(w1, w1 columns, w2, w2 columns) per sub-layer]), extended as depth grows


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


def simulate(depth, residual=True, place="pre", init="unit", activation="relu", seed=0, final_norm=False):
    """Forward and backward through the stack.

    Returns {"rms": [after embedding, after write 1, ...] (2 * depth + 1 values),
             "grad": [at layer 1's input, ..., at layer depth's input, at the output] (depth + 1),
             "wgrad": [|dL/dW2| of sub-layer 1, ..., of sub-layer 2 * depth]},
    rms and grad averaged over the samples, grad relative to the output's.
    """
    if place not in PLACES:
        raise ValueError("place must be one of %s, got %s" % (list(PLACES), place))
    n_sub = 2 * depth
    layers = base_layers(n_sub, seed)
    scale = write_scale(n_sub, init)
    relu = activation == "relu"
    xs, u = inputs()
    rms_sum = [0.0] * (n_sub + 1)
    grad_sq = [0.0] * (depth + 1)
    wgrad = [[[0.0] * WIDTH for _ in range(WIDTH)] for _ in range(n_sub)]
    for x in xs:
        cache = []
        rms_sum[0] += size(x)
        for k in range(n_sub):
            _, w1t, _, w2t = layers[k]
            h, r_in = norm_forward(x) if place == "pre" else (x, 1.0)
            z = dots(h, w1t)
            a = [v if v > 0 else 0.0 for v in z] if relu else [sigmoid(v) for v in z]
            f = dots(a, w2t)
            if scale != 1.0:
                f = [v * scale for v in f]
            fo, r_f = norm_forward(f) if place == "output" else (f, 1.0)
            s = [p + q for p, q in zip(x, fo)] if residual else fo
            y, r_s = norm_forward(s) if place == "post" else (s, 1.0)
            cache.append((h, r_in, z, a, fo, r_f, y, r_s))
            x = y
            rms_sum[k + 1] += size(x)
        g = [v / SAMPLES for v in u]  # dL/d(readout input) for L = mean_s u . readout
        if final_norm:
            y_final, r_final = norm_forward(x)
            g = norm_backward(g, y_final, r_final)
        grad_sq[depth] += sum([v * v for v in g])
        for k in range(n_sub - 1, -1, -1):
            w1, _, w2, _ = layers[k]
            h, r_in, z, a, fo, r_f, y, r_s = cache[k]
            if place == "post":
                g = norm_backward(g, y, r_s)  # now dL/ds, s = x + F
            gf = norm_backward(g, fo, r_f) if place == "output" else g  # dL/dF
            rows = wgrad[k]  # dL/dW2 += a^T gf, W2 as the stack uses it (times the scale)
            for i in range(WIDTH):
                ai = a[i]
                if ai != 0.0:
                    row = rows[i]
                    for j in range(WIDTH):
                        row[j] += ai * gf[j]
            ga = dots(gf, w2)
            if scale != 1.0:
                ga = [v * scale for v in ga]
            if relu:
                gz = [p if zz > 0 else 0.0 for p, zz in zip(ga, z)]
            else:  # sigmoid' = s (1 - s), at most 1/4
                gz = [p * q * (1 - q) for p, q in zip(ga, a)]
            gh = dots(gz, w1)
            if place == "pre":
                gh = norm_backward(gh, h, r_in)
            g = [p + q for p, q in zip(g, gh)] if residual else gh
            if k % 2 == 0:
                grad_sq[k // 2] += sum([v * v for v in g])
    out_norm = math.sqrt(grad_sq[depth])
    return {"rms": [v / SAMPLES for v in rms_sum],
            "grad": [math.sqrt(v) / out_norm for v in grad_sq],
            "wgrad": [math.sqrt(sum([v * v for row in m for v in row])) for m in wgrad]}
