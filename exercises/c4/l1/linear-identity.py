# %% exercise
# title: 线性方案的恒等式，用随机数验一遍
# time_limit: 3

# %% task
# {%- set lf = model("linear-fit") %}
# {%- set out = lf.view(lf.PARAMS).out %}
# ③ 的朴素方案是 $\hat y = a\,p + b\,n + c$。③ 证明了：不管 $a$、$b$、$c$ 取什么，$\hat y(1,0) + \hat y(0,1)$ 都等于 $\hat y(1,1) + \hat y(0,0)$。现在用随机数验一遍。
#
# 1. 写 `yhat(a, b, c, p, n)`，返回 $a\,p + b\,n + c$；
# 2. 写 `sides(a, b, c)`，返回两个数 `(左边, 右边)`：左边是 $\hat y(1,0) + \hat y(0,1)$，右边是 $\hat y(1,1) + \hat y(0,0)$；
# 3. 起始代码会用 `random.uniform(-10, 10)` 抽很多组 $a, b, c$：把两边相等的组数记进 `equal`，最后的 `share` 是相等的比例。
#
# 浮点数按不同的顺序相加，结果可能差在最后一位：用 `math.isclose(left, right)` 比较，不要用 `==`（用 `==` 试一次，看看 `share` 会变成多少）。
#
# 四句评价的目标，左边是 {{ out["target-left"] }}，右边是 {{ out["target-right"] }}。既然任何 $a, b, c$ 都让两边相等，线性方案就不可能把四句都判对。

# %% starter
import math
import random


def yhat(a, b, c, p, n):
    ...


def sides(a, b, c):
    left = ...   # ŷ(1,0) + ŷ(0,1)
    right = ...  # ŷ(1,1) + ŷ(0,0)
    return left, right


trials, equal = 1000, 0
for _ in range(trials):
    a, b, c = (random.uniform(-10, 10) for _ in range(3))
    left, right = sides(a, b, c)
    ...  # 两边相等（用 math.isclose 比）就把 equal 加 1

share = equal / trials
print(f"{equal} / {trials} 组两边相等")

# %% answer
import math
import random


def yhat(a, b, c, p, n):
    return a * p + b * n + c


def sides(a, b, c):
    left = yhat(a, b, c, 1, 0) + yhat(a, b, c, 0, 1)
    right = yhat(a, b, c, 1, 1) + yhat(a, b, c, 0, 0)
    return left, right


trials, equal = 1000, 0
for _ in range(trials):
    a, b, c = (random.uniform(-10, 10) for _ in range(3))
    left, right = sides(a, b, c)
    if math.isclose(left, right):
        equal += 1

share = equal / trials
print(f"{equal} / {trials} 组两边相等")

# %% cases
lf = model("linear-fit")
start = lf.PARAMS  # the widget's first a, b, c
abc = [start["a"], start["b"], start["c"]]
cases = [["yhat", *abc, p, n] for _, p, n, _ in lf.REVIEWS] + [["sides", *abc], ["share"]]
expected = [lf.predict(start, p, n) for _, p, n, _ in lf.REVIEWS]
expected += [[lf.predict(start, 1, 0) + lf.predict(start, 0, 1), lf.predict(start, 1, 1) + lf.predict(start, 0, 0)], 1.0]


def unseen(rng):
    def abc():
        return [round(rng.uniform(-10, 10), 3) for _ in range(3)]
    out = [["yhat", *abc(), rng.randint(0, 1), rng.randint(0, 1)] for _ in range(6)]
    return out + [["sides", *abc()] for _ in range(6)]


# %% check
defines = ["yhat", "sides", "share"]


def result(you, case):
    if case[0] == "share":
        return you.share
    return getattr(you, case[0])(*case[1:])


def show(case):
    if case[0] == "share":
        return "share（两边相等的比例）"
    return f"{case[0]}({', '.join(str(v) for v in case[1:])})"


# %% hint
# `sides` 里直接调用 `yhat`：左边是 `yhat(a, b, c, 1, 0) + yhat(a, b, c, 0, 1)`，右边同理。

# %% hint
# 循环里写 `if math.isclose(left, right): equal += 1`。用 `==` 的话，一小部分随机组会因为舍入差在最后一位而被算成「不相等」。
