# %% exercise
# title: @@TITLE@@
# time_limit: 3

# %% task
# 写函数 `double(x)`，返回 $2x$。写对了，`double(3)` 得 {{ 2 * 3 }}。
#
# （把这一节换成你的任务：中文 Markdown，每行前面是 `# `；数字和课文一样，用 Jinja 从 facts 或 model("组件名") 取，不要手写。）

# %% starter
def double(x):
    ...


print(double(3))

# %% answer
def double(x):
    return 2 * x


print(double(3))

# %% cases
# Build time only (facts and model(name) are defined here). Each case is an input for result() below.
cases = [[3], [-1.5]]
expected = [6, -3.0]  # what the answer must give for `cases` (optional; best taken from a model)


def unseen(rng):
    """Inputs the student has not seen, drawn at build time; the answer's results are their expected values."""
    return [[round(rng.uniform(-10, 10), 2)] for _ in range(5)]


# %% check
defines = ["double"]  # reported plainly when the student's code lacks them


def result(you, case):
    """What the student's code gives for one case: you.double is the student's function."""
    return you.double(*case)


# %% hint
# 函数体只要一行：`return 2 * x`。
