"""rope-rotation: RoPE on one 2-D pair of channels, turning with position.

RoPE splits a head's q and k into pairs of channels and turns pair i of the token at position m by the
angle m * theta_i, theta_i = base^(-2i / head_dim). For one pair, q at position m and k at position n
score R(m theta) q . R(n theta) k = q . R((n - m) theta) k: the positions enter only through their
difference. The widget shows that pair: the two arrows on a circle, the score against the offset m - n
(one wave, one turn per 2 pi / theta tokens), and what a shift of both positions does (nothing). Pairs
run from fast (i = 0: one radian a token, a turn every 6.3 tokens) to slow (the last pair of our head
size 64 at base 10,000 turns 0.034 rad over the whole context of 256); the base sets how slow the
slowest are, so it sets how many pairs never complete a turn in the context.

Standard library only (numfmt for every number shown): the same file runs in CPython and in the browser.
"""
import math

from numfmt import fixed, num, sci

HEAD_DIM = 64  # our model: d 256 / 4 heads
CONTEXT = 256  # our model's context (block_size)
BASES = (100.0, 10000.0, 500000.0)  # a small base; ours (the original Transformer's sinusoids); a large one
PAIRS = (0, 4, 12, 31)  # pair indices the widget offers: fastest, fast, middle, slowest of 32
MAX_POS = 511  # positions the sliders reach (twice the context)
Q = (1.0, 0.4)  # the pair's q and k before rotation (any fixed pair shows the same)
K = (0.9, -0.5)
PARAMS = {"pair": 4, "base": 10000.0, "m": 30, "n": 20}
SHIFT = 100  # the shift button moves both positions by this many places (the lab's shift test uses 100 too)
CIRCLE = 60.0  # radius of the arrows' circle, SVG units
CHART_W, CHART_H = 300.0, 100.0  # the score-against-offset chart


def theta(i, base, head_dim=HEAD_DIM):
    """Pair i's angle per position. theta(0, 10000.0) -> 1.0; theta(16, 10000.0) -> 0.01"""
    return base ** (-2.0 * i / head_dim)


def rotate(v, angle):
    """v = (x, y) turned by angle radians. rotate((1.0, 0.0), math.pi / 2) -> (~0.0, 1.0)"""
    c, s = math.cos(angle), math.sin(angle)
    return (v[0] * c - v[1] * s, v[0] * s + v[1] * c)


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1]


def score(q, k, m, n, th):
    """The pair's share of the score: q at position m against k at position n."""
    return dot(rotate(q, m * th), rotate(k, n * th))


def score_at_offset(q, k, offset, th):
    """The same score through the offset alone: q . R(-(m - n) theta) k. Equal to score(q, k, m, n, th)
    whenever m - n = offset."""
    return dot(q, rotate(k, -offset * th))


def rope_vector(v, m, base=10000.0):
    """RoPE on a whole vector of even length d (our lab's apply_rope): pair (2i, 2i+1) turned by
    m * base^(-2i/d). rope_vector([1.0, 0.0], 0) -> [1.0, 0.0]"""
    d = len(v)
    out = []
    for i in range(d // 2):
        r = rotate((v[2 * i], v[2 * i + 1]), m * theta(i, base, d))
        out.append(r[0])
        out.append(r[1])
    return out


def slow_pairs(base, head_dim=HEAD_DIM, context=CONTEXT):
    """How many pairs turn less than once over the largest offset in the context (context - 1).
    slow_pairs(10000.0) -> 19"""
    count = 0
    for i in range(head_dim // 2):
        if (context - 1) * theta(i, base, head_dim) < 2 * math.pi:
            count += 1
    return count


def wavelength(i, base, head_dim=HEAD_DIM):
    """Tokens per turn of pair i. wavelength(0, 10000.0) -> 6.283..."""
    return 2 * math.pi / theta(i, base, head_dim)


def arrow(v, m_angle):
    """SVG end point of v turned by m_angle, on the circle (y up)."""
    r = rotate(v, m_angle)
    return {"x": fixed(CIRCLE * r[0]), "y": fixed(-CIRCLE * r[1])}


def curve(th, offset):
    """The score against the offset 0..CONTEXT-1 as an SVG polyline, and the current offset's dot."""
    top = math.sqrt(dot(Q, Q) * dot(K, K))  # |q| |k|: the score's bound
    pts = []
    for d in range(0, CONTEXT, 2):
        s = score_at_offset(Q, K, d, th)
        pts.append(fixed(CHART_W * d / (CONTEXT - 1)) + "," + fixed(CHART_H / 2 - CHART_H / 2 * s / top))
    d = min(max(offset, 0), CONTEXT - 1)
    s = score_at_offset(Q, K, offset, th)
    return {"points": " ".join(pts), "dot": {"x": fixed(CHART_W * d / (CONTEXT - 1)),
                                             "y": fixed(CHART_H / 2 - CHART_H / 2 * s / top)},
            "inside": 0 <= offset < CONTEXT}


def view(params):
    """Everything the widget shows for one pair, one base and two positions."""
    i = int(params["pair"])
    base = float(params["base"])
    m = int(params["m"])
    n = int(params["n"])
    if i < 0 or i >= HEAD_DIM // 2:
        raise ValueError("pair must be 0.." + str(HEAD_DIM // 2 - 1))
    if m < 0 or n < 0 or m > MAX_POS or n > MAX_POS:
        raise ValueError("positions run 0.." + str(MAX_POS))
    th = theta(i, base)
    s = score(Q, K, m, n, th)
    s_off = score_at_offset(Q, K, m - n, th)
    wl = wavelength(i, base)
    turns = (CONTEXT - 1) * th / (2 * math.pi)
    slow = slow_pairs(base)
    if turns < 1:
        kind = "慢对：整个 " + str(CONTEXT) + " 个 token 的上下文里转不满一圈（" + num(turns, 3) + " 圈）"
    else:
        kind = "快对：上下文里转 " + num(turns, 1) + " 圈"
    return {
        "shift": SHIFT,
        "params": {"pair": i, "base": base, "m": m, "n": n},
        "pairs": [{"value": p, "label": "第 " + str(p) + " 对", "selected": p == i} for p in PAIRS],
        "bases": [{"value": b, "label": num(b), "selected": b == base} for b in BASES],
        "max_pos": MAX_POS,
        "q": arrow(Q, m * th), "k": arrow(K, n * th), "circle": CIRCLE,
        "chart": curve(th, m - n), "chart_w": CHART_W, "chart_h": CHART_H,
        "out": {
            "m": str(m), "n": str(n), "offset": str(m - n),
            "theta": num(th, 4) if th >= 0.001 else sci(th, 3),
            "angle-q": num(m * th, 2), "angle-k": num(n * th, 2),
            "score": num(s, 4), "score-offset": num(s_off, 4),
            "wavelength": num(wl, 1), "kind": kind,
            "slow": str(slow), "pairs": str(HEAD_DIM // 2),
        },
        "announce": ("q 在位置 " + str(m) + "，k 在位置 " + str(n) + "，相差 " + str(m - n) + "：分数 " + num(s, 4)),
    }
