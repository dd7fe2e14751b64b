# %% exercise
# title: 一个门控神经元认出差评
# time_limit: 3

# %% task
# ③ 的乘积让「好吃」「不难吃」输出 1。这次反过来：让**差评**「不好吃」「难吃」输出 1，好评输出 0，也就是目标 $1 - (p + n - 2pn)$。一个单调激活的神经元同样做不到（第一步的论证换个方向照样成立）；用**两个线性读数相乘**：
#
# - `gate(p, n)`：门这一路的读数，形如 $a_g p + b_g n + c_g$；
# - `up(p, n)`：上投影的读数，形如 $a_u p + b_u n + c_u$。
#
# 选好这 6 个数，让 `gate(p, n) * up(p, n)` 在四句评价上都等于新目标：{% for name, p, n, y in model("gated-neuron").REVIEWS %}「{{ name }}」$(p, n) = ({{ p }}, {{ n }})$ 目标 {{ 1 - y }}{{ "；" if not loop.last else "。" }}{% endfor %}两个函数都必须是**线性读数**（检查会在 0、1 以外的点上核对这一点），不许用 `if`、`abs`、`max` 之类绕开。

# %% starter
def gate(p, n):
    return 1.0 * p + 0.0 * n + 0.0


def up(p, n):
    return 0.0 * p + 1.0 * n + 0.0


for p, n in [(1, 0), (1, 1), (0, 0), (0, 1)]:
    print((p, n), gate(p, n) * up(p, n))

# %% answer
def gate(p, n):
    return 1.0 - p - n


def up(p, n):
    return 1.0 - p - n


for p, n in [(1, 0), (1, 1), (0, 0), (0, 1)]:
    print((p, n), gate(p, n) * up(p, n))

# %% cases
reviews = model("gated-neuron").REVIEWS
cases = [["review", name, p, n] for name, p, n, _ in reviews] + [["linear", "gate"], ["linear", "up"]]
expected = [float(1 - y) for _, _, _, y in reviews] + [True, True]  # the bad reviews are 1 this time


def unseen(rng):
    # More points off the four reviews where each reading must still lie on its plane.
    return [["probe", rng.choice(["gate", "up"]), round(rng.uniform(-3, 3), 2), round(rng.uniform(-3, 3), 2)]
            for _ in range(6)]

# %% check
defines = ["gate", "up"]
# Points off the four reviews: a linear reading a*p + b*n + c is pinned by its values at
# (0, 0), (1, 0), (0, 1), and must give the same plane there.
PROBES = [(0.5, 0.25), (2.0, -1.0), (-1.5, 3.0)]


def on_plane(f, p, n):
    """Whether f(p, n) is the plane through f's values at (0, 0), (1, 0), (0, 1)."""
    c = f(0, 0)
    a, b = f(1, 0) - c, f(0, 1) - c
    return abs(f(p, n) - (a * p + b * n + c)) < 1e-9


def result(you, case):
    if case[0] == "review":
        _, name, p, n = case
        return float(you.gate(p, n) * you.up(p, n))
    f = you.gate if case[1] == "gate" else you.up
    if case[0] == "probe":
        return on_plane(f, case[2], case[3])
    return all(on_plane(f, p, n) for p, n in PROBES)


def show(case):
    if case[0] == "review":
        return f"「{case[1]}」的 gate({case[2]}, {case[3]}) * up({case[2]}, {case[3]})"
    if case[0] == "probe":
        return f"{case[1]}({case[2]}, {case[3]}) 是不是还在同一个线性读数上"
    return f"{case[1]} 是不是线性读数"


# %% hint
# 新目标是 $1 - p - n + 2pn$。把 $(a_g p + b_g n + c_g)(a_u p + b_u n + c_u)$ 展开，会出现 $p^2$、$n^2$、$pn$ 这几项。

# %% hint
# $p$、$n$ 只取 0 和 1，所以 $p^2 = p$、$n^2 = n$。③ 里两路都读 $p - n$ 时，$(p - n)^2$ 正是原来的目标；这次试试两路读同一个带常数项的读数。

# %% hint
# 两路都读 $1 - p - n$ 就行：$(1 - p - n)^2 = 1 - 2p - 2n + p^2 + n^2 + 2pn = 1 - p - n + 2pn$。两路读同一个数，就是 ④ 第 4 步说的「完全对齐」。
