"""Our model's ablations (the FFN experiment, the residual experiment) as a chart: validation loss
per variant and seed, each variant's gap to the baseline, and the learning curves.

The chart is HTML whose positions are percentages computed here. What the widget says about a gap
is read by seeds protocol v2 (widgets/common/seeds.py) over every variant of the export at the
compared variant's last evaluation: the health check's failed runs are drawn apart and left out of
the means, and a gap is written 「差 ± h」 with the protocol's verdict. The lessons' own readings of
these runs (splits, the fit, the runs over time) are in their fact modules (course/facts/ffn.py for
第 1 课), not here. Standard library only, in the subset every runtime runs (CPython, Pyodide,
MicroPython).
"""
import math

from numfmt import fixed, num, signed
from seeds import contrast, history_by_seed, read, say

# readings=False leaves the sentences to the page (a lesson that reads the chart in its own prose).
PARAMS = {"data": None, "selected": "baseline", "title": "去掉 FFN 或它的非线性会怎样", "readings": True}

LABELS = {
    "baseline": "基线：{n} 层，注意力 + SwiGLU FFN",
    "linear_ffn": "线性 FFN：{n} 层，去掉 SiLU 和门控乘法",
    "no_ffn": "去掉 FFN：{n} 层，只剩注意力",
    "attn_only_12l": "纯注意力 {n} 层，参数与基线对齐",
    "no_residual": "{n} 层，去掉残差",
    "deep_8l": "加深到 {n} 层，有残差",
    "deep_8l_no_residual": "加深到 {n} 层，去掉残差",
}
SHORT = {"baseline": "基线", "linear_ffn": "线性 FFN", "no_ffn": "去掉 FFN", "attn_only_12l": "纯注意力",
         "no_residual": "去掉残差", "deep_8l": "8 层有残差", "deep_8l_no_residual": "8 层去掉残差"}
CURVE_W, CURVE_H = 600, 220  # the learning-curve SVG's viewBox
KEY = "val_loss"  # the chart's loss


def label(variant):
    text = LABELS.get(variant["name"], variant["name"]).format(n=variant["n_layer"])
    stop = stopped_at(variant)
    return text + (f"（只训练到第 {num(stop)} 步）" if stop else "")


def last_step(variant):
    """The step a variant's runs ended at (their histories' last evaluation)."""
    return variant["histories"][0][-1]["step"] if variant.get("histories") else None


def stopped_at(variant, steps=None):
    """The step a run cut short ended at, or None for a run of the full schedule (`steps`, or the
    variant's own `full_steps` when it says; the FFN export marks none)."""
    full = steps or variant.get("full_steps")
    if not full:
        return None
    step = last_step(variant)
    return step if step and step < full else None


def short(name):
    """A variant's short name for lists. short("linear_ffn") -> '线性 FFN'"""
    return SHORT.get(name, name)


def mean(values):
    values = list(values)
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


def by_name(data):
    return {v["name"]: v for v in data["variants"]}


def baseline_of(data):
    return by_name(data)["baseline"]


def reading_at(data, step):
    """seeds protocol v2 over every variant that reached `step`, on validation loss."""
    arms = {}
    for v in data["variants"]:
        at = history_by_seed(v, step, KEY)
        if at:
            arms[v["name"]] = at
    return read(arms)


def row_reading(data, name):
    """One variant at its last evaluation, by v2 over every variant there: its runs {seed: loss},
    its failed runs, the mean of its healthy runs, the check's threshold and the arm's median, and
    (not for the baseline) its contrast with the baseline at that step."""
    v = by_name(data)[name]
    step = last_step(v)
    r = reading_at(data, step)
    runs = history_by_seed(v, step, KEY)
    healthy = r["healthy"].get(name) or runs
    values = sorted(runs.values())
    n = len(values)
    return {"step": step, "runs": runs, "failed": r["failed"].get(name, {}), "threshold": r["threshold"],
            "median": (values[n // 2] + values[(n - 1) // 2]) / 2, "mean": mean(healthy.values()),
            "healthy": healthy, "split": name in r["split"],
            "contrast": None if name == "baseline" else contrast(r, name, "baseline")}


def failed_clause(name, row):
    """The health check's verdict on a variant's failed runs, or '': 「基线种子 4 的 5.228 比这一组的
    中位数 4.861 高 0.367，超过健康检查的界限 0.102：失败的训练，不计入平均和比较」."""
    bad = sorted(row["failed"].items())
    if not bad:
        return ""
    limit = f"健康检查的界限 {num(row['threshold'], 3)}：失败的训练，不计入平均和比较"
    if len(bad) == 1:
        s, x = bad[0]
        return (f"{short(name)}种子 {s} 的 {num(x, 3)} 比这一组的中位数 {num(row['median'], 3)} 高 "
                f"{num(x - row['median'], 3)}，超过{limit}")
    parts = "、".join(f"种子 {s} 的 {num(x, 3)} 高 {num(x - row['median'], 3)}" for s, x in bad)
    return f"{short(name)}比这一组的中位数 {num(row['median'], 3)}：{parts}，都超过{limit}"


def gap_phrase(row):
    """The chart's gap to the baseline: 「+0.248 ± 0.034」 (and the step, for a run cut short)."""
    c = row["contrast"]
    if c is None or c["gap"] is None:
        return ""
    return signed(c["gap"], 3) + (f" ± {num(c['half_width'], 3)}" if c["half_width"] is not None else "")


def size_phrase(v, base):
    if v["params"] == base["params"]:
        return f"{num(v['params'])} 个参数，和基线一个不差"
    if v["name"] == "no_ffn":
        return f"{num(v['params'])} 个参数"
    ratio = v["params"] / base["params"] - 1
    return f"{num(v['params'])} 个参数，比基线{'多' if ratio > 0 else '少'} {num(abs(100 * ratio), 2)}%"


def against(row):
    """「和基线比（第 400 步），高 0.080 ± 0.038（…）：测到」 for a row's contrast."""
    c = row["contrast"]
    return f"和基线比{step_note(row)}，{say(c)}"


def step_note(row):
    return f"（第 {num(row['step'])} 步）" if row.get("stopped") else ""


def rows_of(data):
    """row_reading for every variant, in the export's order, with its stop marked."""
    out = {}
    for v in data["variants"]:
        r = row_reading(data, v["name"])
        r["stopped"] = stopped_at(v) is not None
        out[v["name"]] = r
    return out


def sentences(data, rows=None):
    """The chart read in words (shown with readings=True): the failed runs, then each variant
    against the baseline by v2, with where it stands against the count-based references."""
    rows = rows or rows_of(data)
    base = baseline_of(data)
    bigram, unigram = data["references"]["bigram"], data["references"]["unigram"]
    out = []
    for v in data["variants"]:
        clause = failed_clause(v["name"], rows[v["name"]])
        if clause:
            out.append(clause + "。")
    for v in data["variants"]:
        if v["name"] == "baseline":
            continue
        row = rows[v["name"]]
        c = row["contrast"]
        m = row["mean"]
        text = (f"{label(v)}（{size_phrase(v, base)}，{len(row['runs'])} 个种子）：验证集损失 {num(m, 3)}"
                f"（困惑度 {num(perplexity(m), 0)}）；{against(row)}")
        if c["measured"]:
            text += "，确实更差" if c["direction"] > 0 else "，反而比基线好"
        if m > bigram and unigram - m < m - bigram:
            text += (f"；它离只看词频、不看前文的 unigram（{num(unigram, 2)}）比离插值 bigram（{num(bigram, 2)}）"
                     f"还近，说明在这个训练量下它几乎没有用上前文")
        elif m > bigram:
            text += (f"；它甚至不如只看前一个 token 的插值 bigram（{num(bigram, 2)}），"
                     f"说明在这个训练量下它还没学到多少超出相邻统计的东西")
        out.append(text + "。")
    return out


def healthy_histories(v, row):
    """The histories of a variant's runs the health check passed at its last evaluation."""
    return [h for s, h in zip(v["seeds"], v["histories"]) if s in row["healthy"]]


def mean_curve(histories):
    """Validation loss at each evaluation, averaged over the runs: [(tokens, loss), ...]."""
    return [(first["tokens"], mean(h[i][KEY] for h in histories)) for i, first in enumerate(histories[0])]


def still_learning(data, rows=None):
    """Per variant, over its healthy runs: how much the mean validation loss fell over the last
    evaluation interval, and whether it is still falling. The test is within each run, so the runs'
    different levels cancel: every run fell, and the mean fall is larger than the spread of the
    runs' falls. One run has no spread to judge its fall against: "still" is None (it awaits a
    second seed)."""
    rows = rows or rows_of(data)
    out = {}
    for v in data["variants"]:
        hs = healthy_histories(v, rows[v["name"]])
        if not hs or len(hs[0]) < 2:
            continue
        curve = mean_curve(hs)
        (t0, a), (t1, b) = curve[-2], curve[-1]
        falls = [h[-2][KEY] - h[-1][KEY] for h in hs]
        noise = spread(falls)
        still = None if noise is None else (min(falls) > 0 and a - b > noise)
        out[v["name"]] = {"from": a, "to": b, "drop": a - b, "tokens": t1 - t0, "runs": len(falls),
                          "every_seed_fell": min(falls) > 0, "noise": noise, "still": still}
    return out


def curve_sentences(data, rows=None):
    """The learning curves read in words (shown with readings=True)."""
    learning = still_learning(data, rows)
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
        if s["still"] is None:
            judge = "只有 1 个种子，没有别的种子的降幅可比：它是否还在进步，待第二个种子确认"
        elif s["still"]:
            judge = (f"{s['runs']} 个种子在这一段都在降，降幅彼此只差 {num(s['noise'], 3)}，小于平均降幅："
                     "到训练结束它仍在进步，这个训练量对它不够，它还没学完")
        elif not s["every_seed_fell"]:
            judge = f"{s['runs']} 个种子里有的在这一段已经不降了：在这个学习率日程的末尾，它已经基本不再进步"
        else:
            judge = (f"{s['runs']} 个种子的降幅彼此相差 {num(s['noise'], 3)}，不比平均降幅小："
                     "在这个学习率日程的末尾，它已经基本不再进步")
        out.append(f"{label(v)}：{tail}；{judge}。")
    return out


def curves(data, rows=None):
    """SVG polylines of each variant's mean validation curve over its healthy runs, and a thinner
    dashed line for every failed run, on a shared loss axis."""
    rows = rows or rows_of(data)
    series = []
    for k, v in enumerate(data["variants"]):
        row = rows[v["name"]]
        series.append((v, k, False, label(v), mean_curve(healthy_histories(v, row))))
        for s, h in zip(v["seeds"], v["histories"]):
            if s in row["failed"]:
                series.append((v, k, True, f"{short(v['name'])}种子 {s}（失败的训练）",
                               [(e["tokens"], e[KEY]) for e in h]))
    losses = [loss for _, _, _, _, c in series for _, loss in c]
    ax = axis(losses)
    t_max = max(t for _, _, _, _, c in series for t, _ in c)

    def xy(t, loss):
        return (CURVE_W * t / t_max, CURVE_H * (ax["hi"] - loss) / (ax["hi"] - ax["lo"]))

    lines = []
    for v, k, failed, text, c in series:
        pts = [xy(t, loss) for t, loss in c]
        end = pts[-1]
        lines.append({"name": v["name"], "label": text, "index": k, "failed": failed,
                      "points": " ".join(f"{fixed(x)},{fixed(y)}" for x, y in pts),
                      "end_x": round(end[0], 1), "end_y": round(end[1], 1), "end": num(c[-1][1], 3)})
    ticks = [{"y": round(xy(0, t)[1], 1), "label": num(t, 1)} for t in ax["ticks"] if ax["lo"] <= t <= ax["hi"]]
    summary = "；".join(f"{ln['label']} 结束时 {ln['end']}" for ln in lines)
    return {"w": CURVE_W, "h": CURVE_H, "lines": lines, "ticks": ticks, "tokens": num(t_max),
            "summary": (f"各模型验证集损失随训练 token 数下降的曲线（健康的种子取平均"
                        f"{'，失败的训练单独画虚线' if any(ln['failed'] for ln in lines) else ''}）：{summary}。")}


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
        if "full_steps" in v:
            kept["full_steps"] = v["full_steps"]
        kept["histories"] = [[{"step": e["step"], "tokens": e["tokens"], "val_loss": e["val_loss"]} for e in h]
                             for h in v["histories"]]
        variants.append(kept)
    shipped = dict(data)
    shipped["variants"] = variants
    out = dict(params)
    out["data"] = shipped
    return out


def example(facts):
    """The params a page shows this widget with (the widget gallery uses it); None before lab/ exports."""
    return {"data": facts["real"]["ablation"]} if facts.get("real") else None


def detail(data, name, rows):
    """The line under the chart for the selected variant: its runs, the mean of the healthy ones,
    its failed runs, and its gap to the baseline by v2."""
    v = by_name(data)[name]
    row = rows[name]
    losses = "、".join(num(x, 3) + ("（失败）" if s in row["failed"] else "") for s, x in zip(v["seeds"], v["val_losses"]))
    mean_of = f"健康的 {len(row['healthy'])} 次平均 " if row["failed"] else "平均 " if len(v["seeds"]) > 1 else ""
    text = (f"{label(v)}（{num(v['params'])} 个参数）：验证集损失 {losses}"
            f"（{mean_of}{num(row['mean'], 3) + '，' if mean_of else ''}困惑度 {num(perplexity(row['mean']), 0)}）")
    clause = failed_clause(name, row)
    if clause:
        text += "；" + clause
    if row["contrast"] is not None:
        text += "；" + against(row)
    return text


def view(params):
    data = params["data"]
    if data is None:
        raise ValueError("the ablation chart needs data=... (data/real-model/ablation.json via facts.real)")
    losses = [x for v in data["variants"] for x in v["val_losses"]]
    ax = axis(losses)
    rows = rows_of(data)
    base_row = rows["baseline"]
    chart = []
    for v in data["variants"]:
        r = rows[v["name"]]
        chart.append({
            "name": v["name"], "label": label(v), "params": num(v["params"]),
            "dots": [{"x": position(x, ax), "value": num(x, 3), "seed": s, "failed": s in r["failed"]}
                     for x, s in zip(v["val_losses"], v["seeds"])],
            "mean": {"x": position(r["mean"], ax), "value": num(r["mean"], 3)},
            "perplexity": num(perplexity(r["mean"]), 0),
            "runs": len(v["val_losses"]),
            "gap": gap_phrase(r) + step_note(r) if r["contrast"] is not None else "",
        })
    selected = params.get("selected") or "baseline"
    healthy = list(base_row["healthy"].values())
    lo, hi = min(healthy), max(healthy)
    failed_any = any(r["failed"] for r in rows.values())
    return {
        "params": {"selected": selected},
        "title": params.get("title") or PARAMS["title"],
        "axis": {"ticks": [{"x": position(t, ax), "label": num(t, 2 if ax["step"] < 0.1 else 1)} for t in ax["ticks"]]},
        "band": {"left": position(lo, ax), "width": round(position(hi, ax) - position(lo, ax), 3),
                 "label": f"基线健康训练（{len(healthy)} 个种子）的范围 {num(lo, 3)}–{num(hi, 3)}"},
        "failed_any": failed_any,
        "chart": chart,
        "count": len(chart),
        "readings": params.get("readings", True) is not False,
        "sentences": sentences(data, rows),
        "curves": curves(data, rows),
        "curve_sentences": curve_sentences(data, rows),
        "metric": data["metric"],
        "references": {"unigram": num(data["references"]["unigram"], 2), "bigram": num(data["references"]["bigram"], 2),
                       "unigram_ppl": num(perplexity(data["references"]["unigram"]), 0),
                       "bigram_ppl": num(perplexity(data["references"]["bigram"]), 0)},
        "date": data["date"],
        "tokens": num(data["tokens_per_run"]),
        "out": {"detail": detail(data, selected, rows)},
        "rows": {v["name"]: {"data-selected": "true" if v["name"] == selected else "false"} for v in data["variants"]},
    }


def select(params):
    return view(params)
