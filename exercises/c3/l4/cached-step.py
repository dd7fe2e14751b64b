# %% exercise
# title: 亲手写缓存版的一步注意力
# time_limit: 3

# %% task
# {%- set toy = model("attention-toy") %}
# {%- set m = toy.matrices("plain") %}
# {%- set full = toy.head(m.Q, m.K, m.V) %}
# 写 `step(cache, q, k, v)`：`cache` 是一个字典 `{"K": [...], "V": [...]}`，里面是前面各个 token 的键和值（一开始都是空列表）。新来一个 token，它的查询、键、值是 `q`、`k`、`v`（各是一行数）。`step` 要做两件事：
#
# 1. 把 `k`、`v` 接到 `cache["K"]`、`cache["V"]` 的末尾（前面的行一个也不改）；
# 2. 用 `q` 对缓存里的**每一个**键（包括刚放进去的自己）算分数 $q \cdot k_j / \sqrt{d_k}$，softmax 之后按权重把缓存里的值加起来，返回这一行。
#
# 不需要掩码：缓存里只有前文和自己，后面的 token 还没来。页面给好了 {{ lesson("c3/l1", "C3 第 1 课") }} ⑤ 那句「{{ m.tokens | join("") }}」的 `Q`、`K`、`V`。从空缓存开始，把 {{ m.tokens | length }} 个 token 依次交给 `step`，得到的 {{ m.tokens | length }} 行应该和**一次算完整张表**（带因果掩码的注意力头）一模一样；第 4 行（「给了」）是 $({{ full[3] | map("num", 3) | join(", ") }})$。检查会换别的长度、维数和数，一步一步喂给你的 `step`，和整张表重算的结果逐行比，还要看最后缓存里正好有几行。

# %% starter
import math


def step(cache, q, k, v):
    # 1. 把 k、v 接到缓存末尾
    # 2. q 对缓存里每个键的分数，除以 sqrt(d_k)，softmax
    # 3. 按权重把缓存里的值加起来
    return [0.0] * len(v)


cache = {"K": [], "V": []}
for t in range(len(Q)):
    print(t, step(cache, Q[t], K[t], V[t]))

# %% answer
import math


def step(cache, q, k, v):
    cache["K"].append(k)
    cache["V"].append(v)
    scores = [sum(a * b for a, b in zip(q, key)) / math.sqrt(len(q)) for key in cache["K"]]
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    norm = sum(exps)
    return [sum(e / norm * row[i] for e, row in zip(exps, cache["V"])) for i in range(len(v))]


cache = {"K": [], "V": []}
for t in range(len(Q)):
    print(t, step(cache, Q[t], K[t], V[t]))

# %% cases
toy = model("attention-toy")
m = toy.matrices("plain")
m2 = toy.matrices("inserted")
given = {"Q": m["Q"], "K": m["K"], "V": m["V"]}
cases = [[m["Q"], m["K"], m["V"]], [m2["Q"], m2["K"], m2["V"]], [[[1.0]], [[1.0]], [[2.0, 3.0]]],
         [[[0.0, 3.0], [3.0, 0.0], [1.0, 1.0]], [[1.0, 0.0], [0.0, 1.0], [2.0, -2.0]], [[1.0], [2.0], [3.0]]]]
# What the whole table gives, recomputed at once with the causal mask (C3 第 1 课's head), and the
# cache's length at the end: one key and one value per token.
expected = [{"rows": toy.head(*c), "cached": len(c[0])} for c in cases]


def unseen(rng):
    out = []
    for _ in range(6):
        T, d_k, d_v = rng.randint(2, 7), rng.randint(1, 4), rng.randint(1, 3)
        mat = lambda rows, cols: [[round(rng.uniform(-2, 2), 2) for _ in range(cols)] for _ in range(rows)]
        out.append([mat(T, d_k), mat(T, d_k), mat(T, d_v)])
    return out


# %% check
defines = ["step"]


def result(you, case):
    Q, K, V = case
    cache = {"K": [], "V": []}
    rows = [you.step(cache, list(Q[t]), list(K[t]), list(V[t])) for t in range(len(Q))]
    return {"rows": rows, "cached": len(cache["K"])}


def show(case):
    Q, K, V = case
    return f"从空缓存开始，依次 step 这 {len(Q)} 个 token：Q={Q}, K={K}, V={V}"


# %% hint
# 第一步缓存里只有自己：权重是 1，返回的就是 `v` 本身。第二步有两行，以此类推：第 $t$ 步的缓存正好是 C3 第 1 课里第 $t$ 行能看见的那些位置。

# %% hint
# 先 `append`，再算分数：新 token 也看它自己。分数除以 `math.sqrt(len(q))`，softmax 先减去最大的分数再取指数。

# %% hint
# 值的第 $i$ 个分量是 $\sum_j w_j \, v_j[i]$：对缓存里的每一行 `cache["V"][j]` 乘它的权重再相加。
