# %% exercise
# title: 两个头接力：亲手搭一个会照抄的两层模型
# time_limit: 3

# %% task
# 不训练，用独热向量亲手搭一个只有注意力的两层模型。token 是 $0, \dots, V-1$ 的编号，$e_x$ 是 $x$ 的独热向量（长 $V$，第 $x$ 维是 1）。每个位置的向量分两格：$[\,e_{x_t}\,;\ p_t\,]$，第一格是自己的 token，第二格 $p_t$ 先空着，由第 1 层写进去。每个头都是同一个动作：**分数 → softmax → 按权重把值加起来**。$\beta = 1000$ 是一个大的倍数，让 softmax 几乎只挑分数最高的键。
#
# 1. `attend(scores, values)`：对 `scores` 做 softmax（先减去最大的分数），用得到的权重把 `values` 的各行加起来，返回一行。
# 2. 第 1 层，`previous_slot(tokens, vocab)`：位置 $t$ 的查询是「位置 $t-1$」的独热向量，键 $j$ 是「位置 $j$」的独热向量（$j \le t$），分数 $\beta\, q_t \cdot k_j$，值是 $e_{x_j}$。返回每个位置写进第二格的 $p_t$（共 $T$ 行，每行长 $V$）；位置 0 没有前一个，$p_0$ 全是 0。
# 3. 第 2 层，`predict_next(tokens, vocab)`：查询是当前 token $e_{x_t}$，键是第二格 $p_j$（$j \le t$），值是 $e_{x_j}$，分数
#
# $$s_{tj} = \beta\, e_{x_t} \cdot p_j + j$$
#
# 只有 $x_{j-1} = x_t$ 的键得到 $\beta$：$j$ 正好是 $x_t$ 在前面某次出现的**后一个**位置。加上的 $j$ 是一点点「偏爱近的」：$x_t$ 出现过好几次时，最近那次之后的 token 赢。输出向量最大的那一维就是预测的下一个 token；没有一个键得到 $\beta$（$x_t$ 没在前面出现过，最高分小于 $\beta$）时，这个位置返回 `None`。序列不超过 100 个 token，所以 $j$ 永远压不过 $\beta$。
#
# 请用注意力写（分数、softmax、加权求和），不要用字典去查「上次后面是谁」：这一课要看的正是两个头怎么接力做到查字典的事。页面给好了一句 `text`、它的字表 `chars` 和编号 `tokens`、`vocab`。检查先单独考 `attend` 和第 1 层，再考整个模型，还会换没见过的序列，其中有复制任务的例子：它第一遍里有个符号出现了两次，第二遍再遇到它时，「最近的」规则抄的不是真正的下一个。

# %% starter
import math

BETA = 1000.0  # β


def one_hot(i, n):  # 长 n，第 i 维是 1
    return [float(j == i) for j in range(n)]


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def attend(scores, values):
    w = [1.0 / len(scores)] * len(scores)  # 平均：改成 softmax(scores)
    return [sum(w[j] * values[j][i] for j in range(len(values))) for i in range(len(values[0]))]


def previous_slot(tokens, vocab):
    T = len(tokens)
    slots = [[0.0] * vocab]  # 位置 0：没有前一个
    for t in range(1, T):
        q = one_hot(t - 1, T)  # 「我要位置 t-1」
        keys = [one_hot(j, T) for j in range(t + 1)]
        values = [one_hot(tokens[j], vocab) for j in range(t + 1)]
        slots.append([0.0] * vocab)  # 分数 BETA * q·k，再 attend
    return slots


def predict_next(tokens, vocab):
    p = previous_slot(tokens, vocab)
    out = []
    for t in range(len(tokens)):
        q = one_hot(tokens[t], vocab)
        # 键 p[j]，值 one_hot(tokens[j])，j <= t
        out.append(None)
    return out


print([chars[x] if x is not None else "·" for x in predict_next(tokens, vocab)])

# %% answer
import math

BETA = 1000.0  # β


def one_hot(i, n):  # 长 n，第 i 维是 1
    return [float(j == i) for j in range(n)]


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def attend(scores, values):
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    w = [e / sum(exps) for e in exps]
    return [sum(w[j] * values[j][i] for j in range(len(values))) for i in range(len(values[0]))]


def previous_slot(tokens, vocab):
    T = len(tokens)
    slots = [[0.0] * vocab]  # 位置 0：没有前一个
    for t in range(1, T):
        q = one_hot(t - 1, T)  # 「我要位置 t-1」
        keys = [one_hot(j, T) for j in range(t + 1)]
        values = [one_hot(tokens[j], vocab) for j in range(t + 1)]
        slots.append(attend([BETA * dot(q, k) for k in keys], values))
    return slots


def predict_next(tokens, vocab):
    p = previous_slot(tokens, vocab)
    out = []
    for t in range(len(tokens)):
        q = one_hot(tokens[t], vocab)
        scores = [BETA * dot(q, p[j]) + j for j in range(t + 1)]
        values = [one_hot(tokens[j], vocab) for j in range(t + 1)]
        y = attend(scores, values)
        # 没有键对上（前面没有 tokens[t]）就是 None
        out.append(y.index(max(y)) if max(scores) >= BETA else None)
    return out


print([chars[x] if x is not None else "·" for x in predict_next(tokens, vocab)])

# %% cases
import math

text = "玄德曰吾乃玄德也玄德曰"  # the 3rd 德 copies 也 (the latest wins), though 曰 comes next
chars = sorted(set(text))
tokens = [chars.index(c) for c in text]
given = {"text": text, "chars": chars, "tokens": tokens, "vocab": len(chars)}
example = facts["copy_task"]["data"]["example"]  # the copy task's L symbols, then the same L again
cases = [["attend", [0.0, 0.0], [[1.0, 0.0], [0.0, 2.0]]], ["attend", [1000.0, 1001.0, 0.0], [[1.0], [2.0], [3.0]]],
         ["attend", [-5.0], [[4.0, -1.0]]], ["previous_slot", [2, 0, 1], 3], ["previous_slot", tokens, len(chars)],
         ["predict_next", [0, 1, 0], 2], ["predict_next", tokens, len(chars)], ["predict_next", [1, 1, 1, 1], 2],
         ["predict_next", [0, 1, 2, 3, 4], 5], ["predict_next", [0, 1, 0, 2, 0], 3],
         ["predict_next", example, facts["copy_task"]["task"]["vocab"]]]


def latest_follower(seq):  # what the two heads must give: the token after seq[t]'s latest earlier occurrence
    return [next((seq[i + 1] for i in range(t - 1, -1, -1) if seq[i] == seq[t]), None) for t in range(len(seq))]


def weighted(scores, values):  # softmax(scores), then the weighted sum of the rows of values
    exps = [math.exp(x - max(scores)) for x in scores]
    return [sum(e / sum(exps) * row[i] for e, row in zip(exps, values)) for i in range(len(values[0]))]


def slots(seq, v):  # layer 1's answer: e of the previous token, zeros at position 0
    return [[0.0] * v if t == 0 else [float(x == seq[t - 1]) for x in range(v)] for t in range(len(seq))]


expected = [weighted(*c[1:]) if c[0] == "attend" else slots(*c[1:]) if c[0] == "previous_slot"
            else latest_follower(c[1]) for c in cases]


def unseen(rng):
    rows = [[rng.randint(-3, 3) for _ in range(2)] for _ in range(4)]
    out = [["attend", [round(rng.uniform(-900, 900), 1) for _ in range(4)], rows]]
    for i in range(6):
        v = rng.randint(2, 8)
        seq = [rng.randrange(v) for _ in range(rng.randint(1, 24))]
        out.append(["previous_slot" if i == 0 else "predict_next", seq, v])
    return out


# %% check
defines = ["attend", "previous_slot", "predict_next"]


def result(you, case):
    name, *args = case
    if name == "attend":
        return list(you.attend(list(args[0]), [list(r) for r in args[1]]))
    if name == "previous_slot":
        return [list(r) for r in you.previous_slot(list(args[0]), args[1])]
    return list(you.predict_next(list(args[0]), args[1]))


def show(case):
    name, *args = case
    return f"{name}({', '.join(repr(a) for a in args)})"


# %% hint
# `attend` 就是 C3 第 1 课的 softmax 加权求和：`top = max(scores)`，`math.exp(s - top)`，除以总和得权重，再对每一维求 $\sum_j w_j \cdot$`values[j][i]`。

# %% hint
# 第 1 层的分数是 `[BETA * dot(q, k) for k in keys]`：只有 $j = t-1$ 得到 $\beta$，$e^{-1000}$ 在浮点里就是 0，所以 `attend` 返回的正好是 $e_{x_{t-1}}$。

# %% hint
# 第 2 层：`scores = [BETA * dot(q, p[j]) + j for j in range(t + 1)]`；`max(scores) < BETA` 就是 `None`，否则 `y = attend(scores, values)`，预测是 `y.index(max(y))`。
