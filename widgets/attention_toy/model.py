"""attention-toy: 「小明把苹果给了小王」, one query token at a time, three ways to fetch from the prefix.

Each token has a 2-number key k (its "what I am": the first number says person, the second thing),
a 2-number query q (its "what I am looking for") and a value v, here one-hot over the three nouns so
the result reads as "how much of 小明 / 苹果 / 小王 was fetched". Three ways to weight the keys a
query may see:
- "average": every position j <= t gets 1/(t+1), whatever it holds (the content-blind fix);
- "position": a fixed weight per distance t - j (tuned so 「给了」 in the plain sentence lands on 小明,
  three back), renormalised over the distances that exist;
- "qk": score_j = q . k_j / sqrt(d_k), the later positions masked (or not: `mask` False shows what
  a query would take from the future), softmax over the rest.
The second sentence inserts 「昨天」, moving 小明 one step further back: the fixed positional weights
then land on 「昨天」, the query-key weights still on 小明.
Standard library only, in the subset MicroPython shares with CPython.
"""
import math

from numfmt import num
from vec import softmax

PARAMS = {"sentence": "plain", "mode": "qk", "query": "给了", "mask": True}
D_K = 2
NOUNS = ("小明", "苹果", "小王")  # the value's three slots
TOKENS = {  # token -> (query, key, value); a list of names beside it keeps the order on every runtime
    "小明": ((0.0, 0.0), (2.0, 0.0), (1.0, 0.0, 0.0)),
    "昨天": ((0.0, 0.0), (0.0, 0.0), (0.0, 0.0, 0.0)),
    "把": ((0.0, 0.0), (0.0, 0.0), (0.0, 0.0, 0.0)),
    "苹果": ((0.0, 0.0), (0.0, 2.0), (0.0, 1.0, 0.0)),
    "给了": ((2.0, 0.0), (0.0, 0.0), (0.0, 0.0, 0.0)),  # looking for a person: who gives?
    "小王": ((0.0, 2.0), (2.0, 0.0), (0.0, 0.0, 1.0)),  # looking for a thing: what did 小王 get?
}
SENTENCES = (  # (key, label, tokens)
    ("plain", "小明把苹果给了小王", ("小明", "把", "苹果", "给了", "小王")),
    ("inserted", "小明昨天把苹果给了小王", ("小明", "昨天", "把", "苹果", "给了", "小王")),
)
MODES = (("average", "前缀平均"), ("position", "按相对位置的固定权重"), ("qk", "查询 · 键"))
POSITION_WEIGHTS = (0.05, 0.05, 0.05, 0.85)  # by distance 0, 1, 2, 3 (tuned on the plain sentence's 「给了」)


def sentence_tokens(key):
    for k, label, tokens in SENTENCES:
        if k == key:
            return label, list(tokens)
    raise ValueError("no sentence " + repr(key))


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def weights(tokens, t, mode, mask=True):
    """The query at position t: (scores or None, weights over positions 0..T-1; 0 where it cannot look).

    weights(["小明", "把", "苹果", "给了"], 3, "average")[1] -> [0.25, 0.25, 0.25, 0.25]
    """
    T = len(tokens)
    seen = T if (mode == "qk" and not mask) else t + 1
    if mode == "average":
        return None, [1.0 / seen if j < seen else 0.0 for j in range(T)]
    if mode == "position":
        raw = [POSITION_WEIGHTS[t - j] if j <= t and t - j < len(POSITION_WEIGHTS) else 0.0 for j in range(T)]
        total = sum(raw)
        return None, [w / total for w in raw]
    q = TOKENS[tokens[t]][0]
    scores = [dot(q, TOKENS[tokens[j]][1]) / math.sqrt(D_K) for j in range(T)]
    w = softmax(scores[:seen])
    return scores, w + [0.0] * (T - seen)


def fetched(tokens, w):
    """The weighted sum of the values: one share per noun."""
    out = [0.0] * len(NOUNS)
    for j, tok in enumerate(tokens):
        v = TOKENS[tok][2]
        for i in range(len(NOUNS)):
            out[i] += w[j] * v[i]
    return out


def check(params):
    label, tokens = sentence_tokens(params["sentence"])
    mode = params["mode"]
    if mode not in [m[0] for m in MODES]:
        raise ValueError("no mode " + repr(mode))
    query = params["query"]
    if query not in tokens:
        raise ValueError("query " + repr(query) + " is not a token of " + label)
    return label, tokens, mode, tokens.index(query), bool(params["mask"])


def vec_text(v):
    return "(" + ", ".join(num(x) for x in v) + ")"


def view(params):
    label, tokens, mode, t, mask = check(params)
    scores, w = weights(tokens, t, mode, mask)
    got = fetched(tokens, w)
    q = TOKENS[tokens[t]][0]
    rows = []
    for j, tok in enumerate(tokens):
        later = j > t
        hidden = later and not (mode == "qk" and not mask)
        rows.append({"token": tok, "distance": ("后文" if later else str(t - j)),
                     "key": vec_text(TOKENS[tok][1]),
                     "score": "—" if scores is None or hidden else num(scores[j], 3),
                     "weight": "看不见" if hidden else num(w[j], 3),
                     "width": num(100 * w[j], 1), "later": later, "hidden": hidden, "query": j == t})
    best = max(range(len(tokens)), key=lambda j: (w[j], -j))
    shares = "、".join(NOUNS[i] + " " + num(got[i], 2) for i in range(len(NOUNS)))
    seen = [x for x in w if x > 0]
    if max(seen) - min(seen) < 1e-12:
        said = "「" + tokens[t] + "」对看得见的 " + str(len(seen)) + " 个位置一视同仁，每个 " + num(seen[0], 3) + "；"
    else:
        said = "「" + tokens[t] + "」的权重最大的一格是「" + tokens[best] + "」（" + num(w[best], 3) + "）；"
    said += "取回的内容：" + shares + "。"
    if mode == "qk" and not mask and t < len(tokens) - 1:
        said += " 没有因果掩码：它也看到了后文。"
    return {
        "params": {"sentence": params["sentence"], "mode": mode, "query": tokens[t], "mask": mask},
        "sentences": [{"key": k, "label": lab, "selected": k == params["sentence"]} for k, lab, _ in SENTENCES],
        "modes": [{"key": k, "label": lab, "checked": k == mode} for k, lab in MODES],
        "tokens": [{"token": tok, "pressed": "true" if j == t else "false"} for j, tok in enumerate(tokens)],
        "table": rows,
        "qk": mode == "qk",
        "mask_on": mask or mode != "qk",  # what the box shows: only 查询 · 键 can drop the mask
        "out": {"query": tokens[t], "q": vec_text(q), "fetched": shares, "said": said,
                "sentence": label},
        "announce": said,
    }


def matrices(sentence="plain"):
    """The sentence's queries, keys and values as T x d lists (rows in token order)."""
    label, tokens = sentence_tokens(sentence)
    return {"tokens": tokens, "Q": [list(TOKENS[t][0]) for t in tokens], "K": [list(TOKENS[t][1]) for t in tokens],
            "V": [list(TOKENS[t][2]) for t in tokens]}


def share_among(n, query="给了", key="小明"):
    """The weight the query's one matching key gets when it sees n positions and every other key scores
    0 (as 把 and 昨天 do): query-key weights dilute too, only less than the average's 1/n.

    share_among(4) -> 0.849... (the plain sentence's 「给了」)
    """
    s = dot(TOKENS[query][0], TOKENS[key][1]) / math.sqrt(D_K)
    return math.exp(s) / (math.exp(s) + (n - 1))


def head(Q, K, V):
    """One causal attention head: row t of the output is sum_j<=t softmax_j(q_t . k_j / sqrt(d_k)) v_j.

    head([[1.0]], [[1.0]], [[2.0, 3.0]]) -> [[2.0, 3.0]]
    """
    d_k = len(K[0])
    out = []
    for t in range(len(Q)):
        w = softmax([dot(Q[t], K[j]) / math.sqrt(d_k) for j in range(t + 1)])
        out.append([sum(w[j] * V[j][i] for j in range(t + 1)) for i in range(len(V[0]))])
    return out


def worked(sentence="plain", query="给了"):
    """One query's arithmetic step by step, for the lesson's hand computation: the dot products, the
    scaled scores, their exponentials (no shift: small enough by hand), the weights and the output."""
    label, tokens = sentence_tokens(sentence)
    t = tokens.index(query)
    q = TOKENS[query][0]
    keys = [TOKENS[tokens[j]][1] for j in range(t + 1)]
    dots = [dot(q, k) for k in keys]
    scores = [d / math.sqrt(D_K) for d in dots]
    exps = [math.exp(s) for s in scores]
    total = sum(exps)
    w = [e / total for e in exps]
    return {"tokens": tokens[: t + 1], "q": list(q), "key_rows": [list(k) for k in keys], "dots": dots,
            "scores": scores, "exps": exps, "total": total, "weights": w,
            "value_rows": [list(TOKENS[tokens[j]][2]) for j in range(t + 1)], "out": fetched(tokens[: t + 1], w),
            "sqrt_dk": math.sqrt(D_K)}
