"""residual-evidence: what our own model's residual experiment measured, as two charts and
their reading: the residual stream's RMS after each write of the trained baseline beside
two predictions, and the gradient's size at every block's input at step 0, with and
without skips. Every sentence is chosen by the numbers (data: facts.residual.evidence).
Standard library only; the view draws nothing new in the browser (static charts).
"""
import math

from numfmt import num

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


def y_of(v, ax):
    if ax.get("log"):
        return round(H * (ax["hi"] - math.log10(v)) / (ax["hi"] - ax["lo"]), 1)
    return round(H * (ax["hi"] - v) / (ax["hi"] - ax["lo"]), 1)


def line(xs, ys, x_max, ax):
    return " ".join(f"{round(W * x / x_max, 1)},{y_of(y, ax)}" for x, y in zip(xs, ys))


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


def gradient_reading(g, with_skip, without):
    a, b = g[with_skip], g[without]
    out = (f"{a['n_layer']} 层：有残差时，各块入口处的梯度大小最多相差 {num(a['max_over_min'], 1)} 倍"
           f"（第 1 块是最后一块的 {num(a['first_over_last'], 1)} 倍）；去掉残差，最多相差 {num(b['max_over_min'], 1)} 倍"
           f"（第 1 块是最后一块的 {num(b['first_over_last'], 1)} 倍）")
    if b["max_over_min"] > 2 * a["max_over_min"]:
        out += "：去掉残差后，一层收到多大的学习信号，强烈取决于它在第几层"
        if b["first_over_last"] > 1:
            out += ("，而且是越靠前越大——和组件里随机小网络「越往前越小」的方向相反。我们的模型每层入口都做了归一化；"
                    "去掉残差，每层读到的只是上一层很小的写入，归一化把它放大，梯度也跟着被放大")
    elif b["max_over_min"] * 2 < a["max_over_min"]:
        out += "：这组数据里，去掉残差反而让各层的梯度更均匀"
    else:
        out += "：两者在这组数据里差别不大"
    return out + "。"


def mean(values):
    return sum(values) / len(values)


def depth_reading(variants, floor):
    """Does going from 4 to 8 layers help, with and without skips? Gaps beyond `floor` (the
    baseline's seed range) count; smaller ones are called noise."""
    def gap(deep, shallow):
        d = mean(variants[deep]["val_losses"]) - mean(variants[shallow]["val_losses"])
        if d < -floor:
            return f"验证集损失降了 {num(-d, 3)}（超过噪声底线 {num(floor, 3)}）"
        if d > floor:
            return f"验证集损失反而升了 {num(d, 3)}（超过噪声底线 {num(floor, 3)}）"
        return f"验证集损失只变了 {num(d, 3)}，在噪声底线 {num(floor, 3)} 以内"
    deep, base = variants["deep_8l"], variants["baseline"]
    out = (f"从 {base['n_layer']} 层加深到 {deep['n_layer']} 层：有残差时，{gap('deep_8l', 'baseline')}；"
           f"去掉残差时，{gap('deep_8l_no_residual', 'no_residual')}。")
    val_deep, val_base = mean(deep["val_losses"]), mean(base["val_losses"])
    train_deep, train_base = mean(deep["train_losses"]), mean(base["train_losses"])
    if val_deep - val_base >= -floor and train_deep < train_base - floor:
        out += (f"加深之后，训练集上的损失从 {num(train_base, 3)} 降到 {num(train_deep, 3)}，验证集上却没有跟着降："
                f"多出来的层主要用来把训练文本记得更牢，而不是学到能推广到新章回的规律。")
    elif abs(val_deep - val_base) <= floor and min(val_deep - train_deep, val_base - train_base) > floor:
        out += (f"两者在训练集上的损失（{num(train_base, 3)}、{num(train_deep, 3)}）都远低于验证集上的"
                f"（{num(val_base, 3)}、{num(val_deep, 3)}）：训练文本就这么多，"
                f"{base['n_layer']} 层已经在背它了，多出来的层在这个数据量下没有更多能推广的东西可学。")
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
    grads = {g["variant"]: g for g in data["gradients"]}
    g_ax = log_axis([v for g in grads.values() for v in g["norms"]])
    deepest = max(g["n_layer"] for g in grads.values())
    gradient = {"ticks": [{"y": y_of(t, g_ax), "label": num(t) if t >= 1 else f"{t:g}"} for t in g_ax["ticks"]],
                "lines": [{"key": name, "label": NAMES.get(name, name), "index": k,
                           "points": line([b - 1 for b in range(1, g["n_layer"] + 1)], g["norms"],
                                          deepest - 1, g_ax)}
                          for k, (name, g) in enumerate(grads.items())],
                "x_ticks": [{"x": round(W * (b - 1) / (deepest - 1), 1), "label": str(b)}
                            for b in range(1, deepest + 1)]}
    pairs = [("baseline", "no_residual"), ("deep_8l", "deep_8l_no_residual")]
    return {
        "stream": stream, "gradient": gradient, "w": W, "h": H,
        "stream_reading": stream_reading(trained),
        "gradient_readings": [gradient_reading(grads, a, b) for a, b in pairs if a in grads and b in grads],
        "summary": {"stream": f"残差流 RMS（相对嵌入）随写入次数：实测 {num(trained['relative'][-1], 2)}，"
                              f"√(写入次数 + 1) = {num(trained['sqrt_rule'][-1], 2)}，独立写入 {num(trained['independent'][-1], 2)}",
                    "gradient": "各块入口处的梯度大小（对数刻度）：" + "；".join(
                        f"{NAMES.get(k, k)} 从第 1 块的 {num(g['norms'][0], 2)} 到最后一块的 {num(g['norms'][-1], 2)}"
                        for k, g in grads.items())},
    }


def example(facts):
    """The params a page shows this widget with (the widget gallery uses it); None before lab/ exports."""
    return {"data": facts["residual"]["evidence"]} if facts.get("residual") else None
