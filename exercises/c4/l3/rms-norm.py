# %% exercise
# title: 亲手写 RMSNorm（增益写成 1 + w）
# time_limit: 3

# %% task
# {%- set nt = model("norm-token") %}
# {%- set x0 = nt.PARAMS.x %}
# 把 ④ 第 4 步和第 5 步的式子写成代码：`rms_norm(x, w, eps)`。
#
# - `x`：一个 token 的 $d$ 个特征（一个列表）；
# - `w`：$d$ 个数，实际乘的增益是 $1 + w_i$（$w$ 全为 0 时增益就是 1）；
# - `eps`：加在均方里、根号里面的那个小数。
#
# 返回 $d$ 个数的列表：$x_i \,/\, \sqrt{\tfrac{1}{d}\sum_j x_j^2 + \epsilon} \cdot (1 + w_i)$。写对了，⑤ 的 $x = ({{ x0 | join(", ") }})$、$w$ 全 0、$\epsilon = 10^{-5}$ 得到 $({{ nt.rms_norm(x0).out | map("num", 3) | join(", ") }})$。检查还会换别的长度、别的 $w$ 和 $\epsilon$，包括全是 0 的向量。

# %% starter
import math


def rms_norm(x, w, eps):
    # 1. 均方：每个数平方，取平均
    # 2. 分母：均方加上 eps，再开根号
    # 3. 每个数除以分母，再乘 (1 + w[i])
    ...


print(rms_norm([1.0, 2.0, 3.0, 6.0], [0.0, 0.0, 0.0, 0.0], 1e-5))

# %% answer
import math


def rms_norm(x, w, eps):
    ms = sum(v * v for v in x) / len(x)
    denom = math.sqrt(ms + eps)
    return [v / denom * (1 + wi) for v, wi in zip(x, w)]


print(rms_norm([1.0, 2.0, 3.0, 6.0], [0.0, 0.0, 0.0, 0.0], 1e-5))

# %% cases
nt = model("norm-token")
x0 = nt.PARAMS["x"]
cases = [[x0, [0.0] * len(x0), 1e-5], [x0, [0.5, 0.0, -0.5, 0.0], 1e-5], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 1e-5]]
plain = nt.rms_norm(x0, 0.0, 1e-5)["out"]
expected = [plain, [v * (1 + wi) for v, wi in zip(plain, cases[1][1])], [0.0, 0.0, 0.0]]


def unseen(rng):
    out = []
    for _ in range(10):
        d = rng.randint(1, 6)
        out.append([[round(rng.uniform(-5, 5), 2) for _ in range(d)],
                    [round(rng.uniform(-1, 1), 2) for _ in range(d)], rng.choice([1e-5, 1e-2, 1.0])])
    return out


# %% check
defines = ["rms_norm"]


def result(you, case):
    x, w, eps = case
    return you.rms_norm(list(x), list(w), eps)


def show(case):
    x, w, eps = case
    return f"rms_norm({x}, {w}, {eps:g})"


# %% hint
# 均方是 `sum(v * v for v in x) / len(x)`：先平方再平均，不要先平均再平方。

# %% hint
# {%- set nt = model("norm-token") %}
# 用 ⑤ 的数核对：$x = ({{ nt.PARAMS.x | join(", ") }})$ 的均方是 {{ nt.rms_norm(nt.PARAMS.x).ms | num(2) }}，分母是 {{ nt.rms_norm(nt.PARAMS.x).denom | num(3) }}。

# %% hint
# 增益是 `1 + w[i]`，不是 `w[i]`：$w$ 全为 0 时，输出就是 $x$ 除以分母。用 `zip(x, w)` 同时取出 $x_i$ 和 $w_i$。
