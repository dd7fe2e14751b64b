"""tinygpt_ulab: the tiny GPT of tinygpt.py, with each matrix an array of `ulab`.

The same model, weight names, initial weights, forward and backward passes and AdamW update as
tinygpt.py, line for line, with each matrix an ndarray of float64 instead of a list of lists, so
the loops over numbers run in C. `ulab` is the numpy subset built into MicroPython's ulab
WebAssembly build: where the widgets' Python is MicroPython, the tiny-gpt page loads that build
and trains with this module; on Pyodide it keeps to tinygpt.py (widgets/tiny_gpt/model.py picks).
In CPython, numpy stands in for ulab (the tests check both engines give the same losses).

The tokenizer, init_weights (so both engines start from the same weights), the batches and the
validation windows are tinygpt.py's own; only the arithmetic differs, so the losses agree with
the pure engine's to float rounding (about 1e-15 a step), not bit for bit.

What the ulab build lacks, and what stands in for it here: its arrays have at most 2 dimensions,
so attention loops over (sequence, head) pairs as the pure engine does, with one (T, T) matrix of
scores each; np.tril and boolean indexing of 2-D arrays are missing (and np.where crashed the
WebAssembly build), so the causal mask is a constant matrix of 0 and -inf added to the scores;
a sum over an axis returns a 1-D array, so it is reshaped to a column before it divides rows;
the gather by target token of cross_entropy and the scatter of the embeddings' gradient are
short Python loops over rows.

Speed (benchmarks/tinygpt_speed.py --only ulab-train, MicroPython in Node, CPU time on a busy
2-core desktop): at the page's DEFAULTS 18 steps/s (55 ms a step, 14 ns a multiply-add) against
0.38 for tinygpt.py on the same MicroPython (48 times), and about 1.9 for tinygpt.py on Pyodide;
at SLOW_DEFAULTS 82 against 2.2. The losses agree with tinygpt.py's to 2e-15 a step.
"""
import math
import tinygpt as tg

try:
    from ulab import numpy as np  # MicroPython's ulab build
    ULAB = True
except ImportError:
    ULAB = False  # not that build: widgets/tiny_gpt/model.py trains with tinygpt.py instead
    try:
        import numpy as np  # CPython: numpy stands in (the tests)
    except ImportError:
        np = None

EPS = tg.EPS
INF = float("inf")


def array(M):
    """A list of lists (a weight as tinygpt.py and the page's storage hold it) -> an ndarray."""
    return np.array(M)


def to_arrays(W):
    """{name: list of lists} (as tinygpt.init_weights makes them) -> {name: ndarray}."""
    out = {}
    for name in W:
        out[name] = array(W[name])
    return out


def column(v):
    """A 1-D array of n values -> an (n, 1) array, which broadcasts over the rows of an (n, m) one."""
    return v.reshape((len(v), 1))


# ---------------------------------------------------------------- layers, each with its backward

def linear(X, W):
    """X (N, in) times W (out, in) transposed -> (N, out), like torch's X @ W.T."""
    return np.dot(X, W.T)


def linear_back(dY, X, W, dW):
    """Backward of linear: adds dY.T @ X into dW (in place), returns dX = dY @ W."""
    dW += np.dot(dY.T, X)
    return np.dot(dY, W)


def rmsnorm(X):
    """Each row divided by its root mean square -> (Y, R), R the divisors as a column."""
    R = column(np.sqrt(np.sum(X * X, axis=1) / X.shape[1] + EPS))
    return X / R, R


def rmsnorm_back(dY, Y, R):
    """dx = (dy - y * mean(dy * y)) / r, row by row."""
    m = column(np.sum(dY * Y, axis=1) / Y.shape[1])
    return (dY - Y * m) / R


MASKS = {}


def causal_mask(T):
    """(T, T): 0 where row t may look at column u (u <= t), -inf after it."""
    if T not in MASKS:
        MASKS[T] = np.array([[0.0 if u <= t else -INF for u in range(T)] for t in range(T)])
    return MASKS[T]


def attention(Q, K, V, n_head, T):
    """Causal self-attention over blocks of T rows (one block per sequence), n_head heads.

    Q, K, V: (N, d). Returns (out (N, d), P) where P holds one (T, T) matrix of softmax weights
    per (block, head), zero above the diagonal, kept for backward.
    """
    N, d = Q.shape
    hs = d // n_head
    scale = 1.0 / math.sqrt(hs)
    mask = causal_mask(T)
    out = np.zeros((N, d))
    P = []
    for b in range(0, N, T):
        for h in range(n_head):
            lo, hi = h * hs, (h + 1) * hs
            q, k, v = Q[b:b + T, lo:hi], K[b:b + T, lo:hi], V[b:b + T, lo:hi]
            s = scale * np.dot(q, k.T) + mask
            e = np.exp(s - column(np.max(s, axis=1)))
            p = e / column(np.sum(e, axis=1))
            P.append(p)
            out[b:b + T, lo:hi] = np.dot(p, v)
    return out, P


def attention_back(dOut, Q, K, V, P, n_head, T):
    """Backward of attention: -> (dQ, dK, dV), each (N, d)."""
    N, d = Q.shape
    hs = d // n_head
    scale = 1.0 / math.sqrt(hs)
    dQ, dK, dV = np.zeros((N, d)), np.zeros((N, d)), np.zeros((N, d))
    i = 0  # index into P, in the order attention() appended
    for b in range(0, N, T):
        for h in range(n_head):
            lo, hi = h * hs, (h + 1) * hs
            q, k, v = Q[b:b + T, lo:hi], K[b:b + T, lo:hi], V[b:b + T, lo:hi]
            p = P[i]
            i += 1
            g = dOut[b:b + T, lo:hi]
            dp = np.dot(g, v.T)  # out_t = sum_u p_tu v_u
            dV[b:b + T, lo:hi] = np.dot(p.T, g)
            inner = column(np.sum(p * dp, axis=1))
            ds = scale * p * (dp - inner)  # softmax backward, then the scale
            dQ[b:b + T, lo:hi] = np.dot(ds, k)  # s_tu = scale * q_t . k_u
            dK[b:b + T, lo:hi] = np.dot(ds.T, q)
    return dQ, dK, dV


def relu(X):
    return np.maximum(X, 0.0)


def relu_back(dY, Y):
    return dY * (Y > 0.0)


def cross_entropy(logits, targets):
    """Mean of -log softmax(logits)[target] -> (loss, dlogits)."""
    n = len(targets)
    top = column(np.max(logits, axis=1))
    e = np.exp(logits - top)
    z = column(np.sum(e, axis=1))
    logz = np.log(z)
    loss = 0.0
    for i in range(n):
        t = targets[i]
        loss += logz[i, 0] - (logits[i, t] - top[i, 0])
    g = e / (z * n)
    for i in range(n):
        g[i, targets[i]] -= 1.0 / n
    return loss / n, g


# ---------------------------------------------------------------- the model

def forward(cfg, W, inputs, targets=None, last=False):
    """inputs: B sequences of the same length t <= T. -> (logits or loss, cache for backward).
    last=True (no targets): the logits of the last row only, (1, V), which is all sampling reads."""
    t = len(inputs[0])
    tokens = [tok for seq in inputs for tok in seq]
    x = np.take(W["wte"], tokens, axis=0) + np.take(W["wpe"], [i % t for i in range(len(tokens))], axis=0)
    layers = []
    for l in range(cfg.n_layer):
        p = "h" + str(l) + "."
        c = {"x": x}
        c["n1"], c["r1"] = rmsnorm(x)
        c["q"] = linear(c["n1"], W[p + "wq"])
        c["k"] = linear(c["n1"], W[p + "wk"])
        c["v"] = linear(c["n1"], W[p + "wv"])
        c["att"], c["P"] = attention(c["q"], c["k"], c["v"], cfg.n_head, t)
        x = x + linear(c["att"], W[p + "wo"])
        c["x2"] = x
        c["n2"], c["r2"] = rmsnorm(x)
        c["hid"] = relu(linear(c["n2"], W[p + "w1"]))  # (N, 4d)
        x = x + linear(c["hid"], W[p + "w2"])
        layers.append(c)
    nf, rf = rmsnorm(x)
    logits = linear(nf[-1:] if last and targets is None else nf, W["lm_head"])  # (N, V), or (1, V)
    cache = {"tokens": tokens, "t": t, "layers": layers, "nf": nf, "rf": rf}
    if targets is None:
        return logits, cache
    loss, cache["dlogits"] = cross_entropy(logits, [tok for seq in targets for tok in seq])
    return loss, cache


def backward(cfg, W, cache):
    """The gradient of the loss of forward(..., targets) for every weight -> {name: ndarray}."""
    G = {}
    for name in tg.weight_names(cfg):
        G[name] = np.zeros(W[name].shape)
    dx = rmsnorm_back(linear_back(cache["dlogits"], cache["nf"], W["lm_head"], G["lm_head"]),
                      cache["nf"], cache["rf"])
    t = cache["t"]
    for l in range(cfg.n_layer - 1, -1, -1):
        p = "h" + str(l) + "."
        c = cache["layers"][l]
        # x = x2 + W2 . relu(W1 . rms(x2))
        dhid = relu_back(linear_back(dx, c["hid"], W[p + "w2"], G[p + "w2"]), c["hid"])
        dn2 = linear_back(dhid, c["n2"], W[p + "w1"], G[p + "w1"])
        dx = dx + rmsnorm_back(dn2, c["n2"], c["r2"])
        # x2 = x + Wo . attention(Wq . rms(x), Wk . rms(x), Wv . rms(x))
        datt = linear_back(dx, c["att"], W[p + "wo"], G[p + "wo"])
        dq, dk, dv = attention_back(datt, c["q"], c["k"], c["v"], c["P"], cfg.n_head, t)
        dn1 = linear_back(dq, c["n1"], W[p + "wq"], G[p + "wq"])
        dn1 = dn1 + linear_back(dk, c["n1"], W[p + "wk"], G[p + "wk"])
        dn1 = dn1 + linear_back(dv, c["n1"], W[p + "wv"], G[p + "wv"])
        dx = dx + rmsnorm_back(dn1, c["n1"], c["r1"])
    dwte, dwpe = G["wte"], G["wpe"]
    for i, tok in enumerate(cache["tokens"]):  # x = wte[token] + wpe[position]
        dwte[tok] = dwte[tok] + dx[i]
        dwpe[i % t] = dwpe[i % t] + dx[i]
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
            self.m[name] = np.zeros(W[name].shape)
            self.v[name] = np.zeros(W[name].shape)

    def step(self, W, G):
        self.t += 1
        b1, b2, eps = self.beta1, self.beta2, self.eps
        c1, c2 = 1.0 - b1, 1.0 - b2
        lr1 = self.lr / (1.0 - b1 ** self.t)  # bias corrections folded into the step
        k2 = 1.0 / (1.0 - b2 ** self.t)
        decay = 1.0 - self.lr * self.weight_decay
        for name in self.names:
            g = G[name]
            m = b1 * self.m[name] + c1 * g
            v = b2 * self.v[name] + c2 * g * g
            self.m[name], self.v[name] = m, v
            W[name] = W[name] * decay - lr1 * m / (np.sqrt(v * k2) + eps)


# ---------------------------------------------------------------- training and sampling

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


def sample(cfg, W, context, n, temperature, rng, never=None):
    """tinygpt.sample with this engine's forward pass: the same draws from the same logits."""
    return tg.sample(cfg, W, context, n, temperature, rng, never, forward_pass=forward)


# ---------------------------------------------------------------- generation with a KV cache

def new_cache(cfg):
    """tinygpt.new_cache on arrays: per layer a (block_size, d) array of keys ("k") and one of
    values ("v"), filled row by row, and "n", how many rows hold tokens so far."""
    T, d = cfg.block_size, cfg.n_embd
    return {"n": 0, "k": [np.zeros((T, d)) for _ in range(cfg.n_layer)],
            "v": [np.zeros((T, d)) for _ in range(cfg.n_layer)]}


def embed(W, token, pos):
    """The input row of one token at position pos, a (1, d) array: wte[token] + wpe[pos]."""
    return np.take(W["wte"], [token], axis=0) + np.take(W["wpe"], [pos], axis=0)


def attend(q, K, V, n_head):
    """One query row q (1, d) against the cached rows K and V (n, d), its own included -> (1, d)."""
    d = q.shape[1]
    hs = d // n_head
    scale = 1.0 / math.sqrt(hs)
    out = np.zeros((1, d))
    for h in range(n_head):
        lo, hi = h * hs, (h + 1) * hs
        s = scale * np.dot(q[:, lo:hi], K[:, lo:hi].T)  # (1, n)
        e = np.exp(s - column(np.max(s, axis=1)))
        p = e / column(np.sum(e, axis=1))
        out[:, lo:hi] = np.dot(p, V[:, lo:hi])
    return out


def step_embedded(cfg, W, cache, x):
    """tinygpt.step_embedded on arrays: x the new token's (1, d) input row -> its logits row (a list)."""
    n = cache["n"]
    if n >= cfg.block_size:
        raise ValueError("the cache is full: it holds block_size = " + str(cfg.block_size) +
                         " tokens and the model has no position after them")
    for l in range(cfg.n_layer):
        p = "h" + str(l) + "."
        K, V = cache["k"][l], cache["v"][l]
        n1, _ = rmsnorm(x)
        q = linear(n1, W[p + "wq"])
        K[n:n + 1, :] = linear(n1, W[p + "wk"])
        V[n:n + 1, :] = linear(n1, W[p + "wv"])
        att = attend(q, K[0:n + 1, :], V[0:n + 1, :], cfg.n_head)
        x = x + linear(att, W[p + "wo"])
        n2, _ = rmsnorm(x)
        x = x + linear(relu(linear(n2, W[p + "w1"])), W[p + "w2"])
    cache["n"] = n + 1
    nf, _ = rmsnorm(x)
    return list(linear(nf, W["lm_head"])[0])


def forward_step(cfg, W, cache, token, pos):
    """tinygpt.forward_step on arrays: one new token at position pos -> its logits row (a list of
    vocab_size floats), the last row of forward() over the prefix to float rounding."""
    tg.check_step(cfg, cache, pos)
    return step_embedded(cfg, W, cache, embed(W, token, pos))


def prefill(cfg, W, cache, tokens, last=False):
    """tinygpt.prefill on arrays: tokens read into an empty cache in one forward -> the logits (an
    array; last=True: the last row's only)."""
    if cache["n"] != 0:
        raise ValueError("prefill starts an empty cache (this one holds " + str(cache["n"]) + " tokens)")
    t = len(tokens)
    if not 0 < t <= cfg.block_size:
        raise ValueError("prefill takes 1 to block_size = " + str(cfg.block_size) + " tokens, not " + str(t))
    logits, c = forward(cfg, W, [tokens], last=last)
    for l in range(cfg.n_layer):
        cache["k"][l][0:t, :] = c["layers"][l]["k"]
        cache["v"][l][0:t, :] = c["layers"][l]["v"]
    cache["n"] = t
    return logits


def sample_cached(cfg, W, context, n, temperature, rng, never=None):
    """tinygpt.sample_cached with this engine: the same draws as sample() from the same rng."""
    return tg.sample(cfg, W, context, n, temperature, rng, never,
                     forward_pass=tg.cached_forward_pass(new_cache, prefill, forward_step))
