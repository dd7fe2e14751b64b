"""@@NAME@@: what this widget shows (one paragraph: the idea, the inputs, what the student sees).

Standard library only: the same file runs in CPython (build, tests) and in the browser
under Pyodide. view(params) returns a plain JSON dict holding everything the page shows.
"""
from numfmt import num

PARAMS = {"x": 1.0}  # first state, pre-rendered at build time; the page writes it into data-params
SLIDER = (-3.0, 3.0, 0.5)  # min, max, step of x


def square(x):
    """The widget's math, as a pure function. square(3.0) -> 9.0"""
    return x * x


def view(params):
    """Everything the widget shows for these params: `out` fills [data-out] elements."""
    x = float(params["x"])
    y = square(x)
    return {
        "params": {"x": x},
        "slider": dict(zip(("min", "max", "step"), SLIDER)),
        "out": {"x": num(x, 1), "y": num(y, 2)},
        "announce": f"x = {num(x, 1)}，x² = {num(y, 2)}",
    }
