# %% exercise
# title: 亲手写出两个神经元的 FFN
# time_limit: 3

# %% task
# {%- set xor = model("ffn-xor") %}
# {%- set b2 = xor.DESIGN["b2"] %}
# {%- set toy = xor.matrices(b2) %}
# 把 ④ 的式子 $\hat y = \max(0,\; x W_{\text{up}} + b_{\text{up}})\, W_{\text{down}}$ 写成代码。
#
# - `relu(z)`：一个数进，一个数出，负数截成 0；
# - `ffn(x, W_up, b_up, W_down)`：`x` 是一个 token 的 $d$ 个特征，`W_up` 有 $d$ 行、每行 $m$ 个数，`b_up` 有 $m$ 个数，`W_down` 有 $m$ 行、每行 $k$ 个数；返回 $k$ 个数组成的列表。
#
# ④ 的权重和四句评价的特征 $(p, n)$ 已经替你定义好（见起始代码上面）。写对了，四句评价依次得到{% for name, p, n, y in xor.REVIEWS %}「{{ name }}」{{ xor.forward("relu", b2, p, n)[2] | num }}{{ "、" if not loop.last }}{% endfor %}。
#
# 检查还会换别的宽度和权重来测 `ffn`（比如 $d = 3$、$m = 4$），所以别把例子里的 $d = {{ toy.W_up | length }}$、$k = {{ toy.W_down[0] | length }}$ 写死在循环里。

# %% starter
def relu(z):
    ...  # 负数变成 0，其余原样返回


def ffn(x, W_up, b_up, W_down):
    # 1. 读：z 的第 j 个数 = sum(x[i] * W_up[i][j]) + b_up[j]
    # 2. 过：h = 对 z 的每个数做 relu
    # 3. 写：输出的第 c 个数 = sum(h[j] * W_down[j][c])
    ...


for name, x in reviews.items():
    print(name, ffn(x, W_up, b_up, W_down))

# %% answer
def relu(z):
    return max(0.0, z)


def ffn(x, W_up, b_up, W_down):
    z = [sum(x[i] * W_up[i][j] for i in range(len(x))) + b_up[j]
         for j in range(len(b_up))]
    h = [relu(v) for v in z]
    return [sum(h[j] * W_down[j][c] for j in range(len(h)))
            for c in range(len(W_down[0]))]


for name, x in reviews.items():
    print(name, ffn(x, W_up, b_up, W_down))

# %% cases
xor = model("ffn-xor")
b2 = xor.DESIGN["b2"]
toy = xor.matrices(b2)
given = {**toy, "reviews": {name: [p, n] for name, p, n, _ in xor.REVIEWS}}
relu_inputs = (-1.5, 0.0, 2.0)
cases = [["relu", z] for z in relu_inputs]
cases += [["ffn", [p, n], toy["W_up"], toy["b_up"], toy["W_down"], name] for name, p, n, _ in xor.REVIEWS]
expected = [xor.relu(z) for z in relu_inputs] + [[xor.forward("relu", b2, p, n)[2]] for _, p, n, _ in xor.REVIEWS]


def unseen(rng):
    def numbers(count):
        return [round(rng.uniform(-2, 2), 2) for _ in range(count)]
    out = [["relu", round(rng.uniform(-3, 3), 2)] for _ in range(4)]
    for _ in range(12):
        d, m, k = rng.randint(1, 4), rng.randint(1, 5), rng.randint(1, 3)
        out.append(["ffn", numbers(d), [numbers(m) for _ in range(d)], numbers(m),
                    [numbers(k) for _ in range(m)], None])
    return out


# %% check
defines = ["relu", "ffn"]


def result(you, case):
    if case[0] == "relu":
        return you.relu(case[1])
    _, x, W_up, b_up, W_down, review = case
    return you.ffn(x, W_up, b_up, W_down)


def show(case):
    if case[0] == "relu":
        return f"relu({case[1]})"
    _, x, W_up, b_up, W_down, review = case
    if review:
        return f"「{review}」的 ffn({x}, W_up, b_up, W_down)"
    return f"ffn({x}, {W_up}, {b_up}, {W_down})"


# %% hint
# 先只写「读」：神经元的个数 $m$ 就是 `len(b_up)`，第 $j$ 个神经元把 `x[i] * W_up[i][j]` 对所有 $i$ 加起来，再加 `b_up[j]`。

# %% hint
# {%- set row = model("ffn-xor").matrix_steps("relu", model("ffn-xor").DESIGN["b2"], "不好吃") %}
# 用「不好吃」核对每一步：$x = ({{ row.x[0] }}, {{ row.x[1] }})$，读出 $z = ({{ row.z[0] | num }}, {{ row.z[1] | num }})$，过 ReLU 还是 $({{ row.h[0] | num }}, {{ row.h[1] | num }})$，写出 $\hat y = {{ row.y | num }}$。

# %% hint
# 输出有 $k$ 个数，$k$ 是 `len(W_down[0])`（④ 的例子里 $k = 1$，所以返回的是只有一个数的列表）。第 $c$ 个数是 `h[j] * W_down[j][c]` 对所有 $j$ 的和。
