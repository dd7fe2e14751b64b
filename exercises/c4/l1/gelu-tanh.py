# %% exercise
# title: 写出 GPT-2 的 GELU，复现 ⑤ 的四个输出
# time_limit: 3

# %% task
# {%- set xor = model("ffn-xor") %}
# {%- set b2 = xor.DESIGN["b2"] %}
# {%- set yhat = xor.predictions("gelu", b2) %}
# GPT-2 的 GELU 不是精确的 $z\,\Phi(z)$，而是它的 tanh 近似：
#
# $$
# \begin{aligned}
# \mathrm{GELU}(z) &= 0.5\, z\, \big(1 + \tanh u\big), \\
# u &= \sqrt{2/\pi}\, \big(z + 0.044715\, z^3\big)
# \end{aligned}
# $$
#
# 写 `gelu(z)`（用 `math.tanh`、`math.sqrt`、`math.pi`）。起始代码里的 `yhat(x)` 就是 ④ 的两个神经元，只是 ReLU 换成了你的 `gelu`；写对了，四句评价的输出是{% for name, p, n, y in xor.REVIEWS %}「{{ name }}」{{ yhat[name] | num(3) }}{{ "、" if not loop.last }}{% endfor %}，和 ⑤ 里一样。
#
# 检查还会随机取一些 $z$ 测 `gelu`。用 `math.erf` 写的精确形式和它只差在小数点后几位，但检查比的是 GPT-2 的这个公式，差一点也算不对。

# %% starter
import math


def gelu(z):
    ...  # GPT-2 的 tanh 近似


def yhat(x):
    """④ 的两个神经元，激活换成 gelu。"""
    z = [x[0] * W_up[0][j] + x[1] * W_up[1][j] + b_up[j] for j in range(2)]
    return sum(gelu(z[j]) * W_down[j][0] for j in range(2))


for name, x in reviews.items():
    print(name, round(yhat(x), 3))

# %% answer
import math


def gelu(z):
    return 0.5 * z * (1 + math.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))


def yhat(x):
    """④ 的两个神经元，激活换成 gelu。"""
    z = [x[0] * W_up[0][j] + x[1] * W_up[1][j] + b_up[j] for j in range(2)]
    return sum(gelu(z[j]) * W_down[j][0] for j in range(2))


for name, x in reviews.items():
    print(name, round(yhat(x), 3))

# %% cases
xor = model("ffn-xor")
b2 = xor.DESIGN["b2"]
toy = xor.matrices(b2)
given = {**toy, "reviews": {name: [p, n] for name, p, n, _ in xor.REVIEWS}}
inputs = sorted({z for _, p, n, _ in xor.REVIEWS for z in xor.forward("gelu", b2, p, n)[0]})
cases = [["gelu", z] for z in inputs]  # what the four reviews feed the activation
expected = [xor.gelu(z) for z in inputs]
outputs = xor.predictions("gelu", b2)
cases += [["review", name, [p, n], toy["W_up"], toy["b_up"], toy["W_down"]] for name, p, n, _ in xor.REVIEWS]
expected += [outputs[name] for name, *_ in xor.REVIEWS]

def unseen(rng):
    return [["gelu", round(rng.uniform(-5, 5), 3)] for _ in range(12)]


# %% check
defines = ["gelu"]


def result(you, case):
    if case[0] == "gelu":
        return you.gelu(case[1])
    _, name, x, W_up, b_up, W_down = case
    z = [sum(x[i] * W_up[i][j] for i in range(len(x))) + b_up[j] for j in range(len(b_up))]
    return sum(you.gelu(z[j]) * W_down[j][0] for j in range(len(z)))


def show(case):
    if case[0] == "gelu":
        return f"gelu({case[1]})"
    return f"「{case[1]}」的输出（④ 的权重，激活换成你的 gelu）"


# %% hint
# 一行就能写完：`0.5 * z * (1 + math.tanh(...))`，括号里是 `math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)`。

# %% hint
# {%- set xor = model("ffn-xor") %}
# 核对一个值：$\mathrm{GELU}(1) \approx {{ xor.gelu(1.0) | num(4) }}$，$\mathrm{GELU}(-1) \approx {{ xor.gelu(-1.0) | num(4) }}$。负半轴不是 0：这正是「难吃」的输出不再是 0 的原因。
