"""Position-wise: shuffle the tokens and the FFN's output rows shuffle with them.

A tiny FFN, d = 2 -> d_ff = 3 -> d = 2, with fixed weights (biases 0):

    y = ReLU(x · W_up) · W_down

is applied to the token rows of 小明 / 把 / 苹果 / 给了 / 小王 in some order. The FFN
reads each row on its own, so a new order only moves the output rows: each token's
output is the same numbers as before. The model checks that by running the FFN on
the shuffled rows and comparing token by token with the original order.
The 2-d rows are a teaching construct, not features of a real model.
Standard library only, in the subset every runtime runs (CPython, Pyodide, MicroPython);
shuffles come from widgets/common/rng.py, so every runtime draws the same orders.
"""
from numfmt import num
from rng import Rng

# (token, its 2-d row after attention): chosen so that every output row differs.
TOKENS = [("小明", (1.0, 0.5)), ("把", (-0.5, 1.0)), ("苹果", (0.5, -1.0)), ("给了", (-1.0, -0.5)),
          ("小王", (1.5, 1.0))]

W_UP = [[1.0, -1.0, 1.0],     # (d, d_ff) = (2, 3): column j is what neuron j reads
        [0.5, 1.0, -1.0]]
W_DOWN = [[1.0, 0.0],         # (d_ff, d) = (3, 2): row j is what neuron j writes
          [-1.0, 1.0],
          [0.5, -1.0]]

# First params: the sentence in its own order; seed is the next shuffle's seed.
PARAMS = {"order": list(range(len(TOKENS))), "seed": 1}


def matmul(a, b):
    """(n, k) · (k, m) -> (n, m). >>> matmul([[1, 2]], [[3], [4]]) -> [[11]]"""
    return [[sum(a[i][p] * b[p][j] for p in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def relu(rows):
    return [[max(0.0, v) for v in row] for row in rows]


def ffn(x):
    """The FFN on a whole (T, 2) matrix at once: ReLU(X · W_up) · W_down -> (T, 2)."""
    return matmul(relu(matmul(x, W_UP)), W_DOWN)


def check_order(order):
    if sorted(order) != list(range(len(TOKENS))):
        raise ValueError(f"order must be a permutation of 0..{len(TOKENS) - 1}, got {order}")
    return list(order)


def permutation(seed, avoid=()):
    """A shuffle of the token indices from Rng(seed) that is none of `avoid`.

    Draws again from the same generator until the order is new, so every shuffle
    visibly moves something. >>> permutation(1, avoid=[[0, 1, 2, 3, 4]]) != [0, 1, 2, 3, 4] -> True
    """
    rng = Rng(seed)
    order = list(range(len(TOKENS)))
    avoid = [list(a) for a in avoid]
    while True:
        rng.shuffle(order)
        if order not in avoid:
            return list(order)


def run(order):
    """The FFN on the rows in this order; each token's output, and whether it equals the original's."""
    order = check_order(order)
    original = ffn([list(TOKENS[i][1]) for i in range(len(TOKENS))])  # in sentence order
    shuffled = ffn([list(TOKENS[i][1]) for i in order])                # rows in `order`
    outputs = {TOKENS[i][0]: shuffled[pos] for pos, i in enumerate(order)}
    same = all(outputs[name] == original[i] for i, (name, _) in enumerate(TOKENS))
    return outputs, same


def _row(values, decimals):
    return "(" + ", ".join(num(v, decimals) for v in values) + ")"


def _with(params, **changes):
    """A copy of params with some keys changed (MicroPython has no {**params, ...})."""
    out = dict(params)
    out.update(changes)
    return out


def view(params):
    """The table in this order: position, token, input row, output row; and the check."""
    order = check_order(params["order"])
    outputs, same = run(order)
    tokens = [TOKENS[i][0] for i in order]
    return {
        "params": _with(params, order=order),
        "order": tokens,
        "weights": {"W_up": [[num(v, 1) for v in row] for row in W_UP],
                    "W_down": [[num(v, 1) for v in row] for row in W_DOWN]},
        "tokens": [{"token": name, "index": i, "input": _row(x, 1)} for i, (name, x) in enumerate(TOKENS)],
        "rows": {name: {"position": num(pos + 1), "output": _row(outputs[name], 2)}
                 for pos, name in enumerate(tokens)},
        "out": {
            "sequence": " ".join(tokens),
            "check": "是" if same else "否",
            "data-shuffled": "false" if order == list(range(len(TOKENS))) else "true",
        },
    }


def shuffle(params):
    """A new order from params["seed"], different from the current and the original one."""
    current = check_order(params["order"])
    order = permutation(params["seed"], avoid=[current, list(range(len(TOKENS)))])
    state = view(_with(params, order=order, seed=params["seed"] + 1))
    state["announce"] = (f"已打乱，新顺序：{'、'.join(state['order'])}。"
                         f"每个 token 的输出与打乱前相同：{state['out']['check']}。")
    return state


def reset(params):
    """Back to the sentence's own order."""
    state = view(_with(params, order=list(range(len(TOKENS)))))
    state["announce"] = f"已恢复原顺序：{'、'.join(state['order'])}。"
    return state
