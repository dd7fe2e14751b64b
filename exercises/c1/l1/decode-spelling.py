# %% exercise
# title: 把词表文件里的「乱码」解回文字
# time_limit: 3

# %% task
# {%- set T = facts.tokenizer %}
# {%- set bt = model("bpe-tokenizer") %}
# {%- set comma = bt.token_info(T.encoder, bt.encode(T.encoder, "，")[0]) %}
# {%- set frag = bt.token_info(T.encoder, 256) %}
# 写 `decode(spelling)`：`spelling` 是词表文件（`tokenizer.json`）里写的一个 token，比如 `{{ comma.spelling }}`。把它解回文字；如果它的字节不是完整的 UTF-8 字符（字节片段），返回 `None`。
#
# 页面已经给好 `alphabet`：GPT-2 那张表，`alphabet[b]` 是字节 `b`（0–255）在词表文件里写成的字符。你要做的是**反过来**查：每个字符换回它的字节，接起来，再按 UTF-8 解码。
#
# 例如 `decode("{{ comma.spelling }}")` 应得「，」；`decode("{{ frag.spelling }}")`（我们词表的第一条合并，字节 `{{ frag.hex }}`）只是半个字，应得 `None`。检查还会用你没见过的词表条目：整字的、多字的、字节片段。

# %% starter
def decode(spelling):
    back = {}  # 字符 -> 字节值：把 alphabet 反过来（还没写）
    data = bytes([back.get(c, 0) for c in spelling])
    return data.decode("utf-8")


print(decode("ï¼Į"))

# %% answer
def decode(spelling):
    back = {ch: b for b, ch in enumerate(alphabet)}
    data = bytes([back[c] for c in spelling])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


print(decode("ï¼Į"))

# %% cases
bt = model("bpe-tokenizer")
enc = facts["tokenizer"]["encoder"]
given = {"alphabet": bt.byte_alphabet()}


def decoded(tid):
    info = bt.token_info(enc, tid)
    return None if info["fragment"] else bytes.fromhex(info["hex"]).decode("utf-8")


ids = [bt.encode(enc, "，")[0], 256, bt.encode(enc, "曹操")[0], bt.encode(enc, "a")[0], 0, 200]
cases = [[bt.vocab_spelling(enc, i)] for i in ids]
expected = [decoded(i) for i in ids]


def unseen(rng):
    return [[bt.vocab_spelling(enc, rng.randrange(enc["vocab_size"]))] for _ in range(10)]


# %% check
defines = ["decode"]


def result(you, case):
    return you.decode(case[0])


def show(case):
    return "decode(" + repr(case[0]) + ")"


# %% hint
# 反查表：`back = {ch: b for b, ch in enumerate(alphabet)}`。`bytes([back[c] for c in spelling])` 就是这个 token 的字节。

# %% hint
# 字节片段解码会抛 `UnicodeDecodeError`：用 `try: ... except UnicodeDecodeError: return None`。
