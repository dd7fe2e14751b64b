# %% exercise
# title: 亲手做一步 BPE 合并
# time_limit: 3

# %% task
# {%- set bt = model("bpe-tokenizer") %}
# {%- set toy = "曹操曰：「諾。」曹操笑曰：「諾。」" %}
# {%- set step = bt.merge_once(toy | list) %}
# 写 `merge_once(tokens)`：`tokens` 是一串 token（每个是一个字符串），做 BPE 训练的**一步**：
#
# 1. 数出每一对相邻 token 出现了几次（重叠的也算：「哈哈哈」里「哈」「哈」这一对算 2 次）；
# 2. 挑出现次数最多的一对；次数一样时，挑在 `tokens` 里最先出现的那一对；
# 3. 从左到右扫一遍，把这一对处处合成一个 token（合过的不再参与：「哈哈哈」合成「哈哈」「哈」）；返回新的列表。
#
# 例如从「{{ toy }}」的 {{ toy | length }} 个字开始，出现最多的是「{{ step[1][0] }}」「{{ step[1][1] }}」（{{ step[2] }} 次），合并后剩 {{ step[0] | length }} 个 token。少于两个 token 时没有可合并的对，原样返回。检查还会用别的文字和你没见过的随机 token 串。

# %% starter
def merge_once(tokens):
    counts = {}
    for i in range(len(tokens) - 1):
        pair = (tokens[i], tokens[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
    # 1. 挑出现最多的一对（次数一样时取最先出现的）
    # 2. 从左到右把它合并
    return list(tokens)


print(merge_once(list("曹操曰：「諾。」曹操笑曰：「諾。」")))

# %% answer
def merge_once(tokens):
    counts, first = {}, {}
    for i in range(len(tokens) - 1):
        pair = (tokens[i], tokens[i + 1])
        counts[pair] = counts.get(pair, 0) + 1
        first.setdefault(pair, i)
    if not counts:
        return list(tokens)
    best = max(counts, key=lambda p: (counts[p], -first[p]))
    merged, i = [], 0
    while i < len(tokens):
        if i + 1 < len(tokens) and (tokens[i], tokens[i + 1]) == best:
            merged.append(tokens[i] + tokens[i + 1])
            i += 2
        else:
            merged.append(tokens[i])
            i += 1
    return merged


print(merge_once(list("曹操曰：「諾。」曹操笑曰：「諾。」")))

# %% cases
bt = model("bpe-tokenizer")
cases = [[list("曹操曰：「諾。」曹操笑曰：「諾。」")], [list("哈哈哈")], [list("甲乙丙丁")],
         [["玄德", "曰", "：", "玄德", "曰", "："]], [list("孔明曰孔明曰孔明")], [["之"]], [[]]]
expected = [bt.merge_once(c[0])[0] for c in cases]


def unseen(rng):
    out = []
    for _ in range(8):
        alphabet = rng.choice(["曹操曰之", "玄德孔明", "ab", "之乎者也。"])
        n = rng.randint(2, 16)
        out.append([[rng.choice(alphabet) for _ in range(n)]])
    return out


# %% check
defines = ["merge_once"]


def result(you, case):
    return you.merge_once(list(case[0]))


def show(case):
    return "merge_once(" + repr(case[0]) + ")"


# %% hint
# 数对的时候顺便记下每一对第一次出现的位置 `first[pair] = i`（只记第一次）。挑最多的一对可以写成 `max(counts, key=lambda p: (counts[p], -first[p]))`：次数大的优先，次数一样时位置小的优先。

# %% hint
# 合并要从左往右扫，用一个下标 `i`：如果 `tokens[i]` 和 `tokens[i + 1]` 正好是那一对，就把 `tokens[i] + tokens[i + 1]` 放进结果，`i += 2`；否则放 `tokens[i]`，`i += 1`。这样「哈哈哈」得到「哈哈」「哈」，不会把中间那个「哈」用两次。
