"""copy-task: watch a tiny model learn to copy (the synthetic task of data/real-model/induction/copy-task.json,
`python -m lab copytask`).

Pick a model (2 layers, 1 layer, 1 layer with smeared keys) and a training step: every head's attention on one
example (10 random symbols, then the same 10 again), each cell shaded by its weight, the query's row left to
right; beside it, the copy loss of every seed of the three models along training, the chosen step marked. The
numbers under the maps are seed 0's at that step. Standard library only, in the subset MicroPython shares.
"""
from numfmt import num, pct

PARAMS = {"data": None, "arm": "attn_only_2l", "snapshot": None}
ARMS = (("attn_only_2l", "两层"), ("attn_only_1l", "一层"), ("smeared_1l", "一层，键错开一位"))
SYMBOLS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"  # the task's 32 symbols, as letters the page can show
CELL = 9  # px of one map cell
COLOR = (217, 72, 1)  # deep orange, as attention-map
CHART_W, CHART_H = 320, 150
LINE = {"attn_only_2l": "ct-two", "attn_only_1l": "ct-one", "smeared_1l": "ct-smeared"}  # colour and dash (style.css)


def pack_map(head):
    """A head's rows (query t: weights on keys 0..t) -> one string of two-digit percentages (99 at most)."""
    return "".join("%02d" % min(99, int(v * 100 + 0.5)) for row in head for v in row)


def unpack_map(code, n):
    """pack_map's string of an n x n causal map -> its rows of weights."""
    rows, i = [], 0
    for t in range(n):
        rows.append([int(code[i + 2 * j: i + 2 * j + 2]) / 100.0 for j in range(t + 1)])
        i += 2 * (t + 1)
    return rows


def compact(data):
    """What the widget shows of copy-task.json: each run's copy loss curve, seed 0's head shares along training
    and its maps at the kept steps, packed; a compact dict is returned as it is."""
    if data is None:
        raise ValueError("copy-task needs data: the parsed data/real-model/induction/copy-task.json "
                         "(embed it as widget(\"copy-task\", data=...))")
    if "compact" in data:
        return data
    out = {"compact": 1, "uniform": data["task"]["uniform_loss"], "example": data["example"], "arms": {}}
    for r in data["runs"]:
        arm = out["arms"].setdefault(r["variant"], {"n_layer": r["n_layer"], "curves": []})
        arm["curves"].append([[p["step"], p["copy_loss"]] for p in r["points"]])
        if "snapshots" in r:
            at = {p["step"]: p for p in r["points"]}
            arm["snapshots"] = [{"step": s["step"], "loss": at[s["step"]]["copy_loss"],
                                 "previous": at[s["step"]]["previous"], "prefix": at[s["step"]]["prefix_matching"],
                                 "maps": [[pack_map(h) for h in layer] for layer in s["maps"]]}
                                for s in r["snapshots"]]
    return out


def page_params(params):
    out = dict(params)
    out["data"] = compact(params.get("data"))
    return out


def color(w, top):
    if w <= 0 or top <= 0:
        return "transparent"
    return "rgba(%d, %d, %d, %s)" % (COLOR[0], COLOR[1], COLOR[2], num(0.9 * w / top, 2))


def head_map(rows, n, layer, head):
    """One head's cells (SVG rects), its label and what its typical query does, in words."""
    top = max(max(r) for r in rows)
    cells = []
    for t in range(n):
        for j in range(t + 1):
            w = rows[t][j]
            fill = color(w, top)
            if fill != "transparent":
                cells.append({"x": j * CELL, "y": t * CELL, "fill": fill})
    half = n // 2
    on_next = sum(rows[t][t - half + 1] for t in range(half, n)) / (n - half)  # the token after the earlier copy
    on_prev = sum(rows[t][t - 1] for t in range(1, n)) / (n - 1)
    label = "第 " + str(layer) + " 层第 " + str(head) + " 个头"
    said = ("第二遍的查询平均把 " + pct(on_next, 0) + " 的权重给上一遍里「同一个符号的下一个」，"
            + pct(on_prev, 0) + " 给紧挨着的前一个符号")
    return {"label": label, "said": said, "cells": cells, "size": n * CELL}


def chart(arms, uniform, step, steps_max):
    """Every seed's copy loss against the step, per arm, and the chosen step's x."""
    top = uniform * 1.05

    def xy(s, v):
        return "%s,%s" % (num(s / steps_max * CHART_W, 1), num(CHART_H - min(v, top) / top * CHART_H, 1))
    lines = []
    for key, name in ARMS:
        for curve in arms[key]["curves"]:
            lines.append({"cls": LINE[key], "points": " ".join(xy(s, v) for s, v in curve)})
    return {"w": CHART_W, "h": CHART_H, "lines": lines, "x": num(step / steps_max * CHART_W, 1),
            "uniform_y": num(CHART_H - uniform / top * CHART_H, 1),
            "ticks": [{"x": num(s / steps_max * CHART_W, 1), "label": num(s)} for s in (0, steps_max // 2, steps_max)]}


def view(params):
    data = compact(params.get("data"))
    arm_key = params.get("arm") or "attn_only_2l"
    if arm_key not in data["arms"]:
        raise ValueError("arm must be one of " + ", ".join(k for k, _ in ARMS))
    arm = data["arms"][arm_key]
    snaps = arm["snapshots"]
    i = params.get("snapshot")
    i = len(snaps) - 1 if i is None else int(i)
    if not 0 <= i < len(snaps):
        raise ValueError("snapshot must be 0.." + str(len(snaps) - 1))
    snap = snaps[i]
    example = data["example"]
    n = len(example)
    heads = [head_map(unpack_map(code, n), n, li + 1, hi + 1)
             for li, layer in enumerate(snap["maps"]) for hi, code in enumerate(layer)]
    name = dict(ARMS)[arm_key]
    steps_max = arm["curves"][0][-1][0]
    loss = snap["loss"]
    said = (name + "的模型，第 " + num(snap["step"]) + " 步（种子 0）：复制损失 " + num(loss, 2)
            + "（瞎猜是 ln 32 ≈ " + num(data["uniform"], 2) + "）；最看前一个符号的头 " + pct(snap["previous"]["share"], 0)
            + "，最会「找上一遍的下一个」的头 " + pct(snap["prefix"]["share"], 0) + "。")
    return {
        "params": {"arm": arm_key, "snapshot": i},
        "arms": [{"value": k, "label": label, "selected": k == arm_key} for k, label in ARMS],
        "slider": {"max": len(snaps) - 1},
        "symbols": [SYMBOLS[s] for s in example],
        "heads": heads,
        "chart": chart(data["arms"], data["uniform"], snap["step"], steps_max),
        "out": {"step": "第 " + num(snap["step"]) + " 步", "said": said},
        "announce": said,
    }


def example(facts):
    """The gallery's params: the export, once lab/ has written it."""
    ct = facts.get("copy_task")
    return {"data": ct["data"]} if ct else None
