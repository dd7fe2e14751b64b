# %% exercise
# title: 残差的导数：8 条路径之和，再用有限差分核对
# time_limit: 3

# %% task
# {%- set rp = model("residual-paths") %}
# {%- set half = rp.view(rp.PARAMS) %}
# ⑤ 的三层残差网络，每层 $F_k(x) = w_k\,x$，每层做 $x \leftarrow x + w_k\,x$。写三个函数：
#
# 1. `forward(w, x)`：按这个规则一层层算，返回最后的输出；
# 2. `paths(w)`：返回每条路径的贡献组成的列表。每一层要么穿过（乘 $w_k$），要么跳过（乘 1），所以 $L$ 层一共 $2^L$ 条路；
# 3. `slope(w, x)`：用有限差分估计导数，$\dfrac{dy}{dx} \approx \dfrac{f(x + h) - f(x - h)}{2h}$，$h$ 取 `1e-6` 左右。
#
# ⑤ 里 $w_k$ 都取 {{ half.out.w1 }}（已经替你定义成 `w`）：{{ rp.paths(half.params.w) | length }} 条路径的和是 {{ half.out.sum }}，等于 ${{ half.out["res-formula"] }}$。写对了，`sum(paths(w))` 和 `slope(w, 1.0)` 都会得到它：把导数拆成路径之和，和直接量斜率，是同一个数。检查还会换别的层数和随机的 $w$。

# %% starter
def forward(w, x):
    for wk in w:
        ...  # x 加上这一层的输出 wk * x
    return x


def paths(w):
    result = [1.0]  # 一层都还没经过：只有一条路，贡献 1
    for wk in w:
        ...  # 每条已有的路分成两条：跳过这一层（乘 1）、穿过这一层（乘 wk）
    return result


def slope(w, x, h=1e-6):
    return 0.0  # 改成有限差分


print(len(paths(w)), "条路径：", sorted(paths(w)))
print("路径之和：", sum(paths(w)))
print("有限差分：", slope(w, 1.0))

# %% answer
def forward(w, x):
    for wk in w:
        x = x + wk * x
    return x


def paths(w):
    result = [1.0]
    for wk in w:
        result = [r for r in result] + [r * wk for r in result]
    return result


def slope(w, x, h=1e-6):
    return (forward(w, x + h) - forward(w, x - h)) / (2 * h)


print(len(paths(w)), "条路径：", sorted(paths(w)))
print("路径之和：", sum(paths(w)))
print("有限差分：", slope(w, 1.0))

# %% cases
rp = model("residual-paths")
w = rp.PARAMS["w"]
given = {"w": w}
cases = [["forward", w, 1.0], ["paths", w], ["slope", w, 1.0]]
contributions = [p["value"] for p in rp.paths(w)]
expected = [rp.forward(w)[-1], sorted(contributions), sum(contributions)]


def unseen(rng):
    out = []
    for layers in (1, 2, 4, 5):
        ws = [round(rng.uniform(-1, 1), 2) for _ in range(layers)]
        x = round(rng.uniform(-2, 2), 2)
        out += [["forward", ws, x], ["paths", ws], ["slope", ws, x]]
    return out


# %% check
defines = ["forward", "paths", "slope"]
tolerance = 1e-6  # a central difference of this linear function is exact up to rounding


def result(you, case):
    if case[0] == "paths":
        return sorted(you.paths(case[1]))  # in any order
    return getattr(you, case[0])(*case[1:])


def show(case):
    return f"{case[0]}({', '.join(str(v) for v in case[1:])})"


# %% hint
# `forward` 的循环里只差一行：`x = x + wk * x`。

# %% hint
# `paths` 每过一层，列表长度翻倍：`result = [r for r in result] + [r * wk for r in result]`（前一半跳过这一层，后一半穿过它）。

# %% hint
# `slope` 就是把 `forward` 在 $x + h$ 和 $x - h$ 各算一次：`(forward(w, x + h) - forward(w, x - h)) / (2 * h)`。
