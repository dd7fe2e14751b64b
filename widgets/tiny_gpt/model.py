"""tiny-gpt: train a tiny GPT on a slice of 三國演義 in the browser, with the engine in
widgets/common/tinygpt.py; watch train and validation loss against the unigram and bigram
lines and our reference band, and sample text from the model as it is.

Two engines of the same algorithm: tinygpt.py (pure Python) wherever the widgets' Python is
CPython or Pyodide, and tinygpt_ulab.py (the same code on ulab arrays) where it is MicroPython's
ulab build, which the page loads for this widget (its Python imports ulab). ENGINE is the one this
Python has; a MicroPython without ulab would train tinygpt.py with smaller settings (SLOW_DEFAULTS).

The page keeps one training session in the worker's Python (module state): start() makes it,
train() does one call's work, a part of a validation or a few steps (the view sizes each call
to stay well under the runtime's time limit and redraws after each), generate() samples,
state() and resume() carry it through the browser's storage. lab/tinygpt.py trains the reference band with this same Session.
"""
import math
import time
import packed
import tinygpt as tg
import tinygpt_ulab
from rng import Rng
from numfmt import num, fixed

# What a student may set, with the defaults (measured: benchmarks/tinygpt_speed.py), and the
# fixed parts of the recipe.
DEFAULTS = {"n_layer": 1, "n_embd": 32, "n_head": 2, "block_size": 16, "lr": 0.01, "steps": 300, "seed": 1}
# Where the widgets' Python is MicroPython without ulab (several times slower than Pyodide with
# the pure engine), the page starts from a smaller model, so each step stays well inside the
# runtime's 5 s call limit on a phone. The page loads MicroPython's ulab build for this widget, so
# this is a fallback: the ulab engine trains DEFAULTS faster than Pyodide does.
SLOW_DEFAULTS = {"n_layer": 1, "n_embd": 16, "n_head": 2, "block_size": 8, "lr": 0.01, "steps": 300, "seed": 1}
SETTINGS = ("n_layer", "n_embd", "n_head", "block_size", "lr", "steps", "seed")
LIMITS = {"n_layer": (1, 2), "n_embd": (8, 64), "n_head": (1, 4), "block_size": (4, 32),
          "lr": (0.0001, 0.1), "steps": (1, 5000), "seed": (0, 9999)}
NAMES = {"n_layer": "层数", "n_embd": "宽度", "n_head": "注意力头数", "block_size": "上下文长度",
         "lr": "学习率", "steps": "训练步数", "seed": "随机种子"}
BATCH = 4            # sequences per step
WEIGHT_DECAY = 0.01  # AdamW's decoupled decay
EVAL_EVERY = 25      # steps between validation losses
EVAL_PER_CALL = 8    # windows measured in one forward pass: a validation covers the whole slice,
                     # back-to-back windows (tinygpt.cover_windows), the characters the n-gram lines
                     # are scored on; then the held-out slice from the training chapters the same way
MAX_STEP_COST = 30000000  # multiply-adds a step may take: about 2-3 s in Pyodide, under the 5 s call limit
# MicroPython runs the pure engine about 5-7x slower than Pyodide (benchmarks/tinygpt_speed.py: 0.29
# and 0.38 steps/s in two sessions under different load, against 1.93 at DEFAULTS, whose step is
# about 4 million multiply-adds): its limit keeps
# one step near 1.3 s on this 2-core desktop, so a phone two or three times slower stays under 5 s.
MAX_STEP_COST_MICROPYTHON = 1500000
# The ulab engine (MicroPython's ulab build, which the page runs on every device) takes every setting
# LIMITS allows: the largest, 2 layers of width 64 over 32 characters, is about 45.6 million
# multiply-adds, 515 ms a step of one desktop core (benchmarks/tinygpt_speed.py --only ulab-longer),
# so a phone a few times slower still stays well under the 5 s call limit.
MAX_STEP_COST_ULAB = 48000000
SAMPLE_SEED = 7      # the reference samples' draws (Session.sample); each press of 生成 draws anew
STATE_VERSION = 2    # state(): the numbers packed as float64 (widgets/common/packed.py), not JSON lists

PARAMS = {"data": None, "settings": None}

# The engine this Python trains with: the ulab one where ulab is there (MicroPython's ulab build),
# else the pure one (CPython, so the lab's reference runs; Pyodide; a MicroPython without ulab).
ENGINE = tinygpt_ulab if tinygpt_ulab.ULAB else tg

SESSION = {"run": None, "data": None}  # the live training session in this runtime


def now_ms():
    """This Python's clock in milliseconds (time.time_ns: CPython, Pyodide and MicroPython have it)."""
    return time.time_ns() // 1000000


def deadline(params):
    """The time a call must return by: params.budget_ms from now (the page's calls give one, so a
    call ends itself well inside the runtime's 5 s limit instead of being killed), else None."""
    budget = params.get("budget_ms")
    return None if budget is None else now_ms() + budget


# ---------------------------------------------------------------- settings

def slow(runtime, engine=None):
    """Whether the page's runtime ("micropython" or "pyodide", as the page names it) trains with
    the pure engine on MicroPython: the smaller settings and the lower step limit."""
    return runtime == "micropython" and (engine or ENGINE) is tg


def step_limit(runtime=None, engine=None):
    """The most multiply-adds one step may take in the runtime the page names (None: Pyodide's,
    as for the lab's CPython reference runs) with the engine this Python trains with."""
    if (engine or ENGINE) is not tg:  # the ulab engine (as engine() and slow() tell them apart)
        return MAX_STEP_COST_ULAB
    return MAX_STEP_COST_MICROPYTHON if slow(runtime, engine) else MAX_STEP_COST


def check_settings(raw, runtime=None, engine=None):
    """Settings as the page sends them -> (settings, problems): problems are sentences in
    Chinese, one per value out of range; settings is None when there is any. The step's size
    is checked against the limit of the runtime the page names and the engine."""
    problems = []
    out = {}
    for key in SETTINGS:
        value = raw.get(key, DEFAULTS[key]) if raw else DEFAULTS[key]
        lo, hi = LIMITS[key]
        try:
            value = float(value)
        except (TypeError, ValueError):
            problems.append(NAMES[key] + "要填一个数。")
            continue
        if value != value or value < lo or value > hi:
            problems.append(NAMES[key] + "要在 " + num(lo) + " 到 " + num(hi) + " 之间。")
            continue
        if key != "lr":
            if value != math.floor(value):
                problems.append(NAMES[key] + "要是整数。")
                continue
            value = int(value)
        out[key] = value
    if "n_embd" in out and "n_head" in out and out["n_embd"] % out["n_head"]:
        problems.append("宽度 " + str(out["n_embd"]) + " 要能被注意力头数 " + str(out["n_head"]) + " 整除。")
    limit = step_limit(runtime, engine)
    if not problems and step_cost(out) > limit:
        where = "这个页面用的 MicroPython 比 Pyodide 慢好几倍，" if limit == MAX_STEP_COST_MICROPYTHON else ""
        problems.append("这组设置一步要算约 " + num(step_cost(out) / 1e6, 1) + " 百万次乘加，超过了浏览器里一次计算的上限（" +
                        where + num(limit / 1e6, 1) + " 百万）：把宽度、上下文或层数调小一些。")
    return (None if problems else out), problems


def step_cost(s, vocab=256):
    """Multiply-adds of one training step, roughly: forward (attention and MLP weights 12 d^2,
    attention scores about T d, the output layer V d per token) and a backward twice as large."""
    d, T = s["n_embd"], s["block_size"]
    return 3 * BATCH * T * (s["n_layer"] * (12 * d * d + T * d) + vocab * d)


# ---------------------------------------------------------------- a training session

class Session:
    """One run: the model, its optimiser, its batches and its loss log.

    The page drives it with advance(), one call's worth of work at a time: a validation is
    measured EVAL_PER_CALL windows per call, so no call holds the whole validation set (on
    MicroPython, several seconds). train() runs the same pieces to the end (the lab's reference
    runs): both give the same numbers, bit for bit."""

    def __init__(self, data, settings, evaluate=True, engine=None):
        self.settings = settings
        self.engine = e = engine or ENGINE  # tinygpt or tinygpt_ulab: the same steps, other arithmetic
        self.tok = tg.Tokenizer(data["vocab"])
        self.cfg = tg.Config(len(data["vocab"]), settings["n_layer"], settings["n_embd"],
                             settings["n_head"], settings["block_size"])
        self.train_tokens = self.tok.encode(data["train_text"])
        T = settings["block_size"]
        vx, vy = tg.cover_windows(self.tok.encode(data["val_text"]), T)
        hx, hy = tg.cover_windows(self.tok.encode(data["heldout_text"]), T) if data.get("heldout_text") else ([], [])
        self.n_val = len(vx)  # the first n_val windows are the validation slice's, the rest the held-out slice's
        self.ex, self.ey = vx + hx, vy + hy
        self.W = tg.init_weights(self.cfg, settings["seed"])  # the same weights for both engines
        if e is not tg:
            self.W = e.to_arrays(self.W)
        self.names = tg.weight_names(self.cfg)
        self.opt = e.AdamW(self.W, self.names, lr=settings["lr"], weight_decay=WEIGHT_DECAY)
        self.rng = Rng(settings["seed"] + 100000)  # the batches' own stream
        self.step = 0
        self.train_log = []  # [step, loss of that step's batch]
        self.val_log = []  # [step, validation loss]: chapter 111 on, text of other chapters
        self.held_log = []  # [step, held-out loss]: the training chapters' next characters, never trained on
        self.pending = [0, 0, 0.0, 0.0]  # a validation in progress: [its step, next window, the two sums so far]
        self.diverged = None  # the step and why, once it has
        self.draws = 0  # texts drawn by the page's 生成 so far: each draws with its own seed
        self.drawing = None  # the draw being streamed, piece by piece
        while evaluate and self.pending:  # evaluate=False: the first advance() starts measuring
            self.val_chunk()

    def val_chunk(self):
        """The next EVAL_PER_CALL windows of the validation in progress (summed as tg.loss_of
        sums them; a part never mixes the two slices); the losses are logged, and the validation
        loss checked against the start, when the last is in."""
        p = self.pending
        i = p[1]
        end = min(i + EVAL_PER_CALL, self.n_val if i < self.n_val else len(self.ex))
        loss, _ = self.engine.forward(self.cfg, self.W, self.ex[i:end], self.ey[i:end])
        p[2 if i < self.n_val else 3] += loss * (end - i)
        p[1] = end
        if end < len(self.ex):
            return
        self.pending = None
        v = p[2] / self.n_val
        self.val_log.append([p[0], v])
        if len(self.ex) > self.n_val:
            self.held_log.append([p[0], p[3] / (len(self.ex) - self.n_val)])
        if p[0] > 0 and not v < self.val_log[0][1]:  # NaN compares false
            self.diverged = {"step": p[0], "what": "验证损失", "loss": v}

    def advance(self, n, until=None):
        """One call's work: the next part of a validation in progress; else up to n steps,
        stopping after a step where a validation falls due (it starts at the next call). With
        `until` (now_ms()'s clock), the parts of a validation or the steps go on until that time
        instead: at least one, never past it by more than one."""
        if self.pending:
            self.val_chunk()
            while self.pending and until is not None and now_ms() < until:
                self.val_chunk()
            return
        start = self.val_log[0][1]
        for _ in range(n):
            if self.step >= self.settings["steps"] or self.diverged:
                break
            xs, ys = tg.get_batch(self.train_tokens, BATCH, self.cfg.block_size, self.rng)
            loss = self.engine.train_step(self.cfg, self.W, self.opt, xs, ys)
            self.step += 1
            self.train_log.append([self.step, loss])
            if not loss < start + 2.0:  # NaN compares false
                self.diverged = {"step": self.step, "what": "训练损失", "loss": loss}
                break
            if self.step % EVAL_EVERY == 0 or self.step == self.settings["steps"]:
                self.pending = [self.step, 0, 0.0, 0.0]
                break
            if until is not None and now_ms() >= until:
                break

    def train(self, n):
        """Up to n more steps (never past settings.steps), each validation measured in full;
        stops at a divergence."""
        target = min(self.step + n, self.settings["steps"])
        while not self.diverged and (self.pending or self.step < target):
            self.advance(target - self.step)

    def sample(self, n, temperature, prompt=""):
        """The reference samples' text (lab/tinygpt.py): n characters in one go, drawn with the
        seed SAMPLE_SEED + step, so the same model always gives the same text."""
        rng = Rng(SAMPLE_SEED + self.step)
        return self.tok.decode(self.engine.sample(self.cfg, self.W, self.context(prompt), n, temperature, rng, never=0))

    def context(self, prompt):
        return self.tok.encode(prompt) if prompt else [self.tok.ids.get("\n", 0)]

    def start_draw(self, n, temperature, prompt=""):
        """A new text of n characters for the page's 生成, streamed by draw_more(): each press
        draws with its own seed (the press's number and the step), so pressing again gives new text."""
        self.draws += 1
        self.drawing = {"out": self.context(prompt), "left": n, "t": temperature,
                        "rng": Rng(SAMPLE_SEED + self.step + 100003 * self.draws), "pass": sampling_pass(self.engine)}

    def draw_more(self, until=None):
        """The draw's next characters, one at a time until the draw is done or `until` (now_ms())
        has passed -> (text, done). The pieces of a draw are the text one call of sample() gives
        with the same seed, character for character."""
        d = self.drawing
        if d is None:
            return "", True
        new = []
        while d["left"] > 0:
            tok = tg.sample(self.cfg, self.W, d["out"], 1, d["t"], d["rng"], 0, forward_pass=d["pass"])[0]
            d["out"].append(tok)
            new.append(tok)
            d["left"] -= 1
            if until is not None and now_ms() >= until:
                break
        if d["left"] <= 0:
            self.drawing = None
        return self.tok.decode(new), self.drawing is None

    def state(self):
        """Everything needed to carry on later, as JSON text of a few hundred KB: the weights and
        AdamW's moments packed as float64 (exact), the losses packed, the rest as it is."""
        opt = self.opt
        blob = b"".join([packed.raw(group[n]) for group in (self.W, opt.m, opt.v) for n in self.names])
        diverged = self.diverged
        return {"version": STATE_VERSION, "settings": self.settings, "step": self.step,
                "train_loss": packed.pack([v for _, v in self.train_log]),
                "val_steps": [s for s, _ in self.val_log], "val_loss": packed.pack([v for _, v in self.val_log]),
                "held_loss": packed.pack([v for _, v in self.held_log]),
                "diverged": diverged and [diverged["step"], diverged["what"], packed.pack([diverged["loss"]])],
                "rng": [self.rng.state, self.rng.spare], "pending": self.pending, "adam_t": opt.t,
                "tensors": blob.hex()}

    def restore(self, s):
        """A state() from either engine, into this one."""
        held = (lambda M: M) if self.engine is tg else self.engine.array
        values = packed.unpack(s["tensors"])
        i = 0
        for group in (self.W, self.opt.m, self.opt.v):
            for n in self.names:
                r, c = self.cfg_shape(n)
                group[n] = held(packed.rows(values, i, r, c))
                i += r * c
        self.opt.t = s["adam_t"]
        self.step = s["step"]
        losses = packed.unpack(s["train_loss"])
        self.train_log = [[k + 1, losses[k]] for k in range(len(losses))]
        self.val_log = [[a, b] for a, b in zip(s["val_steps"], packed.unpack(s["val_loss"]))]
        self.held_log = [[a, b] for a, b in zip(s["val_steps"], packed.unpack(s["held_loss"]))]
        d = s["diverged"]
        self.diverged = d and {"step": d[0], "what": d[1], "loss": packed.unpack(d[2])[0]}
        self.pending = s.get("pending")  # a state saved mid-validation measures it again from there
        self.rng.state, self.rng.spare = s["rng"][0], s["rng"][1]

    def cfg_shape(self, name):
        """The (rows, columns) of a weight, as init_weights made it."""
        M = self.W[name]
        return (len(M), len(M[0])) if isinstance(M, list) else M.shape


def sampling_pass(engine):
    """The forward pass a draw uses: the engine's KV cache (C3 第 4 课; tinygpt.forward_step: one
    new row per character), and where the window slides past block_size and every position
    changes, one pass over the window that computes the last row's logits only."""
    def prefill_last(cfg, W, cache, tokens):
        return engine.prefill(cfg, W, cache, tokens, last=True)
    return tg.cached_forward_pass(engine.new_cache, prefill_last, engine.forward_step)


def plain(M):
    """A matrix as JSON holds it, a list of lists, from either engine (ulab's is an array)."""
    return M if isinstance(M, list) else M.tolist()


# ---------------------------------------------------------------- the chart

CHART_W, CHART_H = 600, 260


def smooth(log, window=10):
    """Mean of the last `window` losses at each step, so the batches' noise does not hide the trend."""
    out = []
    total = 0.0
    for i in range(len(log)):
        total += log[i][1]
        if i >= window:
            total -= log[i - window][1]
        out.append([log[i][0], total / min(i + 1, window)])
    return out


def axes(data, steps):
    ref = data["reference"]
    hi = math.ceil(math.log(len(data["vocab"])) * 2 + 0.5) / 2  # a little above the first loss, ln V
    lo = math.floor(min(ref["bigram"], min(ref["band_lo"])) * 2 - 1) / 2
    return {"x_max": max(steps, ref["steps"][-1]), "lo": lo, "hi": hi}


def xy(ax, step, loss):
    loss = min(max(loss, ax["lo"]), ax["hi"])
    return fixed(CHART_W * step / ax["x_max"]), fixed(CHART_H * (ax["hi"] - loss) / (ax["hi"] - ax["lo"]))


def polyline(ax, log):
    return " ".join([x + "," + y for x, y in [xy(ax, s, v) for s, v in log if v == v]])


def chart(data, steps, train_log, val_log, held_log=()):
    ax = axes(data, steps)
    ref = data["reference"]
    upper = [xy(ax, s, v) for s, v in zip(ref["steps"], ref["band_hi"])]
    lower = [xy(ax, s, v) for s, v in zip(ref["steps"], ref["band_lo"])]
    band = " ".join([x + "," + y for x, y in upper + list(reversed(lower))])
    lines = []
    for key, label in (("unigram", "一元（字频）"), ("bigram", "二元（前一个字）")):
        lines.append({"key": key, "y": xy(ax, 0, ref[key])[1], "label": label + " " + num(ref[key], 2)})
    ticks = []
    t = math.ceil(ax["lo"])
    while t <= ax["hi"]:
        ticks.append({"y": xy(ax, 0, t)[1], "label": num(t)})
        t += 1
    xticks = []
    for i in range(5):
        s = round(ax["x_max"] * i / 4)
        xticks.append({"x": xy(ax, s, ax["hi"])[0], "label": num(s)})
    return {"w": CHART_W, "h": CHART_H, "band": band, "ref_mean": polyline(ax, list(zip(ref["steps"], ref["band_mean"]))),
            "lines": lines, "ticks": ticks, "xticks": xticks,
            "train": polyline(ax, smooth(train_log)), "val": polyline(ax, val_log), "held": polyline(ax, held_log)}


# ---------------------------------------------------------------- what the page calls

def status(run):
    s = run.settings
    out = {"step": num(run.step), "steps": num(s["steps"]), "val": num(run.val_log[-1][1], 3) if run.val_log else "—",
           "train": num(smooth(run.train_log)[-1][1], 3) if run.train_log else "—",
           "held": num(run.held_log[-1][1], 3) if run.held_log else "—"}
    out["done"] = run.step >= s["steps"] and not run.pending  # the last validation measured too
    if run.diverged:
        d = run.diverged
        out["diverged"] = ("第 " + num(d["step"]) + " 步发散了：" + d["what"] + "变成 " +
                           (num(d["loss"], 3) if d["loss"] == d["loss"] else "NaN（不是数）") +
                           "，比开始时的 " + num(run.val_log[0][1], 3) + " 还高。训练已停止；试试更小的学习率。")
    return out


def progress(data):
    run = SESSION["run"]
    return {"status": status(run), "chart": chart(data, run.settings["steps"], run.train_log, run.val_log, run.held_log),
            "val_log": run.val_log, "step": run.step}


def start(params):
    """A new run from the settings, or the problems with them (in words)."""
    settings, problems = check_settings(params.get("settings"), params.get("runtime"))
    if problems:
        return {"problems": problems}
    SESSION["run"] = Session(params["data"], settings, evaluate=False)  # measured by the next calls
    SESSION["data"] = params["data"]
    return progress(params["data"])


def engine(params):
    """Which engine trains here, for the page to say, and whether the page starts from the smaller
    settings (a MicroPython without ulab): params.runtime is the runtime the page names."""
    if ENGINE is not tg:
        line = ("这里的 Python 是 MicroPython（带 ulab 的版本），训练用 tinygpt_ulab.py：和 tinygpt.py 同一套算法，"
                "矩阵运算交给 ulab（编译进这个 MicroPython 的数组库，能做 NumPy 的一部分运算）用 C 来做，比纯 Python 快得多。")
    elif params.get("runtime") == "micropython":
        line = "这里的 Python 是不带 ulab 的 MicroPython，训练用纯 Python 的 tinygpt.py，比台式机上慢好几倍。"
    else:
        line = "这里的 Python 是 Pyodide（浏览器里的 CPython），训练用纯 Python 的 tinygpt.py。"
    return {"engine": "ulab" if ENGINE is not tg else "pure", "slow": slow(params.get("runtime")),
            "out": {"engine": line}}


LOST = {"lost": True}  # this Python holds no run (it was restarted): the page resumes from storage


def train(params):
    """The live run's next piece: parts of a validation in progress, or up to params.n steps,
    until params.budget_ms has passed; with params.save, the run's state() comes with it whenever
    the call took steps or finished a validation, so the page keeps every call's work."""
    run = SESSION["run"]
    if run is None:
        return LOST
    step, measuring = run.step, run.pending is not None
    run.advance(params["n"], deadline(params))
    out = progress(SESSION["data"])
    # Saved where the call changed what a reload must find: steps taken, or a validation finished
    # (a part of one is measured again from the last save; packing the state is a call's largest fixed cost).
    if params.get("save") and (run.step != step or (measuring and run.pending is None)):
        out["saved"] = run.state()
    return out


def generate(params):
    """生成: a new text of params.n characters (params.more: the next piece of the one being
    drawn), streamed: characters are drawn until params.budget_ms has passed -> {text: this
    piece, done, step}."""
    run = SESSION["run"]
    if run is None:
        return LOST
    if not params.get("more"):
        t = float(params.get("temperature", 0.8))
        if not 0.05 <= t <= 3.0:
            return {"problem": "温度要在 0.05 到 3 之间。"}
        run.start_draw(params.get("n", 40), t, params.get("prompt", ""))
    text, done = run.draw_more(deadline(params))
    return {"text": text, "done": done, "step": run.step}


def held(params):
    """Whether this Python holds the run (after a call was stopped, the worker may be a new one)."""
    run = SESSION["run"]
    return {"held": run is not None, "step": run.step if run else None}


def state(params):
    return SESSION["run"].state() if SESSION["run"] else LOST


def weights(params):
    """The trained weights with what it takes to use them: settings, vocabulary, names."""
    run = SESSION["run"]
    if run is None:
        return LOST
    out = {"step": run.step, "settings": run.settings, "config": run.cfg.as_dict(), "vocab": run.tok.chars,
           "names": run.names, "weights": {}}
    for n in run.names:
        out["weights"][n] = plain(run.W[n])
    return out


def loss_log(params):
    """The loss log as CSV text: every step's training loss, the validation loss where measured."""
    run = SESSION["run"]
    if run is None:
        return LOST
    val = {}
    for s, v in run.val_log:
        val[s] = v
    def text(v):  # six decimals, the same on every runtime; NaN and infinity spelt out
        return fixed(v, 6) if v == v and abs(v) < 1e15 else ("nan" if v != v else "inf")

    lines = ["step,train_loss,val_loss"]
    if 0 in val:
        lines.append("0,," + text(val[0]))
    for s, v in run.train_log:
        lines.append(str(s) + "," + text(v) + "," + (text(val[s]) if s in val else ""))
    return {"csv": "\n".join(lines) + "\n"}


def resume(params):
    """A run carried back from the browser's storage."""
    saved = params["saved"]
    if saved.get("version") != STATE_VERSION:
        return {"problems": ["存下的训练是这一页旧版本的格式，读不回来了：请重新开始。"]}
    # Pyodide's limit, the widest: a run saved there is never lost where the limit is lower.
    settings, problems = check_settings(saved["settings"], runtime="pyodide")
    if problems:
        return {"problems": problems}
    run = Session(params["data"], settings, evaluate=False)  # restore() brings its losses
    run.restore(saved)
    SESSION["run"] = run
    SESSION["data"] = params["data"]
    return progress(params["data"])


def first_below(steps, values, line):
    """The first evaluation step where values are below line, or None."""
    for s, v in zip(steps, values):
        if v < line:
            return s
    return None


def expect(ref):
    """What to expect at the defaults, from the reference runs: when the seeds' mean and then every
    seed's validation loss go below the unigram line (scored on the same characters), and where
    the last step stands against the bigram line."""
    n, end = str(len(ref["runs"])), ref["steps"][-1]
    mean = first_below(ref["steps"], ref["band_mean"], ref["unigram"])
    every = first_below(ref["steps"], ref["band_hi"], ref["unigram"])
    if mean is None:
        head = "默认设置下，我们的参考训练（" + n + " 个种子）平均在 " + num(end) + " 步里还没有降到一元线以下"
    elif every is None:
        head = ("默认设置下，我们的参考训练（" + n + " 个种子）验证损失平均到第 " + num(mean) + " 步低于一元线，但到第 " +
                num(end) + " 步还有种子没低于它")
    else:
        head = ("默认设置下，我们的参考训练（" + n + " 个种子）验证损失平均到第 " + num(mean) + " 步低于一元线，第 " +
                num(every) + " 步时每个种子都低于它")
    gap = ref["band_mean"][-1] - ref["bigram"]
    tail = ("；第 " + num(end) + " 步时平均比二元线还高 " + num(gap, 2) + "。" if gap > 0 else
            "；第 " + num(end) + " 步时平均比二元线低 " + num(-gap, 2) + "。")
    return head + tail


def targets(data):
    """How many characters the validation loss averages over at the defaults (and the n-gram lines)."""
    return (len(data["val_text"]) - 1) // DEFAULTS["block_size"] * DEFAULTS["block_size"]


def expect_slow(data):
    """What a phone reader is told to expect at the smaller settings, from their own reference run."""
    ref, unigram = data["reference_slow"], data["reference"]["unigram"]
    below = None
    for s, v in zip(ref["steps"], ref["band_hi"]):
        if v < unigram:
            below = s
            break
    head = ("这台设备上的 Python 没有 ulab，跑纯 Python 的引擎比台式机上慢好几倍，所以这里先把模型设小了（宽度 " + str(SLOW_DEFAULTS["n_embd"]) +
            "、上下文 " + str(SLOW_DEFAULTS["block_size"]) + "）。同样的设置，我们的参考训练（" + str(len(ref["runs"])) +
            " 个种子）" + num(ref["steps"][-1]) + " 步里，验证损失从 " + num(ref["band_mean"][0], 2) + " 降到 " +
            num(ref["band_lo"][-1], 2) + "–" + num(ref["band_hi"][-1], 2))
    if below is not None:
        return head + "，每个种子到第 " + num(below) + " 步都已低于一元线。"
    if ref["band_lo"][-1] < unigram:
        return head + "：到最后一步，有的种子低于一元线 " + num(unigram, 2) + "，有的还在它之上。"
    return head + "，还在一元线 " + num(unigram, 2) + " 之上：这个小模型在这么多步里只学到一部分字频。"


# What a reader sees before the widget's Python answers (and without JavaScript).
ENGINE_NOTE = ("训练在你的浏览器里跑：在每台设备上都用带 ulab 的 MicroPython 跑数组版的 tinygpt_ulab.py；它启动不了时，"
               "退回网站在这台设备上的 Python，跑纯 Python 的 tinygpt.py，慢得多。启动后这里会写明你这台设备用的是哪一个。")


def view(params):
    """The first state: the reference run (our CPython training of the defaults), its curve and
    its samples, which is also what a reader without JavaScript sees."""
    data = params["data"]
    ref = data["reference"]
    first = ref["runs"][0]
    c = chart(data, DEFAULTS["steps"], [], [[s, v] for s, v in zip(ref["steps"], first["val"])],
              [[s, v] for s, v in zip(ref["steps"], first["heldout"])])
    settings = []
    for key in SETTINGS:
        lo, hi = LIMITS[key]
        settings.append({"key": key, "name": NAMES[key], "value": DEFAULTS[key], "slow": SLOW_DEFAULTS[key],
                         "min": lo, "max": hi, "step": "any" if key == "lr" else 1})
    return {"chart": c, "settings": settings, "ref": {
        "seeds": [r["seed"] for r in ref["runs"]], "end": num(ref["band_mean"][-1], 3),
        "unigram": num(ref["unigram"], 3), "bigram": num(ref["bigram"], 3),
        "samples": ref["samples"][:3], "steps": num(ref["steps"][-1]), "n": len(ref["runs"]),
        "targets": num(targets(data)), "val_from": data["model_card"]["split"]["val_chapters"][0]},
        "expect": expect(ref),
        "engine": ENGINE_NOTE,
        "slow_note": expect_slow(data),
        "out": {"step": "0", "steps": num(DEFAULTS["steps"]), "val": num(first["val"][0], 3), "train": "—",
                "held": num(first["heldout"][0], 3)}}


def example(facts):
    """The params the page shows this widget with (the gallery uses it); None before lab.tinygpt exports."""
    return {"data": facts["tinygpt"]["data"]} if facts.get("tinygpt") else None


def page_params(params):
    """What the page carries for the browser's calls: the data without its model card."""
    data = params.get("data")
    if data is None:
        return params
    shipped = {"vocab": data["vocab"], "train_text": data["train_text"], "val_text": data["val_text"],
               "heldout_text": data["heldout_text"],
               "reference": data["reference"], "reference_slow": data["reference_slow"],
               # view() names the first validation chapter; the rest of the card stays out of the page
               "model_card": {"split": {"val_chapters": data["model_card"]["split"]["val_chapters"]}}}
    out = dict(params)
    out["data"] = shipped
    return out
