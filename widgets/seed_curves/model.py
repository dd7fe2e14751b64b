"""seed-curves: loss curves of several runs of one configuration that differ only in their seed,
on one chart, with a switch between the losses the data has (validation and training loss).

The lesson passes the runs (data=facts.noise.curves or facts.noise.per_step_curves, built in
course/facts/noise.py):

    {"title": "...", "x_label": "训练步数",
     "losses": [{"key": "val", "label": "验证损失"}, ...],   the switch's choices, the first shown first
     "series": [{"key": "s4", "label": "种子 4", "kind": "failed",   kind: healthy | failed | control
                 "points": {"val": [[step, loss], ...], ...}}, ...],
     "caption": "...", "kind_labels": {"control": "..."}}   kind_labels optional: the legend's words

The chart of every loss is drawn here at build time (SVG user units); view.js only shows the one
the switch picks, so the widget never calls Python in the browser. Standard library only, in the
subset every runtime runs.
"""
import math

from numfmt import fixed, num

PARAMS = {"data": None}
W, H = 360, 220  # narrow, so the labels stay legible on a phone
KINDS = ("control", "healthy", "failed")  # drawing order: the failed run on top
KIND_LABELS = {"healthy": "健康的种子", "failed": "失败的种子", "control": "对照"}


def check_data(data):
    """ValueError naming the first thing in `data` that breaks the shape the module doc gives."""
    if not isinstance(data, dict):
        raise ValueError("seed-curves needs data=... (title, x_label, losses, series, caption)")
    for k in ("title", "x_label", "losses", "series", "caption"):
        if k not in data:
            raise ValueError("data has no " + repr(k))
    if not data["losses"] or not data["series"]:
        raise ValueError("data.losses and data.series must not be empty")
    for s in data["series"]:
        if s.get("kind") not in KINDS:
            raise ValueError("series " + repr(s.get("key")) + ": kind must be one of " + ", ".join(KINDS))
        for loss in data["losses"]:
            pts = s["points"].get(loss["key"])
            if not pts:
                raise ValueError("series " + repr(s["key"]) + " has no points for " + repr(loss["key"]))
            for x, y in pts:
                if not (math.isfinite(x) and math.isfinite(y)):
                    raise ValueError("series " + repr(s["key"]) + ": a point is not finite")


def nice_step(width, most=6):
    """A round tick spacing: at most `most` steps over `width`. nice_step(1.6) -> 0.5"""
    base = 10.0 ** math.floor(math.log10(width / most)) if width > 0 else 1.0
    for m in (1, 2, 2.5, 5, 10):
        if width / (m * base) <= most:
            return m * base
    return 10 * base


def decimals_of(step):
    """Decimals a tick label needs: decimals_of(0.05) -> 2; decimals_of(200) -> 0"""
    d = 0
    while d < 6 and abs(step * 10 ** d - round(step * 10 ** d)) > 1e-9:
        d += 1
    return d


def axis(lo, hi, most=6):
    step = nice_step(hi - lo, most)
    first = math.floor(lo / step + 1e-9)
    last = math.ceil(hi / step - 1e-9)
    return {"lo": first * step, "hi": last * step, "step": step,
            "ticks": [k * step for k in range(first, last + 1)], "decimals": decimals_of(step)}


def one_chart(data, loss):
    xs = [x for s in data["series"] for x, _ in s["points"][loss]]
    ys = [y for s in data["series"] for _, y in s["points"][loss]]
    ax, ay = axis(min(0.0, min(xs)), max(xs), 7), axis(min(ys), max(ys), 6)

    def px(x):
        return W * (x - ax["lo"]) / (ax["hi"] - ax["lo"])

    def py(y):
        return H * (ay["hi"] - y) / (ay["hi"] - ay["lo"])

    lines = []
    for kind in KINDS:
        for s in data["series"]:
            if s["kind"] != kind:
                continue
            pts = s["points"][loss]
            d = "M" + " L".join([fixed(px(x)) + "," + fixed(py(y)) for x, y in pts])
            last = pts[-1]
            lines.append({"key": s["key"], "kind": kind, "d": d, "label": s["label"],
                          "end_x": fixed(px(last[0])), "end_y": fixed(py(last[1]))})
    return {"xticks": [{"x": fixed(px(t)), "label": num(t, ax["decimals"])} for t in ax["ticks"]],
            "yticks": [{"y": fixed(py(t)), "label": num(t, ay["decimals"])} for t in ay["ticks"]],
            "lines": lines}


def view(params):
    data = params.get("data")
    check_data(data)
    charts = []
    for i, loss in enumerate(data["losses"]):
        c = one_chart(data, loss["key"])
        c.update({"key": loss["key"], "label": loss["label"], "shown": i == 0,
                  "summary": data["title"] + "（" + loss["label"] + "）：" + "；".join(
                      [s["label"] + " 最后 " + num(s["points"][loss["key"]][-1][1], 3) for s in data["series"]])})
        charts.append(c)
    kinds = [k for k in KINDS if any(s["kind"] == k for s in data["series"])]
    labels = data.get("kind_labels") or {}
    return {"title": data["title"], "x_label": data["x_label"], "caption": data["caption"], "w": W, "h": H,
            "charts": charts, "legend": [{"kind": k, "label": labels.get(k, KIND_LABELS[k])} for k in reversed(kinds)],
            "out": {}}


def example(facts):
    """The gallery shows the baseline's seeds over training (None before the FFN export)."""
    noise = facts.get("noise") if isinstance(facts, dict) else None
    return {"data": noise["curves"]} if noise else None
