"""Small vector helpers the widget models share (standard library only, in the subset
CPython, Pyodide and MicroPython all run).

dots and add_outer are the depth stacks' hot path (widgets/common/stack.py, 16 wide): for 16
values they are written out term by term, which MicroPython runs about four times faster than
a loop over zip() (no tuple per step) and CPython about twice; the sums are added in the same
order either way, so the results are the same to the last bit."""
import math


def softmax(scores):
    """Stable softmax: subtract the largest score first, so no exp overflows.

    softmax([0.0, 0.0]) -> [0.5, 0.5]; softmax([1000.0, 0.0])[0] -> 1.0
    """
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


def dots(v, rows):
    """[v . row for row in rows], each sum added left to right from 0.0.

    dots([1, 2], [[1, 0], [0, 1]]) -> [1.0, 2.0]
    """
    if len(v) == 16:
        v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15 = v
        return [0.0 + v0 * r0 + v1 * r1 + v2 * r2 + v3 * r3 + v4 * r4 + v5 * r5 + v6 * r6 + v7 * r7
                + v8 * r8 + v9 * r9 + v10 * r10 + v11 * r11 + v12 * r12 + v13 * r13 + v14 * r14 + v15 * r15
                for r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15 in rows]
    out = []
    for row in rows:
        s = 0.0
        for p, q in zip(v, row):
            s += p * q
        out.append(s)
    return out


def add_outer(rows, a, g):
    """rows += a^T g in place (rows[i][j] += a[i] * g[j]), skipping the rows where a[i] is 0.

    m = [[0.0, 0.0], [0.0, 0.0]]; add_outer(m, [2.0, 0.0], [1.0, 3.0]) -> m == [[2.0, 6.0], [0.0, 0.0]]
    """
    if len(g) == 16:
        g0, g1, g2, g3, g4, g5, g6, g7, g8, g9, g10, g11, g12, g13, g14, g15 = g
        for i in range(len(a)):
            ai = a[i]
            if ai != 0.0:
                r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15 = rows[i]
                rows[i] = [r0 + ai * g0, r1 + ai * g1, r2 + ai * g2, r3 + ai * g3, r4 + ai * g4, r5 + ai * g5,
                           r6 + ai * g6, r7 + ai * g7, r8 + ai * g8, r9 + ai * g9, r10 + ai * g10,
                           r11 + ai * g11, r12 + ai * g12, r13 + ai * g13, r14 + ai * g14, r15 + ai * g15]
        return
    for i in range(len(a)):
        ai = a[i]
        if ai != 0.0:
            row = rows[i]
            for j in range(len(g)):
                row[j] += ai * g[j]


def transpose(w):
    """transpose([[1, 2], [3, 4]]) -> [[1, 3], [2, 4]]"""
    return [list(col) for col in zip(*w)]
