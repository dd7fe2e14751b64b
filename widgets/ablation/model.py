"""Our model's FFN ablation: validation loss per variant, the 5-seed noise band, and the reading.

The chart is HTML whose positions are percentages computed here; the sentences
under it are decided by the numbers (a gap counts only if it beats the noise
floor), so a retrained model can never leave a false sentence behind.
Standard library only: the same file runs in CPython (build, tests) and Pyodide.
"""
from numfmt import num

PARAMS = {"data": None, "selected": "baseline"}

LABELS = {
    "baseline": "基线：{n} 层，注意力 + FFN",
    "no_ffn": "去掉 FFN：{n} 层，只剩注意力",
    "attn_only_12l": "纯注意力 {n} 层，参数与基线对齐",
}


def label(variant):
    return LABELS.get(variant["name"], variant["name"]).format(n=variant["n_layer"])


def mean(values):
    return sum(values) / len(values)


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


def comparisons(data):
    """Each variant against the baseline mean, in loss and in multiples of the noise floor."""
    variants = data["variants"]
    base = mean(next(v for v in variants if v["name"] == "baseline")["val_losses"])
    base_params = next(v for v in variants if v["name"] == "baseline")["params"]
    floor = data["noise_floor"]["range"]
    out = []
    for v in variants:
        m = mean(v["val_losses"])
        out.append({"name": v["name"], "label": label(v), "params": v["params"], "mean": m, "gap": m - base,
                    "beats_floor": abs(m - base) > floor, "worse": m - base > floor,
                    "params_vs_base": v["params"] / base_params - 1})
    return base, floor, out


def sentences(data):
    """The reading of the chart, one sentence per variant, chosen by the numbers."""
    base, floor, rows = comparisons(data)
    runs = len(data["noise_floor"]["seeds"])
    out = []
    for row in rows:
        if row["name"] == "baseline":
            continue
        size = f"{num(row['params'])} 个参数"
        if row["name"] != "no_ffn":
            size += f"，比基线{'多' if row['params_vs_base'] > 0 else '少'} {num(abs(100 * row['params_vs_base']), 2)}%"
        if not row["beats_floor"]:
            verdict = (f"验证集损失 {num(row['mean'], 3)}，和基线的 {num(base, 3)} 只差 {num(abs(row['gap']), 3)}，"
                       f"没有超出基线 {runs} 次重跑的极差 {num(floor, 3)}：我们的数据分不出两者的高下")
        elif row["worse"]:
            verdict = (f"验证集损失从基线的 {num(base, 3)} 升到 {num(row['mean'], 3)}，高出 {num(row['gap'], 3)}，"
                       f"是噪声底线 {num(floor, 3)} 的 {num(row['gap'] / floor, 1) if floor else '无穷'} 倍：确实更差")
        else:
            verdict = (f"验证集损失从基线的 {num(base, 3)} 降到 {num(row['mean'], 3)}，低了 {num(-row['gap'], 3)}，"
                       f"超出噪声底线 {num(floor, 3)}：反而比基线好")
        bigram = data["references"]["bigram"]
        if row["mean"] > bigram:
            verdict += (f"；它甚至不如只看前一个 token 的插值 bigram（{num(bigram, 2)}），"
                        f"说明在这个训练量下它还没学到多少超出相邻统计的东西")
        out.append(f"{row['label']}（{size}）：{verdict}。")
    return out


def view(params):
    data = params["data"]
    if data is None:
        raise ValueError("the ablation chart needs data=... (data/real-model/ablation.json via facts.real)")
    losses = [x for v in data["variants"] for x in v["val_losses"]]
    ax = axis(losses)
    floor = data["noise_floor"]
    base, _, rows = comparisons(data)
    by_name = {r["name"]: r for r in rows}
    chart = []
    for v in data["variants"]:
        r = by_name[v["name"]]
        chart.append({
            "name": v["name"], "label": r["label"], "params": num(v["params"]),
            "dots": [{"x": position(x, ax), "value": num(x, 3), "seed": s} for x, s in zip(v["val_losses"], v["seeds"])],
            "mean": {"x": position(r["mean"], ax), "value": num(r["mean"], 3)},
            "runs": len(v["val_losses"]),
            "gap": "" if v["name"] == "baseline" else f"{'+' if r['gap'] > 0 else ''}{num(r['gap'], 3)}",
        })
    selected = params.get("selected") or "baseline"
    sel = by_name[selected]
    detail = (f"{sel['label']}：{num(sel['params'])} 个参数，验证集损失 "
              + "、".join(num(x, 3) for x in next(v for v in data["variants"] if v["name"] == selected)["val_losses"])
              + ("" if selected == "baseline" else f"；比基线平均 {num(base, 3)} {'高' if sel['gap'] > 0 else '低'} {num(abs(sel['gap']), 3)}"))
    return {
        "params": {"selected": selected},
        "axis": {"ticks": [{"x": position(t, ax), "label": num(t, 2 if ax["step"] < 0.1 else 1)} for t in ax["ticks"]]},
        "band": {"left": position(floor["min"], ax), "width": round(position(floor["max"], ax) - position(floor["min"], ax), 3),
                 "label": f"基线 {len(floor['seeds'])} 次重跑的范围 {num(floor['min'], 3)}–{num(floor['max'], 3)}（极差 {num(floor['range'], 3)}）"},
        "chart": chart,
        "sentences": sentences(data),
        "metric": data["metric"],
        "references": {"unigram": num(data["references"]["unigram"], 2), "bigram": num(data["references"]["bigram"], 2)},
        "date": data["date"],
        "tokens": num(data["tokens_per_run"]),
        "out": {"detail": detail},
        "rows": {v["name"]: {"data-selected": "true" if v["name"] == selected else "false"} for v in data["variants"]},
    }


def select(params):
    return view(params)
