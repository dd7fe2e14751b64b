"""Our model's ablations (the FFN experiment, the residual experiment): validation loss per
variant and seed, the noise floor of each comparison, the learning curves, and the reading.

The chart is HTML whose positions are percentages computed here; the sentences
under it are decided by the numbers (a gap counts only if it beats that
comparison's noise floor), so a retrained model can never leave a false sentence
behind. Standard library only, in the subset every runtime runs (CPython, Pyodide, MicroPython).
"""
import math

from numfmt import fixed, num

# readings=False leaves the sentences to the page (a lesson that reads the chart in its own prose).
PARAMS = {"data": None, "selected": "baseline", "title": "去掉 FFN 或它的非线性会怎样", "readings": True}

LABELS = {
    "baseline": "基线：{n} 层，注意力 + SwiGLU FFN",
    "linear_ffn": "线性 FFN：{n} 层，FFN 去掉非线性",
    "no_ffn": "去掉 FFN：{n} 层，只剩注意力",
    "attn_only_12l": "纯注意力 {n} 层，参数与基线对齐",
    "no_residual": "{n} 层，去掉残差",
    "deep_8l": "加深到 {n} 层，有残差",
    "deep_8l_no_residual": "加深到 {n} 层，去掉残差",
}
SHORT = {"baseline": "基线", "linear_ffn": "线性 FFN", "no_ffn": "去掉 FFN", "attn_only_12l": "纯注意力",
         "no_residual": "去掉残差", "deep_8l": "8 层有残差", "deep_8l_no_residual": "8 层去掉残差"}
CURVE_W, CURVE_H = 600, 220  # the learning-curve SVG's viewBox


def label(variant):
    return LABELS.get(variant["name"], variant["name"]).format(n=variant["n_layer"])


def short(name):
    """A variant's short name for lists. short("linear_ffn") -> '线性 FFN'"""
    return SHORT.get(name, name)


def mean(values):
    return sum(values) / len(values)


def spread(values):
    """Range of repeated runs, or None for a single run. spread([4.8, 4.9, 4.85]) -> 0.1 (about)"""
    return max(values) - min(values) if len(values) > 1 else None


def perplexity(loss):
    """e^loss: the model is as unsure as a fair choice among this many tokens. perplexity(0.0) -> 1.0"""
    return math.exp(loss)


def axis(values, ticks=5):
    """A padded range and round tick values covering `values`.

    >>> axis([4.6, 5.3])["ticks"] -> [4.5, 4.6, ..., 5.4]
    """
    lo, hi = min(values), max(values)
    span = max(hi - lo, 0.05)
    raw = span / ticks
    step = min((s for s in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0) if s >= raw), default=5.0)
    start = step * int((lo - span * 0.1) / step)
    stop = step * (int((hi + span * 0.1) / step) + 1)
    count = round((stop - start) / step)
    return {"lo": start, "hi": stop, "ticks": [round(start + k * step, 6) for k in range(count + 1)], "step": step}


def position(x, ax):
    """Percent from the left edge of the track."""
    return round(100 * (x - ax["lo"]) / (ax["hi"] - ax["lo"]), 3)


def baseline_of(data):
    return next(v for v in data["variants"] if v["name"] == "baseline")


def comparisons(data):
    """Each variant against the baseline: the gap of the means and the noise floor of that
    comparison, the larger of the two variants' seed ranges (a single run has none)."""
    base_v = baseline_of(data)
    base = mean(base_v["val_losses"])
    out = []
    for v in data["variants"]:
        m = mean(v["val_losses"])
        ranges = [r for r in (spread(base_v["val_losses"]), spread(v["val_losses"])) if r is not None]
        floor = max(ranges) if ranges else 0.0
        out.append({"name": v["name"], "label": label(v), "params": v["params"], "runs": len(v["val_losses"]),
                    "mean": m, "gap": m - base, "floor": floor,
                    "beats_floor": abs(m - base) > floor, "worse": m - base > floor,
                    "params_vs_base": v["params"] / base_v["params"] - 1,
                    "same_params": v["params"] == base_v["params"]})
    return base, out


def size_phrase(row):
    if row["same_params"]:
        return f"{num(row['params'])} 个参数，和基线一个不差"
    if row["name"] == "no_ffn":
        return f"{num(row['params'])} 个参数"
    more = "多" if row["params_vs_base"] > 0 else "少"
    return f"{num(row['params'])} 个参数，比基线{more} {num(abs(100 * row['params_vs_base']), 2)}%"


def sentences(data):
    """The reading of the chart, one sentence per variant, chosen by the numbers."""
    base, rows = comparisons(data)
    bigram, unigram = data["references"]["bigram"], data["references"]["unigram"]
    out = []
    for row in rows:
        if row["name"] == "baseline":
            continue
        floor = row["floor"]
        runs = f"{row['runs']} 个种子" if row["runs"] > 1 else "只跑了 1 次"
        loss = f"{num(row['mean'], 3)}（困惑度 {num(perplexity(row['mean']), 0)}）"
        if not row["beats_floor"]:
            verdict = (f"验证集损失 {loss}，和基线的 {num(base, 3)} 只差 {num(abs(row['gap']), 3)}，"
                       f"没有超出这组比较的噪声底线 {num(floor, 3)}：我们的数据分不出两者的高下")
        elif row["worse"]:
            times = num(row["gap"] / floor, 1) if floor else "无穷"
            verdict = (f"验证集损失从基线的 {num(base, 3)} 升到 {loss}，高出 {num(row['gap'], 3)}，"
                       f"是这组比较噪声底线 {num(floor, 3)} 的 {times} 倍：确实更差")
        else:
            verdict = (f"验证集损失从基线的 {num(base, 3)} 降到 {loss}，低了 {num(-row['gap'], 3)}，"
                       f"超出这组比较的噪声底线 {num(floor, 3)}：反而比基线好")
        if row["mean"] > bigram and unigram - row["mean"] < row["mean"] - bigram:
            verdict += (f"；它离只看词频、不看前文的 unigram（{num(unigram, 2)}）比离插值 bigram（{num(bigram, 2)}）"
                        f"还近，说明在这个训练量下它几乎没有用上前文")
        elif row["mean"] > bigram:
            verdict += (f"；它甚至不如只看前一个 token 的插值 bigram（{num(bigram, 2)}），"
                        f"说明在这个训练量下它还没学到多少超出相邻统计的东西")
        out.append(f"{row['label']}（{size_phrase(row)}，{runs}）：{verdict}。")
    return out


def by_name(data):
    return {v["name"]: v for v in data["variants"]}


def floor_between(a, b, key="val_losses"):
    """The noise floor of comparing variants a and b: the larger of their seed ranges (0 with one run each).
    key: which final losses ("val_losses", or "train_losses" for the training split)."""
    ranges = [r for r in (spread(a[key]), spread(b[key])) if r is not None]
    return max(ranges) if ranges else 0.0


def times(x, floor):
    """x as a multiple of the floor. times(0.2, 0.048) -> '4.2'"""
    return num(x / floor, 1) if floor else "无穷"


def split_at(data, without="no_ffn", partial="linear_ffn", full="baseline", key="val_losses"):
    """How the validation gap from `without` down to `full` divides at `partial`: the part `partial`
    already recovers and the rest, with the noise floor of the partial-vs-full comparison.
    key="train_losses" splits the final training losses the same way.

    no FFN 5.5, linear FFN 5.0, SwiGLU 4.8 -> total 0.7, recovered 0.5 (71%), rest 0.2 (29%)
    """
    v = by_name(data)
    m = {k: mean(v[k][key]) for k in (without, partial, full)}
    total = m[without] - m[full]
    recovered = m[without] - m[partial]
    rest = m[partial] - m[full]
    floor = floor_between(v[partial], v[full], key)
    return {"without": m[without], "partial": m[partial], "full": m[full], "total": total,
            "recovered": recovered, "rest": rest, "recovered_share": recovered / total if total else 0.0,
            "rest_share": rest / total if total else 0.0, "floor": floor, "rest_beats_floor": rest > floor}


def split_reading(data):
    """The FFN's gain over no FFN, split into what a linear per-token map already gives and what
    the non-linearity adds, decided by the numbers."""
    s = split_at(data)
    if s["total"] <= 0:
        return (f"去掉 FFN 的模型（{num(s['without'], 3)}）并不比基线（{num(s['full'], 3)}）差，"
                f"这份数据里 FFN 没有带来可以拆分的好处。")
    out = (f"从去掉 FFN 的 {num(s['without'], 3)} 到基线的 {num(s['full'], 3)}，FFN 一共让验证集损失降了 "
           f"{num(s['total'], 3)}。")
    if s["rest"] < -s["floor"]:  # the linear FFN beat SwiGLU
        return out + (f"线性 FFN（{num(s['partial'], 3)}）反而比基线还低 {num(-s['rest'], 3)}，超出这组比较的噪声底线 "
                      f"{num(s['floor'], 3)}：这份数据里，非线性没有带来额外的好处。")
    if s["recovered"] <= 0:
        out += f"线性 FFN（{num(s['partial'], 3)}）却没有比去掉 FFN 更好"
    else:
        out += (f"其中 {num(s['recovered'], 3)}（{num(100 * s['recovered_share'], 0)}%）线性 FFN 就做到了"
                + ("：一个逐 token 的线性映射已经能拿走大部分" if s["recovered_share"] > 0.5 else "，不到一半"))
    if s["rest_beats_floor"]:
        out += (f"；剩下的 {num(s['rest'], 3)}（{num(100 * s['rest_share'], 0)}%）要靠非线性，"
                f"是这组比较噪声底线 {num(s['floor'], 3)} 的 {times(s['rest'], s['floor'])} 倍。")
        out += ("非线性的好处是真的，但在这个规模上它是较小的那一部分。" if s["rest_share"] < 0.5 else
                "非线性的好处是真的，而且占了大头。")
    else:
        out += (f"；线性 FFN 和基线只差 {num(abs(s['rest']), 3)}，没有超出这组比较的噪声底线 {num(s['floor'], 3)}："
                f"我们的数据分不出非线性有没有额外的好处。")
    return out + train_split_clause(data, s)


def train_split_clause(data, val):
    """The same split on the final training losses, as one clause after the validation split `val`."""
    if not all("train_losses" in x for x in data["variants"]):
        return ""
    t = split_at(data, key="train_losses")
    if t["total"] <= 0 or not 0 <= t["recovered_share"] <= 1:
        return ""
    out = (f"这是验证集上的拆分；在训练集损失上做同样的拆分，是 {num(100 * t['recovered_share'], 0)}% 对 "
           f"{num(100 * t['rest_share'], 0)}%")
    if t["rest_share"] > val["rest_share"] and 0 < val["rest"] < t["rest"]:
        out += (f"：非线性在训练集上拿到的好处（{num(t['rest'], 3)}）比在验证集上（{num(val['rest'], 3)}）大，"
                "只有一部分带到了没见过的文字上")
    return out + "。"


def fit_gap(variant):
    """Validation minus training loss, averaged over the variant's seeds, at every evaluation:
    [(step, gap), ...]. The training loss is the mean of recent minibatches (dropout on)."""
    hs = variant["histories"]
    return [(first["step"], mean([h[i]["val_loss"] - h[i]["train_loss"] for h in hs])) for i, first in enumerate(hs[0])]


def final_gap(variant):
    """Mean final validation loss minus mean final training loss."""
    return mean(variant["val_losses"]) - mean(variant["train_losses"])


def gap_growth(variant):
    """How a variant's train/validation gap develops: its final size, its size halfway through the
    evaluations, and whether it grew at every evaluation of the second half."""
    gaps = fit_gap(variant)
    half = len(gaps) // 2
    growing = len(gaps) > half + 1 and all(b[1] > a[1] for a, b in zip(gaps[half:], gaps[half + 1:]))
    return {"gap": final_gap(variant), "growing": growing, "mid_step": gaps[half][0], "mid_gap": gaps[half][1]}


def overfitting(data):
    """The baseline's train/validation gap: its size at the end, whether it grew over the second half
    of training, and whether the validation loss has stalled (not still learning, as judged by
    still_learning) while the gap is larger than every control's."""
    v = by_name(data)
    base = v["baseline"]
    g = gap_growth(base)
    end = g["gap"]
    learning = still_learning(data).get("baseline")
    widest = all(final_gap(x) < end for x in data["variants"] if x["name"] != "baseline")
    return {"gap": end, "growing": g["growing"], "mid_step": g["mid_step"], "mid_gap": g["mid_gap"],
            "stalled": bool(learning) and not learning["still"] and g["growing"] and widest}


def overfits(data, name="linear_ffn"):
    """Does a control overfit too? Its gap as for the baseline (gap_growth), the gap as a share of the
    baseline's, and its validation loss over the last interval (still_learning): `barely` when the
    mean fall beats the seeds' spread of falls by less than half of that spread."""
    v = by_name(data)
    g = gap_growth(v[name])
    base = final_gap(v["baseline"])
    s = still_learning(data).get(name)
    barely = bool(s) and s["still"] and s["drop"] < 1.5 * s["noise"]
    out = dict(g)
    out.update({"share": g["gap"] / base if base > 0 else 0.0, "learning": s, "barely": barely,
                "overfits": g["growing"] and g["gap"] > 0})
    return out


def val_difference(data, a="linear_ffn", b="baseline"):
    """The mean validation loss of `a` minus that of `b` at every evaluation: [(step, difference), ...]."""
    v = by_name(data)
    ca, cb = v[a]["histories"], v[b]["histories"]
    return [(first["step"], mean([h[i]["val_loss"] for h in ca]) - mean([h[i]["val_loss"] for h in cb]))
            for i, first in enumerate(ca[0])]


def steady_tail(curve, tolerance, least=3):
    """The longest run of final points (at least `least`) whose values stay within `tolerance` of each
    other: {"step": its first step, "lo", "hi", "end", "points"}, or None.

    >>> steady_tail([(1, 0.06), (2, 0.18), (3, 0.215), (4, 0.214), (5, 0.203)], 0.024)["step"] -> 3
    """
    best = None
    for k in range(len(curve) - least, -1, -1):
        values = [d for _, d in curve[k:]]
        if max(values) - min(values) > tolerance:
            break
        best = {"step": curve[k][0], "lo": min(values), "hi": max(values), "end": values[-1], "points": len(values)}
    return best


def steady_gap(data, a="linear_ffn", b="baseline"):
    """Whether the validation gap between a and b has held still: the longest final stretch of
    evaluations over which it moved by no more than half the comparison's noise floor."""
    v = by_name(data)
    floor = floor_between(v[a], v[b])
    curve = val_difference(data, a, b)
    return {"curve": curve, "floor": floor, "tail": steady_tail(curve, floor / 2) if floor > 0 else None}


def fit_points(data, train_tokens, epochs, val_chapters):
    """Training against validation loss, as the lesson's short bullets: the baseline's memorising,
    the linear FFN's (less), the other controls, the steady gap between the two FFNs, and what the
    gaps are worth. val_chapters: [first, last] chapter of the validation split."""
    v = by_name(data)
    base = v["baseline"]
    train, val = mean(base["train_losses"]), mean(base["val_losses"])
    over = overfitting(data)
    learning = still_learning(data)
    first = (f"训练集只有 {num(train_tokens)} 个 token，每个模型把它读了 {num(epochs, 1)} 遍。"
             f"基线最后的训练损失是 {num(train, 3)}、验证集损失 {num(val, 3)}，差 {num(val - train, 3)}")
    if over["growing"]:
        first += f"，而且越训越大（第 {num(over['mid_step'])} 步时是 {num(over['mid_gap'], 3)}）"
    b = learning.get("baseline")
    if b and not b["still"]:
        first += f"；最后 {num(b['tokens'])} 个 token 里它的验证集损失只从 {num(b['from'], 3)} 变到 {num(b['to'], 3)}"
    if over["stalled"]:
        first += "：它已经明显过拟合，在训练集上越来越好，在验证集上几乎不动了"
    points = [first + "。"]

    lin = overfits(data, "linear_ffn")
    share = num(100 * lin["share"], 0)
    if lin["overfits"]:
        second = (f"线性 FFN 也在过拟合，只是{'轻一些' if lin['share'] < 1 else '不比基线轻'}：它的这个差距也越训越大"
                  f"（第 {num(lin['mid_step'])} 步 {num(lin['mid_gap'], 3)} → 训练结束 {num(lin['gap'], 3)}，是基线的 {share}%）")
    else:
        second = f"线性 FFN 的这个差距是 {num(lin['gap'], 3)}（基线的 {share}%），后半程没有一直变大"
    s = lin["learning"]
    if s and lin["barely"]:
        second += (f"；最后 {num(s['tokens'])} 个 token 里它的验证集损失降了 {num(s['drop'], 3)}，"
                   f"只比 {s['runs']} 个种子降幅之间的差别 {num(s['noise'], 3)} 大一点，勉强算还在降")
    elif s and s["still"]:
        second += "；它的验证集损失到训练结束还在降"
    elif s:
        second += "；它的验证集损失在最后一段已经基本不降了"
    others = [x for x in data["variants"] if x["name"] not in ("baseline", "linear_ffn")]
    if others:
        parts = "、".join(f"{short(x['name'])}{' ' + str(x['n_layer']) + ' 层' if x['name'] == 'attn_only_12l' else ''}"
                          f" {num(final_gap(x), 3)}" for x in others)
        much = all(2 * final_gap(x) < over["gap"] for x in others)
        fewer = all(final_gap(x) < over["gap"] for x in others)
        second += f"。其余对照的差距{'小得多' if much else '更小' if fewer else '并不都更小'}（{parts}）"
        still = [x for x in others if learning.get(x["name"], {}).get("still")]
        if still and len(still) == len(others):
            second += "，验证集损失到训练结束也都还在降"
        elif still:
            second += f"，其中{'、'.join(short(x['name']) for x in still)}的验证集损失到训练结束还在降"
    points.append(second + "。")

    steady = steady_gap(data)
    tail = steady["tail"]
    curve = steady["curve"]
    if tail:
        lo, hi = num(tail["lo"], 3), num(tail["hi"], 3)
        third = (f"基线和线性 FFN 在验证集上的差距，从第 {num(tail['step'])} 步起"
                 + (f"一直是 {lo}" if lo == hi else f"一直在 {lo}–{hi} 之间")
                 + f"（起落 {num(tail['hi'] - tail['lo'], 3)}，不到噪声底线 {num(steady['floor'], 3)} 的一半）")
        base_gaps = dict(fit_gap(base))
        if tail["step"] in base_gaps and base_gaps[tail["step"]] < over["gap"]:
            third += (f"，而同一段时间里基线的训练/验证差距从 {num(base_gaps[tail['step']], 3)} 涨到 "
                      f"{num(over['gap'], 3)}：过拟合在加重，非线性那部分好处没有超出噪声的变化")
        lin_s = learning.get("linear_ffn")
        if tail["end"] == tail["lo"] and b and not b["still"] and lin_s and lin_s["still"]:
            third += (f"。最后一段基线停住、线性 FFN 还在降，差距到了最小的 {num(tail['end'], 3)}；"
                      "再训下去、换更多数据会怎样，我们没有试过，手上只有这个稳定的差距")
    else:
        third = (f"基线和线性 FFN 在验证集上的差距，从第 {num(curve[len(curve) // 2][0])} 步的 "
                 f"{num(curve[len(curve) // 2][1], 3)} 变到训练结束的 {num(curve[-1][1], 3)}")
    points.append(third + "。")

    points.append(f"验证集是最后的第 {val_chapters[0]}–{val_chapters[1]} 回，这些差距里也有新章节、新人名的份。"
                  "所以图上各模型之间的差距，只对这个训练量和这份语料成立。")
    return points


def fit_reading(data, train_tokens, epochs, val_chapters):
    """Training against validation loss as one paragraph: fit_points run together.
    val_chapters: [first, last] chapter of the validation split."""
    return "".join(fit_points(data, train_tokens, epochs, val_chapters))


def attention_depth_reading(data, deep="attn_only_12l", shallow="no_ffn"):
    """The deep attention-only stack against the shallow model without FFN: more parameters, and
    how it trained, decided by the numbers (a trainability reading, not a capability one)."""
    v = by_name(data)
    d, s = v[deep], v[shallow]
    md, ms = mean(d["val_losses"]), mean(s["val_losses"])
    floor = floor_between(d, s)
    bigram = data["references"]["bigram"]
    worse = md - ms > floor
    out = f"纯注意力 {d['n_layer']} 层的参数是去掉 FFN 的 {num(d['params'] / s['params'], 1)} 倍"
    if worse:
        out += f"，验证集损失 {num(md, 3)} 却比后者的 {num(ms, 3)} 还高 {num(md - ms, 3)}（噪声底线 {num(floor, 3)}）"
    elif ms - md > floor:
        out += f"，验证集损失 {num(md, 3)} 比后者的 {num(ms, 3)} 低 {num(ms - md, 3)}（噪声底线 {num(floor, 3)}）"
    else:
        out += f"，验证集损失 {num(md, 3)} 和后者的 {num(ms, 3)} 分不出高下（噪声底线 {num(floor, 3)}）"
    train = mean(d["train_losses"])
    if train < bigram:
        out += f"；它在训练集上的损失 {num(train, 3)}，也只比插值 bigram 在验证集上的 {num(bigram, 2)} 低 {num(bigram - train, 2)}。"
    else:
        out += f"；它在训练集上的损失 {num(train, 3)}，甚至不比插值 bigram 在验证集上的 {num(bigram, 2)} 低。"
    out += (
            f"它用的是为 {v['baseline']['n_layer']} 层基线挑的学习率和日程，没有单独调过")
    if worse:
        out += ("：更深的纯注意力栈在这套配方下训练本身就有困难，"
                "这个对照说明的是「这样训不出来」，不是「注意力表达不了」。")
    else:
        out += "。"
    return out


def evidence_sentence(data):
    """⑦'s one sentence: every control's gap to the baseline against its floor, and the split."""
    _, rows = comparisons(data)
    controls = [r for r in rows if r["name"] != "baseline"]
    names = "、".join(short(r["name"]) + (" 12 层" if r["name"] == "attn_only_12l" else "") for r in controls)
    floors = sorted({round(r["floor"], 3) for r in controls})
    floor = num(floors[0], 3) if len(floors) == 1 else f"{num(floors[0], 3)}–{num(floors[-1], 3)}"
    if all(r["gap"] > 0 for r in controls):
        out = f"在我们的模型上，{names}的验证集损失比基线分别高 {'、'.join(num(r['gap'], 3) for r in controls)}（噪声底线 {floor}）"
    else:
        out = (f"在我们的模型上，{names}的验证集损失减去基线分别是 "
               f"{'、'.join(('+' if r['gap'] > 0 else '') + num(r['gap'], 3) for r in controls)}（噪声底线 {floor}）")
    out += "，都超出了噪声底线" if all(r["worse"] for r in controls) else "，并不都确实更差"
    s = split_at(data)
    if s["total"] > 0 and 0 <= s["recovered_share"] <= 1:
        out += (f"；去掉 FFN 到基线的 {num(s['total'], 3)} 里，线性映射拿走 {num(100 * s['recovered_share'], 0)}%，"
                f"非线性占 {num(100 * s['rest_share'], 0)}%")
    return out + "。"


def mean_curve(variant):
    """Validation loss at each evaluation, averaged over the variant's seeds: [(tokens, loss), ...]."""
    histories = variant["histories"]
    points = []
    for i, first in enumerate(histories[0]):
        points.append((first["tokens"], mean([h[i]["val_loss"] for h in histories])))
    return points


def still_learning(data):
    """Per variant: how much its validation loss fell over the last evaluation interval, and
    whether it is still falling. With several seeds the test is within each run, so the seeds'
    different levels cancel: every seed fell, and the mean fall is larger than the spread of the
    seeds' falls. A single run has no such spread; its fall must beat the comparison's noise floor."""
    floors = {r["name"]: r["floor"] for r in comparisons(data)[1]}
    out = {}
    for v in data["variants"]:
        curve = mean_curve(v)
        if len(curve) < 2:
            continue
        (t0, a), (t1, b) = curve[-2], curve[-1]
        falls = [h[-2]["val_loss"] - h[-1]["val_loss"] for h in v["histories"]]
        spread_of_falls = spread(falls)
        if spread_of_falls is None:
            still, noise = a - b > floors[v["name"]], floors[v["name"]]
        else:
            still, noise = min(falls) > 0 and a - b > spread_of_falls, spread_of_falls
        out[v["name"]] = {"from": a, "to": b, "drop": a - b, "tokens": t1 - t0, "runs": len(falls),
                          "every_seed_fell": min(falls) > 0, "noise": noise, "still": still}
    return out


def curve_sentences(data):
    learning = still_learning(data)
    base = learning.get("baseline")
    out = []
    for v in data["variants"]:
        s = learning.get(v["name"])
        if s is None:
            continue
        if s["drop"] <= 0:
            tail = f"最后 {num(s['tokens'])} 个 token 里验证集损失从 {num(s['from'], 3)} 变到 {num(s['to'], 3)}，没有再降"
        else:
            tail = f"最后 {num(s['tokens'])} 个 token 里验证集损失从 {num(s['from'], 3)} 降到 {num(s['to'], 3)}（降了 {num(s['drop'], 3)}"
            if v["name"] != "baseline" and base and base["drop"] > 0:
                tail += f"，是基线同一段的 {num(s['drop'] / base['drop'], 1)} 倍"
            tail += "）"
        if s["runs"] == 1:
            test = (f"比噪声底线 {num(s['noise'], 3)} 还大" if s["still"] else f"不到噪声底线 {num(s['noise'], 3)}")
        elif s["still"]:
            test = f"{s['runs']} 个种子在这一段都在降，降幅彼此只差 {num(s['noise'], 3)}，小于平均降幅"
        elif not s["every_seed_fell"]:
            test = f"{s['runs']} 个种子里有的在这一段已经不降了"
        else:
            test = f"{s['runs']} 个种子的降幅彼此相差 {num(s['noise'], 3)}，不比平均降幅小"
        if s["still"]:
            judge = "到训练结束它仍在进步，这个训练量对它不够，它还没学完"
        else:
            judge = "在这个学习率日程的末尾，它已经基本不再进步"
        out.append(f"{label(v)}：{tail}；{test}：{judge}。")
    return out


def curves(data):
    """SVG polylines of the mean validation curves, on a shared loss axis."""
    series = [(v, mean_curve(v)) for v in data["variants"]]
    losses = [loss for _, c in series for _, loss in c]
    ax = axis(losses)
    t_max = max(t for _, c in series for t, _ in c)

    def xy(t, loss):
        return (CURVE_W * t / t_max, CURVE_H * (ax["hi"] - loss) / (ax["hi"] - ax["lo"]))

    lines = []
    for k, (v, c) in enumerate(series):
        pts = [xy(t, loss) for t, loss in c]
        end = pts[-1]
        lines.append({"name": v["name"], "label": label(v), "index": k,
                      "points": " ".join(f"{fixed(x)},{fixed(y)}" for x, y in pts),
                      "end_x": round(end[0], 1), "end_y": round(end[1], 1),
                      "end": num(c[-1][1], 3)})
    ticks = [{"y": round(xy(0, t)[1], 1), "label": num(t, 1)} for t in ax["ticks"] if ax["lo"] <= t <= ax["hi"]]
    summary = "；".join(f"{ln['label']} 结束时 {ln['end']}" for ln in lines)
    return {"w": CURVE_W, "h": CURVE_H, "lines": lines, "ticks": ticks, "tokens": num(t_max),
            "summary": f"各模型验证集损失随训练 token 数下降的曲线（多个种子取平均）：{summary}。"}


def page_params(params):
    """What the page carries for the browser's calls: each variant with only what the chart reads
    (its curves as tokens and validation loss), not the export's full histories."""
    data = params.get("data")
    if data is None:
        return params
    keep = ("name", "description", "n_layer", "params", "seeds", "val_losses")
    variants = []
    for v in data["variants"]:
        kept = {k: v[k] for k in keep}
        kept["histories"] = [[{"tokens": e["tokens"], "val_loss": e["val_loss"]} for e in h] for h in v["histories"]]
        variants.append(kept)
    shipped = dict(data)
    shipped["variants"] = variants
    out = dict(params)
    out["data"] = shipped
    return out


def example(facts):
    """The params a page shows this widget with (the widget gallery uses it); None before lab/ exports."""
    return {"data": facts["real"]["ablation"]} if facts.get("real") else None


def view(params):
    data = params["data"]
    if data is None:
        raise ValueError("the ablation chart needs data=... (data/real-model/ablation.json via facts.real)")
    losses = [x for v in data["variants"] for x in v["val_losses"]]
    ax = axis(losses)
    base_v = baseline_of(data)
    base, rows = comparisons(data)
    by_name = {r["name"]: r for r in rows}
    chart = []
    for v in data["variants"]:
        r = by_name[v["name"]]
        chart.append({
            "name": v["name"], "label": r["label"], "params": num(v["params"]),
            "dots": [{"x": position(x, ax), "value": num(x, 3), "seed": s} for x, s in zip(v["val_losses"], v["seeds"])],
            "mean": {"x": position(r["mean"], ax), "value": num(r["mean"], 3)},
            "perplexity": num(perplexity(r["mean"]), 0),
            "runs": len(v["val_losses"]),
            "gap": "" if v["name"] == "baseline" else f"{'+' if r['gap'] > 0 else ''}{num(r['gap'], 3)}",
        })
    selected = params.get("selected") or "baseline"
    sel = by_name[selected]
    sel_losses = next(v for v in data["variants"] if v["name"] == selected)["val_losses"]
    detail = (f"{sel['label']}（{num(sel['params'])} 个参数）：验证集损失 " + "、".join(num(x, 3) for x in sel_losses)
              + f"（平均 {num(sel['mean'], 3)}，困惑度 {num(perplexity(sel['mean']), 0)}）"
              + ("" if selected == "baseline" else
                 f"；比基线平均 {num(base, 3)} {'高' if sel['gap'] > 0 else '低'} {num(abs(sel['gap']), 3)}，"
                 f"这组比较的噪声底线 {num(sel['floor'], 3)}"))
    base_vals = base_v["val_losses"]
    return {
        "params": {"selected": selected},
        "title": params.get("title") or PARAMS["title"],
        "axis": {"ticks": [{"x": position(t, ax), "label": num(t, 2 if ax["step"] < 0.1 else 1)} for t in ax["ticks"]]},
        "band": {"left": position(min(base_vals), ax),
                 "width": round(position(max(base_vals), ax) - position(min(base_vals), ax), 3),
                 "label": f"基线 {len(base_vals)} 次重跑的范围 {num(min(base_vals), 3)}–{num(max(base_vals), 3)}"
                          f"（极差 {num(max(base_vals) - min(base_vals), 3)}）"},
        "chart": chart,
        "count": len(chart),
        "readings": params.get("readings", True) is not False,
        "sentences": sentences(data),
        "curves": curves(data),
        "curve_sentences": curve_sentences(data),
        "metric": data["metric"],
        "references": {"unigram": num(data["references"]["unigram"], 2), "bigram": num(data["references"]["bigram"], 2),
                       "unigram_ppl": num(perplexity(data["references"]["unigram"]), 0),
                       "bigram_ppl": num(perplexity(data["references"]["bigram"]), 0)},
        "date": data["date"],
        "tokens": num(data["tokens_per_run"]),
        "out": {"detail": detail},
        "rows": {v["name"]: {"data-selected": "true" if v["name"] == selected else "false"} for v in data["variants"]},
    }


def select(params):
    return view(params)
