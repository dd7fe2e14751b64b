# %% exercise
# title: 亲手写一个带因果掩码的注意力头
# time_limit: 3

# %% task
# {%- set toy = model("attention-toy") %}
# {%- set m = toy.matrices("plain") %}
# {%- set m2 = toy.matrices("inserted") %}
# {%- set at = m2.tokens.index("给了") %}
# 写 `attend(Q, K, V)`：$Q$、$K$ 是 $T \times d_k$，$V$ 是 $T \times d_v$（都是列表的列表，第 $t$ 行是第 $t$ 个 token）。返回 $T \times d_v$：第 $t$ 行是
#
# $$\sum_{j \le t} \mathrm{softmax}_j\!\left(\frac{q_t \cdot k_j}{\sqrt{d_k}}\right) v_j$$
#
# 只对 $j \le t$ 做 softmax（因果掩码），分母是 $\sqrt{d_k}$。页面上已经给好了 ⑤ 那句「{{ m.tokens | join("") }}」的 `Q`、`K`、`V`；写对了，$t = 3$ 那一行（「给了」）是 $({{ toy.head(m.Q, m.K, m.V)[3] | map("num", 3) | join(", ") }})$。检查还会换别的 $T$、$d_k$、$d_v$ 和别的数。
#
# 写对之后回到这一课的问题：`Q2`、`K2`、`V2` 是插入「昨天」的那句「{{ m2.tokens | join("") }}」。对它运行你的 `attend`，看「给了」（现在是 $t = {{ at }}$）取回了几成小明，再和 ③ 里固定位置权重的结果比一比。

# %% starter
import math


def attend(Q, K, V):
    T, d_k = len(Q), len(K[0])
    out = []
    for t in range(T):
        # 1. 分数：q_t 和每个 k_j（j <= t）的点积，除以 sqrt(d_k)
        # 2. softmax 变成权重
        # 3. 用权重把 v_j 加起来
        out.append([0.0] * len(V[0]))
    return out


for row in attend(Q, K, V):
    print(row)
# 写对之后：插入「昨天」的那句
# for row in attend(Q2, K2, V2):
#     print(row)

# %% answer
import math


def attend(Q, K, V):
    T, d_k = len(Q), len(K[0])
    out = []
    for t in range(T):
        scores = [sum(a * b for a, b in zip(Q[t], K[j])) / math.sqrt(d_k) for j in range(t + 1)]
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        norm = sum(exps)
        w = [e / norm for e in exps]
        out.append([sum(w[j] * V[j][i] for j in range(t + 1)) for i in range(len(V[0]))])
    return out


for row in attend(Q, K, V):
    print(row)

# %% cases
toy = model("attention-toy")
m = toy.matrices("plain")
m2 = toy.matrices("inserted")
given = {"Q": m["Q"], "K": m["K"], "V": m["V"], "Q2": m2["Q"], "K2": m2["K"], "V2": m2["V"]}
cases = [[m["Q"], m["K"], m["V"]], [m2["Q"], m2["K"], m2["V"]], [[[1.0]], [[1.0]], [[2.0, 3.0]]],
         [[[0.0, 3.0], [3.0, 0.0], [1.0, 1.0]], [[1.0, 0.0], [0.0, 1.0], [2.0, -2.0]], [[1.0], [2.0], [3.0]]]]
expected = [toy.head(*c) for c in cases]


def unseen(rng):
    out = []
    for _ in range(6):
        T, d_k, d_v = rng.randint(1, 5), rng.randint(1, 3), rng.randint(1, 3)
        mat = lambda rows, cols: [[round(rng.uniform(-2, 2), 2) for _ in range(cols)] for _ in range(rows)]
        out.append([mat(T, d_k), mat(T, d_k), mat(T, d_v)])
    return out


# %% check
defines = ["attend"]


def result(you, case):
    Q, K, V = case
    return you.attend([list(r) for r in Q], [list(r) for r in K], [list(r) for r in V])


def show(case):
    Q, K, V = case
    return f"attend(Q={Q}, K={K}, V={V})"


# %% hint
# 第 $t$ 行只看 $j = 0, 1, \dots, t$：`range(t + 1)`。第一行（$t = 0$）只有自己，权重是 1，输出就是 $v_0$。

# %% hint
# {%- set toy = model("attention-toy") %}
# {%- set m = toy.matrices("plain") %}
# {%- set wk = toy.worked("plain", "给了") %}
# 用「给了」核对：它的 $q = ({{ wk.q | map("num") | join(", ") }})$，{{ wk.scores | length }} 个分数是 {{ wk.scores | map("num", 3) | join("、") }}；取指数得 {{ wk.exps | map("num", 2) | join("、") }}，加起来 {{ wk.total | num(2) }}，权重是 {{ wk.weights | map("num", 3) | join("、") }}。

# %% hint
# softmax 用上一题的稳妥写法：先减去最大的分数再取指数。
