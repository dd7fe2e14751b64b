"""softmax-scale: why attention divides its scores by sqrt(d_k).

A query q and N keys k_j with independent entries of mean 0 and variance 1 (the scale a norm gives the
stream; drawn uniform on (-sqrt 3, sqrt 3), which has that mean and variance and is cheaper to draw than
a normal on a phone's MicroPython): the
score q . k_j is a sum of d_k products of variance 1, so its spread (standard deviation) is
sqrt(d_k). Raw, the scores grow apart as d_k grows and the softmax puts nearly all its weight on
one key; that weight is then almost flat in the scores, so the gradient that would teach the
query and keys vanishes. Divided by sqrt(d_k), the spread is 1 at every d_k and the softmax stays
soft. The widget shows one draw's weights, and over `draws` draws the mean largest weight and the
mean of sum_j p_j (1 - p_j), the diagonal of softmax's Jacobian (d p_j / d s_j = p_j (1 - p_j)): how
much a score can still move its own weight.
Random numbers from widgets/common/rng.py (the same draws on every runtime).
"""
import math

from numfmt import num
from rng import Rng
from vec import softmax

PARAMS = {"d_k": 64, "scaled": False, "seed": 1}
D_KS = (4, 16, 64)  # 64: our model's head size (256 / 4 heads)
KEYS = 8  # keys a query sees
DRAWS = 200  # draws averaged for the summary (20 left the mean top weight 0.80-0.96 by seed; 200 gives about 0.87)
ROOT3 = math.sqrt(3.0)  # uniform on (-sqrt 3, sqrt 3): mean 0, variance 1


def draw(rng, d_k):
    """One query against KEYS keys: the raw scores q . k_j."""
    q = [rng.uniform(-ROOT3, ROOT3) for _ in range(d_k)]
    scores = []
    for _ in range(KEYS):
        s = 0.0
        for x in q:
            s += x * rng.uniform(-ROOT3, ROOT3)
        scores.append(s)
    return scores


def summary(d_k, seed):
    """For raw scores and for scores / sqrt(d_k), on the same DRAWS draws: the first draw's scores
    and weights, and the means of the scores' spread, the largest weight and sum p(1 - p)."""
    rng = Rng(seed)
    out = {}
    for scaled in (False, True):
        out[scaled] = {"spread": 0.0, "top": 0.0, "slope": 0.0, "first": None}
    for i in range(DRAWS):
        raw = draw(rng, d_k)
        for scaled in (False, True):
            div = math.sqrt(d_k) if scaled else 1.0
            scores = [x / div for x in raw]
            w = softmax(scores)
            o = out[scaled]
            if o["first"] is None:
                o["first"] = (scores, w)
            mean = sum(scores) / KEYS
            o["spread"] += math.sqrt(sum((x - mean) * (x - mean) for x in scores) / KEYS) / DRAWS
            o["top"] += max(w) / DRAWS
            o["slope"] += sum(p * (1.0 - p) for p in w) / DRAWS
    return out


def view(params):
    d_k = int(params["d_k"])
    if d_k not in D_KS:
        raise ValueError("d_k must be one of " + ", ".join(str(d) for d in D_KS))
    scaled = bool(params["scaled"])
    seed = int(params["seed"])
    both = summary(d_k, seed)
    s, other = both[scaled], both[not scaled]
    scores, w = s["first"]
    even = 1.0 / KEYS
    bars = [{"label": "键 " + str(j + 1), "score": num(scores[j], 2), "weight": num(w[j], 3),
             "width": num(100 * w[j], 1)} for j in range(KEYS)]
    how = "除以 √dₖ" if scaled else "不除"
    said = ("d_k = " + str(d_k) + "，" + how + "：分数平均相差 " + num(s["spread"], 2) + "，最大的权重平均 "
            + num(s["top"], 3) + "（8 个键平分是 " + num(even, 3) + "），Σp(1−p) 平均 " + num(s["slope"], 3) + "。")
    return {
        "params": {"d_k": d_k, "scaled": scaled, "seed": seed},
        "d_ks": [{"value": d, "selected": d == d_k} for d in D_KS],
        "bars": bars,
        "out": {"spread": num(s["spread"], 2), "top": num(s["top"], 3), "slope": num(s["slope"], 3),
                "other-top": num(other["top"], 3), "other-slope": num(other["slope"], 3),
                "other": "除以 √dₖ" if not scaled else "不除", "said": said, "draws": str(DRAWS)},
        "announce": said,
    }
