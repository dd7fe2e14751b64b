"""kv-generate: a small GPT generates the same tokens three ways, and the student's own clock
times them.

- "full": every new token re-reads the whole text so far (one forward over all of it, the way a
  model is trained), and takes the last row's logits;
- "cached": the prompt is read once into a KV cache (prefill), then each new token is one
  forward_step: its own query, key and value, attention over the cached rows, one logits row;
- "wrong": the cached way with the bug readers hit, the new token embedded at position 0 instead
  of its own (wpe[0] for wpe[pos]).

Greedy decoding (the largest logit; the lowest id on a tie), so the three runs differ only by
their arithmetic. The model is tinygpt's (widgets/common/tinygpt.py, or its ulab twin on
MicroPython's ulab build) at fixed random weights: it is untrained, so its text is noise; what
the widget compares is the two algorithms, not the text. The page times each run's calls with
performance.now() and passes the milliseconds back to report(), which says them; the work each
way (multiply-adds) is counted by work() from the shapes alone.
"""
import math
import tinygpt as tg
import tinygpt_ulab
from numfmt import num, sci

# vocab: the tiny-gpt page's characters (data/tiny-gpt.json, facts.tinygpt.data.vocab).
PARAMS = {"vocab": None, "n": 16}
PROMPT = "卻說曹操"
N_LAYER, N_EMBD, N_HEAD, BLOCK = 2, 32, 2, 64
SEED = 1                  # the random weights
MAX_CALL_COST = 4000000   # multiply-adds a call of the full recomputation may do (about 0.5 s in Pyodide)
METHODS = ("full", "cached", "wrong")
NAMES = {"full": "每次整段重算", "cached": "用 KV 缓存", "wrong": "用缓存，但位置写错（新 token 都当成位置 0）"}

ENGINE = tinygpt_ulab if tinygpt_ulab.ULAB else tg
SESSION = {"key": None, "model": None, "runs": None}


def n_choices():
    """How many tokens the student may ask for: up to the block, after the prompt."""
    top = BLOCK - len(PROMPT)
    return [n for n in (8, 16, 32) if n < top] + [top]


def check_n(n):
    n = int(n)
    if n not in n_choices():
        raise ValueError("n must be one of " + ", ".join([str(c) for c in n_choices()]) + ", not " + str(n))
    return n


class Model:
    """The config, the weights (lists for the pure engine, arrays for ulab) and the tokenizer."""

    def __init__(self, vocab):
        self.tok = tg.Tokenizer(vocab)
        self.cfg = tg.Config(len(vocab), N_LAYER, N_EMBD, N_HEAD, BLOCK)
        W = tg.init_weights(self.cfg, SEED)
        self.W = W if ENGINE is tg else ENGINE.to_arrays(W)
        self.prompt = self.tok.encode(PROMPT)


def plain_row(row):
    return [float(x) for x in row]


def argmax(row):
    best = 0
    for i in range(1, len(row)):
        if row[i] > row[best]:
            best = i
    return best


class Run:
    """One method's generation in progress: the text so far, each step's logits row, its cache."""

    def __init__(self, model, method, n):
        self.m, self.method, self.n = model, method, n
        self.seq = list(model.prompt)
        self.rows = []
        self.cache = None

    def done(self):
        return len(self.rows) >= self.n

    def next_row(self):
        m, cfg, W = self.m, self.m.cfg, self.m.W
        if self.method == "full":
            logits, _ = ENGINE.forward(cfg, W, [self.seq], last=True)
            return plain_row(logits[-1])
        if self.cache is None:  # prefill: the prompt in one pass
            self.cache = ENGINE.new_cache(cfg)
            return plain_row(ENGINE.prefill(cfg, W, self.cache, self.seq, last=True)[-1])
        token, pos = self.seq[-1], len(self.seq) - 1
        if self.method == "cached":
            return ENGINE.forward_step(cfg, W, self.cache, token, pos)
        return ENGINE.step_embedded(cfg, W, self.cache, ENGINE.embed(W, token, 0))  # the bug: position 0

    def step(self):
        row = self.next_row()
        self.rows.append(row)
        self.seq.append(argmax(row))

    def cost_of_next(self):
        """Multiply-adds of the next step (work()'s count)."""
        t, V = len(self.seq), self.m.cfg.vocab_size
        if self.method == "full" or self.cache is None:
            return forward_cost(t, V)
        return step_cost(t, V)

    def text(self):
        return self.m.tok.decode(self.seq[len(self.m.prompt):])


# ---------------------------------------------------------------- the step, by hand (the lesson's ⑤)

def cached_rows(Q, K, V):
    """One attention head run token by token with a cache, on plain lists (C3 第 1 课's toy):
    step t appends k_t and v_t, scores q_t against every cached key, and returns its row ->
    [{"cached": rows in the cache, "scores", "weights", "out"}] per step."""
    cache_k, cache_v, steps = [], [], []
    for t in range(len(Q)):
        cache_k.append(K[t])
        cache_v.append(V[t])
        q = Q[t]
        scores = [sum([a * b for a, b in zip(q, k)]) / math.sqrt(len(q)) for k in cache_k]
        top = max(scores)
        e = [math.exp(x - top) for x in scores]
        z = sum(e)
        w = [x / z for x in e]
        out = [sum([w[j] * cache_v[j][i] for j in range(len(cache_v))]) for i in range(len(V[t]))]
        steps.append({"cached": len(cache_k), "scores": scores, "weights": w, "out": out})
    return steps


# ---------------------------------------------------------------- the work, counted

def row_cost():
    """One row through every layer's matrices: 12 d^2 per layer (q, k, v, o: 4 d^2; the MLP's
    d -> 4d -> d: 8 d^2)."""
    return 12 * N_LAYER * N_EMBD * N_EMBD


def forward_cost(t, V):
    """A forward over t tokens that reads the last row's logits only (how generation calls it):
    t rows of matrices, per layer the scores and weighted sums, 2 d (i + 1) for row i, which is
    d t (t + 1), and lm_head (V x d) on the last row."""
    return t * row_cost() + N_LAYER * N_EMBD * t * (t + 1) + V * N_EMBD


def step_cost(t, V):
    """One cached step when the text is t tokens long (the new one included): one row of matrices,
    its query against t cached keys and values, and lm_head."""
    return row_cost() + 2 * N_LAYER * N_EMBD * t + V * N_EMBD


def work(n, V, t0=None):
    """Multiply-adds to generate n tokens after a t0-token prompt, each way (V: the vocabulary)."""
    t0 = len(PROMPT) if t0 is None else t0
    full = 0
    for i in range(n):
        full += forward_cost(t0 + i, V)
    cached = forward_cost(t0, V)
    for i in range(1, n):
        cached += step_cost(t0 + i, V)
    return {"full": full, "cached": cached, "ratio": full / cached}


# ---------------------------------------------------------------- the page's calls

def model_for(params):
    vocab = params.get("vocab")
    if not vocab:
        raise ValueError("kv-generate needs the tiny-gpt page's vocab (facts.tinygpt.data.vocab)")
    key = len(vocab), "".join(vocab)
    if SESSION["key"] != key:
        SESSION["key"], SESSION["model"], SESSION["runs"] = key, Model(vocab), None
    return SESSION["model"]


def start(params):
    """Fresh runs of n tokens for the three methods."""
    m = model_for(params)
    n = check_n(params.get("n", PARAMS["n"]))
    SESSION["runs"] = {}
    for method in METHODS:
        SESSION["runs"][method] = Run(m, method, n)
    return {"n": n, "methods": [{"key": k, "name": NAMES[k]} for k in METHODS]}


def run(params):
    """A call's share of one method's generation: steps until done or MAX_CALL_COST multiply-adds
    (at least one step; the cached ways finish in one call)."""
    runs = SESSION["runs"]
    if runs is None:
        raise ValueError("no generation started: start() first")
    r = runs[params["method"]]
    spent = 0
    while not r.done():
        cost = r.cost_of_next()
        if spent and spent + cost > MAX_CALL_COST:
            break
        r.step()
        spent += cost
    return {"method": r.method, "made": len(r.rows), "n": r.n, "done": r.done(), "text": r.text()}


def differences(a, b):
    """Run b against run a: whether the tokens are the same, the first step where they part, and
    the largest |logit difference| over the steps before that (the same text read both ways)."""
    first = None
    for i in range(min(len(a.seq), len(b.seq))):
        if a.seq[i] != b.seq[i]:
            first = i - len(a.m.prompt)
            break
    upto = len(a.rows) if first is None else first + 1
    largest = 0.0
    for i in range(min(upto, len(a.rows), len(b.rows))):
        for x, y in zip(a.rows[i], b.rows[i]):
            d = abs(x - y)
            if d > largest:
                largest = d
    return {"same": first is None, "first": first, "largest": largest, "steps": upto}


def compare(params):
    """Every finished run against the full recomputation, in words and numbers."""
    runs = SESSION["runs"]
    full = runs["full"]
    out = {"texts": {}, "verdicts": {}, "numbers": {}}
    for k in METHODS:
        out["texts"][k] = runs[k].text()
    for k in ("cached", "wrong"):
        d = differences(full, runs[k])
        out["numbers"][k] = d
        out["verdicts"][k] = verdict(d, full.n)
    return out


def diff_text(x):
    if x == 0:
        return "0（一位不差）"
    return num(x, 3) if x >= 0.001 else sci(x)


def verdict(d, n):
    if d["same"]:
        return ("和整段重算逐个 token 相同（" + num(n) + " 个）；每一步的 logits 最大相差 " + diff_text(d["largest"]) + "。")
    return ("从第 " + num(d["first"] + 1) + " 个生成的 token 起和整段重算不同；在两边读的文字还一样的 " +
            num(d["steps"]) + " 步里，logits 最大已经相差 " + diff_text(d["largest"]) + "。")


def report(params):
    """The student's timings (ms per method, from the page's clock) said, with the speed-up."""
    ms = params["ms"]
    n = params.get("n", PARAMS["n"])
    out = {}
    for k in METHODS:
        if ms.get(k) is not None:
            out["time-" + k] = num(ms[k], 0) + " ms（每个 token " + num(ms[k] / n, 1) + " ms）"
    if ms.get("full") and ms.get("cached"):
        ratio = ms["full"] / ms["cached"]
        if ratio >= 1:
            out["speedup"] = "在你的设备上，用缓存快了 " + num(ratio, 1) + " 倍。"
        else:  # a busy device can make one timed run slower: say so, not "faster 0.8 times"
            out["speedup"] = ("在你的设备上，这一次用缓存反而更慢：整段重算的用时只有它的 " + num(ratio, 1)
                              + " 倍（设备忙的时候，一次计时说明不了什么，再按一次看看）。")
    return {"out": out, "announce": out.get("speedup", "")}


def run_all(params):
    """All three runs to the end in one go (the lesson quotes the build's own run, in CPython)."""
    start(params)
    for method in METHODS:
        while not run({"method": method})["done"]:
            pass
    return compare(params)


def view(params):
    """The first state: the prompt, the choices, and the work each way counted (the runs and their
    times come when the student presses the button)."""
    n = check_n(params.get("n", PARAMS["n"]))
    w = work(n, len(model_for(params).tok.chars))
    return {"params": {"vocab": params.get("vocab"), "n": n},
            "choices": [{"value": c, "label": num(c)} for c in n_choices()],
            "out": {"prompt": PROMPT, "config": (num(N_LAYER) + " 层，宽 " + num(N_EMBD) + "，" + num(N_HEAD) +
                                               " 个头，最多读 " + num(BLOCK) + " 个 token"),
                    "work-full": num(w["full"]), "work-cached": num(w["cached"]), "work-ratio": num(w["ratio"], 1),
                    "speedup": "", "status": "还没运行。"},
            "methods": [{"key": k, "name": NAMES[k]} for k in METHODS]}


def example(facts):
    return {"vocab": facts["tinygpt"]["data"]["vocab"]} if facts.get("tinygpt") else None
