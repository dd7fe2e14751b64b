# %% exercise
# title: 健康检查：找出失败的训练
# time_limit: 3

# %% task
# {%- set sim = model("seeds-simulator") %}
# {%- set N = facts.noise %}
# {%- set w = N.worked %}
# {%- set ex = {"baseline": w.losses.baseline.values() | list, "control": w.losses.control.values() | list} %}
# {%- set r = sim.health_check(ex) %}
# 把 ④ 第 1 步写成代码：`health(arms)`。`arms` 是一个字典，每个臂一个列表，列表里是这个臂每次训练在同一步的损失。返回列表 `[T, failed]`：
#
# - `T`：门槛。每次训练的残差是它的损失减本臂的**中位数**；只用至少有 3 次训练的臂，把这些残差的绝对值取中位数，乘 {{ N.robust }}，得到稳健尺度；$T = \max({{ N.fail_scales }} \times \text{尺度},\ {{ N.fail_floor }})$。没有哪个臂够 3 次训练时，$T = {{ N.fail_floor }}$；
# - `failed`：一个字典 `{臂名: [位置, ...]}`，每个臂一项，是残差**大于** $T$ 的训练在列表里的位置（从 0 数起，从小到大）；没有失败的臂给空列表。
#
# 写对了，给出的 `example`（⑤ 的两个臂）得到 $T = {{ r[0] | num(3) }}$，{%- set bk = w.losses.baseline.keys() | list %}失败的是基线列表里{% for i in r[1].baseline %}位置 {{ i }}（种子 {{ bk[i] }}）{{ "、" if not loop.last }}{% endfor %}，即 `failed` 是 `{"baseline": {{ r[1].baseline }}, "control": {{ r[1].control }}}`。检查还会换别的臂：有的没有失败，有的只有两次训练。

# %% starter
def median(xs):
    ...  # 排好序取中间那个；偶数个时取中间两个的平均


def health(arms):
    # 1. 每个臂的中位数；每次训练的残差 = 损失 - 本臂中位数
    # 2. 至少 3 次训练的臂：所有残差取绝对值，再取中位数，乘 1.4826
    # 3. T = max(6 * 尺度, 0.1)；没有这样的臂时 T = 0.1
    # 4. 残差 > T 的训练判为失败，记下它的位置
    ...


print(health(example))

# %% answer
def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2


def health(arms):
    mid = {k: median(v) for k, v in arms.items()}
    res = [x - mid[k] for k, v in arms.items() if len(v) >= 3 for x in v]
    if res:
        T = max(6 * 1.4826 * median([abs(r) for r in res]), 0.1)
    else:
        T = 0.1
    failed = {k: [i for i, x in enumerate(v) if x - mid[k] > T] for k, v in arms.items()}
    return [T, failed]


print(health(example))

# %% cases
sim = model("seeds-simulator")
w = facts["noise"]["worked"]
example = {"baseline": list(w["losses"]["baseline"].values()), "control": list(w["losses"]["control"].values())}
given = {"example": example}
cases = [[example],
         [{"a": [5.0, 5.01, 5.03], "b": [5.2, 5.18]}],
         [{"a": [4.90, 4.93, 4.91, 4.95], "b": [5.31, 5.30]}]]
expected = [sim.health_check(*c) for c in cases]


def unseen(rng):
    out = []
    for _ in range(10):
        arms = {}
        for k in range(rng.randint(1, 4)):
            n = rng.randint(2, 7)
            centre = round(rng.uniform(4.8, 5.3), 2)
            xs = [round(centre + rng.gauss(0, 0.02), 4) for _ in range(n)]
            if n >= 3 and rng.random() < 0.5:
                i = rng.randrange(n)
                xs[i] = round(xs[i] + rng.uniform(0.25, 0.5), 4)  # a failed run
            arms["arm" + str(k)] = xs
        out.append([arms])
    return out

# %% check
defines = ["health"]


def result(you, case):
    T, failed = you.health({k: list(v) for k, v in case[0].items()})
    return [T, {k: sorted(v) for k, v in failed.items()}]


def show(case):
    return f"health({case[0]})"

# %% hint
# 中位数：`xs = sorted(xs)`，`n = len(xs)`，`(xs[n // 2] + xs[(n - 1) // 2]) / 2`——奇数个时这两个下标是同一个。

# %% hint
# 尺度只用**至少 3 次训练**的臂的残差，但每个臂（包括只有两次的）都要检查、都要在 `failed` 里有一项。门槛只看**高出**中位数的一侧：`x - 中位数 > T`，不取绝对值。
