# %% exercise
# title: 从注意力矩阵读出「前缀匹配分」
# time_limit: 3

# %% task
# {%- set ct = facts.copy_task %}
# {%- set run = ct.data.runs | selectattr("variant", "equalto", "attn_only_2l") | selectattr("seed", "equalto", 0) | first %}
# {%- set end = run.points | last %}
# {%- set snap = run.snapshots | last %}
# {%- set L = (ct.data.example | length) // 2 %}
# {%- set sym = model("copy-task").SYMBOLS %}
# {%- set ind = snap.maps[end.prefix_matching.layer - 1][end.prefix_matching.head - 1] %}
# {%- set prev = snap.maps[end.previous.layer - 1][end.previous.head - 1] %}
# {%- set ns = namespace(ip=0, iv=0, pp=0, pv=0) %}
# {%- for t in range(L, 2 * L) %}{% set ns.ip = ns.ip + ind[t][t - L + 1] %}{% set ns.iv = ns.iv + ind[t][t - 1] %}{% set ns.pp = ns.pp + prev[t][t - L + 1] %}{% set ns.pv = ns.pv + prev[t][t - 1] %}{% endfor %}
# 一个头「是不是归纳头」，看它的注意力矩阵就能量出来：喂给它 $L$ 个随机 token，再把这 $L$ 个原样重复一遍（共 $2L$ 个）。第二遍里的查询 $t$（$t = L, \dots, 2L-1$）上一遍也见过同一个 token，在位置 $t-L$；归纳头该看的是它**后面那个**，键 $t-L+1$。
#
# 写 `head_scores(W, L)`，返回两个数 `(prefix_matching, previous)`：
#
# $$\begin{aligned}
# \text{前缀匹配分} &= \frac{1}{L}\sum_{t=L}^{2L-1} W_{t,\,t-L+1}\\
# \text{前一个分} &= \frac{1}{L}\sum_{t=L}^{2L-1} W_{t,\,t-1}
# \end{aligned}$$
#
# 和实验室 `lab/experiments/induction.py` 的 `head_scores` 一模一样（Olsson 等人 2022 年也这样量）。`W` 是一个头的因果注意力矩阵，**参差的**列表：第 $t$ 行只有 $t+1$ 个数，是查询 $t$ 放在键 $0, \dots, t$ 上的权重（加起来是 1），所以 `W[t][j]` 只在 $j \le t$ 时存在。
#
# 页面给好了复制任务里两层模型（种子 0，训练完第 {{ snap.step | num }} 步）在例子「{% for i in ct.data.example %}{{ sym[i] }}{% endfor %}」上的两个头（$L = {{ L }}$，每个权重保留两位小数）：`ind_head` 是第 {{ end.prefix_matching.layer }} 层第 {{ end.prefix_matching.head }} 个头，`prev_head` 是第 {{ end.previous.layer }} 层第 {{ end.previous.head }} 个头。写对了，`head_scores(ind_head, L)` 是 $({{ (ns.ip / L) | num(3) }}, {{ (ns.iv / L) | num(3) }})$，`head_scores(prev_head, L)` 是 $({{ (ns.pp / L) | num(3) }}, {{ (ns.pv / L) | num(3) }})$。检查还会用一个完美的归纳头、一个只看前一个 token 的头、不看内容的前缀平均（每个键 $\frac{1}{t+1}$；$L = {{ facts.induction_scan.sequences.length }}$ 时两个分都是 {{ facts.induction_scan.reference.prefix_matching | num(4) }}，实验室拿它当基准），和别的 $L$、别的矩阵。

# %% starter
def head_scores(W, L):
    prefix_matching, previous = 0.0, 0.0
    for t in range(L, 2 * L):
        row = W[t]  # 查询 t 放在键 0..t 上的权重
        # 前缀匹配：键 t-L+1；前一个：键 t-1
        ...
    return prefix_matching, previous


print(head_scores(ind_head, L))
print(head_scores(prev_head, L))

# %% answer
def head_scores(W, L):
    prefix_matching, previous = 0.0, 0.0
    for t in range(L, 2 * L):
        row = W[t]  # 查询 t 放在键 0..t 上的权重
        prefix_matching += row[t - L + 1]
        previous += row[t - 1]
    return prefix_matching / L, previous / L


print(head_scores(ind_head, L))
print(head_scores(prev_head, L))

# %% cases
ct = facts["copy_task"]
run = next(r for r in ct["data"]["runs"] if r["variant"] == "attn_only_2l" and r["seed"] == 0)
end, snap = run["points"][-1], run["snapshots"][-1]
example = ct["data"]["example"]
L = len(example) // 2
assert example[:L] == example[L:], "the example is L tokens and the same L again"
ind = snap["maps"][end["prefix_matching"]["layer"] - 1][end["prefix_matching"]["head"] - 1]
prev = snap["maps"][end["previous"]["layer"] - 1][end["previous"]["head"] - 1]
given = {"L": L, "ind_head": ind, "prev_head": prev}


def onto(T, key):
    """Every row's whole weight on one key: key(t), or on itself where key(t) is not a key yet."""
    return [[1.0 if j == (key(t) if 0 <= key(t) <= t else t) else 0.0 for j in range(t + 1)] for t in range(T)]


def prefix_average(T):
    return [[1.0 / (t + 1)] * (t + 1) for t in range(T)]


def scores(W, n):  # the lab's head_scores, on lists
    ts = range(n, 2 * n)
    return [sum(W[t][t - n + 1] for t in ts) / n, sum(W[t][t - 1] for t in ts) / n]


scan = facts["induction_scan"]
n64 = scan["sequences"]["length"]
assert round(scores(prefix_average(2 * n64), n64)[0], 4) == scan["reference"]["prefix_matching"]
cases = [[onto(8, lambda t: t - 3), 4], [onto(8, lambda t: t - 1), 4], [prefix_average(8), 4], [ind, L], [prev, L],
         [[[1.0], [0.25, 0.75]], 1], [prefix_average(2 * n64), n64]]
expected = [scores(W, n) for W, n in cases]


def unseen(rng):
    out = []
    for _ in range(6):
        n = rng.randint(1, 7)
        W = []
        for t in range(2 * n):
            raw = [rng.random() ** 3 for _ in range(t + 1)]
            W.append([round(x / sum(raw), 3) for x in raw])
        out.append([W, n])
    return out


# %% check
defines = ["head_scores"]


def result(you, case):
    W, n = case
    return list(you.head_scores([list(row) for row in W], n))


def show(case):
    W, n = case
    if len(W) <= 8:
        return f"head_scores(W, L={n})，W = {W}"
    return f"head_scores(W, L={n})，W 共 {len(W)} 行，第 L = {n} 行是 {W[n]}"


# %% hint
# 只看第二遍的查询：`for t in range(L, 2 * L)`，一共 $L$ 行，每行取两个数。第 $t$ 行的 token 上一遍出现在位置 $t - L$。

# %% hint
# 前缀匹配取 `W[t][t - L + 1]`，前一个取 `W[t][t - 1]`；各自加起来再除以 $L$（不是除以 $2L$）。

# %% hint
# 核对：$L = 1$ 时只有一行 $t = 1$，键 $t - L + 1 = 1$ 就是它自己，键 $t - 1 = 0$ 是前一个：`head_scores([[1.0], [0.25, 0.75]], 1)` 是 `(0.75, 0.25)`。
