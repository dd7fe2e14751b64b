# %% exercise
# title: 亲手写 SwiGLU 的中间值
# time_limit: 3

# %% task
# {%- set ac = model("activation-curves") %}
# 把 ③ 第三步的式子写成代码：`swiglu(g, u)`，`g` 是门这一路的读数 $x W_{\text{gate}}$，`u` 是上投影的读数 $x W_{\text{up}}$（长度相同的两个列表），返回逐元素的 $\mathrm{SiLU}(g_i) \cdot u_i$，其中 $\mathrm{SiLU}(z) = z \cdot \sigma(z) = \dfrac{z}{1 + e^{-z}}$。
#
# 写对了，`swiglu([2.0, -1.0, 0.0], [3.0, 3.0, 3.0])` 得到约 `[{{ (ac.silu(2.0) * 3) | round(3) }}, {{ (ac.silu(-1.0) * 3) | round(3) }}, 0.0]`：门是负数时，乘出来也可以是负的。检查还会换别的长度，包括很大、很负的读数（$z = -1000$ 时 $e^{-z}$ 会溢出，想想怎么写才不出错）。

# %% starter
import math


def silu(z):
    ...  # z * sigmoid(z)


def swiglu(g, u):
    ...  # 逐元素：silu(g[i]) * u[i]


print(swiglu([2.0, -1.0, 0.0], [3.0, 3.0, 3.0]))

# %% answer
import math


def silu(z):
    if z >= 0:
        return z / (1.0 + math.exp(-z))
    e = math.exp(z)  # for very negative z, exp(-z) would overflow
    return z * e / (1.0 + e)


def swiglu(g, u):
    return [silu(gi) * ui for gi, ui in zip(g, u)]


print(swiglu([2.0, -1.0, 0.0], [3.0, 3.0, 3.0]))

# %% cases
ac = model("activation-curves")
cases = [[[2.0, -1.0, 0.0], [3.0, 3.0, 3.0]], [[-1000.0, 1000.0], [1.0, 0.5]]]
expected = [[ac.silu(g) * u for g, u in zip(*c)] for c in cases]


def unseen(rng):
    out = []
    for _ in range(8):
        d = rng.randint(1, 6)
        out.append([[round(rng.uniform(-8, 8), 2) for _ in range(d)], [round(rng.uniform(-3, 3), 2) for _ in range(d)]])
    return out


# %% check
defines = ["swiglu"]


def result(you, case):
    g, u = case
    return you.swiglu(list(g), list(u))


def show(case):
    return f"swiglu({case[0]}, {case[1]})"


# %% hint
# 先写 `silu(z)`：`z / (1 + math.exp(-z))`。再用 `zip(g, u)` 同时取出 $g_i$ 和 $u_i$。

# %% hint
# $z = -1000$ 时 `math.exp(1000)` 会报 OverflowError。$z < 0$ 时把分子分母同乘 $e^{z}$：$\dfrac{z\,e^{z}}{1 + e^{z}}$，这时 $e^{z}$ 很小，不会溢出。
