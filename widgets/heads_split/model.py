"""heads-split: the same W_Q, W_K and W_V cut into 1, 2 or 4 heads; what 「给了」 fetches in each case.

「小明把苹果给了小王」 with d_model = 4. Each token's key has a "who" part (channels 0-1) and a
"what" part (channels 2-3); 「给了」 asks two questions at once, a person in the who part and a thing
in the what part, with its query's length set by the `sharpness` slider. Cutting the 4 channels into
heads groups the same columns of W_Q, W_K and W_V (no parameter is added or lost):
- 1 head, d_k = 4: one score per key sums both parts, one softmax row shares one unit of weight.
  苹果's key is a little longer (KEY_THING > KEY_PERSON), so as the row sharpens to drop the tokens
  it does not want, 苹果 also pushes 小明 out: one row cannot be sharp on two keys.
- 2 heads, d_k = 2: the who head scores with channels 0-1 only and lands on 小明, the what head on
  苹果, each with its own unit of weight.
- 4 heads, d_k = 1: the same two questions fit (channels 0 and 2); the heads given channels 1 and 3
  have a zero query and average everything they see.
The fetched amount of 小明 and 苹果 is read off the heads' values (小明's value sits in channel 0,
苹果's in channel 2), summed over heads. Standard library only, in MicroPython's subset.
"""
import math

from numfmt import num
from vec import softmax

PARAMS = {"heads": 1, "sharpness": 3.0}
D_MODEL = 4
HEADS = (1, 2, 4)
SHARPNESS = (0.5, 6.0, 0.5)  # slider min, max, step
KEY_PERSON = 2.0
KEY_THING = 2.4  # a little longer than 小明's: the single row's contest has a winner
TOKENS = ("小明", "把", "苹果", "给了", "小王")
QUERY = 3  # 「给了」: it sees 小明, 把, 苹果 and itself
KEYS = {
    "小明": (KEY_PERSON, 0.0, 0.0, 0.0),
    "把": (0.0, 0.0, 0.0, 0.0),
    "苹果": (0.0, 0.0, KEY_THING, 0.0),
    "给了": (0.0, 0.0, 0.0, 0.0),
    "小王": (KEY_PERSON, 0.0, 0.0, 0.0),
}
VALUES = {  # one channel per thing worth fetching: 小明 in channel 0, 苹果 in channel 2
    "小明": (1.0, 0.0, 0.0, 0.0),
    "把": (0.0, 0.0, 0.0, 0.0),
    "苹果": (0.0, 0.0, 1.0, 0.0),
    "给了": (0.0, 0.0, 0.0, 0.0),
    "小王": (0.0, 1.0, 0.0, 0.0),
}
QUERY_DIRECTION = (1.0, 0.0, 1.0, 0.0)  # who: a person; what: a thing
CHANNEL_NAMES = ("谁", "谁", "什么", "什么")


def split(v, heads):
    """Cut a d_model vector into `heads` consecutive pieces: split([1, 2, 3, 4], 2) -> [[1, 2], [3, 4]]"""
    d_k = len(v) // heads
    return [list(v[h * d_k:(h + 1) * d_k]) for h in range(heads)]


def attend(heads, sharpness):
    """Each head's scores and weights over the keys 「给了」 sees, and the concatenated output."""
    q = [sharpness * x for x in QUERY_DIRECTION]
    seen = TOKENS[:QUERY + 1]
    d_k = D_MODEL // heads
    out = []
    rows = []
    keys = [split(KEYS[tok], heads) for tok in seen]
    values = [split(VALUES[tok], heads) for tok in seen]
    for h, qh in enumerate(split(q, heads)):
        scores = [sum(a * b for a, b in zip(qh, k[h])) / math.sqrt(d_k) for k in keys]
        w = softmax(scores)
        for i in range(d_k):
            out.append(sum(w[j] * v[h][i] for j, v in enumerate(values)))
        rows.append({"channels": list(range(h * d_k, (h + 1) * d_k)), "scores": scores, "weights": w})
    return rows, out


def fetched(out):
    """How much of 小明 and of 苹果 the output carries (their value channels)."""
    return out[0], out[2]


def view(params):
    heads = int(params["heads"])
    if heads not in HEADS:
        raise ValueError("heads must be one of " + ", ".join(str(h) for h in HEADS))
    sharpness = float(params["sharpness"])
    lo, hi, _ = SHARPNESS
    if not lo <= sharpness <= hi:
        raise ValueError("sharpness must be between " + num(lo) + " and " + num(hi))
    rows, out = attend(heads, sharpness)
    person, thing = fetched(out)
    seen = TOKENS[:QUERY + 1]
    d_k = D_MODEL // heads
    head_views = []
    for h, r in enumerate(rows):
        asks = "、".join(sorted(set(CHANNEL_NAMES[c] for c in r["channels"]), key=CHANNEL_NAMES.index))
        best = max(range(len(seen)), key=lambda j: (r["weights"][j], -j))
        even = max(r["weights"]) - min(r["weights"]) < 1e-9
        head_views.append({
            "label": "头 " + str(h + 1) + "（通道 " + ", ".join(str(c) for c in r["channels"]) + "，问「" + asks + "」）",
            "bars": [{"token": tok, "weight": num(r["weights"][j], 3), "width": num(100 * r["weights"][j], 1)}
                     for j, tok in enumerate(seen)],
            "said": "平均看每个位置" if even else "最看重「" + seen[best] + "」（" + num(r["weights"][best], 3) + "）",
        })
    said = (str(heads) + " 个头，每个 d_k = " + str(d_k) + "：「给了」取回小明 " + num(person, 2) + "、苹果 "
            + num(thing, 2) + "（各自最多是 1）。")
    if heads == 1:
        said += "一行权重加起来是 1，两者之和也不会超过 1。"
    return {
        "params": {"heads": heads, "sharpness": sharpness},
        "choices": [{"value": h, "label": str(h) + " 个头（d_k = " + str(D_MODEL // h) + "）", "selected": h == heads}
                    for h in HEADS],
        "slider": {"min": lo, "max": hi, "step": SHARPNESS[2]},
        "heads": head_views,
        "out": {"person": num(person, 2), "thing": num(thing, 2), "sharpness": num(sharpness, 1),
                "params": str(D_MODEL * D_MODEL), "said": said},
        "announce": said,
    }
