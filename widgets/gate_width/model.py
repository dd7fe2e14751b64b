"""gate-width: how wide a SwiGLU FFN is at the parameters of a plain one, and how wide real models are.

A plain FFN has two d x 4d matrices: 2 * d * 4d = 8d^2 weights. SwiGLU has three (gate, up,
down), so the same 8d^2 weights allow a width of 8d^2 / 3d = 8d/3 (Shazeer 2020: "reduce ...
d_ff by a factor of 2/3"). 8d/3 is rarely a whole number; Meta's Llama code takes int(2 * 4d / 3)
and rounds it up to a multiple of 256 (the rule's numbers come from data/frontier-models.json,
passed in as `rule`). The student picks d; the widget shows the three widths and their weights
per layer, and, for the real models passed in as `models` (their configs' d and d_ff), the width
each actually has against 8d/3 and the rule.
Standard library only, in the subset MicroPython shares with CPython (no f-strings).
"""
from numfmt import num

# models: [{"name", "d", "d_ff"}, ...] and rule: {"multiple_of_dim", "scale_num", "scale_den",
# "multiple_of"} come from the course's facts; d defaults to the first model's.
PARAMS = {"d": None, "models": None, "rule": None}
RULE_KEYS = ("multiple_of_dim", "scale_num", "scale_den", "multiple_of")
MODEL_KEYS = ("name", "d", "d_ff")
D_MAX = 65536
D_CHOICES = (512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192)  # stops to try beside the models' own d


def plain_width(d, rule):
    """The plain two-matrix FFN: 4d. plain_width(4096, rule) -> 16384"""
    return rule["multiple_of_dim"] * d


def plain_weights(d, rule):
    """Two d x 4d matrices. plain_weights(4096, rule) -> 134217728"""
    return 2 * d * plain_width(d, rule)


def matched_width(d, rule):
    """The SwiGLU width with the plain FFN's weights: 2 * d * 4d / (3d) = 8d/3. matched_width(4096, rule) -> 10922.67"""
    return plain_weights(d, rule) / (3.0 * d)


def llama_width(d, rule):
    """Meta's FeedForward: int(2 * 4d / 3), rounded up to a multiple of 256.

    llama_width(4096, rule) -> 11008 (int(32768 / 3) = 10922 -> 43 * 256)
    """
    return rounded_up(two_thirds(d, rule), rule["multiple_of"])


def two_thirds(d, rule):
    """int(2 * 4d / 3) in whole numbers (floor of a positive quotient, as int() of Meta's float)."""
    return rule["scale_num"] * plain_width(d, rule) // rule["scale_den"]


def rounded_up(h, m):
    """m * ((h + m - 1) // m), Meta's line. rounded_up(10922, 256) -> 11008"""
    return m * ((h + m - 1) // m)


def two_matrix_width(d_ff):
    """The width of a two-matrix FFN with the weights of a SwiGLU of width d_ff: 3 * d * d_ff / (2d).
    two_matrix_width(17408) -> 26112.0"""
    return 3 * d_ff / 2


def swiglu_weights(d, d_ff):
    """Gate, up and down: three d x d_ff matrices. swiglu_weights(4096, 11008) -> 135266304"""
    return 3 * d * d_ff


def check(params):
    """(d, models, rule) as whole numbers, or ValueError with what is wrong."""
    if params.get("models") is None or params.get("rule") is None:
        raise ValueError('gate-width needs models and rule from data/, e.g. widget("gate-width", '
                         'models=[facts.anchor, facts.deepseek67b, facts.llama2_7b], rule=facts.llama2_7b.rule)')
    rule = {}
    for k in RULE_KEYS:
        v = params["rule"].get(k)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError("rule." + k + " must be a whole number >= 1, got " + repr(v))
        rule[k] = v
    models = []
    for m in params["models"]:
        for k in ("d", "d_ff"):
            if not isinstance(m.get(k), int) or not 1 <= m[k] <= 16 * D_MAX:
                raise ValueError("each model needs a whole-number " + k + ", got " + repr(m.get(k)))
        models.append({"name": str(m["name"]), "d": m["d"], "d_ff": m["d_ff"]})
    if not models:
        raise ValueError("gate-width needs at least one model")
    d = params.get("d")
    d = models[0]["d"] if d is None else d
    if isinstance(d, float) and d == int(d):
        d = int(d)  # the browser sends 4096 as a number that may arrive as a float
    if not isinstance(d, int) or isinstance(d, bool) or not 1 <= d <= D_MAX:
        raise ValueError("d must be a whole number in [1, " + str(D_MAX) + "], got " + repr(params.get("d")))
    return d, models, rule


def width_text(w):
    """A width: whole numbers bare (10,922), others with 2 decimals (10,922.67)."""
    return num(w) if w == int(w) else num(w, 2)


def more_text(value, base):
    """How much value exceeds base, as 多 0.78% / 少 2.1% / 相同."""
    if value == base:
        return "相同"
    change = 100.0 * (value - base) / base
    return ("多 " if change > 0 else "少 ") + num(abs(change), 2) + "%"


def choices(d, models):
    """The slider's stops: the base widths and every model's d (and d itself), each once, ascending."""
    values = list(D_CHOICES)
    for v in [m["d"] for m in models] + [d]:
        if v not in values:
            values.append(v)
    values.sort()
    out = []
    for v in values:
        names = [m["name"] for m in models if m["d"] == v]
        out.append({"d": v, "label": num(v) + ("（" + "、".join(names) + "）" if names else "")})
    return out


def model_row(m, rule):
    d, h = m["d"], m["d_ff"]
    matched = matched_width(d, rule)
    by_rule = llama_width(d, rule)
    weights = swiglu_weights(d, h)
    plain = plain_weights(d, rule)
    verdict = "和这条规则给的宽度相同" if h == by_rule else "不是：规则给 " + num(by_rule) + "，它另取了宽度"
    return {
        "name": m["name"], "d": num(d), "d_ff": num(h), "ratio": num(h / d, 2) + "d",
        "matched": width_text(matched), "rule": num(by_rule), "verdict": verdict,
        "weights": num(weights), "vs-plain": more_text(weights, plain),
    }


def view(params):
    d, models, rule = check(params)
    plain = plain_width(d, rule)
    plain_w = plain_weights(d, rule)
    matched = matched_width(d, rule)
    raw = two_thirds(d, rule)
    by_rule = llama_width(d, rule)
    rule_w = swiglu_weights(d, by_rule)
    stops = choices(d, models)
    index = [s["d"] for s in stops].index(d)
    bars = [  # (key, label, width, weights): a list, so every runtime keeps the order
        ("plain", "两矩阵 FFN：4d", plain, plain_w),
        ("matched", "SwiGLU，参数相同：8d/3", matched, plain_w),
        ("rule", "SwiGLU，Llama 的取整：" + num(rule["multiple_of"]) + " 的倍数", by_rule, rule_w),
    ]
    rows = {}
    for key, label, width, weights in bars:
        rows["bar-" + key] = {"width": width_text(width), "weights": num(weights)}
    for k in range(len(models)):
        row = model_row(models[k], rule)
        row["data-current"] = "true" if models[k]["d"] == d else "false"
        rows["model-" + str(k)] = row
    here = [m["name"] for m in models if m["d"] == d]
    out = {
        "d": num(d),
        "d-names": "（" + "、".join(here) + " 的 d）" if here else "",
        "plain": num(plain), "plain-weights": num(plain_w),
        "matched": width_text(matched),
        "matched-whole": "是整数" if matched == int(matched) else "不是整数，矩阵的宽只能取整数",
        "raw": num(raw), "multiple": num(rule["multiple_of"]), "rule": num(by_rule),
        "rule-weights": num(rule_w), "rule-vs-plain": more_text(rule_w, plain_w),
    }
    return {
        "params": {"d": d, "models": models, "rule": rule},
        "stops": stops,
        "index": index,
        "valuetext": stops[index]["label"],
        "bars": [{"key": key, "label": label, "share": num(100.0 * width / plain, 1)} for key, label, width, weights in bars],
        "models": [{"key": "model-" + str(k), "name": models[k]["name"]} for k in range(len(models))],
        "rows": rows,
        "out": out,
        "announce": ("d = " + num(d) + "：两矩阵 FFN 宽 " + num(plain) + "，权重 " + num(plain_w)
                     + "；参数相同的 SwiGLU 宽 8d/3 = " + width_text(matched)
                     + "；Llama 的规则取 " + num(by_rule) + "，权重 " + num(rule_w) + "，" + more_text(rule_w, plain_w) + "。"),
    }


def page_params(params):
    """What the page carries: only the fields the model reads (the facts hold much more)."""
    d, models, rule = check(params)
    return {"d": d, "models": models, "rule": rule}


def example(facts):
    """The gallery's params, from the course's facts: the anchor, DeepSeek LLM 67B, Llama 2 7B and Meta's rule."""
    models = [facts["anchor"], facts["deepseek67b"], facts["llama2_7b"]]
    return {"models": [{"name": m["name"], "d": m["d"], "d_ff": m["d_ff"]} for m in models],
            "rule": facts["llama2_7b"]["rule"]}
