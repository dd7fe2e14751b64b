"""The shape of one FFN layer, Y = GELU(X·W_up)·W_down, drawn to a log scale.

Five blocks, laid out as two matrix products (each product sits where the rows of
its left factor meet the columns of its right factor):

                 W_up (d×d_ff)   W_down (d_ff×d_out)
    X (T×d)      H (T×d_ff)      Y (T×d_out)

A real FFN writes back as wide as it reads (d_out = d: its output is added to its
input, lesson 2); the two-neuron example writes one number (d_out = 1).

    H = GELU(X·W_up)    Y = H·W_down

An edge of n rows or columns is UNIT·(1 + log2 n) long: one more unit each time
the dimension doubles. So every edge that carries the same symbol (T, d, d_ff) has
the same length everywhere in a figure, and the labels on the edges carry the real
numbers. Two figures: the real scale (d, d_ff from data/, passed by the lesson)
and the small scale of the lesson's two-neuron example (d = 2, d_ff = 2, d_out = 1).
Standard library only, in the subset every runtime runs (CPython, Pyodide, MicroPython).
"""
import math

from numfmt import num

# First params. d and d_ff have no default on purpose (None): the lesson passes the real
# ones from data/ (facts.gpt2), so no model size is typed in here.
PARAMS = {"T": 5, "scale": "real", "d": None, "d_ff": None}

# The small scale: the lesson's two-neuron example, d = 2 features, d_ff = 2 neurons, one output ŷ.
SMALL = {"d": 2, "d_ff": 2, "d_out": 1}

# The drawing frame (SVG user units). Both figures share it, so switching scales
# never moves the page; each figure picks the largest unit that fits.
FRAME_W, FRAME_H = 640, 310
SIDE = 84    # room for the side labels (symbol over number) left and right
TOP = 40     # room for the top edge labels
BOTTOM = 40  # room for the bottom edge labels
GAP = 24     # between blocks
GRID_MAX = 8  # draw the cell grid along a dimension this small (T = 5 rows, d = 2)

ROLE_ORDER = (("input", "输入"), ("param", "参数（可学习）"), ("output", "输出"), ("mid", "中间结果"))  # the legend's order
ROLES = dict(ROLE_ORDER)

# What each dimension symbol means (the table under the figure).
MEANINGS = {"T": "序列长度", "d": "隐藏维 n_embd", "d_ff": "FFN 中间维",
            "d_out": "输出维：真实的 FFN 等于 d（输出要加回输入，第 2 课）；例子只输出一个数 ŷ"}
SYMBOLS = ("T", "d", "d_ff", "d_out")


def log_length(n):
    """Edge length in units: 1 + log2(n). >>> log_length(1), log_length(2), log_length(8) -> (1.0, 2.0, 4.0)"""
    if n < 1:
        raise ValueError(f"a dimension must be at least 1, got {n}")
    return 1 + math.log2(n)


def blocks_of(dims):
    """The five blocks: name, role, (rows symbol, cols symbol), grid cell of the layout."""
    return [
        {"key": "X", "role": "input", "rows": "T", "cols": "d", "cell": (0, 1)},
        {"key": "W_up", "role": "param", "rows": "d", "cols": "d_ff", "cell": (1, 0)},
        {"key": "H", "role": "mid", "rows": "T", "cols": "d_ff", "cell": (1, 1)},
        {"key": "W_down", "role": "param", "rows": "d_ff", "cols": "d_out", "cell": (2, 0)},
        {"key": "Y", "role": "output", "rows": "T", "cols": "d_out", "cell": (2, 1)},
    ]


def layout(dims):
    """Geometry of one figure for dims {"T", "d", "d_ff"}: blocks, edge labels, grid lines.

    Column widths are the column dimension of the bottom row (d, d_ff, d_out); the top
    row is as tall as its tallest weight matrix; blocks in the top row sit on the
    bottom row, so each product's factors line up with it edge to edge.
    """
    units = {sym: log_length(n) for sym, n in dims.items()}
    col_syms = ["d", "d_ff", "d_out"]      # X | H | Y columns
    top_h_units = max(units["d"], units["d_ff"])  # W_up is d tall, W_down is d_ff tall
    width_units = sum(units[s] for s in col_syms)
    height_units = top_h_units + units["T"]
    unit = min((FRAME_W - 2 * SIDE - 2 * GAP) / width_units,
               (FRAME_H - TOP - BOTTOM - GAP) / height_units)
    edge = {sym: unit * u for sym, u in units.items()}

    # Centre the drawing in the frame.
    content_w = sum(edge[s] for s in col_syms) + 2 * GAP
    content_h = unit * height_units + GAP
    x0 = (FRAME_W - content_w) / 2
    band_y = TOP + (FRAME_H - TOP - BOTTOM - content_h) / 2 + unit * top_h_units + GAP
    col_x = [x0, x0 + edge["d"] + GAP, x0 + edge["d"] + edge["d_ff"] + 2 * GAP]

    blocks = []
    for b in blocks_of(dims):
        col, row = b["cell"]
        w, h = edge[b["cols"]], edge[b["rows"]]
        x = col_x[col]
        y = band_y if row == 1 else band_y - GAP - h
        blocks.append({
            "key": b["key"], "name": written(b["key"]), "role": b["role"], "role_name": ROLES[b["role"]],
            "rows": b["rows"], "cols": b["cols"], "n_rows": dims[b["rows"]], "n_cols": dims[b["cols"]],
            "x": _r(x), "y": _r(y), "w": _r(w), "h": _r(h),
            "cx": _r(x + w / 2), "cy": _r(y + h / 2),
            "grid": _grid(x, y, w, h, dims[b["rows"]], dims[b["cols"]]),
        })
    by_key = {b["key"]: b for b in blocks}
    return {"unit": unit, "edge": {s: _r(v) for s, v in edge.items()}, "blocks": blocks,
            "labels": _labels(by_key, dims)}


def _grid(x, y, w, h, n_rows, n_cols):
    """Lines between cells along every dimension of at most GRID_MAX (the T rows, the small d)."""
    lines = []
    if n_rows <= GRID_MAX:
        lines += [{"x1": _r(x), "y1": _r(y + h * i / n_rows), "x2": _r(x + w), "y2": _r(y + h * i / n_rows)}
                  for i in range(1, n_rows)]
    if n_cols <= GRID_MAX:
        lines += [{"x1": _r(x + w * j / n_cols), "y1": _r(y), "x2": _r(x + w * j / n_cols), "y2": _r(y + h)}
                  for j in range(1, n_cols)]
    return lines


def _labels(by_key, dims):
    """Edge labels: which block, which edge, the symbol and the real number.

    The T band is labelled at both ends (left of X, right of Y); the weights carry
    their rows on the outer side (W_up left, W_down right) and their columns on top;
    X, H and Y carry their columns below.
    """
    specs = [("X", "left", "T"), ("X", "bottom", "d"), ("H", "bottom", "d_ff"), ("Y", "bottom", "d_out"),
             ("Y", "right", "T"), ("W_up", "left", "d"), ("W_up", "top", "d_ff"),
             ("W_down", "top", "d_out"), ("W_down", "right", "d_ff")]
    labels = []
    for key, side, sym in specs:
        b = by_key[key]
        if side == "bottom":
            x, y = b["cx"], b["y"] + b["h"] + 6
        elif side == "top":
            x, y = b["cx"], b["y"] - 10
        elif side == "left":
            x, y = b["x"] - 10, b["cy"]
        else:
            x, y = b["x"] + b["w"] + 10, b["cy"]
        label = {"block": key, "side": side, "symbol": sym}
        label.update(written(sym))
        label.update({"n": dims[sym], "text": num(dims[sym]), "x": _r(x), "y": _r(y),
                      "anchor": {"left": "end", "right": "start"}.get(side, "middle")})
        labels.append(label)
    return labels


def _r(v):
    return round(v, 1)


def written(name):
    """A symbol as base + subscript, for the templates. >>> written("d_ff") -> {'base': 'd', 'sub': 'ff'}"""
    base, _, sub = name.partition("_")
    return {"base": base, "sub": sub}


def figure(name, title, dims):
    geometry = layout(dims)
    shapes = "，".join(f"{b['key']} {num(b['n_rows'])}×{num(b['n_cols'])}" for b in geometry["blocks"])
    out = {"scale": name, "title": title, "dims": dims}
    out.update(geometry)
    out["summary"] = (f"{title}：T = {num(dims['T'])}，d = {num(dims['d'])}，d_ff = {num(dims['d_ff'])}，"
                      f"d_out = {num(dims['d_out'])}；"
                      f"各块形状：{shapes}。")
    return out


def example(facts):
    """The params a page shows this widget with, from the course's facts (the widget gallery uses it)."""
    return {"d": facts["gpt2"]["d"], "d_ff": facts["gpt2"]["d_ff"]}


def view(params):
    """Both figures (real and small scale), the legend and the dimension table."""
    missing = [k for k in ("d", "d_ff") if params.get(k) is None]
    if missing:
        raise ValueError(f"ffn-shape needs {' and '.join(missing)} from data/, "
                         f'e.g. widget("ffn-shape", d=facts.gpt2.d, d_ff=facts.gpt2.d_ff)')
    if params.get("scale", "real") not in ("real", "small"):
        raise ValueError(f"scale must be 'real' or 'small', got {params['scale']!r}")
    T = int(params["T"])
    real = {"T": T, "d": int(params["d"]), "d_ff": int(params["d_ff"]), "d_out": int(params["d"])}
    small = {"T": T}
    small.update(SMALL)
    meanings = dict(MEANINGS)
    meanings.update({"T": f"{MEANINGS['T']}（这里取 {num(T)}，仅为画图）",
                     "d_ff": f"{MEANINGS['d_ff']}（{num(real['d_ff'] / real['d'])} × d）"})
    table = []
    for sym in SYMBOLS:
        row = {"symbol": sym}
        row.update(written(sym))
        row.update({"meaning": meanings[sym], "real": num(real[sym]), "small": num(small[sym])})
        table.append(row)
    return {
        "params": params,
        "scale": params.get("scale", "real"),
        "frame": {"w": FRAME_W, "h": FRAME_H},
        "figures": [figure("real", "真实规模（GPT-2 small）", real),
                    figure("small", "小规模（两个神经元的例子）", small)],
        "roles": [{"role": role, "name": name} for role, name in ROLE_ORDER],
        "table": table,
        "out": {"d": num(real["d"]), "d_ff": num(real["d_ff"])},
    }
