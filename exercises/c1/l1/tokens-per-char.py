# %% exercise
# title: 一段文字，每个字几个 token
# time_limit: 3

# %% task
# {%- set T = facts.tokenizer %}
# {%- set bt = model("bpe-tokenizer") %}
# {%- set s = bt.stats(T.encoder, "大模型怎么看中文？") %}
# 写 `tokens_per_char(pieces)`：`pieces` 是我们的分词器把一段文字切出的 token，每个 token 写成它的 UTF-8 字节（十六进制字符串，比如 `"e7 8e 84 e5 be b7"` 是「玄德」）。返回这段文字**平均每个字符几个 token**。
#
# 难点在数字符：token 数不等于字数，一个 token 可能只是某个字的一部分字节（字节片段），单独解码（`bytes.fromhex(p).decode("utf-8")`）会出错；几个 token 拼起来才是完整的字。
#
# 页面已经给好 `pieces`：「大模型怎么看中文？」被切成的 {{ s.tokens }} 个 token，写对了应得 {{ s.per_char | num(3) }}。检查还会用别的文字：有整字的、有表情符号的、有英文的。
#
# 算出来之后想一想：我们的模型一次读 {{ facts.real.block_size }} 个 token，这段文字这样的密度下，一个窗口装得下几个字？

# %% starter
def tokens_per_char(pieces):
    chars = len(pieces)  # 先当一个 token 就是一个字：对吗？
    return len(pieces) / chars


print(tokens_per_char(pieces))
print(bytes.fromhex(pieces[1]))  # 第 2 个 token 的字节

# %% answer
def tokens_per_char(pieces):
    data = b"".join(bytes.fromhex(p) for p in pieces)
    return len(pieces) / len(data.decode("utf-8"))


print(tokens_per_char(pieces))

# %% cases
bt = model("bpe-tokenizer")
enc = facts["tokenizer"]["encoder"]


def pieces_of(text):
    return [r["hex"] for r in bt.tokens(enc, text)]


given = {"pieces": pieces_of("大模型怎么看中文？")}
texts = ["玄德曰：「吾乃中山靖王之後。」", "大模型怎么看中文？", "好😀", "The model reads tokens.", "曹操"]
cases = [[pieces_of(t)] for t in texts]
expected = [len(c[0]) / len(t) for c, t in zip(cases, texts)]


def unseen(rng):
    pool = "曹操孔明玄德曰之乎者也大模型怎么看中文學習。，「」😀🙂abc 𠀀龘"
    out = []
    for _ in range(8):
        n = rng.randint(1, 24)
        out.append([pieces_of("".join(rng.choice(pool) for _ in range(n)))])
    return out


# %% check
defines = ["tokens_per_char"]
tolerance = 1e-9


def result(you, case):
    return you.tokens_per_char(list(case[0]))


def show(case):
    return "tokens_per_char(" + repr(case[0]) + ")"


# %% hint
# `bytes.fromhex("e7 8e 84")` 得到 3 个字节（空格可以留着）。先用 `b"".join(...)` 把所有 token 的字节按顺序接起来，再 `.decode("utf-8")` 一次：被切开的字在接起来之后又完整了。

# %% hint
# 字符数是解码后字符串的长度 `len(text)`，token 数是 `len(pieces)`；答案是两者相除。一个汉字是 3 个字节，所以不能用字节数除以 3 来数字：表情符号是 4 个字节，英文字母是 1 个。
