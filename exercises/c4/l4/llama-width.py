# %% exercise
# title: 算出 Llama 的 FFN 宽度
# time_limit: 3

# %% task
# {%- set ll = facts.llama2_7b %}
# 把 ④ 第 3 步里 Meta 代码的宽度规则写成 `llama_width(d)`：先取两矩阵版的 $4d$，再取它的 $\tfrac{2}{3}$ 并向下取整，最后**向上**取到 {{ ll.rule.multiple_of }} 的倍数。写对了，`llama_width({{ ll.d }})` 得到 {{ ll.rule_width }}。检查还会换别的 $d$。

# %% starter
def llama_width(d):
    hidden = 4 * d
    hidden = ...  # 2/3，向下取整
    return ...  # 向上取到 256 的倍数


print(llama_width(4096))

# %% answer
def llama_width(d):
    hidden = 4 * d
    hidden = int(2 * hidden / 3)
    return 256 * ((hidden + 256 - 1) // 256)


print(llama_width(4096))

# %% cases
gw = model("gate-width")
rule = facts["llama2_7b"]["rule"]
cases = [[facts["llama2_7b"]["d"]], [facts["anchor"]["d"]], [768]]
expected = [gw.llama_width(d, rule) for [d] in cases]


def unseen(rng):
    return [[64 * rng.randint(4, 200)] for _ in range(8)]


# %% check
defines = ["llama_width"]


def result(you, case):
    return you.llama_width(case[0])


def show(case):
    return f"llama_width({case[0]})"


# %% hint
# 向下取整用 `int(...)` 或 `//`：`int(2 * hidden / 3)`。

# %% hint
# 「向上取到 256 的倍数」：`256 * ((h + 255) // 256)`。$h$ 本来就是 256 的倍数时，它不变。
