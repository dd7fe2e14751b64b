"""warmup-curves: our model's training-loss curves over their first steps, against the losses of two
counting models (unigram: token frequencies only; bigram: the previous token only).

Every run first falls to the unigram's loss, a plateau (it has learnt how often each token comes),
and then has to leave it; some runs (Post-LN without warm-up) stay there. The widget draws the
chosen runs over a window of steps (the first steps every run has, or the full schedule, where only
the runs trained beyond the first window are drawn), and writes one sentence per drawn run, decided
by its numbers alone (reading(), sentence()):

    "left the plateau"   the first value below unigram - LEAVE_MARGIN (its step: 第 N 步前后)
    "not left yet"       no value in the window below it (with the last value)
    "not reached yet"    no value within LEAVE_MARGIN of the unigram, or below it
    values that are null (not finite) are skipped and counted in the sentence

The data (the lesson passes data=facts.norm.curves, built by course/facts/norm.py):

    {"every": 10,                       each value: the mean training loss of `every` consecutive steps
     "unigram": 6.955, "bigram": 5.509, nats/token, the two reference lines
     "full_steps": 1400,                the full schedule's length
     "series": [{"name": "pre_ln_warmup", "label": "Pre-LN，有预热", "seed": 0, "steps": 200,
                 "values": [7.62, ..., null, ...]}, ...]}   len(values) == ceil(steps / every)

Value i is drawn at step min((i + 1) * every, steps): the last step of the steps it averages. The
chart's positions are computed here (SVG user units); view.js only draws them. Standard library only,
in the subset MicroPython shares.
"""
import math

from numfmt import fixed, num

PARAMS = {"data": None, "window": "short", "shown": None}  # shown: series keys (name-sSEED); None: all

# A value (the mean of `every` steps) below unigram - LEAVE_MARGIN has left the plateau; one at or
# below unigram + LEAVE_MARGIN has reached it. 0.05 nats is well above the step-to-step jitter of a
# 10-step mean of a run sitting on the plateau, and far below the distance to the bigram.
LEAVE_MARGIN = 0.05
MAX_SERIES = 8  # each series has its own colour and dash pattern (style.css: wc-s0 .. wc-s7)
WINDOWS = ("short", "full")
W, H = 600, 340  # the plot area, in SVG user units
X_STEPS = (10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000, 50000, 100000)
Y_STEPS = (0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0, 10.0, 20.0, 50.0, 100.0)
TITLE = "训练开头的损失曲线：什么时候离开 unigram 平台"


def is_number(x):
    return (isinstance(x, int) or isinstance(x, float)) and not isinstance(x, bool)


def finite(x):
    return is_number(x) and not math.isnan(x) and not math.isinf(x)


def is_whole(x):
    return finite(x) and x == int(x)


def key_of(series):
    """The key of a series in `shown`, the checkboxes and data-row. key_of({"name": "a", "seed": 1}) -> 'a-s1'"""
    return series["name"] + "-s" + str(int(series["seed"]))


def expected_count(steps, every):
    """ceil(steps / every), in integers. expected_count(200, 10) -> 20; expected_count(205, 10) -> 21"""
    return (int(steps) + int(every) - 1) // int(every)


def check_data(data):
    """ValueError naming the first thing in `data` that breaks the shape the module doc gives."""
    if data is None:
        raise ValueError("warmup-curves needs data=... (facts.norm.curves: every, unigram, bigram, full_steps, series)")
    if not isinstance(data, dict):
        raise ValueError("data must be a dict with every, unigram, bigram, full_steps and series; got " + repr(type(data)))
    for k in ("every", "unigram", "bigram", "full_steps", "series"):
        if k not in data:
            raise ValueError("data has no " + repr(k) + " (it needs every, unigram, bigram, full_steps, series)")
    if not is_whole(data["every"]) or data["every"] < 1:
        raise ValueError("data.every must be a whole number of steps, 1 or more; got " + repr(data["every"]))
    if not is_whole(data["full_steps"]) or data["full_steps"] < 1:
        raise ValueError("data.full_steps must be a whole number of steps, 1 or more; got " + repr(data["full_steps"]))
    for k in ("unigram", "bigram"):
        if not finite(data[k]):
            raise ValueError("data." + k + " must be a finite loss in nats; got " + repr(data[k]))
    if not data["bigram"] < data["unigram"]:
        raise ValueError("data.bigram (" + repr(data["bigram"]) + ") must be below data.unigram ("
                         + repr(data["unigram"]) + "): the previous token can only help")
    series = data["series"]
    if not isinstance(series, list) or not series:
        raise ValueError("data.series must be a non-empty list of series; got " + repr(series))
    if len(series) > MAX_SERIES:
        raise ValueError("data.series has " + str(len(series)) + " series; at most " + str(MAX_SERIES)
                         + " (each needs its own colour and dash pattern)")
    keys = []
    for i, s in enumerate(series):
        where = "data.series[" + str(i) + "]"
        if not isinstance(s, dict):
            raise ValueError(where + " must be a dict; got " + repr(s))
        for k in ("name", "label", "seed", "steps", "values"):
            if k not in s:
                raise ValueError(where + " has no " + repr(k) + " (a series needs name, label, seed, steps, values)")
        for k in ("name", "label"):
            if not isinstance(s[k], str) or not s[k]:
                raise ValueError(where + "." + k + " must be a non-empty string; got " + repr(s[k]))
        if not is_whole(s["seed"]):
            raise ValueError(where + ".seed must be a whole number; got " + repr(s["seed"]))
        if not is_whole(s["steps"]) or not 1 <= s["steps"] <= data["full_steps"]:
            raise ValueError(where + ".steps must be a whole number from 1 to full_steps (" + str(data["full_steps"])
                             + "); got " + repr(s["steps"]))
        values = s["values"]
        want = expected_count(s["steps"], data["every"])
        if not isinstance(values, list) or len(values) != want:
            got = str(len(values)) + " values" if isinstance(values, list) else repr(values)
            raise ValueError(where + ".values (" + s["name"] + "): " + got + ", but steps " + str(int(s["steps"]))
                             + " with every " + str(int(data["every"])) + " needs " + str(want))
        for j, v in enumerate(values):
            if v is not None and not finite(v):
                raise ValueError(where + ".values[" + str(j) + "] must be a finite number or null; got " + repr(v))
        key = key_of(s)
        if key in keys:
            raise ValueError(where + " repeats " + s["name"] + " with seed " + str(int(s["seed"]))
                             + ": each (name, seed) once")
        keys.append(key)


def short_steps(data):
    """The short window: the steps every series has (the shortest run). 200 for the norm experiment."""
    return min([int(s["steps"]) for s in data["series"]])


def window_end(data, window):
    return short_steps(data) if window == "short" else int(data["full_steps"])


def check(params):
    """(data, window, shown keys in series order) as the model uses them, or ValueError naming what is wrong."""
    data = params.get("data")
    check_data(data)
    window = params.get("window")
    if window not in WINDOWS:
        raise ValueError("window must be one of " + ", ".join(WINDOWS) + "; got " + repr(window))
    keys = [key_of(s) for s in data["series"]]
    shown = params.get("shown")
    if shown is None:
        return data, window, keys
    if not isinstance(shown, list) or any(not isinstance(k, str) or k not in keys for k in shown):
        raise ValueError("shown must be null or a list of series keys (" + ", ".join(keys) + "); got " + repr(shown))
    return data, window, [k for k in keys if k in shown]


def points(series, every, end):
    """[(step, value or None)] of the values whose step (the last of the steps each averages) is at most `end`.

    points({"steps": 25, "values": [7.0, 6.0, 5.0]}, 10, 100) -> [(10, 7.0), (20, 6.0), (25, 5.0)]
    """
    out = []
    steps = int(series["steps"])
    for i, v in enumerate(series["values"]):
        step = min((i + 1) * int(every), steps)
        if step <= end:
            out.append((step, v))
    return out


def reading(pts, unigram, every):
    """What the numbers of one series in the window say, for its sentence:

    first_step, first_span  the first value's step and how many steps it averages
    left       the step of the first value below unigram - LEAVE_MARGIN, or None
    left_value that value
    reached    some value is at or below unigram + LEAVE_MARGIN
    back       it left, and its last finite value is back at or above unigram - LEAVE_MARGIN
    end        the last step in the window
    last_step, last_value, last_span  its last finite value (None if there is none)
    after      how many null values come after the last finite one
    gaps       how many null values come before it
    """
    below = unigram - LEAVE_MARGIN
    finite_pts = [(k, step, v) for k, (step, v) in enumerate(pts) if v is not None]
    out = {"end": pts[-1][0] if pts else 0, "left": None, "left_value": None, "reached": False, "back": False,
           "first_step": pts[0][0] if pts else 0, "first_span": pts[0][0] if pts else 0,
           "last_step": None, "last_value": None, "last_span": 0, "after": 0, "gaps": 0, "count": len(pts)}
    if not finite_pts:
        return out
    for k, step, v in finite_pts:
        if v <= unigram + LEAVE_MARGIN:
            out["reached"] = True
        if out["left"] is None and v < below:
            out["left"], out["left_value"] = step, v
    k, step, v = finite_pts[-1]
    prev = pts[k - 1][0] if k > 0 else 0
    out["last_step"], out["last_value"], out["last_span"] = step, v, step - prev
    out["after"] = len(pts) - 1 - k
    out["gaps"] = k + 1 - len(finite_pts)
    out["back"] = out["left"] is not None and v >= below
    return out


def loss(x):
    return num(x, 3)


def mean_phrase(span, value):
    """'最后 10 步平均 5.560'"""
    return "最后 " + str(span) + " 步平均 " + loss(value)


def sentence(label, r, unigram, every):
    """One sentence for one series in the window, from reading(): true of the numbers by construction."""
    below = loss(unigram - LEAVE_MARGIN)
    if r["last_value"] is None:
        return label + "：到第 " + num(r["end"]) + " 步，每个 " + str(every) + " 步的平均都不是有限数。"
    if r["after"]:
        tail = ("第 " + num(r["last_step"]) + " 步的 " + str(r["last_span"]) + " 步平均 " + loss(r["last_value"])
                + " 是最后一个有限值，之后 " + str(r["after"]) + " 个平均都不是有限数")
    else:
        tail = mean_phrase(r["last_span"], r["last_value"])
    gaps = "；其间有 " + str(r["gaps"]) + " 个 " + str(every) + " 步平均不是有限数" if r["gaps"] else ""
    if r["left"] is None:
        verb = "还没有离开平台" if r["reached"] else "还没有降到平台"
        return label + "：到第 " + num(r["end"]) + " 步" + verb + "（" + tail + "）" + gaps + "。"
    if r["left"] == r["first_step"]:
        lead = (label + "：头 " + str(r["first_span"]) + " 步的平均（" + loss(r["left_value"]) + "）就已低于 "
                + below + "，一开始就在平台以下")
    else:
        lead = label + "：第 " + num(r["left"]) + " 步前后离开平台"
    if r["back"]:
        lead += "，之后又升回 " + below + " 以上"
    if r["after"]:
        return lead + "；" + tail + gaps + "。"
    return lead + "；到第 " + num(r["last_step"]) + " 步，" + tail + gaps + "。"


def nice_step(span, steps, most):
    """The smallest step in `steps` that covers `span` in at most `most` intervals."""
    for s in steps:
        if span / s <= most:
            return s
    return steps[-1]


def decimals_of(step):
    return 0 if step >= 1 else (1 if abs(step * 10 - round(step * 10)) < 1e-9 else 2)


def y_axis(values, unigram, bigram):
    """(lo, hi, ticks) of the loss axis: the shown values and both reference lines, on whole ticks."""
    lo = min(values + [bigram])
    hi = max(values + [unigram])
    step = nice_step(max(hi - lo, 0.1) * 1.1, Y_STEPS, 6)
    k_lo = int(math.floor(lo / step - 0.05))
    k_hi = int(math.ceil(hi / step + 0.05))
    return k_lo * step, k_hi * step, [k * step for k in range(k_lo, k_hi + 1)], decimals_of(step)


def chart(data, end, drawn, keys):
    """The SVG's positions: x ticks, y ticks, the two reference lines, one path per drawn series
    (a new subpath after each null), and the summary its aria-label reads."""
    every = int(data["every"])
    by_key = {}
    for s in data["series"]:
        by_key[key_of(s)] = s
    series_pts = [(k, points(by_key[k], every, end)) for k in drawn]
    values = [v for _, pts in series_pts for _, v in pts if v is not None]
    lo, hi, ticks, dec = y_axis(values, data["unigram"], data["bigram"])

    def x(step):
        return fixed(W * step / end)

    def y(v):
        return fixed(H * (hi - v) / (hi - lo))

    xstep = nice_step(end, X_STEPS, 7)
    xticks = [{"x": x(k * xstep), "label": num(k * xstep)} for k in range(int(end // xstep) + 1)]
    lines = []
    for k, pts in series_pts:
        parts, pen = [], False
        for step, v in pts:
            if v is None:
                pen = False
                continue
            if not pen and parts and parts[-1][0] == "M":
                parts.append(("L",) + parts[-1][1:])  # a point alone between nulls: a dot (round caps)
            parts.append(("L" if pen else "M", x(step), y(v)))
            pen = True
        if parts and parts[-1][0] == "M":
            parts.append(("L",) + parts[-1][1:])
        lines.append({"key": k, "style": keys.index(k), "d": " ".join([p[0] + p[1] + "," + p[2] for p in parts])})
    refs = []
    for name, text in (("unigram", "验证集上只看词频（unigram）"), ("bigram", "验证集上只看前一个 token（bigram）")):
        v = data[name]
        # its label under the line (the runs on the plateau sit just above the unigram's), unless the axis ends there
        dy = "22" if H * (hi - v) / (hi - lo) < H - 30 else "-8"
        refs.append({"key": name, "y": y(v), "dy": dy, "label": text + " " + loss(v)})
    return {"w": W, "h": H, "xticks": xticks, "lines": lines, "refs": refs,
            "yticks": [{"y": y(t), "label": num(t, dec)} for t in ticks]}


def labels(data):
    """Each series' label, with its seed when the series do not all share one."""
    seeds = []
    for s in data["series"]:
        if int(s["seed"]) not in seeds:
            seeds.append(int(s["seed"]))
    if len(seeds) == 1:
        return [s["label"] for s in data["series"]]
    return [s["label"] + "（种子 " + str(int(s["seed"])) + "）" for s in data["series"]]


def seeds_phrase(data):
    seeds = []
    for s in data["series"]:
        if int(s["seed"]) not in seeds:
            seeds.append(int(s["seed"]))
    if len(seeds) == 1:
        return "都是种子 " + str(seeds[0])
    return "种子见各自的名字"


def view(params):
    data, window, shown = check(params)
    every = int(data["every"])
    short = short_steps(data)
    end = window_end(data, window)
    keys = [key_of(s) for s in data["series"]]
    names = labels(data)
    unigram = data["unigram"]
    available = [window == "short" or int(s["steps"]) > short for s in data["series"]]
    drawn = [k for k, ok in zip(keys, available) if ok and k in shown]
    c = chart(data, end, drawn, keys)
    sentences, summary = [], []
    for k, label, s in zip(keys, names, data["series"]):
        if k not in drawn:
            continue
        r = reading(points(s, every, end), unigram, every)
        sentences.append(sentence(label, r, unigram, every))
        if r["last_value"] is None:
            summary.append(label + " 没有有限值")
        else:
            summary.append(label + " 第 " + num(r["last_step"]) + " 步 " + loss(r["last_value"])
                           + ("，第 " + num(r["left"]) + " 步前后离开平台" if r["left"] is not None else "，没有离开平台"))
    short_label = "前 " + num(short) + " 步"
    full_label = "全部 " + num(int(data["full_steps"])) + " 步"
    window_label = short_label if window == "short" else full_label
    longer = [label + "（" + num(int(s["steps"])) + " 步）" for label, s in zip(names, data["series"])
              if int(s["steps"]) > short]
    if window == "short":
        drawn_text = "画出勾选的运行的前 " + num(short) + " 步。"
    elif longer:
        drawn_text = ("只画训练超过 " + num(short) + " 步的运行：" + "、".join(longer) + "；其余只训练了前 "
                      + num(short) + " 步，在「" + short_label + "」里看。")
    else:
        drawn_text = "没有哪个运行训练超过 " + num(short) + " 步，这里没有曲线可画。"
    if not drawn:
        drawn_text += "现在没有勾选任何一条能画的曲线。" if window == "short" or longer else ""
    c["summary"] = ("训练损失曲线，" + window_label + "，纵轴是损失（nats），两条横线是验证集上的：只看词频（unigram）"
                    + loss(unigram) + "，只看前一个 token（bigram）" + loss(data["bigram"]) + "。"
                    + ("；".join(summary) + "。" if summary else "没有画曲线。"))
    out = {
        "caption": ("横轴：训练步数（" + window_label + "）；纵轴：训练损失（nats / token，越低越好）。每个点是连续 "
                    + str(every) + " 步训练损失的平均，画在这 " + str(every) + " 步的最后一步上。"),
        "drawn": drawn_text,
        "rule": ("平台：只看词频的 unigram 损失，按验证集算是 " + loss(unigram) + "。某 " + str(every) + " 步的平均低于 "
                 + loss(unigram - LEAVE_MARGIN) + "（unigram 减 " + num(LEAVE_MARGIN, 2) + "）就算离开了平台；"
                 + "一直高于 " + loss(unigram + LEAVE_MARGIN) + " 的算还没降到平台。曲线是训练损失，门槛却按验证集的 "
                 + "unigram 定：训练集上的 unigram 损失没有导出，两者差多少这里看不出，所以离门槛不远的差别不读。"),
        "card": ("数据：我们自己的模型的训练记录，每条线是一次训练（" + seeds_phrase(data) + "）；每个值是训练集上连续 "
                 + str(every) + " 步损失的平均，不是验证集损失；不是有限数的平均不画。两条横线是两个计数模型在验证集上的损失："
                 "只按词频猜（unigram），只看前一个 token 猜（bigram）。"),
    }
    rows = {}
    series = []
    for i, (k, label, s) in enumerate(zip(keys, names, data["series"])):
        note = "" if available[i] else "只训练了前 " + num(short) + " 步"
        rows[k] = {"data-available": "true" if available[i] else "false", "note": note}
        series.append({"key": k, "label": label, "style": i, "checked": k in shown, "available": available[i],
                       "note": note, "steps": num(int(s["steps"]))})
    return {
        "params": {"window": window, "shown": shown},
        "title": TITLE,
        "windows": [{"value": "short", "label": short_label, "checked": window == "short"},
                    {"value": "full", "label": full_label, "checked": window == "full"}],
        "series": series,
        "chart": c,
        "sentences": sentences,
        "out": out,
        "rows": rows,
        "announce": window_label + "：" + ("".join(sentences) if sentences else drawn_text),
    }


def gallery_sample(norm):
    """The gallery's stand-in for facts.norm.curves, until course/facts/norm.py provides it: the
    placement runs (and the baseline, its full-length run) from facts.norm, in the same shape."""
    runs = norm["runs"]
    names = [r["name"] for r in norm["rows"] if runs[r["name"]].get("train_curve")]
    if "baseline" in runs and runs["baseline"].get("train_curve"):
        names.append("baseline")
    base = runs[names[0]]
    every = -(-int(base["steps_trained"]) // len(base["train_curve"]))
    series = []
    for name in names[:MAX_SERIES]:
        r = runs[name]
        label = ("Pre-LN" if r["norm_place"] == "pre" else "Post-LN") + ("，有预热" if r["warmup_steps"] > 0 else "，不预热")
        if r["lr_mult"] != 1:
            label += "，学习率 ×" + num(r["lr_mult"])
        if name == "baseline":
            label += "（完整日程）"
        series.append({"name": name, "label": label, "seed": r["seed"], "steps": r["steps_trained"],
                       "values": list(r["train_curve"])})
    return {"every": every, "unigram": norm["references"]["unigram"], "bigram": norm["references"]["bigram"],
            "full_steps": norm["card"]["training"]["steps"], "series": series}


def example(facts):
    """The params the gallery shows this widget with: facts.norm.curves (or, until norm.py has it, the same
    shape from facts.norm's runs); None before the norm experiment's export."""
    norm = facts.get("norm")
    if not norm:
        return None
    if norm.get("curves"):
        return {"data": norm["curves"]}
    return {"data": gallery_sample(norm)}
