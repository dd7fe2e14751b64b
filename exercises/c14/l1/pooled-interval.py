# %% exercise
# title: 合并标准差和区间：差 ± h
# time_limit: 3

# %% task
# {%- set sim = model("seeds-simulator") %}
# {%- set g = facts.noise.arms_end.gating.val_loss %}
# {%- set failed = facts.noise.failed_seeds %}
# {%- set ex = {"GELU": g.gelu_ffn.values() | list, "SwiGLU": g.baseline.items() | rejectattr(0, "in", failed) | map(attribute=1) | list} %}
# {%- set r = sim.pooled_interval(ex, "GELU", "SwiGLU") %}
# 把 ④ 第 2、3 步写成代码：`read(arms, a, b)`。`arms` 是一个字典，每个臂一个列表，列表里是这个臂每次**健康**训练的损失（失败的已经剔除）。返回列表 `[s, df, gap, h]`：
#
# - `s` 和 `df`：合并标准差和它的自由度。每个至少有两次训练的臂，各自减去本臂的平均、平方、加起来；所有臂的和除以 $df = \sum_k (n_k - 1)$，再开根号。只有一次训练的臂不进 `s`，但可以拿来比；
# - `gap`：臂 `a` 的平均减臂 `b` 的平均；
# - `h`：区间的半宽 $t_{0.975,\,df} \cdot s \cdot \sqrt{1/n_a + 1/n_b}$。$t$ 值查给出的表：`t975[df]` 就是 $t_{0.975,\,df}$（`t975[0]` 不用）。
#
# 写对了，给出的 `example`（C4 第 4 课门控实验第 {{ facts.noise.step_of.gating | num }} 步的验证损失：GELU 的 {{ ex.GELU | length }} 次训练、SwiGLU 基线的 {{ ex.SwiGLU | length }} 次健康训练，只用这两个臂估噪声）得到 $s = {{ r[0] | num(4) }}$、$df = {{ r[1] }}$、差 ${{ r[2] | num(3) }} \pm {{ r[3] | num(3) }}$。{%- set gate = (facts.noise.primary | selectattr("lesson", "equalto", "c4/l4") | first) %}{% set gl = gate.contrasts[0] %}这里的 $h$ 比页面上的 ±{{ gl.half_width | num(3) }} 宽：页面用门控实验全部 {{ facts.noise.pooled.gating.val_loss.arms | length }} 个臂合并估噪声（$df = {{ gl.df }}$），这里只用两个臂（$df = {{ r[1] }}$），$s$ 不同，$t$ 也更大。检查还会换别的臂和种子数，包括只有一次训练的臂。
#
# 再回答这一课的问题：把失败的种子{{ failed | join("、") }}**留在** SwiGLU 里，用同一个 `read` 再读一次 GELU 减 SwiGLU，会得到 ${{ gl.all_runs.gap | signed(3) }} \pm {{ gl.all_runs.half_width | num(3) }}$：分不出；剔除它，是 ${{ r[2] | signed(3) }} \pm {{ r[3] | num(3) }}$：测到。

# %% starter
import math


def read(arms, a, b):
    # 1. 每个至少有两次训练的臂：各自的平方和（减去本臂平均），加起来；df 加上 n - 1
    # 2. s = (平方和 / df) 开根号
    # 3. gap = a 的平均 - b 的平均
    # 4. h = t975[df] * s * sqrt(1/n_a + 1/n_b)
    ...


print(read(example, "GELU", "SwiGLU"))

# %% answer
import math


def mean(xs):
    return sum(xs) / len(xs)


def read(arms, a, b):
    ss, df = 0.0, 0
    for xs in arms.values():
        if len(xs) > 1:
            m = mean(xs)
            ss += sum((x - m) ** 2 for x in xs)
            df += len(xs) - 1
    s = math.sqrt(ss / df)
    gap = mean(arms[a]) - mean(arms[b])
    h = t975[df] * s * math.sqrt(1 / len(arms[a]) + 1 / len(arms[b]))
    return [s, df, gap, h]


print(read(example, "GELU", "SwiGLU"))

# %% cases
sim = model("seeds-simulator")
g = facts["noise"]["arms_end"]["gating"]["val_loss"]
failed = facts["noise"]["failed_seeds"]
example = {"GELU": list(g["gelu_ffn"].values()),
           "SwiGLU": [v for s, v in g["baseline"].items() if s not in failed]}
table = [None] + [round(t, 4) for t in sim.t975(20)[1:]]
given = {"example": example, "t975": table}
cases = [[example, "GELU", "SwiGLU"],
         [{"A": [5.02, 5.05, 4.99], "B": [5.10, 5.13], "C": [5.31]}, "C", "A"]]
expected = [sim.pooled_interval(*c) for c in cases]


def unseen(rng):
    out = []
    for _ in range(8):
        arms = {}
        for k in range(rng.randint(2, 4)):
            n = rng.randint(1, 6)
            centre = round(rng.uniform(4.8, 5.3), 2)
            arms["arm" + str(k)] = [round(centre + rng.gauss(0, 0.03), 4) for _ in range(n)]
        if sum(len(v) - 1 for v in arms.values()) < 1:
            arms["arm0"].append(round(arms["arm0"][0] + 0.01, 4))
        names = sorted(arms)
        a, b = rng.sample(names, 2)
        out.append([arms, a, b])
    return out

# %% check
defines = ["read"]
tolerance = 1e-4  # the table's t values have four decimals


def result(you, case):
    arms, a, b = case
    return list(you.read({k: list(v) for k, v in arms.items()}, a, b))


def show(case):
    return f"read({case[0]}, {case[1]!r}, {case[2]!r})"

# %% hint
# 平方和要逐臂算：每个臂减的是**它自己**的平均，不是所有训练的总平均。只有一次训练的臂，跳过（它的平方和是 0，也不贡献自由度）。

# %% hint
# 两臂各有 $n_a$、$n_b$ 次训练：`math.sqrt(1 / len(arms[a]) + 1 / len(arms[b]))`。$t$ 值是 `t975[df]`，df 是第 1 步数出来的总自由度，不是 $n_a + n_b - 2$（别的臂也贡献了自由度）。
