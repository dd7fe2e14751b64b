# %% exercise
# title: 同样的参数，两矩阵的 FFN 能有多宽
# time_limit: 3

# %% task
# {%- set a = facts.anchor %}
# ④ 第 3 步说 {{ a.name }} 的 FFN「比参数对齐的宽度宽得多」。反过来算：把门控版的权重原样交给第 1 课那种两矩阵的 FFN，它的中间维能有多宽？写 `two_matrix_width(d_ff)`：门控版有三个 $d \times d_{ff}$ 的矩阵，返回权重数相同的两矩阵版（$d \times w$ 和 $w \times d$）的中间维 $w$。写好以后算一算 {{ a.name }}（$d = {{ a.d | num | replace(",", "{,}") }}$，$d_{ff} = {{ a.d_ff | num | replace(",", "{,}") }}$）：换成两矩阵版，中间维是 $d$ 的几倍？比第 1 课的 $4d$ 宽还是窄？检查还会换别的 $d_{ff}$。

# %% starter
def two_matrix_width(d_ff):
    gated_weights_per_d = ...  # 三个 d x d_ff 矩阵，除以 d
    return ...  # 两矩阵版：2 x w 个（除以 d 之后），解出 w


print(two_matrix_width(17408))

# %% answer
def two_matrix_width(d_ff):
    gated_weights_per_d = 3 * d_ff
    return gated_weights_per_d / 2


print(two_matrix_width(17408))

# %% cases
gw = model("gate-width")
cases = [[facts["anchor"]["d_ff"]], [facts["llama2_7b"]["d_ff"]], [facts["deepseek67b"]["d_ff"]]]
expected = [gw.two_matrix_width(d_ff) for [d_ff] in cases]


def unseen(rng):
    return [[256 * rng.randint(4, 120)] for _ in range(8)]


# %% check
defines = ["two_matrix_width"]


def result(you, case):
    return float(you.two_matrix_width(case[0]))


def show(case):
    return f"two_matrix_width({case[0]})"


# %% hint
# 两边的权重数相等：$3 \cdot d \cdot d_{ff} = 2 \cdot d \cdot w$。$d$ 在两边都有，约掉。

# %% hint
# {%- set ll = facts.llama2_7b %}
# {%- set gw = model("gate-width") %}
# $w = \tfrac{3}{2} d_{ff}$。{{ ll.name }} 的 {{ ll.d_ff | num }} 得到 {{ gw.two_matrix_width(ll.d_ff) | num(0) }}，差不多正好是 $4d = {{ (4 * ll.d) | num | replace(",", "{,}") }}$：它就是按参数对齐定的宽度。
