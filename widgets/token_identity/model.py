"""token-identity: without skips, a causal attention stack forgets which token stands where.

A sentence of 8 characters (天下大势分久必合, from the novel's opening line) goes through a
small Transformer at initialisation: an embedding per character, then LAYERS layers of a causal
attention sub-layer and a gated FFN (SwiGLU, as in our model), each reading an RMS-normalised
input (Pre-LN). The same weights run twice: with skips (x <- x + F(norm(x)), the standard block)
and without (x <- F(norm(x))). After every layer the widget reads two things:

- the mean cosine between different positions' vectors: near 1 means every position carries
  the same vector (rank collapse; Dong, Cordonnier & Loukas 2021);
- the readout: for each position, the character whose embedding points closest to its vector
  (what a tied output head's top prediction is at init), and whether that is its own character.

Attention weights: "uniform" is what a fresh model does (its q and k are tiny, so every
position spreads its weight evenly over its causal prefix: 1/(t+1) each); "random" uses q, k at
unit scale (uneven weights); "self" makes each position attend only to itself, which separates
the two ways a stack without skips loses the token: mixing positions (the cosine climbs) and
replacing the vector by a random map of it (the readout fails even without mixing).

Sizes: DIM = 16, HIDDEN = 16 (the FFN's inner width), a vocabulary of the 26 distinct characters
of the opening line, so a random guess is right 1 time in 26. Init: every matrix N(0, 1/fan_in),
embeddings scaled to unit RMS, and the matrices that write into the stream (attention's output,
the FFN's down projection) divided by sqrt(2 * LAYERS), GPT-2's rule. Random numbers come from
widgets/common/rng.py (one stream per seed), so every runtime draws the same weights; standard
library only, in the subset MicroPython shares. Each (seed, attention) is computed once, for all
LAYERS layers and both stacks, and cached: moving the layer slider computes nothing.

Functions a lesson can quote (model("token-identity")), layers = 0 (the embedding) .. LAYERS:
    summary(layers, skip, attention="uniform", seed=0)
        -> {"cosine": mean cosine between positions, "readout": share of positions whose nearest
            embedding is their own character (0..1), "correct": that count, "positions": 8,
            "own_cosine": mean cosine of a position's vector with its own character's embedding}
    by_layer(skip, attention="uniform", seed=0) -> [summary(...) for layers 0 .. LAYERS]
    readout(layers, skip, attention="uniform", seed=0) -> the character read at each position
    self_weight(attention="uniform", seed=0) -> layer 1's mean attention weight on a position itself
    (summary, by_layer, readout, over_seeds and self_weight take any int seed; the widget offers SEEDS)
    over_seeds(layers, skip, attention="uniform", seeds=SEEDS)
        -> {"seeds": [summary per seed], "cosine": mean, "readout": mean, "own_cosine": mean}
    chance() -> 1 / vocabulary size, what guessing would score
"""
import math

from numfmt import num
from rng import Rng
from vec import dots, transpose

PASSAGE = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。"
PUNCTUATION = "，。、"
SENTENCE = "天下大势分久必合"
LAYERS = 8        # the stack's depth; the slider reads it after 1 .. LAYERS layers
DIM = 16          # width of the stream
HIDDEN = 16       # the FFN's inner width (our model: 688 for 256, about 2.7 d; here d, to stay quick)
SEEDS = (0, 1, 2)
EPS = 1e-6
WRITE_SCALE = 1 / math.sqrt(2 * LAYERS)  # GPT-2: the writing matrices / sqrt(2L)
ATTENTION = {"uniform": "均匀：平均分给前文每个位置（初始化时就是这样）",
             "random": "随机的 q、k：权重不均匀",
             "self": "只看自己：位置之间不混合"}
# Seed 1 by default: at 4 layers its no-skip cosine (0.97) is nearer the 10-seed picture (mean 0.70,
# most seeds 0.5-1.0) than seed 0's dip (0.36); the lesson quotes the 10-seed mean beside it.
PARAMS = {"layers": 4, "attention": "uniform", "seed": 1}


def vocabulary():
    """The distinct characters of the opening line, in order of first appearance."""
    out = []
    for c in PASSAGE:
        if c not in PUNCTUATION and c not in out:
            out.append(c)
    return out


VOCAB = vocabulary()
TOKENS = [VOCAB.index(c) for c in SENTENCE]


def chance():
    """What a random guess scores. chance() -> 1/26"""
    return 1 / len(VOCAB)


def rms_norm(v):
    """v / rms(v). rms_norm([3, 4]) -> [0.848..., 1.131...]"""
    r = math.sqrt(sum([x * x for x in v]) / len(v) + EPS)
    return [x / r for x in v]


def scaled_to(v, length):
    """v stretched to the given Euclidean length. scaled_to([3, 4], 1) -> [0.6, 0.8]"""
    n = math.sqrt(sum([x * x for x in v]))
    return [x * length / n for x in v] if n > 0 else v


def unit(v):
    return scaled_to(v, 1.0)


def silu(z):
    """z * sigmoid(z), without overflow. silu(0) -> 0.0"""
    if z >= 0:
        return z / (1 + math.exp(-z))
    e = math.exp(z)
    return z * e / (1 + e)


_weights = {}  # seed -> the embeddings and every layer's matrices, drawn once


def weights(seed):
    """The embeddings (unit RMS rows) and, per layer, the matrices as the stack uses them, stored
    transposed (one row per output unit) so that x W is dots(x, Wt). The draw order is fixed:
    embeddings, then per layer Wq, Wk, Wvo, W1, W3, W2."""
    if seed not in _weights:
        rng = Rng(seed)
        emb = [scaled_to(row, math.sqrt(DIM)) for row in rng.gauss_matrix(len(VOCAB), DIM)]
        layers = []
        sd, sh = 1 / math.sqrt(DIM), 1 / math.sqrt(HIDDEN)
        for _ in range(LAYERS):
            wq = rng.gauss_matrix(DIM, DIM, sd)
            wk = rng.gauss_matrix(DIM, DIM, sd)
            wvo = rng.gauss_matrix(DIM, DIM, sd * WRITE_SCALE)
            w1 = rng.gauss_matrix(DIM, HIDDEN, sd)
            w3 = rng.gauss_matrix(DIM, HIDDEN, sd)
            w2 = rng.gauss_matrix(HIDDEN, DIM, sh * WRITE_SCALE)
            layers.append({"wq": transpose(wq), "wk": transpose(wk), "wvo": transpose(wvo),
                           "w1": transpose(w1), "w3": transpose(w3), "w2": transpose(w2)})
        _weights[seed] = {"emb": emb, "layers": layers}
    return _weights[seed]


def attention_weights(h, layer, attention):
    """Row t: position t's weights over positions 0..t (causal), summing to 1."""
    n = len(h)
    if attention == "uniform":
        return [[1 / (t + 1)] * (t + 1) for t in range(n)]
    if attention == "self":
        return [[0.0] * t + [1.0] for t in range(n)]
    q = [dots(v, layer["wq"]) for v in h]
    k = [dots(v, layer["wk"]) for v in h]
    scale = 1 / math.sqrt(DIM)
    out = []
    for t in range(n):
        scores = [scale * s for s in dots(q[t], k[:t + 1])]
        top = max(scores)
        e = [math.exp(s - top) for s in scores]
        total = sum(e)
        out.append([v / total for v in e])
    return out


def attend(x, layer, attention):
    """The attention sub-layer's write for every position, and its weights."""
    h = [rms_norm(v) for v in x]
    a = attention_weights(h, layer, attention)
    out = []
    for t in range(len(h)):
        mix = [0.0] * DIM
        for w, hs in zip(a[t], h):
            if w:
                mix = [m + w * v for m, v in zip(mix, hs)]
        out.append(dots(mix, layer["wvo"]))
    return out, a


def ffn(x, layer):
    """The gated FFN's write for every position: (silu(h W1) * (h W3)) W2."""
    out = []
    for v in x:
        h = rms_norm(v)
        gate = [silu(z) * u for z, u in zip(dots(h, layer["w1"]), dots(h, layer["w3"]))]
        out.append(dots(gate, layer["w2"]))
    return out


def measure(x, emb):
    """Mean pairwise cosine, the character read at each position and the cosine with its own."""
    u = [unit(v) for v in x]
    n = len(u)
    total = [sum(col) for col in zip(*u)]
    cosine = (sum([s * s for s in total]) - n) / (n * (n - 1))
    read, own = [], 0.0
    for t in range(n):
        sims = dots(u[t], emb)  # emb rows have equal norms: the largest dot is the smallest angle
        best = 0
        for j in range(1, len(sims)):
            if sims[j] > sims[best]:
                best = j
        read.append(best)
        own += sims[TOKENS[t]] / math.sqrt(DIM)  # emb rows have norm sqrt(DIM)
    correct = sum([1 for t in range(n) if read[t] == TOKENS[t]])
    return {"cosine": cosine, "readout": correct / n, "correct": correct, "positions": n,
            "own_cosine": own / n, "read": read}


_runs = {}  # (seed, attention) -> {"skip": [layer 0 .. LAYERS], "plain": [...], "self_weight": w}


def run(attention, seed):
    """Both stacks, every layer, measured; computed once per (seed, attention)."""
    key = (seed, attention)
    if key not in _runs:
        w = weights(seed)
        start = [list(w["emb"][i]) for i in TOKENS]
        result = {}
        self_weight = 0.0
        for skip in (True, False):
            x = start
            states = [measure(x, w["emb"])]
            for k, layer in enumerate(w["layers"]):
                write, a = attend(x, layer, attention)
                if k == 0:
                    self_weight = sum([row[-1] for row in a]) / len(a)
                x = [[p + q for p, q in zip(v, f)] for v, f in zip(x, write)] if skip else write
                write = ffn(x, layer)
                x = [[p + q for p, q in zip(v, f)] for v, f in zip(x, write)] if skip else write
                states.append(measure(x, w["emb"]))
            result["skip" if skip else "plain"] = states
        result["self_weight"] = self_weight
        _runs[key] = result
    return _runs[key]


def check(params):
    layers = int(params["layers"])
    if not 1 <= layers <= LAYERS:
        raise ValueError("layers must be 1..%d, got %d" % (LAYERS, layers))
    if params["attention"] not in ATTENTION:
        raise ValueError("attention must be one of %s, got %s" % (sorted(ATTENTION), params["attention"]))
    seed = int(params["seed"])
    if seed not in SEEDS:
        raise ValueError("seed must be one of %s, got %s" % (list(SEEDS), seed))
    return {"layers": layers, "attention": params["attention"], "seed": seed}


def _pick(layers, skip, attention, seed):
    """The measured state after `layers` layers; any seed works here (the widget offers SEEDS)."""
    if not 0 <= int(layers) <= LAYERS:
        raise ValueError("layers must be 0..%d, got %s" % (LAYERS, layers))
    if attention not in ATTENTION:
        raise ValueError("attention must be one of %s, got %s" % (sorted(ATTENTION), attention))
    return run(attention, int(seed))["skip" if skip else "plain"][int(layers)]


def summary(layers, skip, attention="uniform", seed=SEEDS[0]):
    """After `layers` layers (0 = the embedding): cosine, readout share, correct count, own cosine."""
    state = _pick(layers, skip, attention, seed)
    out = {}
    for k in ("cosine", "readout", "correct", "positions", "own_cosine"):
        out[k] = state[k]
    return out


def by_layer(skip, attention="uniform", seed=SEEDS[0]):
    """summary() for layers 0 .. LAYERS."""
    return [summary(k, skip, attention, seed) for k in range(LAYERS + 1)]


def readout(layers, skip, attention="uniform", seed=SEEDS[0]):
    """The character whose embedding is nearest to each position's vector after `layers` layers."""
    return [VOCAB[i] for i in _pick(layers, skip, attention, seed)["read"]]


def self_weight(attention="uniform", seed=SEEDS[0]):
    """Layer 1's attention weight on a position itself, averaged over positions (uniform: mean of 1/(t+1))."""
    return run(attention, seed)["self_weight"]


def note(p):
    """What the reader is looking at, in one sentence or two."""
    if p["attention"] == "self":
        return ("只看自己时位置之间不混合，没有残差的一栏余弦也就不怎么升；可是读出照样错：没有残差，每个子层的输出"
                "替换掉输入，随机矩阵把每个字的向量转到了别处（被变换掉）。有残差时，原来的向量一直留在和里，所以读得出来。")
    return ("没有残差时，两件事一起发生：注意力把每个位置换成前文的加权平均，各位置的向量挤向同一个方向（被平均掉，"
            "看余弦）；每个子层的随机矩阵又把向量转到了别处，离它最近的已不是自己的词向量（被变换掉，看读出）。"
            "有残差时，原来的向量一直留在和里。")


def over_seeds(layers, skip, attention="uniform", seeds=SEEDS):
    """summary() for each seed (any ints; e.g. range(10) for a steadier mean), with the means:
    {"seeds": [...], "cosine": mean, "readout": mean, "own_cosine": mean}."""
    each = [summary(layers, skip, attention, s) for s in seeds]
    out = {"seeds": each}
    for k in ("cosine", "readout", "own_cosine"):
        out[k] = sum([e[k] for e in each]) / len(each)
    return out


def view(params):
    """Everything the widget shows: the per-layer table, the chosen layer's readout and the numbers."""
    p = check(params)
    r = run(p["attention"], p["seed"])
    skip, plain = r["skip"][p["layers"]], r["plain"][p["layers"]]
    rows = {}
    for k in range(LAYERS + 1):
        a, b = r["skip"][k], r["plain"][k]
        rows["layer-%d" % k] = {
            "cos-skip": num(a["cosine"], 2), "cos-plain": num(b["cosine"], 2),
            "read-skip": "%d/%d" % (a["correct"], a["positions"]),
            "read-plain": "%d/%d" % (b["correct"], b["positions"]),
            "data-selected": "true" if k == p["layers"] else "false",
        }
    positions = []
    for t, c in enumerate(SENTENCE):
        ks, kp = VOCAB[skip["read"][t]], VOCAB[plain["read"][t]]
        positions.append({"token": c, "skip": ks, "plain": kp})
        rows["pos-%d" % t] = {"skip": ks + (" ✓" if ks == c else " ✗"), "plain": kp + (" ✓" if kp == c else " ✗"),
                              "data-skip-ok": "true" if ks == c else "false",
                              "data-plain-ok": "true" if kp == c else "false"}
    n = skip["positions"]
    headline = {
        "layers": str(p["layers"]),
        "skip-correct": "%d/%d" % (skip["correct"], n),
        "skip-own": num(skip["own_cosine"], 2),
        "skip-cos": num(skip["cosine"], 2),
        "plain-correct": "%d/%d" % (plain["correct"], n),
        "plain-own": num(plain["own_cosine"], 2),
        "plain-cos": num(plain["cosine"], 2),
        "self-weight": num(r["self_weight"], 2),
        "note": note(p),
    }
    announce = ("读第 %d 层之后：没有残差时 %d 个位置里 %d 个读出自己，位置之间的平均余弦 %s；"
                "有残差时读出自己的 %d 个，平均余弦 %s。") % (
        p["layers"], n, plain["correct"], headline["plain-cos"], skip["correct"], headline["skip-cos"])
    return {
        "params": p,
        "slider": {"min": 1, "max": LAYERS, "step": 1},
        "attentions": [{"value": k, "label": ATTENTION[k], "checked": k == p["attention"]}
                       for k in ("uniform", "random", "self")],  # in this order on every runtime
        "seeds": [{"value": s, "checked": s == p["seed"]} for s in SEEDS],
        "layer_rows": ["layer-%d" % k for k in range(LAYERS + 1)],
        "positions": positions,
        "sizes": {"dim": DIM, "hidden": HIDDEN, "vocab": len(VOCAB), "layers": LAYERS, "tokens": len(SENTENCE)},
        "sentence": SENTENCE,
        "out": headline,
        "rows": rows,
        "announce": announce,
    }
