"""The lesson's naive plan: each position's output is linear in its own features.

    y_hat = a*p + b*n + c      p: 好/难 is 好,  n: 不 is present

Four reviews, target 1 for a positive review. No a, b, c can fit them, because
y_hat(1,0) + y_hat(0,1) == y_hat(1,1) + y_hat(0,0) for every a, b, c.
Standard library only: the same file runs in CPython (build, tests) and Pyodide.
"""
from numfmt import num
from reviews import REVIEWS  # (review, p, n, target y): the four reviews of the same apple

# First state: "read only p" (a = 1), right on 好吃 / 难吃, wrong on the negated two.
PARAMS = {"a": 1.0, "b": 0.0, "c": 0.0}

SLIDERS = {"a": (-2.0, 2.0, 0.05), "b": (-2.0, 2.0, 0.05), "c": (-1.0, 2.0, 0.05)}


def predict(params, p, n):
    return params["a"] * p + params["b"] * n + params["c"]


def mse(params):
    return sum((predict(params, p, n) - y) ** 2 for _, p, n, y in REVIEWS) / len(REVIEWS)


def mean_target():
    """The constant guess that least squares picks when nothing helps: 0.5."""
    return sum(y for *_, y in REVIEWS) / len(REVIEWS)


def baseline_mse():
    """MSE of guessing the mean target for every review: 0.25."""
    return sum((y - mean_target()) ** 2 for *_, y in REVIEWS) / len(REVIEWS)


def solve(matrix, rhs):
    """Solve a square linear system by Gauss-Jordan elimination with partial pivoting.

    >>> solve([[2.0, 0.0], [0.0, 4.0]], [2.0, 2.0]) -> [1.0, 0.5]
    """
    n = len(rhs)
    m = [list(map(float, row)) + [float(b)] for row, b in zip(matrix, rhs)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) < 1e-12:
            raise ValueError("singular system: the columns are linearly dependent")
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col:
                factor = m[r][col] / m[col][col]
                m[r] = [x - factor * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] for i in range(n)]


def lstsq(rows, targets):
    """Least squares through the normal equations (X^T X) w = X^T y.

    >>> lstsq([[1, 0], [0, 1], [1, 1]], [1, 1, 2]) -> [1.0, 1.0]
    """
    k = len(rows[0])
    xtx = [[sum(r[i] * r[j] for r in rows) for j in range(k)] for i in range(k)]
    xty = [sum(r[i] * t for r, t in zip(rows, targets)) for i in range(k)]
    return solve(xtx, xty)


def view(params):
    """Everything the widget shows, formatted, for these a, b, c."""
    yhat = {name: predict(params, p, n) for name, p, n, _ in REVIEWS}
    left, right = yhat["好吃"] + yhat["不难吃"], yhat["不好吃"] + yhat["难吃"]
    target = {name: y for name, *_, y in REVIEWS}
    error = mse(params)
    return {
        "params": params,
        "reviews": [{"name": name, "p": p, "n": n, "y": y} for name, p, n, y in REVIEWS],
        "sliders": SLIDERS,
        "out": {
            "a": num(params["a"], 2), "b": num(params["b"], 2), "c": num(params["c"], 2),
            "mse": num(error, 3),
            "baseline": num(baseline_mse(), 2),
            "identity-left": num(left, 2),
            "identity-right": num(right, 2),
            "target-left": num(target["好吃"] + target["不难吃"]),
            "target-right": num(target["不好吃"] + target["难吃"]),
            "half": num(mean_target(), 1),
            "verdict": _verdict(error),
        },
        "rows": {name: {"yhat": num(v, 2)} for name, v in yhat.items()},
    }


def _verdict(error):
    """How the current plan compares with guessing the mean for every review."""
    if error > baseline_mse() + 1e-9:
        return "比这还差"
    return "和它一样好，但没有更好" if error > baseline_mse() - 1e-9 else "比它好"


def least_squares(params):
    """The best a, b, c in the least-squares sense, and the view there."""
    a, b, c = lstsq([[p, n, 1] for _, p, n, _ in REVIEWS], [y for *_, y in REVIEWS])
    best = {"a": _clean(a), "b": _clean(b), "c": _clean(c)}
    state = view(best)
    state["announce"] = (f"最小二乘最优解：a = {state['out']['a']}，b = {state['out']['b']}，"
                         f"c = {state['out']['c']}，MSE = {state['out']['mse']}")
    return state


def _clean(x):
    """Round away floating-point dust so sliders land exactly on 0 and 0.5."""
    return round(x, 9) + 0.0
