"""The lesson's improved plan: two hidden neurons, each reads a row, passes an activation, writes a column.

    z1 = 1*p + 1*n + 0      h1 = act(z1)    writes +1
    z2 = 1*p + 1*n + b2     h2 = act(z2)    writes -2      y_hat = 1*h1 - 2*h2

With ReLU and b2 = -1 neuron 1 counts the features that hold, neuron 2 fires only
when both hold, and y_hat is 1, 0, 0, 1 on the four reviews: the XOR the linear
plan cannot fit. With no activation the two layers collapse into one line.
Standard library only, in the subset every runtime runs (CPython, Pyodide, MicroPython).
"""
import math

from numfmt import MINUS, num
from reviews import REVIEWS  # (review, p, n, target y): positive iff exactly one of p, n holds
FEATURES = ("p", "n")

# The hand-built network. Only neuron 2's bias moves (the slider); everything else is fixed.
READ = [(1.0, 1.0), (1.0, 1.0)]  # neuron k reads column k of W_up (row-vector form x W): weights on (p, n)
BIAS1 = 0.0                      # neuron 1's bias
WRITE = [1.0, -2.0]              # neuron k writes row k of W_down (here one number) into y_hat
THRESHOLD = 0.5                  # y_hat > 0.5 means "the review is positive"

B2_SLIDER = (-1.0, 0.0, 0.05)    # min, max, step of neuron 2's bias
DESIGN = {"activation": "relu", "b2": -1.0}

# First state: the designed plan, with the lesson's worked example (不好吃, neuron 2) expanded.
PARAMS = {"activation": "relu", "b2": -1.0, "row": "不好吃", "neuron": 2}

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def relu(x):
    """>>> relu(-1.0), relu(2.0) -> (0.0, 2.0)"""
    return max(0.0, x)


def gelu(x):
    """GELU as GPT-2 computes it: the tanh approximation.

    >>> round(gelu(1.0), 3), round(gelu(-1.0), 3) -> (0.841, -0.159)
    """
    return 0.5 * x * (1.0 + math.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)))


def identity(x):
    return x


# key -> (function, radio label, short name used in the arithmetic, formula shown)
ACTIVATIONS = {
    "relu": (relu, "ReLU", "ReLU", "ReLU(z) = max(0, z)"),
    "gelu": (gelu, "GELU（GPT-2 用的 tanh 近似）", "GELU",
             "GELU(z) = 0.5 · z · (1 + tanh(√(2/π) · (z + 0.044715 · z³)))"),
    "none": (identity, "无（去掉）", "不过激活", "没有激活：h = z，原样写出"),
}
ACTIVATION_ORDER = ("relu", "gelu", "none")  # the radios' order (MicroPython's dicts keep none)
STEP_KEYS = ("step-head", "step-n1", "step-n2", "step-sum")  # the worked steps, in reading order


def check(params):
    """The params as the model uses them; a wrong value fails loudly, naming itself."""
    activation = params.get("activation", PARAMS["activation"])
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; expected one of {', '.join(ACTIVATION_ORDER)}")
    lo, hi, step = B2_SLIDER
    b2 = float(params.get("b2", PARAMS["b2"]))
    if not lo - 1e-9 <= b2 <= hi + 1e-9:
        raise ValueError(f"b2 = {b2} is outside the slider's range [{lo}, {hi}]")
    row = params.get("row")
    if row is not None and row not in {name for name, *_ in REVIEWS}:
        raise ValueError(f"unknown review {row!r}")
    neuron = params.get("neuron")
    if neuron is not None and neuron not in (1, 2):
        raise ValueError(f"neuron must be 1, 2 or None, not {neuron!r}")
    # Round away float dust from the slider (-0.75 must stay -0.75, not -0.7500000001).
    return {"activation": activation, "b2": round(b2, 9) + 0.0, "row": row, "neuron": neuron}


def biases(b2):
    return [BIAS1, b2]


def forward(activation, b2, p, n):
    """Pre-activations z, activations h and y_hat for one review.

    >>> forward("relu", -1.0, 1, 1) -> ([2.0, 1.0], [2.0, 1.0], 0.0)
    """
    act = ACTIVATIONS[activation][0]
    z = [w_p * p + w_n * n + b for (w_p, w_n), b in zip(READ, biases(b2))]
    h = [act(v) for v in z]
    return z, h, sum(w * v for w, v in zip(WRITE, h))


def matrices(b2):
    """The toy as the formula's own matrices, row-vector form max(0, x W_up + b_up) W_down.

    Column k of W_up is what neuron k reads; row k of W_down is what it writes (one number:
    the toy maps d = 2 features to one output).
    >>> matrices(-1.0) -> {'W_up': [[1.0, 1.0], [1.0, 1.0]], 'b_up': [0.0, -1.0], 'W_down': [[1.0], [-2.0]]}
    """
    return {"W_up": [[READ[k][i] for k in range(len(READ))] for i in range(len(FEATURES))],
            "b_up": biases(b2), "W_down": [[w] for w in WRITE]}


def matrix_steps(activation, b2, row):
    """One review through the formula, as vectors: x, x W_up + b_up, the activation, y_hat.

    >>> matrix_steps("relu", -1.0, "不好吃") -> {'x': [1, 1], 'z': [2.0, 1.0], 'h': [2.0, 1.0], 'y': 0.0, 'target': 0}
    """
    name, p, n, y = next(r for r in REVIEWS if r[0] == row)
    z, h, yhat = forward(activation, b2, p, n)
    return {"x": [p, n], "z": z, "h": h, "y": yhat, "target": y}


def predictions(activation, b2):
    return {name: forward(activation, b2, p, n)[2] for name, p, n, _ in REVIEWS}


def is_correct(yhat, y):
    return (yhat > THRESHOLD) == (y == 1)


def mse(activation, b2):
    yhat = predictions(activation, b2)
    return sum((yhat[name] - y) ** 2 for name, _, _, y in REVIEWS) / len(REVIEWS)


def wrong_rows(activation, b2):
    yhat = predictions(activation, b2)
    return [name for name, _, _, y in REVIEWS if not is_correct(yhat[name], y)]


def slider_values():
    """Every value the bias slider can take, from its left end to its right end."""
    lo, hi, step = B2_SLIDER
    count = round((hi - lo) / step)
    return [round(lo + k * step, 9) + 0.0 for k in range(count + 1)]


def first_wrong(activation):
    """Drag b2 from -1 towards 0: the first slider value where a review goes wrong, and which.

    >>> first_wrong("relu") -> (-0.75, ['好吃', '不难吃'])
    Returns (None, []) if every review stays right all the way to 0.
    """
    for b2 in slider_values():
        wrong = wrong_rows(activation, b2)
        if wrong:
            return b2, wrong
    return None, []


def collapsed(b2):
    """With no activation the network is one line: coefficients on p, n and a constant.

    y_hat = sum_k WRITE[k] * (READ[k] . x + bias_k)
    >>> collapsed(-1.0) -> ([-1.0, -1.0], 2.0)
    """
    coefs = [sum(w * r[i] for w, r in zip(WRITE, READ)) for i in range(len(FEATURES))]
    const = sum(w * b for w, b in zip(WRITE, biases(b2)))
    return coefs, const


def linear_text(coefs, names, const):
    """A linear expression as a reader writes it.

    >>> linear_text([-1, -1], ["p", "n"], 2) -> '−p − n + 2'
    >>> linear_text([1, 1], ["p", "n"], -0.5) -> 'p + n − 0.500'
    """
    parts = []
    for coef, name in zip(coefs, names):
        if abs(coef) < 1e-12:
            continue
        size = "" if abs(abs(coef) - 1) < 1e-12 else num(abs(coef))
        parts.append((coef < 0, size + name))
    if abs(const) > 1e-12 or not parts:
        parts.append((const < -1e-12, num(abs(const))))
    text = ""
    for i, (negative, term) in enumerate(parts):
        if i == 0:
            text = (MINUS if negative else "") + term
        else:
            text += f" {MINUS if negative else '+'} {term}"
    return text


def operand(x):
    """A number after an operator: negatives go in parentheses. >>> operand(-1) -> '(−1)'"""
    return f"({num(x)})" if num(x).startswith(MINUS) else num(x)


def names(rows):
    return "、".join(f"「{name}」" for name in rows)


def detects(activation, b2, k):
    """What neuron k (0-based) responds to, read off the four reviews: where its output is above 0."""
    h = {name: forward(activation, b2, p, n)[1][k] for name, p, n, _ in REVIEWS}
    fires = [name for name, *_ in REVIEWS if h[name] > 1e-9]
    counts = {p + n for name, p, n, _ in REVIEWS if name in fires}
    meaning = {frozenset(): "哪一句都不为正", frozenset({2}): "两个特征同时成立（只在这时为正）",
               frozenset({1, 2}): "至少一个特征成立（成立得越多，输出越大）",
               frozenset({0, 1, 2}): "四句都为正"}.get(frozenset(counts), "为正的句子没有简单规律")
    negative = [name for name, *_ in REVIEWS if h[name] < -1e-9]
    if negative:
        meaning += "；" + "、".join(f"「{name}」上为负（h = {num(h[name])}）" for name in negative)
    return meaning, names(fires) if fires else "无"


def neuron_steps(activation, b2, k, p, n):
    """Neuron k's arithmetic for one review, term by term.

    >>> neuron_steps("relu", -1.0, 1, 1, 1) -> 'z₂ = 1 × 1 + 1 × 1 + (−1) = 1 → ReLU → 1 → × (−2) = −2'
    """
    z, h, _ = forward(activation, b2, p, n)
    reads = " + ".join(f"{num(x)} × {operand(w)}" for x, w in zip((p, n), READ[k]))
    sub = "₁₂"[k]
    return (f"z{sub} = {reads} + {operand(biases(b2)[k])} = {num(z[k])} → {ACTIVATIONS[activation][2]} → "
            f"{num(h[k])} → × {operand(WRITE[k])} = {num(WRITE[k] * h[k])}")


def expansion(activation, b2, row):
    """The step-by-step lines for one review: its features, both neurons, the sum and the verdict."""
    name, p, n, y = next(r for r in REVIEWS if r[0] == row)
    _, h, yhat = forward(activation, b2, p, n)
    writes = [w * v for w, v in zip(WRITE, h)]
    verdict = (f"高于 {num(THRESHOLD, 1)}，判为正面" if yhat > THRESHOLD else f"不高于 {num(THRESHOLD, 1)}，判为负面")
    mark = "✓ 对" if is_correct(yhat, y) else "✗ 错"
    return {
        "step-head": f"「{name}」：p = {p}，n = {n}，目标 y = {y}",
        "step-n1": "神经元 1：" + neuron_steps(activation, b2, 0, p, n),
        "step-n2": "神经元 2：" + neuron_steps(activation, b2, 1, p, n),
        "step-sum": (f"合计：ŷ = {num(writes[0])} + {operand(writes[1])} = {num(yhat)}，"
                     f"{verdict}（目标 {y}）{mark}"),
    }


def why_two():
    """Why two neurons are enough, computed on the designed plan (ReLU, b2 = -1)."""
    parts = []
    for label, count in (("只有一个特征成立", 1), ("两个都成立", 2), ("都不成立", 0)):
        rows = [name for name, p, n, _ in REVIEWS if p + n == count]
        _, p, n, _ = next(r for r in REVIEWS if r[0] == rows[0])
        _, h, yhat = forward(DESIGN["activation"], DESIGN["b2"], p, n)
        terms = " + ".join(f"{num(w)} × {operand(v)}" if i == 0 else f"{operand(w)} × {operand(v)}"
                           for i, (w, v) in enumerate(zip(WRITE, h)))
        parts.append(f"{label}（{names(rows)}）：{terms} = {num(yhat)}")
    return "；".join(parts) + "。"


def first_wrong_text(activation):
    """The answer to the lesson's third experiment, in words, computed for this activation."""
    b2, wrong = first_wrong(activation)
    label = "不加激活时" if activation == "none" else f"用 {ACTIVATIONS[activation][2]} "
    start, end = slider_values()[0], slider_values()[-1]
    if b2 is None:
        return f"{label}把 b₂ 从 {num(start)} 拖到 {num(end)}：四句一直全对。"
    yhat = predictions(activation, b2)
    target = {name: y for name, _, _, y in REVIEWS}

    up = [r for r in wrong if target[r] == 0]      # negative reviews pushed above the threshold
    down = [r for r in wrong if target[r] == 1]    # positive reviews pulled below it
    both = bool(up) and bool(down)

    def moved(rows, verb, where):
        values = "、".join(sorted({num(yhat[r]) for r in rows}))
        who = f"{names(rows)}的 " if both or b2 == start else ""
        return f"{who}ŷ {verb} {values}，{where} {num(THRESHOLD, 1)}"

    what = "；".join([moved(down, "降到", "不再高于")] * bool(down) + [moved(up, "升到", "超过了")] * bool(up))
    if b2 == start:
        return f"{label.strip()}，b₂ = {num(start)} 还没拖就已经有错：{what}。"
    h2 = {name: forward(activation, b2, p, n)[1][1] for name, p, n, _ in REVIEWS}
    single = all(p + n == 1 for name, p, n, _ in REVIEWS if name in wrong)
    why = ("——神经元 2 在只有一个特征成立的句子上也开始输出了"
           f"（h₂ = {'、'.join(sorted({num(h2[r]) for r in wrong}))}），乘 {num(WRITE[1])} 后把 ŷ 拉了下来"
           if single and all(h2[r] > 1e-9 for r in wrong) else "")
    return (f"{label}把 b₂ 从 {num(start)} 往 {num(end)} 拖：b₂ = {num(b2)} 时先错的是{names(wrong)}："
            f"{what}{why}。")


def view(params):
    """Everything the widget shows, formatted, for this activation, bias and selected review."""
    params = check(params)
    activation, b2, row = params["activation"], params["b2"], params["row"]
    _, label, short, formula = ACTIVATIONS[activation]
    error = mse(activation, b2)
    wrong = wrong_rows(activation, b2)
    coefs, const = collapsed(b2)
    collapsed_text = "ŷ = " + linear_text(coefs, FEATURES, const)
    none_error = num(mse("none", b2), 3)
    z2_text = linear_text(READ[1], FEATURES, b2)
    act_name = short if activation != "none" else ""
    network = (f"ŷ = {num(WRITE[0])} × {act_name}({linear_text(READ[0], FEATURES, BIAS1)}) + "
               f"{operand(WRITE[1])} × {act_name}({z2_text})")
    rows = {}
    for name, p, n, y in REVIEWS:
        _, h, yhat = forward(activation, b2, p, n)
        ok = is_correct(yhat, y)
        rows[name] = {"h1": num(h[0]), "h2": num(h[1]), "yhat": num(yhat), "verdict": "✓ 对" if ok else "✗ 错",
                      "data-correct": "true" if ok else "false",
                      "data-selected": "true" if name == row else "false"}
    meaning1, fires1 = detects(activation, b2, 0)
    meaning2, fires2 = detects(activation, b2, 1)
    if activation == "none":
        collapse_lead = "现在两层合成了一层："
        collapse_tail = f"，MSE = {none_error}——非线性一去掉，多一层也没用。"
    else:
        collapse_lead = "如果去掉激活，两层会合成一层："
        collapse_tail = f"，MSE 会是 {none_error}：非线性一去掉，多一层也没用。"
    summary = ("四句全对" if not wrong else f"{names(wrong)}判错")
    steps = expansion(activation, b2, row) if row else {
        "step-head": "点表格里的一句评价，看它怎么算。", "step-n1": "", "step-n2": "", "step-sum": ""}
    out = {
        "b2": num(b2),
        "z1": linear_text(READ[0], FEATURES, BIAS1),
        "z2": z2_text,
        "w1": num(WRITE[0]), "w2": num(WRITE[1]),
        "act1": f"h₁ = {short}(z₁)" if activation != "none" else "h₁ = z₁（不过激活，原样写出）",
        "act2": f"h₂ = {short}(z₂)" if activation != "none" else "h₂ = z₂（不过激活，原样写出）",
        "act-formula": formula,
        "network": network,
        "meaning1": meaning1, "fires1": fires1,
        "meaning2": meaning2, "fires2": fires2,
        "mse": num(error, 3),
        "summary": summary,
        "collapse-lead": collapse_lead,
        "collapse": collapsed_text,
        "collapse-tail": collapse_tail,
        "first-wrong": first_wrong_text(activation),
        "design": f"{ACTIVATIONS[DESIGN['activation']][2]}，b₂ = {num(DESIGN['b2'])}",
        "why-two": why_two(),
        "threshold": num(THRESHOLD, 1),
    }
    out.update(steps)
    return {
        "params": params,
        "reviews": [{"name": name, "p": p, "n": n, "y": y} for name, p, n, y in REVIEWS],
        "activations": [{"value": key, "label": ACTIVATIONS[key][1]} for key in ACTIVATION_ORDER],
        "slider": dict(zip(("min", "max", "step"), B2_SLIDER)),
        "focus": str(params["neuron"] or ""),
        "out": out,
        "rows": rows,
        "announce": f"{label}，b₂ = {num(b2)}：{summary}，MSE = {num(error, 3)}。",
        "announce_steps": "；".join(steps[key] for key in STEP_KEYS
                                   if steps[key] and key != f"step-n{3 - (params['neuron'] or 3)}"),
    }
