# %% exercise
# title: 写一个不会溢出的 softmax
# time_limit: 3

# %% task
# 写 `softmax(scores)`：输入一串分数（列表），返回同样长的一串权重，每个都在 0 和 1 之间，加起来是 1：
#
# $$p_j = \frac{e^{s_j}}{\sum_i e^{s_i}}$$
#
# 直接照式子写，分数一大就出事：`math.exp(1000)` 在 Python 里直接报 `OverflowError`（在 float32 的 GPU 上则变成 inf，inf/inf 得到 NaN）。
# 检查会用上 $[1000, 1001, 1002]$ 这样的大分数，也会用 $[-1000, -1001]$ 这样的大负数（直接算，每一项都下溢成 0，0/0）。
# 提示：给每个分数减去同一个数，结果不变。

# %% starter
import math


def softmax(scores):
    exps = [math.exp(s) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


print(softmax([1.0, 2.0, 3.0]))
print(softmax([1000.0, 1001.0, 1002.0]))

# %% answer
import math


def softmax(scores):
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]


print(softmax([1.0, 2.0, 3.0]))
print(softmax([1000.0, 1001.0, 1002.0]))

# %% cases
toy = model("attention-toy")
cases = [[[1.0, 2.0, 3.0]], [[0.0, 0.0]], [[1000.0, 1001.0, 1002.0]], [[-1000.0, -1001.0]], [[800.0, -800.0, 0.0]],
         [[5.0]]]
expected = [toy.softmax(c[0]) for c in cases]


def unseen(rng):
    out = []
    for _ in range(8):
        n = rng.randint(1, 6)
        big = rng.choice([1.0, 100.0, 1000.0])
        out.append([[round(rng.uniform(-big, big), 2) for _ in range(n)]])
    return out


# %% check
defines = ["softmax"]


def result(you, case):
    return you.softmax(list(case[0]))


def show(case):
    return f"softmax({case[0]})"


# %% hint
# 先找出最大的分数 `top = max(scores)`，再算 `math.exp(s - top)`：最大的一项变成 $e^0 = 1$，别的都在 0 和 1 之间，不会溢出；分母至少是 1，也不会是 0。

# %% hint
# 为什么结果不变：$\dfrac{e^{s_j - c}}{\sum_i e^{s_i - c}} = \dfrac{e^{s_j} e^{-c}}{e^{-c} \sum_i e^{s_i}}$，$e^{-c}$ 上下约掉了。
