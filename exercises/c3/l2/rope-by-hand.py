# %% exercise
# title: 亲手写 RoPE，验证分数只看位置差
# time_limit: 3

# %% task
# {%- set rr = model("rope-rotation") %}
# 写 `rope(v, m)`：`v` 是一个偶数长度 $d$ 的列表（一个头的 $q$ 或 $k$），`m` 是它的位置。把相邻两维 $(v_{2i}, v_{2i+1})$ 配成一对，转 $m\theta_i$ 弧度，$\theta_i = 10000^{-2i/d}$：
#
# $$(x, y) \mapsto (x\cos\alpha - y\sin\alpha,\ x\sin\alpha + y\cos\alpha),\qquad \alpha = m\theta_i$$
#
# 返回转好的列表（长度不变）。页面给好了 `q`、`k`（各 {{ rr.HEAD_DIM // 8 }} 维）。写对之后，`score(q, k, 30, 20)` 和 `score(q, k, 130, 120)` 应该一样（都相差 10），`score(q, k, 31, 20)` 不一样。检查会换别的维数、向量和位置。

# %% starter
import math


def rope(v, m):
    d = len(v)
    out = list(v)
    # 对每一对 i = 0 .. d/2 - 1：角度 m * 10000 ** (-2 * i / d)，把 (v[2i], v[2i+1]) 转过去
    return out


def score(q, k, m, n):
    a, b = rope(q, m), rope(k, n)
    return sum(x * y for x, y in zip(a, b))


print(score(q, k, 30, 20), score(q, k, 130, 120), score(q, k, 31, 20))

# %% answer
import math


def rope(v, m):
    d = len(v)
    out = []
    for i in range(d // 2):
        angle = m * 10000 ** (-2 * i / d)
        x, y = v[2 * i], v[2 * i + 1]
        out.append(x * math.cos(angle) - y * math.sin(angle))
        out.append(x * math.sin(angle) + y * math.cos(angle))
    return out


def score(q, k, m, n):
    a, b = rope(q, m), rope(k, n)
    return sum(x * y for x, y in zip(a, b))


print(score(q, k, 30, 20), score(q, k, 130, 120), score(q, k, 31, 20))

# %% cases
rr = model("rope-rotation")
q = [1.0, 0.4, -0.3, 0.8, 0.5, -1.0, 0.2, 0.6]
k = [0.9, -0.5, 0.7, 0.1, -0.4, 0.3, 1.1, -0.2]
given = {"q": q, "k": k}
cases = [[q, 0], [q, 30], [k, 20], [q, 130], [k, 120], [[1.0, 0.0], 1], [[0.0, 2.0, 1.0, 1.0], 255]]
expected = [rr.rope_vector(v, m) for v, m in cases]


def unseen(rng):
    out = []
    for _ in range(6):
        d = 2 * rng.randint(1, 6)
        out.append([[round(rng.uniform(-2, 2), 2) for _ in range(d)], rng.randint(0, 500)])
    return out


# %% check
defines = ["rope"]


def result(you, case):
    v, m = case
    return you.rope(list(v), m)


def show(case):
    v, m = case
    return f"rope({v}, {m})"


# %% hint
# 第 $i$ 对是 `v[2 * i]` 和 `v[2 * i + 1]`，$i$ 从 0 数到 `d // 2 - 1`；每一对的角度不同：`m * 10000 ** (-2 * i / d)`。

# %% hint
# {%- set rr = model("rope-rotation") %}
# 核对第一对：位置 1 上，$(1, 0)$ 转 1 弧度，得 $(\cos 1, \sin 1) = ({{ rr.rope_vector([1.0, 0.0], 1)[0] | num(4) }}, {{ rr.rope_vector([1.0, 0.0], 1)[1] | num(4) }})$。

# %% hint
# 两个分数一样，是因为 $R(m\theta)q \cdot R(n\theta)k = q \cdot R((n-m)\theta)k$：每一对都只剩下相差的那个角度。
