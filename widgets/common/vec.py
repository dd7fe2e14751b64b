"""Small vector helpers the widget models share (standard library only, in the subset
CPython, Pyodide and MicroPython all run)."""


def dots(v, rows):
    """[v . row for row in rows], the loop inlined (the models' hot path).

    dots([1, 2], [[1, 0], [0, 1]]) -> [1.0, 2.0]
    """
    out = []
    for row in rows:
        s = 0.0
        for p, q in zip(v, row):
            s += p * q
        out.append(s)
    return out


def transpose(w):
    """transpose([[1, 2], [3, 4]]) -> [[1, 3], [2, 4]]"""
    return [list(col) for col in zip(*w)]
