"""tinygpt: a tiny GPT, trained from scratch, in pure Python you can read top to bottom.

Standard library only (plus widgets/common/rng.py), in the subset CPython, Pyodide and
MicroPython share. It works on whole matrices, lists of lists with one row per token, so the
hot loops are plain loops over lists of floats rather than one Python object per number (as
in a scalar autograd). Every layer's backward pass sits right under its forward pass: the
forward returns what the backward needs, the backward returns the gradient of its input and
adds the gradients of its weights into `grads`.

The model, in forward order (pre-norm, no biases, like nanoGPT):

    x = wte[token] + wpe[position]                       # (N, d), N = B * T rows
    for each layer:
        x = x + Wo . attention(Wq . rms(x), Wk . rms(x), Wv . rms(x))   # causal, n_head heads
        x = x + W2 . relu(W1 . rms(x))                   # MLP, 4d wide
    logits = lm_head . rms(x)                             # (N, V)
    loss = cross_entropy(logits, next tokens)

rms(x) is RMSNorm without a learned gain. A weight W of shape (out, in) acts as torch's
x @ W.T. AdamW updates every weight; sample() draws text with a temperature.
"""
import math
from rng import Rng

EPS = 1e-5  # RMSNorm's epsilon
UNK = "\u25a1"  # □: the one token every character outside the vocabulary is folded into


# ---------------------------------------------------------------- tokenizer

def build_vocab(text, size):
    """The size - 1 most frequent characters of text (ties by code point), UNK first.

    build_vocab("abcab", 3) -> ["□", "a", "b"]
    """
    counts = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    ranked = sorted(counts.keys(), key=lambda ch: (-counts[ch], ord(ch)))
    return [UNK] + ranked[:size - 1]


class Tokenizer:
    """Characters <-> token ids; a character outside the vocabulary becomes UNK (id 0)."""

    def __init__(self, chars):
        self.chars = list(chars)
        self.ids = {}
        for i, ch in enumerate(self.chars):
            self.ids[ch] = i

    def encode(self, text):
        ids = self.ids
        return [ids.get(ch, 0) for ch in text]

    def decode(self, tokens):
        return "".join([self.chars[t] for t in tokens])


# ---------------------------------------------------------------- matrix helpers

def zeros(n, m):
    return [[0.0] * m for _ in range(n)]


def transpose(M):
    """transpose([[1, 2], [3, 4]]) -> [[1, 3], [2, 4]]"""
    return [list(col) for col in zip(*M)]


def add_into(A, B):
    """A += B, row by row, in place."""
    for i in range(len(A)):
        A[i] = [a + b for a, b in zip(A[i], B[i])]


def add(A, B):
    return [[a + b for a, b in zip(x, y)] for x, y in zip(A, B)]


# ---------------------------------------------------------------- layers, each with its backward

def linear(X, W):
    """X (N, in) times W (out, in) transposed -> (N, out), like torch's X @ W.T.

    linear([[1, 2]], [[3, 4], [1, 0]]) -> [[11, 1]]

    Most of a step's time is spent here. Each dot product is a plain index loop: for rows
    this short it beats sum() over zip() on CPython and runs about 2.5 times as fast on
    MicroPython (no tuple per pair); it adds the products in the same order, so the same bits.
    """
    ks = range(len(W[0]) if W else 0)
    out = []
    for x in X:
        row = []
        for w in W:
            s = 0.0
            for k in ks:
                s += x[k] * w[k]
            row.append(s)
        out.append(row)
    return out


def linear_back(dY, X, W, dW):
    """Backward of linear: adds dY.T @ X into dW, returns dX = dY @ W."""
    dX = linear(dY, transpose(W))  # dY (N, out) times W (out, in)
    G = linear(transpose(dY), transpose(X))  # G[j][i]: output j's gradient times input i, over the N rows
    for j in range(len(dW)):
        dW[j] = [g + a for g, a in zip(dW[j], G[j])]
    return dX


def rmsnorm(X):
    """Each row divided by its root mean square -> (Y, R), R the divisors (kept for backward)."""
    Y, R = [], []
    for x in X:
        r = math.sqrt(sum([a * a for a in x]) / len(x) + EPS)
        R.append(r)
        Y.append([a / r for a in x])
    return Y, R


def rmsnorm_back(dY, Y, R):
    """dx = (dy - y * mean(dy * y)) / r, row by row."""
    dX = []
    for dy, y, r in zip(dY, Y, R):
        m = sum([a * b for a, b in zip(dy, y)]) / len(y)
        dX.append([(a - b * m) / r for a, b in zip(dy, y)])
    return dX


def attention(Q, K, V, n_head, T):
    """Causal self-attention over blocks of T rows (one block per sequence), n_head heads.

    Q, K, V: (N, d). Returns (out (N, d), P) where P holds each row's softmax weights over the
    rows before it (itself included), one list per (block, head, row), kept for backward.
    """
    N, d = len(Q), len(Q[0])
    hs = d // n_head
    scale = 1.0 / math.sqrt(hs)
    out = [[] for _ in range(N)]
    P = []
    for b in range(0, N, T):
        for h in range(n_head):
            lo, hi = h * hs, (h + 1) * hs
            q = [row[lo:hi] for row in Q[b:b + T]]
            k = [row[lo:hi] for row in K[b:b + T]]
            vT = transpose([row[lo:hi] for row in V[b:b + T]])  # (hs, T)
            for t in range(len(q)):
                qt = q[t]
                s = [scale * sum([x * y for x, y in zip(qt, k[u])]) for u in range(t + 1)]
                top = max(s)
                e = [math.exp(x - top) for x in s]
                z = sum(e)
                p = [x / z for x in e]
                P.append(p)
                out[b + t].extend([sum([x * y for x, y in zip(p, col)]) for col in vT])
    return out, P


def attention_back(dOut, Q, K, V, P, n_head, T):
    """Backward of attention: -> (dQ, dK, dV), each (N, d)."""
    N, d = len(Q), len(Q[0])
    hs = d // n_head
    scale = 1.0 / math.sqrt(hs)
    dQ = [[] for _ in range(N)]
    dK = [[] for _ in range(N)]
    dV = [[] for _ in range(N)]
    i = 0  # index into P, in the order attention() appended
    for b in range(0, N, T):
        for h in range(n_head):
            lo, hi = h * hs, (h + 1) * hs
            q = [row[lo:hi] for row in Q[b:b + T]]
            k = [row[lo:hi] for row in K[b:b + T]]
            v = [row[lo:hi] for row in V[b:b + T]]
            n = len(q)
            dq = []
            dk = [[0.0] * hs for _ in range(n)]
            dv = [[0.0] * hs for _ in range(n)]
            for t in range(n):
                p = P[i]
                i += 1
                g = dOut[b + t][lo:hi]
                dp = [sum([x * y for x, y in zip(g, v[u])]) for u in range(t + 1)]
                for u in range(t + 1):  # out_t = sum_u p_u v_u
                    pu = p[u]
                    dv[u] = [x + pu * y for x, y in zip(dv[u], g)]
                inner = sum([x * y for x, y in zip(p, dp)])
                ds = [scale * pu * (x - inner) for pu, x in zip(p, dp)]  # softmax backward, then the scale
                dqt = [0.0] * hs
                qt = q[t]
                for u in range(t + 1):  # s_u = scale * q_t . k_u
                    su = ds[u]
                    dqt = [x + su * y for x, y in zip(dqt, k[u])]
                    dk[u] = [x + su * y for x, y in zip(dk[u], qt)]
                dq.append(dqt)
            for t in range(n):
                dQ[b + t].extend(dq[t])
                dK[b + t].extend(dk[t])
                dV[b + t].extend(dv[t])
    return dQ, dK, dV


def relu(X):
    return [[a if a > 0.0 else 0.0 for a in x] for x in X]


def relu_back(dY, Y):
    return [[g if a > 0.0 else 0.0 for g, a in zip(dy, y)] for dy, y in zip(dY, Y)]


def cross_entropy(logits, targets):
    """Mean of -log softmax(logits)[target] -> (loss, dlogits).

    cross_entropy([[0.0, 0.0]], [1]) -> (0.693..., [[0.5, -0.5]])
    """
    n = len(targets)
    loss = 0.0
    dlogits = []
    for row, t in zip(logits, targets):
        top = max(row)
        e = [math.exp(a - top) for a in row]
        z = sum(e)
        loss += math.log(z) - (row[t] - top)
        g = [a / (z * n) for a in e]
        g[t] -= 1.0 / n
        dlogits.append(g)
    return loss / n, dlogits


# ---------------------------------------------------------------- the model

class Config:
    def __init__(self, vocab_size, n_layer=1, n_embd=32, n_head=2, block_size=16):
        self.vocab_size = vocab_size  # V: characters, UNK included
        self.n_layer = n_layer        # transformer blocks
        self.n_embd = n_embd          # d: the width of every token's vector
        self.n_head = n_head          # attention heads, each d / n_head wide
        self.block_size = block_size  # T: the longest context the model reads

    def as_dict(self):
        return {"vocab_size": self.vocab_size, "n_layer": self.n_layer, "n_embd": self.n_embd,
                "n_head": self.n_head, "block_size": self.block_size}


def weight_names(cfg):
    """The weights in a fixed order (MicroPython's dicts keep none)."""
    names = ["wte", "wpe"]
    for l in range(cfg.n_layer):
        p = "h" + str(l) + "."
        names += [p + "wq", p + "wk", p + "wv", p + "wo", p + "w1", p + "w2"]
    return names + ["lm_head"]


def init_weights(cfg, seed):
    """Normal weights, std 1/sqrt(fan_in); the projections back into the residual stream and
    lm_head start smaller, so the first loss is close to ln V."""
    rng = Rng(seed)
    d, V = cfg.n_embd, cfg.vocab_size
    shapes = {"wte": (V, d, 1.0), "wpe": (cfg.block_size, d, 1.0), "lm_head": (V, d, 0.1 / math.sqrt(d))}
    for l in range(cfg.n_layer):
        p = "h" + str(l) + "."
        for name in ("wq", "wk", "wv"):
            shapes[p + name] = (d, d, 1.0 / math.sqrt(d))
        shapes[p + "wo"] = (d, d, 0.5 / math.sqrt(d))
        shapes[p + "w1"] = (4 * d, d, 1.0 / math.sqrt(d))
        shapes[p + "w2"] = (d, 4 * d, 0.5 / math.sqrt(4 * d))
    W = {}
    for name in weight_names(cfg):
        rows, cols, std = shapes[name]
        W[name] = rng.gauss_matrix(rows, cols, std)
    return W


def forward(cfg, W, inputs, targets=None, last=False):
    """inputs: B sequences of the same length t <= T. -> (logits or loss, cache for backward).
    last=True (no targets): the logits of the last row only, (1, V), which is all sampling reads."""
    t = len(inputs[0])
    tokens = [tok for seq in inputs for tok in seq]
    wte, wpe = W["wte"], W["wpe"]
    x = [[a + b for a, b in zip(wte[tok], wpe[i % t])] for i, tok in enumerate(tokens)]  # (N, d)
    layers = []
    for l in range(cfg.n_layer):
        p = "h" + str(l) + "."
        c = {"x": x}
        c["n1"], c["r1"] = rmsnorm(x)
        c["q"] = linear(c["n1"], W[p + "wq"])
        c["k"] = linear(c["n1"], W[p + "wk"])
        c["v"] = linear(c["n1"], W[p + "wv"])
        c["att"], c["P"] = attention(c["q"], c["k"], c["v"], cfg.n_head, t)
        x = add(x, linear(c["att"], W[p + "wo"]))
        c["x2"] = x
        c["n2"], c["r2"] = rmsnorm(x)
        c["hid"] = relu(linear(c["n2"], W[p + "w1"]))  # (N, 4d)
        x = add(x, linear(c["hid"], W[p + "w2"]))
        layers.append(c)
    nf, rf = rmsnorm(x)
    logits = linear(nf[-1:] if last and targets is None else nf, W["lm_head"])  # (N, V), or (1, V)
    cache = {"tokens": tokens, "t": t, "layers": layers, "nf": nf, "rf": rf}
    if targets is None:
        return logits, cache
    loss, cache["dlogits"] = cross_entropy(logits, [tok for seq in targets for tok in seq])
    return loss, cache


def backward(cfg, W, cache):
    """The gradient of the loss of forward(..., targets) for every weight -> {name: matrix}."""
    G = {}
    for name in weight_names(cfg):
        G[name] = zeros(len(W[name]), len(W[name][0]))
    dx = rmsnorm_back(linear_back(cache["dlogits"], cache["nf"], W["lm_head"], G["lm_head"]),
                      cache["nf"], cache["rf"])
    t = cache["t"]
    for l in range(cfg.n_layer - 1, -1, -1):
        p = "h" + str(l) + "."
        c = cache["layers"][l]
        # x = x2 + W2 . relu(W1 . rms(x2))
        dhid = relu_back(linear_back(dx, c["hid"], W[p + "w2"], G[p + "w2"]), c["hid"])
        dn2 = linear_back(dhid, c["n2"], W[p + "w1"], G[p + "w1"])
        dx = add(dx, rmsnorm_back(dn2, c["n2"], c["r2"]))
        # x2 = x + Wo . attention(Wq . rms(x), Wk . rms(x), Wv . rms(x))
        datt = linear_back(dx, c["att"], W[p + "wo"], G[p + "wo"])
        dq, dk, dv = attention_back(datt, c["q"], c["k"], c["v"], c["P"], cfg.n_head, t)
        dn1 = linear_back(dq, c["n1"], W[p + "wq"], G[p + "wq"])
        add_into(dn1, linear_back(dk, c["n1"], W[p + "wk"], G[p + "wk"]))
        add_into(dn1, linear_back(dv, c["n1"], W[p + "wv"], G[p + "wv"]))
        dx = add(dx, rmsnorm_back(dn1, c["n1"], c["r1"]))
    dwte, dwpe = G["wte"], G["wpe"]
    for i, tok in enumerate(cache["tokens"]):  # x = wte[token] + wpe[position]
        g = dx[i]
        dwte[tok] = [a + b for a, b in zip(dwte[tok], g)]
        dwpe[i % t] = [a + b for a, b in zip(dwpe[i % t], g)]
    return G


# ---------------------------------------------------------------- AdamW

class AdamW:
    """Adam with decoupled weight decay (Loshchilov & Hutter), as torch.optim.AdamW."""

    def __init__(self, W, names, lr=0.01, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=0.01):
        self.lr, self.beta1, self.beta2, self.eps, self.weight_decay = lr, beta1, beta2, eps, weight_decay
        self.names = names
        self.t = 0
        self.m, self.v = {}, {}
        for name in names:
            self.m[name] = zeros(len(W[name]), len(W[name][0]))
            self.v[name] = zeros(len(W[name]), len(W[name][0]))

    def step(self, W, G):
        self.t += 1
        b1, b2, eps = self.beta1, self.beta2, self.eps
        c1, c2 = 1.0 - b1, 1.0 - b2
        lr1 = self.lr / (1.0 - b1 ** self.t)  # bias corrections folded into the step
        k2 = 1.0 / (1.0 - b2 ** self.t)
        decay = 1.0 - self.lr * self.weight_decay
        for name in self.names:
            Wn, Gn, M, V = W[name], G[name], self.m[name], self.v[name]
            for i in range(len(Wn)):
                g = Gn[i]
                m = [b1 * a + c1 * x for a, x in zip(M[i], g)]
                v = [b2 * a + c2 * x * x for a, x in zip(V[i], g)]
                M[i], V[i] = m, v
                Wn[i] = [w * decay - lr1 * a / (math.sqrt(b * k2) + eps) for w, a, b in zip(Wn[i], m, v)]


# ---------------------------------------------------------------- training and sampling

def get_batch(tokens, batch_size, T, rng):
    """batch_size random windows of T + 1 tokens -> (inputs, targets), each B lists of T."""
    xs, ys = [], []
    for _ in range(batch_size):
        s = rng.below(len(tokens) - T)
        xs.append(tokens[s:s + T])
        ys.append(tokens[s + 1:s + T + 1])
    return xs, ys


def eval_windows(tokens, T, count):
    """count windows spread evenly over tokens, the same every time: a fixed validation set."""
    step = (len(tokens) - T - 1) // count
    xs = [tokens[i * step:i * step + T] for i in range(count)]
    ys = [tokens[i * step + 1:i * step + T + 1] for i in range(count)]
    return xs, ys


def cover_windows(tokens, T):
    """Back-to-back windows of T over tokens, as many as fit -> (inputs, targets): every token
    after the first is a target once, up to the last whole window (at most T - 1 are left out).

    cover_windows([1, 2, 3, 4, 5, 6], 2) -> ([[1, 2], [3, 4]], [[2, 3], [4, 5]])
    """
    count = (len(tokens) - 1) // T
    xs = [tokens[i * T:(i + 1) * T] for i in range(count)]
    ys = [tokens[i * T + 1:(i + 1) * T + 1] for i in range(count)]
    return xs, ys


def loss_of(cfg, W, xs, ys, per_call=8):
    """The mean loss over fixed windows, per_call sequences at a time."""
    total = 0.0
    for i in range(0, len(xs), per_call):
        loss, _ = forward(cfg, W, xs[i:i + per_call], ys[i:i + per_call])
        total += loss * len(xs[i:i + per_call])
    return total / len(xs)


def train_step(cfg, W, opt, xs, ys):
    """One step of AdamW on one batch -> the batch's loss before the step."""
    loss, cache = forward(cfg, W, xs, ys)
    opt.step(W, backward(cfg, W, cache))
    return loss


def sample(cfg, W, context, n, temperature, rng, never=None, forward_pass=forward):
    """n tokens drawn one at a time after context, from softmax(logits / temperature); the token
    `never` (say UNK, which stands for hundreds of rare characters) is never drawn.
    forward_pass: the engine's forward (tinygpt_ulab.py passes its own, on arrays)."""
    out = list(context)
    for _ in range(n):
        window = out[-cfg.block_size:] if out else [0]
        logits, _ = forward_pass(cfg, W, [window])
        row = list(logits[-1])
        top = max(row)
        e = [math.exp((a - top) / temperature) for a in row]
        if never is not None:
            e[never] = 0.0
        r = rng.random() * sum(e)
        pick = None
        for i, x in enumerate(e):
            r -= x
            if r <= 0.0 and x > 0.0:
                pick = i
                break
        if pick is None:  # rounding left r a hair above 0: the last token that may be drawn
            pick = max([i for i in range(len(e)) if e[i] > 0.0])
        out.append(pick)
    return out[len(context):]


# ---------------------------------------------------------------- generation with a KV cache
#
# Under the causal mask a token's key and value depend only on the tokens up to it, so appending
# a token changes none of the earlier ones: generation can keep them (the KV cache) and compute
# one new row per step. forward_step() does the very arithmetic forward() does for its last row,
# in the same order, so its logits are the same floats, bit for bit.

def new_cache(cfg):
    """An empty KV cache: per layer, the keys ("k") and values ("v") of the tokens read so far,
    one row of d numbers per token, and "n", how many tokens that is."""
    return {"n": 0, "k": [[] for _ in range(cfg.n_layer)], "v": [[] for _ in range(cfg.n_layer)]}


def embed(W, token, pos):
    """The input row of one token at position pos: wte[token] + wpe[pos]."""
    return [a + b for a, b in zip(W["wte"][token], W["wpe"][pos])]


def attend(q, K, V, n_head):
    """One query row q against the cached rows K and V (its own row included), n_head heads ->
    the attention output row; attention()'s arithmetic for its last row."""
    hs = len(q) // n_head
    scale = 1.0 / math.sqrt(hs)
    out = []
    for h in range(n_head):
        lo, hi = h * hs, (h + 1) * hs
        qt = q[lo:hi]
        s = [scale * sum([x * y for x, y in zip(qt, k[lo:hi])]) for k in K]
        top = max(s)
        e = [math.exp(x - top) for x in s]
        z = sum(e)
        p = [x / z for x in e]
        vT = transpose([row[lo:hi] for row in V])
        out.extend([sum([x * y for x, y in zip(p, col)]) for col in vT])
    return out


def step_embedded(cfg, W, cache, x):
    """forward_step after the embedding: x is the new token's input row (embed(W, token, pos));
    appends its key and value to the cache -> its logits row. Passing a row made with the wrong
    position (embed(W, token, 0)) is the cache bug readers hit: the outputs then diverge."""
    if cache["n"] >= cfg.block_size:
        raise ValueError("the cache is full: it holds block_size = " + str(cfg.block_size) +
                         " tokens and the model has no position after them")
    x = [x]
    for l in range(cfg.n_layer):
        p = "h" + str(l) + "."
        n1, _ = rmsnorm(x)
        q = linear(n1, W[p + "wq"])[0]
        cache["k"][l].append(linear(n1, W[p + "wk"])[0])
        cache["v"][l].append(linear(n1, W[p + "wv"])[0])
        att = attend(q, cache["k"][l], cache["v"][l], cfg.n_head)
        x = add(x, linear([att], W[p + "wo"]))
        n2, _ = rmsnorm(x)
        x = add(x, linear(relu(linear(n2, W[p + "w1"])), W[p + "w2"]))
    cache["n"] += 1
    nf, _ = rmsnorm(x)
    return linear(nf, W["lm_head"])[0]


def check_step(cfg, cache, pos):
    """The errors of forward_step: pos must be the cache's length, and below block_size."""
    if pos >= cfg.block_size:
        raise ValueError("position " + str(pos) + " is past the last one the model has (block_size - 1 = " +
                         str(cfg.block_size - 1) + "): start a new cache over the last tokens")
    if pos != cache["n"]:
        raise ValueError("position " + str(pos) + " but the cache holds " + str(cache["n"]) +
                         " tokens: the new token's position is the number of tokens before it")


def forward_step(cfg, W, cache, token, pos):
    """One new token at absolute position pos with the KV cache -> its logits row (a list of
    vocab_size floats), the same as the last row of forward(cfg, W, [prefix + [token]]); appends
    the token's key and value to the cache. ValueError when pos is not the cache's length or
    reaches block_size."""
    check_step(cfg, cache, pos)
    return step_embedded(cfg, W, cache, embed(W, token, pos))


def prefill(cfg, W, cache, tokens, last=False):
    """Reads tokens (at positions 0, 1, ...) into an empty cache in one forward pass -> the
    logits of every row (as forward's; last=True: of the last row only); forward_step goes on from
    position len(tokens)."""
    if cache["n"] != 0:
        raise ValueError("prefill starts an empty cache (this one holds " + str(cache["n"]) + " tokens)")
    if not 0 < len(tokens) <= cfg.block_size:
        raise ValueError("prefill takes 1 to block_size = " + str(cfg.block_size) + " tokens, not " + str(len(tokens)))
    logits, c = forward(cfg, W, [tokens], last=last)
    for l in range(cfg.n_layer):
        cache["k"][l] = list(c["layers"][l]["k"])
        cache["v"][l] = list(c["layers"][l]["v"])
    cache["n"] = len(tokens)
    return logits


def cached_forward_pass(new_cache_fn, prefill_fn, step_fn):
    """A forward_pass for sample() that keeps a KV cache: when the window is the last one plus one
    token, one forward_step; otherwise (the first call, or the window slid past block_size, so
    every position changed) a fresh cache and a prefill. Returns ([the last logits row], None)."""
    state = {"cache": None, "window": None}

    def forward_pass(cfg, W, inputs):
        window = inputs[0]
        if state["cache"] is not None and state["window"] == window[:-1]:
            row = step_fn(cfg, W, state["cache"], window[-1], len(window) - 1)
        else:
            state["cache"] = new_cache_fn(cfg)
            row = prefill_fn(cfg, W, state["cache"], window)[-1]
        state["window"] = list(window)
        return [row], None

    return forward_pass


def sample_cached(cfg, W, context, n, temperature, rng, never=None):
    """sample() with the KV cache: the context is read once, then each new token is one
    forward_step; the same draws as sample() from the same rng. Once the text is longer than
    block_size the window slides, every token's position changes, and each step reads the whole
    window again (learned absolute positions: the cached keys no longer hold)."""
    return sample(cfg, W, context, n, temperature, rng, never,
                  forward_pass=cached_forward_pass(new_cache, prefill, forward_step))
