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
# 返回 $d$ 个数的列表：$x_i \,/\, \sqrt{\tfrac{1}{d}\sum_j x_j^2 + \epsilon} \cdot (1 + w_i)$。
#
# 这一课要归一化做到的，是「读到的输入和流有多大无关」。所以检查先看这一点：把 ⑤ 的 $x = ({{ x0 | join(", ") }})$ 每个数都乘上 1000，`rms_norm` 的输出应该和原来一样（$\epsilon$ 很小，由它带来的差别小到可以不计），$w$ 全 0 和 $w$ 不全为 0 各看一次。然后才逐个数核对：换别的 $x$、别的长度、别的 $w$ 和 $\epsilon$，包括全是 0 的向量；这些输入任务里不给出。

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
w0 = [0.0] * len(x0)
w1 = [0.5, 0.0, -0.5, 0.0]
# Visible: the lesson's property, scale invariance (the student's own output with x and with 1000 x).
cases = [["scale", x0, w0, 1e-5, 1000.0], ["scale", x0, w1, 1e-5, 1000.0]]
expected = [True, True]


def unseen(rng):
    # Hidden: the numbers themselves. First ⑤'s x (its output is the norm-token widget's, pinned in
    # tests/build/test_lesson_norm.py), with a gain, and the all-zero vector; then random ones.
    out = [["value", x0, w0, 1e-5], ["value", x0, w1, 1e-5], ["value", [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 1e-5]]
    for _ in range(10):
        d = rng.randint(1, 6)
        out.append(["value", [round(rng.uniform(-5, 5), 2) for _ in range(d)],
                    [round(rng.uniform(-1, 1), 2) for _ in range(d)], rng.choice([1e-5, 1e-2, 1.0])])
    return out


# %% check
defines = ["rms_norm"]


def same_after_scaling(you, x, w, eps, k):
    """Whether rms_norm(k x) gives what rms_norm(x) gives, each number within 1e-4 (relative for
    large ones). An output that is not d numbers comes back as it is (None while unfinished)."""
    plain = you.rms_norm(list(x), list(w), eps)
    scaled = you.rms_norm([k * v for v in x], list(w), eps)
    for out in (plain, scaled):
        if not isinstance(out, (list, tuple)) or len(out) != len(x):
            return out
    return all(abs(p - q) <= 1e-4 * max(1.0, abs(p)) for p, q in zip(plain, scaled))


def result(you, case):
    if case[0] == "scale":
        return same_after_scaling(you, *case[1:])
    _, x, w, eps = case
    return you.rms_norm(list(x), list(w), eps)


def show(case):
    if case[0] == "scale":
        _, x, w, eps, k = case
        return f"把 x = {x} 每个数乘 {k:g}，rms_norm(x, {w}, {eps:g}) 的输出是否不变"
    _, x, w, eps = case
    return f"rms_norm({x}, {w}, {eps:g})"


# %% hint
# 均方是 `sum(v * v for v in x) / len(x)`：先平方再平均，不要先平均再平方。

# %% hint
# {%- set nt = model("norm-token") %}
# 用 ⑤ 的数核对：$x = ({{ nt.PARAMS.x | join(", ") }})$ 的均方是 {{ nt.rms_norm(nt.PARAMS.x).ms | num(2) }}，分母是 {{ nt.rms_norm(nt.PARAMS.x).denom | num(3) }}。

# %% hint
# 增益是 `1 + w[i]`，不是 `w[i]`：$w$ 全为 0 时，输出就是 $x$ 除以分母。用 `zip(x, w)` 同时取出 $x_i$ 和 $w_i$。
