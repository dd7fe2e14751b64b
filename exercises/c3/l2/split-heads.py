# %% exercise
# title: 把 256 维切成几个头，再拼回去
# time_limit: 3

# %% task
# 一层注意力的 $W_Q$ 把每个位置的向量变成 $d$ 维的 $q$；多头不是多几组参数，而是把这 $d$ 维**切开**：$H$ 个头，每个头拿连续的 $d/H$ 维（第 $h$ 个头拿第 $h \cdot d/H$ 到 $(h+1) \cdot d/H - 1$ 维），各自做一次注意力，输出再按原来的顺序拼回 $d$ 维。
#
# 写 `split_heads(x, n_head)`：`x` 是一个长度 $d$ 的列表，返回 `n_head` 个列表，每个长 $d / n\_head$；$d$ 不能被 `n_head` 整除时抛出 `ValueError`。再写 `merge_heads(heads)`：把它拼回原样。页面给好了 `x`（256 维，第 $i$ 维就是 $i$），切成 4 个头时，第 2 个头（从 0 数）应该从 128 开始。检查会换别的长度和头数。

# %% starter
def split_heads(x, n_head):
    d = len(x)
    size = d // n_head
    return [x]


def merge_heads(heads):
    return heads[0]


heads = split_heads(x, 4)
print(len(heads), [h[0] for h in heads], merge_heads(heads) == x)

# %% answer
def split_heads(x, n_head):
    d = len(x)
    if n_head < 1 or d % n_head:
        raise ValueError(f"{d} dimensions do not split into {n_head} heads")
    size = d // n_head
    return [x[h * size:(h + 1) * size] for h in range(n_head)]


def merge_heads(heads):
    merged = []
    for h in heads:
        merged.extend(h)
    return merged


heads = split_heads(x, 4)
print(len(heads), [h[0] for h in heads], merge_heads(heads) == x)

# %% cases
x = [float(i) for i in range(256)]
given = {"x": x}


def split(v, n):
    if n < 1 or len(v) % n:
        return "ValueError"
    s = len(v) // n
    return [v[h * s:(h + 1) * s] for h in range(n)]


cases = [[x, 4], [x, 1], [x, 16], [[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3], [[1.0, 2.0, 3.0], 2]]
expected = [[split(v, n), v if split(v, n) != "ValueError" else "ValueError"] for v, n in cases]


def unseen(rng):
    out = []
    for _ in range(6):
        n = rng.choice([1, 2, 3, 4, 8])
        d = n * rng.randint(1, 6) + (1 if rng.random() < 0.2 and n > 1 else 0)
        out.append([[round(rng.uniform(-1, 1), 2) for _ in range(d)], n])
    return out


# %% check
defines = ["split_heads", "merge_heads"]


def result(you, case):
    v, n = case
    try:
        heads = you.split_heads(list(v), n)
    except ValueError:
        return ["ValueError", "ValueError"]
    return [[list(h) for h in heads], list(you.merge_heads([list(h) for h in heads]))]


def show(case):
    v, n = case
    return f"split_heads({v}, {n}) 和 merge_heads(...)"


# %% hint
# 每个头 `size = len(x) // n_head` 维；第 `h` 个头是切片 `x[h * size:(h + 1) * size]`。

# %% hint
# 先检查 `len(x) % n_head`：不为 0 就 `raise ValueError(...)`。拼回去按头的顺序一个接一个 `extend`。
