# %% exercise
# title: 亲手叠几层：Pre-LN 和 Post-LN 的残差流
# time_limit: 3

# %% task
# {%- set npl = model("norm-placement") %}
# {%- set ex = npl.STACK_EXAMPLE %}
# {%- set f = npl.sublayer(ex.w1, ex.w2) %}
# {%- set pre = npl.stack_rms(ex.x, f, ex.n, "pre") %}
# {%- set post = npl.stack_rms(ex.x, f, ex.n, "post") %}
# 「归一化以后，残差流就不会变大了」对不对（误解一）？用一个 token、一个子层，亲手叠 {{ ex.n }} 次看看。写两个函数：
#
# - `pre_stack(x, f, n)`：Pre-LN，每次写入 $x \leftarrow x + f(\mathrm{norm}(x))$；
# - `post_stack(x, f, n)`：Post-LN，每次写入 $x \leftarrow \mathrm{norm}(x + f(x))$。
#
# `x` 是一个 token 的向量（列表），`f` 是一个子层（输入一个列表，返回同样长的列表），`n` 是写入次数。两个函数都返回 $n$ 个数：每次写入之后残差流的 RMS，$\sqrt{\tfrac{1}{d}\sum_i x_i^2}$（不加 $\epsilon$）。$\mathrm{norm}$ 是增益为 1 的 RMSNorm，$\epsilon = 10^{-5}$ 加在根号里面；起始代码里已经写好了 `rms`、`rms_norm` 和子层 `f`（$f(h) = \mathrm{ReLU}(h W_1)\, W_2$，用题目给的 `W1`、`W2`）。
#
# 写对了，给定的 $x$（RMS {{ npl.rms(ex.x) | num(2) }}）写 {{ ex.n }} 次：Pre-LN 的 RMS 依次是 {{ pre | map("num", 2) | join("、") }}，越写越大；Post-LN 每次都是 {{ post[0] | num(3) }}：不管 $x$ 原来多大，每次相加之后流都被拉回 RMS 1（差的那一点点来自 $\epsilon$）。Pre-LN 归一化的只是子层读到的副本，流本身照样变大。检查还会换别的 $x$、别的子层和别的 $n$。

# %% starter
import math


def rms(v):
    return math.sqrt(sum(t * t for t in v) / len(v))


def rms_norm(v, eps=1e-5):
    # 增益为 1 的 RMSNorm：除以 sqrt(均方 + eps)
    r = math.sqrt(sum(t * t for t in v) / len(v) + eps)
    return [t / r for t in v]


def f(h):
    # 一个子层：ReLU(h W1) W2（W1、W2 题目已给）
    a = [max(0.0, sum(p * q for p, q in zip(h, col)))
         for col in zip(*W1)]
    return [sum(p * q for p, q in zip(a, col))
            for col in zip(*W2)]


def pre_stack(x, f, n):
    out = []
    for _ in range(n):
        ...  # x ← x + f(rms_norm(x))，逐个元素相加
        out.append(rms(x))
    return out


def post_stack(x, f, n):
    out = []
    for _ in range(n):
        ...  # x ← rms_norm(x + f(x))
        out.append(rms(x))
    return out


print("Pre-LN ：", pre_stack(x, f, 6))
print("Post-LN：", post_stack(x, f, 6))

# %% answer
import math


def rms(v):
    return math.sqrt(sum(t * t for t in v) / len(v))


def rms_norm(v, eps=1e-5):
    # 增益为 1 的 RMSNorm：除以 sqrt(均方 + eps)
    r = math.sqrt(sum(t * t for t in v) / len(v) + eps)
    return [t / r for t in v]


def f(h):
    # 一个子层：ReLU(h W1) W2（W1、W2 题目已给）
    a = [max(0.0, sum(p * q for p, q in zip(h, col)))
         for col in zip(*W1)]
    return [sum(p * q for p, q in zip(a, col))
            for col in zip(*W2)]


def pre_stack(x, f, n):
    out = []
    for _ in range(n):
        w = f(rms_norm(x))  # 子层读归一化后的副本
        x = [a + b for a, b in zip(x, w)]  # 加回没归一化的流
        out.append(rms(x))
    return out


def post_stack(x, f, n):
    out = []
    for _ in range(n):
        w = f(x)  # 子层直接读流
        x = rms_norm([a + b for a, b in zip(x, w)])  # 相加之后整个流归一化
        out.append(rms(x))
    return out


print("Pre-LN ：", pre_stack(x, f, 6))
print("Post-LN：", post_stack(x, f, 6))

# %% cases
# Expected values from the widget's own stack (norm-placement's stack_rms): one source for the math.
npl = model("norm-placement")
ex = npl.STACK_EXAMPLE
given = {"x": ex["x"], "W1": ex["w1"], "W2": ex["w2"]}
silent = [[0.0] * len(ex["x"]) for _ in ex["w2"]]  # a sub-layer that writes nothing
cases = [["pre", ex["x"], ex["w1"], ex["w2"], ex["n"]],
         ["post", ex["x"], ex["w1"], ex["w2"], ex["n"]],
         ["pre", ex["x"], ex["w1"], silent, 3],
         ["post", ex["x"], ex["w1"], silent, 3]]
expected = [npl.stack_rms(x, npl.sublayer(w1, w2), n, place) for place, x, w1, w2, n in cases]


def unseen(rng):
    out = []
    for _ in range(6):
        d, hidden, n = rng.randint(2, 6), rng.randint(2, 8), rng.randint(1, 10)
        x = [round(rng.uniform(-3, 3), 2) for _ in range(d)]
        w1 = [[round(rng.gauss(0, (2 / d) ** 0.5), 3) for _ in range(hidden)] for _ in range(d)]
        w2 = [[round(rng.gauss(0, (1 / hidden) ** 0.5), 3) for _ in range(d)] for _ in range(hidden)]
        out += [["pre", x, w1, w2, n], ["post", x, w1, w2, n]]
    return out


# %% check
defines = ["pre_stack", "post_stack"]


def sublayer(w1, w2):
    """h -> relu(h W1) W2, the sub-layer each case hands to the student's function."""
    def f(h):
        a = [max(0.0, sum(h[i] * w1[i][j] for i in range(len(h)))) for j in range(len(w1[0]))]
        return [sum(a[j] * w2[j][k] for j in range(len(a))) for k in range(len(w2[0]))]
    return f


def result(you, case):
    place, x, w1, w2, n = case
    stack = you.pre_stack if place == "pre" else you.post_stack
    return stack(list(x), sublayer(w1, w2), n)


def show(case):
    place, x, w1, w2, n = case
    if not any(v for row in w2 for v in row):
        sub = "f 什么都不写：W2 全是 0"
    else:
        sub = f"f(h) = ReLU(h W1) W2，W1 是 {len(w1)}×{len(w1[0])}"
    return f"{place}_stack({x}, f, {n})（{sub}）"


# %% hint
# 列表不能直接用 `+` 相加：`x + w` 会把两个列表接起来，长度翻倍。逐个元素相加：`[a + b for a, b in zip(x, w)]`。

# %% hint
# 两种放法只差在归一化的位置。Pre-LN：子层读 `rms_norm(x)`，写回的结果加到**没有归一化的** `x` 上。Post-LN：子层直接读 `x`，相加之后再对整个和做 `rms_norm`。

# %% hint
# 循环里两行：Pre-LN 是 `w = f(rms_norm(x))`、`x = [a + b for a, b in zip(x, w)]`；Post-LN 是 `w = f(x)`、`x = rms_norm([a + b for a, b in zip(x, w)])`。
