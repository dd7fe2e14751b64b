"""residual-evidence: what our own model's residual experiment measured, as two charts and
their reading: the residual stream's RMS after each write of the trained baseline beside
two predictions, and the norm of each block's parameter gradient at step 0, with and
without skips. Every sentence is chosen by the numbers (data: facts.residual.evidence); the loss readings
(collapse_reading, depth_reading: facts.residual.variants, whose baseline row carries every seed
the baseline has) by the seeds protocol v2 (widgets/common/seeds.py), at one step over every run
of the experiment that reached it.
Standard library only, in the subset every runtime runs; the view draws nothing new in the
browser (static charts).
"""
import math

from numfmt import fixed, num
import seeds

PARAMS = {"data": None}
W, H = 600, 200
NAMES = {"baseline": "基线（4 层，有残差）", "no_residual": "4 层，去掉残差",
         "deep_8l": "8 层，有残差", "deep_8l_no_residual": "8 层，去掉残差"}
SAME = 1.1  # measured within 10% of a prediction counts as agreeing with it


def linear_axis(values):
    """0 .. a round top above max(values), with ticks. linear_axis([0.4, 2.6])["ticks"] -> [0, 1, 2, 3]"""
    top = max(values)
    step = next(s for s in (0.5, 1, 2, 5, 10, 20, 50, 100) if top / s <= 6)
    hi = step * math.ceil(top / step)
    return {"lo": 0.0, "hi": hi, "ticks": [round(k * step, 6) for k in range(int(round(hi / step)) + 1)]}


def log_axis(values):
    """Powers of ten around the values. log_axis([0.5, 20])["ticks"] -> [0.1, 1, 10, 100]"""
    lo, hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
    if hi == lo:
        hi += 1
    return {"lo": lo, "hi": hi, "ticks": [10.0 ** k for k in range(lo, hi + 1)], "log": True}


def power_label(k):
    """10**k as a tick reads: power_label(2), power_label(-2), power_label(-5) -> ('100', '0.01', '1e-05')"""
    if k >= 0:
        return num(10 ** k)
    return "0." + "0" * (-k - 1) + "1" if k >= -4 else "1e-%02d" % -k


def y_of(v, ax):
    if ax.get("log"):
        return round(H * (ax["hi"] - math.log10(v)) / (ax["hi"] - ax["lo"]), 1)
    return round(H * (ax["hi"] - v) / (ax["hi"] - ax["lo"]), 1)


def line(xs, ys, x_max, ax):
    return " ".join(f"{fixed(W * x / x_max)},{fixed(y_of(y, ax))}" for x, y in zip(xs, ys))


def stream_reading(s):
    n = s["writes"][-1]
    rel, rule, ind = s["relative"][-1], s["sqrt_rule"][-1], s["independent"][-1]
    writes = s["write_relative"][1:]
    if rel > ind * SAME:
        how = "实测比「互相独立」还大：各层的写入方向彼此相关，在互相加强"
    elif rel < ind / SAME:
        how = "实测比「互相独立」小：后面的写入有一部分在抵消前面写进去的内容"
    else:
        how = "实测和「互相独立」的预测相差不到一成"
    size = ("各次写入本身只有嵌入的 " if max(writes) < 1 else "各次写入本身是嵌入的 ") + \
        f"{num(min(writes), 2)}–{num(max(writes), 2)} 倍"
    return (f"训练好的基线：嵌入之后写入 {n} 次，残差流的 RMS 是嵌入时的 {num(rel, 2)} 倍。"
            f"教科书的估算（每次写入和嵌入一样大、互相独立）是 √({n} + 1) = {num(rule, 2)} 倍；{size}，"
            f"按这些实测大小、假设互相独立，应是 {num(ind, 2)} 倍。{how}。")


def block1_ratios(g):
    """[(depth, block 1's step-0 parameter gradient without skips / with skips), ...] for each depth measured."""
    pairs = [(a, b) for a, b in (("baseline", "no_residual"), ("deep_8l", "deep_8l_no_residual")) if a in g and b in g]
    return [(g[a]["n_layer"], g[b]["norms"][0] / g[a]["norms"][0]) for a, b in pairs]


def no_skip_gradients_larger(g):
    """Did removing the skips give block 1 a larger step-0 gradient at every depth? (The page's
    prose says 'the gradient did not vanish, it grew' only when this holds.)"""
    return min(r for _, r in block1_ratios(g)) > 1


def no_skip_on_unigram(variants, references):
    """Do the no-skip models end on the unigram line: within one run's 95 % interval of it at
    their last step (t(0.975, df) times the pooled noise there)?"""
    names = [n for n in ("no_residual", "deep_8l_no_residual") if n in variants]
    return max(off_unigram(variants, n, references) for n in names) <= unigram_width(variants, last_step(variants["baseline"]))


def gradient_reading(g):
    """Step 0, block 1's parameter gradient with and without skips, at each depth measured: did
    removing the skips starve the front of the stack?"""
    parts = [f"{n} 层时是 {num(r, 1)} 倍" for n, r in block1_ratios(g)]
    ratios = [r for _, r in block1_ratios(g)]
    out = "训练开始时（第 0 步），去掉残差后第 1 块的参数收到的梯度，是有残差时的：" + "，".join(parts) + "。"
    if min(ratios) > 1:
        out += ("梯度不但没有消失，反而更大。一个原因是我们的模型每层入口都做了归一化：去掉残差，每层读到的只是上一层很小的写入，"
                "归一化把它放大，梯度也跟着放大；训练用的 AdamW 又会把每个参数的更新步长拉到相近的大小。"
                "所以让它训不动的不是梯度变小了（少了什么，见下面只切断梯度捷径的那个对照）。")
    elif max(ratios) < 0.1:
        out += "去掉残差后，前面的层确实几乎收不到学习信号。"
    else:
        out += "两者在同一个量级上：梯度没有消失。"
    return out


def loss3(x):
    """A loss as the page writes it. loss3(4.8431) -> '4.843'"""
    return num(x, 3)


def last_step(v):
    """The last evaluation every run of a variant reached (a run cut short stops there)."""
    return min(h[-1]["step"] for h in v["histories"])


def arms(variants, step, key="val_loss"):
    """The experiment's arms at `step` ({arm: {seed: loss}}), in the export's order: every variant
    with a run that reached it, each over its seeds (the baseline's row has every seed it has)."""
    out = {}
    for name in ORDER + sorted(n for n in variants if n not in ORDER):
        if name in variants:
            a = seeds.history_by_seed(variants[name], step, key)
            if a:
                out[name] = a
    return out


ORDER = ["baseline", "no_residual", "deep_8l", "deep_8l_no_residual"]


def reading(variants, step, key="val_loss"):
    """seeds.read over arms(variants, step, key): the health check and the pooled noise at `step`."""
    return seeds.read(arms(variants, step, key))


def contrast(variants, a, b, step, key="val_loss"):
    """Arm a against arm b at `step` by seeds protocol v2 (seeds.contrast, plus the reading)."""
    r = reading(variants, step, key)
    c = seeds.contrast(r, a, b)
    c["reading"] = r
    return c


def unigram_width(variants, step, n=1):
    """The 95 % half-width of an n-run mean against the unigram line at `step` (the line itself has no
    noise): t(0.975, df) * s / sqrt(n); None without a noise estimate."""
    r = reading(variants, step)
    return seeds.t_quantile(r["df"]) * r["sd"] / n ** 0.5 if r["sd"] is not None else None


def off_unigram(variants, name, references):
    """How far a variant's mean final validation loss sits from the unigram."""
    return abs(mean(variants[name]["val_losses"]) - references["unigram"])


def failed_text(r):
    """「（健康检查认出的失败训练：基线种子 4，5.228，不计入）」, or '' when none failed."""
    runs = [f"{NAMES.get(a, a) if a != 'baseline' else '基线'}种子 {s}，{loss3(r['failed'][a][s])}"
            for a in sorted(r["failed"]) for s in sorted(r["failed"][a])]
    return f"（失败的训练不计入：{'；'.join(runs)}）" if runs else ""


def collapse_reading(variants, references):
    """Where the no-skip models end, against the unigram (within one run's 95 % interval of it
    counts as on it), each against the baseline of its own depth by seeds protocol v2, and how
    alike their curves are (inside the interval at every evaluation both reached)."""
    names = [n for n in ("no_residual", "deep_8l_no_residual") if n in variants]
    uni = references["unigram"]
    finals = [mean(variants[n]["val_losses"]) for n in names]
    layers = "、".join(f"{variants[n]['n_layer']} 层" for n in names)
    counts = [len(variants[n]["seeds"]) for n in names]
    runs = f"各 {counts[0]} 个种子" if len(set(counts)) == 1 else "、".join(f"{c} 个种子" for c in counts)
    out = f"去掉残差的 {layers}模型（{runs}），验证集损失最后是 " + "、".join(num(f, 3) for f in finals)
    on = no_skip_on_unigram(variants, references)
    if on:
        out += (f"，和只数词频、完全不看上下文的 unigram（{num(uni, 3)}）最多只差 {num(max(abs(f - uni) for f in finals), 3)}"
                "：它们对每个位置都给出几乎同一个分布，既没用上前文，也没用上当前这个 token。")
    else:
        out += f"；unigram 是 {num(uni, 3)}。"
    base = variants["baseline"]
    for n in names:  # against the model of the same depth with skips: one change at a time
        same = [m for m in ("baseline", "deep_8l") if m in variants and variants[m]["n_layer"] == variants[n]["n_layer"]]
        if not same:
            continue
        pair = same[0]
        step = min(last_step(variants[n]), last_step(variants[pair]))
        c = contrast(variants, n, pair, step)
        if c["gap"] is None:
            continue
        at = "" if step == last_step(base) else f"只能在第 {num(step)} 步比（有残差的那次训练到那里停下）"
        if pair == "baseline":
            out += (f"{variants[n]['n_layer']} 层去掉残差和 {variants[pair]['n_layer']} 层基线的平均比{at}，"
                    f"{seeds.say(c)}{failed_text(c['reading'])}。")
        else:
            out += f"{variants[n]['n_layer']} 层去掉残差和 {variants[pair]['n_layer']} 层有残差{at}，{seeds.say(c)}。"
    if len(names) == 2 and on:
        h1, h2 = (variants[n]["histories"][0] for n in names)
        steps = [a["step"] for a, b in zip(h1, h2) if a["step"] == b["step"]]
        alike = all(contrast(variants, names[1], names[0], s)["status"] == "within" for s in steps)
        if alike:
            gap = max(abs(a["val_loss"] - b["val_loss"]) for a, b in zip(h1, h2))
            top = math.ceil(round(gap * 1000, 6)) / 1000  # "at most": rounded up (float noise aside), never below the gap
            out += (f"两个模型的训练曲线在每个检查点相差不超过 {num(top, 3)}，每一步都在误差之内：多出来的 4 层没有带来任何不同——"
                    "它们卡在同一个平凡的答案上。")
    return out


def mean(values):
    return sum(values) / len(values)


def depth_reading(variants, references):
    """Does going from 4 to 8 layers help with skips? (Without skips both sit at the same trivial
    answer, collapse_reading's point, so that pair says nothing about depth.) Read by seeds
    protocol v2 against the baseline, on validation and on training loss, at the deep run's last
    step (a run cut short is read where it stopped, beside the baseline there)."""
    deep, base = variants["deep_8l"], variants["baseline"]
    fmt = loss3
    step, full = last_step(deep), last_step(base)
    at = f"，那次训练到第 {num(step)} 步停下，和基线在同一步比" if step < full else ""
    val = contrast(variants, "deep_8l", "baseline", step)
    train = contrast(variants, "deep_8l", "baseline", step, "train_loss")
    r = val["reading"]
    checked = failed_text(r) or (f"（这一步的健康检查没有认出失败的训练，基线 {val['n_b']} 次都计入）" if step < full else "")
    out = (f"有残差时，从 {base['n_layer']} 层加深到 {deep['n_layer']} 层（参数从 {num(base['params'])} 到 {num(deep['params'])}{at}），"
           f"验证集损失 {fmt(val['mean_a'])}，基线的平均 {fmt(val['mean_b'])}{checked}；和基线比，{seeds.say(val)}。"
           f"训练集上的损失（最后 50 批的平均）{fmt(train['mean_a'])}，基线 {fmt(train['mean_b'])}；{seeds.say(train)}。")
    if val["measured"]:
        out += ("在这个数据量和训练长度下，多出来的层有用。" if val["direction"] < 0 else
                "多出来的层在这个训练长度下反而拖了后腿：更深的模型不一定在同样的步数里学得更快。")
    elif val["status"] == "one_seed":
        out += ("这一个种子里更深的模型更低，要第二个种子确认。" if val["gap"] < 0 else
                "这一个种子里更深的模型反而落后，要第二个种子确认。")
    else:
        out += f"在第 {num(step)} 步，{deep['n_layer']} 层和 {base['n_layer']} 层分不出"
        left = references["unigram"] - val["mean_a"]
        width = unigram_width(variants, step)
        out += (f"；能说的是：有残差时，{deep['n_layer']} 层训得动，比 unigram 低了 {fmt(left)}（一次训练的误差 ±{fmt(width)}），"
                "没有像去掉残差那样卡住。" if width is not None and left > width else "。")
    return out


def view(params):
    data = params["data"]
    if data is None:
        raise ValueError("residual-evidence needs data=facts.residual.evidence (lab's residual export)")
    trained = next(s for s in data["stream"] if s["variant"] == "baseline" and s["state"] == "trained")
    s_ax = linear_axis(trained["relative"] + trained["sqrt_rule"] + trained["independent"])
    n = trained["writes"][-1]
    stream = {"ticks": [{"y": y_of(t, s_ax), "label": num(t)} for t in s_ax["ticks"]],
              "lines": [{"key": k, "points": line(trained["writes"], trained[k], n, s_ax)}
                        for k in ("relative", "sqrt_rule", "independent")],
              "x_ticks": [{"x": round(W * w / n, 1), "label": str(w)} for w in trained["writes"]]}
    grads = [(g["variant"], g) for g in data["gradients"]]  # in the export's order (MicroPython's dicts keep none)
    g_ax = log_axis([v for _, g in grads for v in g["norms"]])
    deepest = max(g["n_layer"] for _, g in grads)
    gradient = {"ticks": [{"y": y_of(10.0 ** k, g_ax), "label": power_label(k)} for k in range(g_ax["lo"], g_ax["hi"] + 1)],
                "lines": [{"key": name, "label": NAMES.get(name, name), "index": k,
                           "points": line([b - 1 for b in range(1, g["n_layer"] + 1)], g["norms"],
                                          deepest - 1, g_ax)}
                          for k, (name, g) in enumerate(grads)],
                "x_ticks": [{"x": round(W * (b - 1) / (deepest - 1), 1), "label": str(b)}
                            for b in range(1, deepest + 1)]}
    return {
        "stream": stream, "gradient": gradient, "w": W, "h": H,
        "stream_reading": stream_reading(trained),
        "summary": {"stream": f"残差流 RMS（相对嵌入）随写入次数：实测 {num(trained['relative'][-1], 2)}，"
                              f"√(写入次数 + 1) = {num(trained['sqrt_rule'][-1], 2)}，独立写入 {num(trained['independent'][-1], 2)}",
                    "gradient": "第 0 步每一块参数梯度的范数（对数刻度）：" + "；".join(
                        f"{NAMES.get(k, k)} 从第 1 块的 {num(g['norms'][0], 2)} 到最后一块的 {num(g['norms'][-1], 2)}"
                        for k, g in grads)},
    }


def example(facts):
    """The params a page shows this widget with (the widget gallery uses it); None before lab/ exports."""
    return {"data": facts["residual"]["evidence"]} if facts.get("residual") else None
