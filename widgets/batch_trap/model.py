"""batch-trap: normalise with batch statistics and the same sentence comes out different in another batch.

Sentence A (three tokens of 三国演义's first line, 3 numbers each) sits in two batches beside
different sentences. Batch normalisation, as BatchNorm does while training, takes each
feature's mean and (biased) variance over every token in the batch (batch x positions) and
normalises with them: A's output then depends on its neighbours. With one sentence of one
token, the batch size 1 of generating text token by token, every feature's variance is 0 and
the output is 0 / sqrt(eps) = 0: every token comes out the same, its input lost. Per-token
statistics (LayerNorm, each token over its own 3 numbers) give A one answer in every batch.
No gain and no bias (1 and 0); eps inside the square root, as in lab/model.py.
Standard library only, in the subset MicroPython shares with CPython (no f-strings).
"""
import math

from numfmt import num

PARAMS = {"batch": "batch1"}
EPS = 1e-5
DIMS = 3
SENTENCES = (  # (key, label, tokens as (text, vector)); lists keep the order on every runtime
    ("A", "天下大势分久", (("天下", [1.0, 2.0, 0.0]), ("大势", [3.0, 0.0, 1.0]), ("分久", [2.0, 1.0, 2.0]))),
    ("B", "合久必分", (("合久", [0.0, 1.0, 1.0]), ("必分", [1.0, 0.0, 2.0]))),
    ("C", "周末七国分争", (("周末", [6.0, 4.0, 5.0]), ("七国", [5.0, 6.0, 4.0]), ("分争", [7.0, 5.0, 6.0]))),
)
BATCHES = (  # (key, radio label, the sentences in it)
    ("batch1", "批次 1：A 和 B「合久必分」", ("A", "B")),
    ("batch2", "批次 2：A 和 C「周末七国分争」", ("A", "C")),
    ("single", "批大小 1：每批只有一个 token（生成时就是这样）", ()),
)


def sentence(key):
    return [s for s in SENTENCES if s[0] == key][0]


def rows_of(key):
    return [list(v) for t, v in sentence(key)[2]]


def batch_norm(rows, eps=EPS):
    """Each feature (column) normalised over every row (token) given: the batch's statistics.

    batch_norm([[1, 2], [3, 2]]) -> {"mean": [2, 2], "var": [1, 0], "out": [[-1.0, 0.0], [1.0, 0.0]]} (to 1e-5)
    """
    n = len(rows)
    mean = [sum(r[j] for r in rows) / n for j in range(len(rows[0]))]
    var = [sum((r[j] - mean[j]) ** 2 for r in rows) / n for j in range(len(rows[0]))]
    out = [[(r[j] - mean[j]) / math.sqrt(var[j] + eps) + 0.0 for j in range(len(r))] for r in rows]
    return {"mean": mean, "var": var, "out": out}


def token_norm(rows, eps=EPS):
    """Each row (token) normalised over its own features: LayerNorm without gain and bias.

    token_norm([[1, 2, 3]])["out"] -> [[-1.2247..., 0.0, 1.2247...]]
    """
    out = []
    for r in rows:
        mean = sum(r) / len(r)
        var = sum((v - mean) ** 2 for v in r) / len(r)
        out.append([(v - mean) / math.sqrt(var + eps) + 0.0 for v in r])
    return {"out": out}


def in_batch(key):
    """A's output under batch statistics in this batch: batch1 / batch2 normalise A with its
    neighbours; single normalises each of A's tokens alone (a batch of one sentence, one token)."""
    a = rows_of("A")
    if key == "single":
        return {"rows": [a[0]], "stats": batch_norm([a[0]]), "a_out": [batch_norm([r])["out"][0] for r in a]}
    members = [b for b in BATCHES if b[0] == key][0][2]
    rows = []
    for s in members:
        rows += rows_of(s)
    stats = batch_norm(rows)
    return {"rows": rows, "stats": stats, "a_out": stats["out"][:len(a)]}


def max_abs_diff(p, q):
    return max(abs(u - v) for ru, rv in zip(p, q) for u, v in zip(ru, rv))


def compare():
    """The numbers the lesson quotes: A's output in batch 1, in batch 2, alone, and per token.

    max_diff: the largest difference between A's batch-1 and batch-2 outputs (one token, one
    feature); token_max_diff: the same for per-token statistics computed inside each batch (0).
    """
    b1 = in_batch("batch1")
    b2 = in_batch("batch2")
    a = rows_of("A")
    token_in_1 = token_norm(b1["rows"])["out"][:len(a)]
    token_in_2 = token_norm(b2["rows"])["out"][:len(a)]
    worst = max((abs(b1["a_out"][i][j] - b2["a_out"][i][j]), i, j) for i in range(len(a)) for j in range(DIMS))
    return {
        "batch1": b1["a_out"],
        "batch2": b2["a_out"],
        "max_diff": max_abs_diff(b1["a_out"], b2["a_out"]),
        "max_diff_at": {"token": sentence("A")[2][worst[1]][0], "dim": worst[2] + 1},
        "single": in_batch("single")["a_out"],
        "token": token_norm(a)["out"],
        "token_max_diff": max_abs_diff(token_in_1, token_in_2),
    }


def vec_text(values, decimals=3):
    return "[" + "，".join(num(v, decimals) for v in values) + "]"


def view(params):
    key = params["batch"]
    if key not in [b[0] for b in BATCHES]:
        raise ValueError("batch must be one of " + ", ".join(b[0] for b in BATCHES) + ", got " + repr(key))
    here = in_batch(key)
    cmp = compare()
    a_tokens = sentence("A")[2]
    members = ("A",) if key == "single" else [b for b in BATCHES if b[0] == key][0][2]
    rows = {}
    for s_key, label, tokens in SENTENCES:
        for k in range(len(tokens)):
            cells = {"data-in": "true" if s_key in members and (key != "single" or k == 0) else "false"}
            for j in range(DIMS):
                cells["d" + str(j)] = num(tokens[k][1][j])
            rows[s_key + str(k)] = cells
    rows["mean"] = {}
    rows["var"] = {}
    for j in range(DIMS):
        rows["mean"]["d" + str(j)] = num(here["stats"]["mean"][j], 3)
        rows["var"]["d" + str(j)] = num(here["stats"]["var"][j], 3)
    token = cmp["token"]
    for i in range(len(a_tokens)):  # A's outputs: bn0..bn2 with this batch's statistics, ln0..ln2 per token
        rows["bn" + str(i)] = {}
        rows["ln" + str(i)] = {}
        for j in range(DIMS):
            rows["bn" + str(i)]["d" + str(j)] = num(here["a_out"][i][j], 3)
            rows["ln" + str(i)]["d" + str(j)] = num(token[i][j], 3)
    n = len(here["rows"])
    diff = num(cmp["max_diff"], 3)
    at = cmp["max_diff_at"]
    if key == "single":
        count = "只有 1 个 token（生成时每一步就是这样）：每一维的均值就是它自己，方差是 0"
        verdict = ("(x − μ)/√(0 + ε) = 0/√ε = 0：A 的三个 token 各自成批，输出全是 [0，0，0]，"
                   "三个 token 变得一模一样，输入的信息全丢了。按 token 自己的统计量（LayerNorm），结果和在任何批次里都一样。"
                   "（真正的 BatchNorm 推理时改用训练中记下的平均统计量，躲开了这个 0，但训练和推理算的就不是同一个东西了。）")
    else:
        count = "这个批次共 " + str(n) + " 个 token：每一维在这 " + str(n) + " 个 token 上求均值 μ 和方差 σ²"
        verdict = ("同一句 A，在批次 1 和批次 2 里批归一化的输出不一样：最多差 " + diff + "（「" + at["token"]
                   + "」的第 " + str(at["dim"]) + " 维）。按 token 自己的统计量（LayerNorm），两个批次里的输出完全相同（差 "
                   + num(cmp["token_max_diff"]) + "）。")
    label = [b[1] for b in BATCHES if b[0] == key][0]
    return {
        "params": {"batch": key},
        "batches": [{"key": b[0], "label": b[1], "checked": b[0] == key} for b in BATCHES],
        "sentences": [{"key": s[0], "label": s[1], "tokens": [t[0] for t in s[2]]} for s in SENTENCES],
        "a_tokens": [t[0] for t in a_tokens],
        "rows": rows,
        "out": {"count": count, "verdict": verdict, "max-diff": diff, "batch": label},
        "compare": cmp,
        "announce": (label + "。A 的批归一化输出："
                     + "；".join(a_tokens[i][0] + " " + vec_text(here["a_out"][i]) for i in range(len(a_tokens)))
                     + "。" + verdict),
    }
