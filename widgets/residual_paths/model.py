"""residual-paths: three layers by hand, and why a residual stack keeps its gradient.

One number flows through three layers, each a scaling F_k(x) = w_k x (small enough to do
by hand). Without residuals the output is w3 w2 w1 x, and so is its derivative: one path,
the product of every weight. With residuals each layer adds to the stream,
x_k = x_{k-1} + w_k x_{k-1}, so dy/dx = (1 + w1)(1 + w2)(1 + w3): multiplied out, the sum
over 2^3 = 8 paths, one for each choice of passing through or skipping each layer. The
path that skips every layer contributes exactly 1, whatever the weights.
Standard library only, in the subset every runtime runs (CPython, Pyodide, MicroPython).
"""
from numfmt import num

PARAMS = {"w": [0.5, 0.5, 0.5], "path": "000"}
SLIDER = (-1.0, 1.0, 0.1)  # each weight w_k
LAYERS = 3


def paths(w):
    """Every path through the residual stack: which layers it passes through, and its product.

    paths([0.5, 0.5, 0.5])[0] -> {'key': '000', 'through': [], 'value': 1.0}
    """
    out = []
    n = len(w)
    for bits in range(2 ** n):  # as itertools.product((0, 1), repeat=n) lists them: 000, 001, 010, ...
        choice = [(bits >> (n - 1 - k)) & 1 for k in range(n)]
        value = 1.0
        for take, wk in zip(choice, w):
            if take:
                value *= wk
        out.append({"key": "".join(map(str, choice)), "through": [k + 1 for k, t in enumerate(choice) if t],
                    "value": value})
    out.sort(key=lambda p: (len(p["through"]), p["through"]))
    return out


def forward(w, x=1.0, residual=True):
    """The stream after each layer. forward([0.5, 0.5, 0.5]) -> [1.0, 1.5, 2.25, 3.375]"""
    xs = [x]
    for wk in w:
        xs.append(xs[-1] + wk * xs[-1] if residual else wk * xs[-1])
    return xs


def describe(p):
    if not p["through"]:
        return "跳过全部三层（直接从输出回到输入）"
    if len(p["through"]) == LAYERS:
        return "穿过全部三层（不加残差时唯一的一条）"
    return "穿过第 " + "、".join(map(str, p["through"])) + " 层，跳过其余"


def view(params):
    w = [round(float(v), 9) + 0.0 for v in params["w"]]
    if len(w) != LAYERS or any(not SLIDER[0] <= v <= SLIDER[1] for v in w):
        raise ValueError(f"w must be {LAYERS} weights in [{SLIDER[0]}, {SLIDER[1]}], got {params['w']}")
    all_paths = paths(w)
    selected = params.get("path") or "000"
    if selected not in {p["key"] for p in all_paths}:
        raise ValueError(f"no path {selected!r}")
    plain = forward(w, residual=False)
    res = forward(w, residual=True)
    total = sum(p["value"] for p in all_paths)
    factors = " × ".join(f"(1 + {num(v, 1)})" for v in w)
    pick = next(p for p in all_paths if p["key"] == selected)
    out = {f"w{k + 1}": num(v, 1) for k, v in enumerate(w)}
    out.update({
        "plain-grad": num(plain[-1], 3),
        "plain-formula": " × ".join(num(v, 1) for v in w),
        "res-grad": num(res[-1], 3),
        "res-formula": factors,
        "sum": num(total, 3),
        "path": f"{describe(pick)}：贡献 {num(pick['value'], 3)}",
    })
    return {
        "params": {"w": w, "path": selected},
        "slider": dict(zip(("min", "max", "step"), SLIDER)),
        "rows": {p["key"]: {"value": num(p["value"], 3), "data-selected": "true" if p["key"] == selected else "false"}
                 for p in all_paths},
        "paths": [{"key": p["key"], "label": describe(p), "through": p["through"]} for p in all_paths],
        "through": pick["through"],
        "out": out,
        "announce": f"不加残差，梯度 {num(plain[-1], 3)}；加残差，梯度 {num(res[-1], 3)}，是 8 条路径之和。",
    }
