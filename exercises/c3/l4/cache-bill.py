# %% exercise
# title: 从配置算出每个 token 的缓存
# time_limit: 3

# %% task
# {%- set K = facts.kv_cache %}
# 写 `cache_bytes_per_token(config, bits)`：`config` 是一个模型配置里的几项（和 Hugging Face 的 `config.json` 同名），`bits` 是缓存里每个数占几位。返回一个 token 在缓存里占多少字节：每一层有 KV 缓存的层，每个 KV 头存一个键、一个值，各 `head_dim` 个数。
#
# 配置不一定把每一项都写出来，按各家代码的约定补：
#
# - 没有 `num_key_value_heads`：就是 MHA，KV 头数等于 `num_attention_heads`；
# - 没有 `head_dim`：每个头的维数是 `hidden_size // num_attention_heads`；
# - 有 `layer_types`：只有 `"full_attention"` 的层存键和值（锚点模型其余的层是线性注意力，{{ lesson("c11") }}讲，它们存的是另一种固定大小的状态，这里不算）。
#
# 页面给好了四个配置：`ours`（我们的小模型，{{ K.ours.bits }} 位）、`llama3`（{{ K.llama3.name }}）、`ds67b`（{{ K.ds67b.name }}）、`anchor`（锚点模型 {{ K.anchor.name }} 的 `text_config`），后三个按 16 位。起始代码对 `llama3`（{{ K.llama3.bytes | num }} 字节）和 `ds67b` 已经算对了；对 `ours` 它会出错，对 `anchor` 它不出错却算错了：照上面的约定改好它。检查还会用没见过的配置。

# %% starter
def cache_bytes_per_token(config, bits):
    layers = config["num_hidden_layers"]
    kv_heads = config["num_key_value_heads"]
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    return 2 * layers * kv_heads * head_dim * bits / 8


print(cache_bytes_per_token(llama3, 16))

# %% answer
def cache_bytes_per_token(config, bits):
    heads = config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads", heads)
    head_dim = config.get("head_dim", config["hidden_size"] // heads)
    if "layer_types" in config:
        layers = config["layer_types"].count("full_attention")
    else:
        layers = config["num_hidden_layers"]
    return 2 * layers * kv_heads * head_dim * bits / 8


for name, cfg, bits in [("ours", ours, 32), ("llama3", llama3, 16), ("ds67b", ds67b, 16), ("anchor", anchor, 16)]:
    print(name, cache_bytes_per_token(cfg, bits))

# %% cases
K = facts["kv_cache"]
C = K["configs"]
given = {"ours": C["ours"], "llama3": C["llama3"], "ds67b": C["ds67b"], "anchor": C["anchor"]}
# The lesson's own bills (course/facts/kv_cache.py, through the kv-memory widget's formula).
cases = [[C["llama3"], K["llama3"]["bits"]], [C["ours"], K["ours"]["bits"]], [C["ds67b"], K["ds67b"]["bits"]],
         [C["anchor"], K["anchor"]["bits"]], [C["llama3"], 6]]
expected = [K["llama3"]["bytes"], K["ours"]["bytes"], K["ds67b"]["bytes"], K["anchor"]["bytes"],
            K["llama3"]["elements"] * 6 / 8]


def unseen(rng):
    out = []
    for i in range(6):
        kv = rng.choice([1, 2, 4, 8])
        heads = kv * rng.choice([1, 2, 4, 8])
        head_dim = rng.choice([32, 64, 80, 128, 256])
        layers = rng.randint(2, 48)
        cfg = {"num_hidden_layers": layers, "num_attention_heads": heads, "hidden_size": heads * head_dim}
        if i % 2:
            cfg["num_key_value_heads"] = kv
        if i % 3 == 0:
            cfg["head_dim"] = head_dim
            cfg["hidden_size"] = heads * head_dim + 64 * rng.randint(1, 4)  # head_dim is not hidden_size / heads here
        if i == 4:
            cfg["layer_types"] = [rng.choice(["full_attention", "linear_attention"]) for _ in range(layers)]
        out.append([cfg, rng.choice([4, 8, 16, 32])])
    return out


# %% check
defines = ["cache_bytes_per_token"]


def result(you, case):
    cfg, bits = case
    return you.cache_bytes_per_token(dict(cfg), bits)


def show(case):
    cfg, bits = case
    return f"cache_bytes_per_token({cfg}, {bits})"


# %% hint
# 一个数占 `bits / 8` 字节；一层一个 KV 头存两行（键、值），每行 `head_dim` 个数。

# %% hint
# 缺的项用 `config.get(名字, 默认值)` 补：`config.get("num_key_value_heads", config["num_attention_heads"])`。

# %% hint
# {%- set K = facts.kv_cache %}
# 锚点模型 {{ K.anchor.all_layers }} 层里只有 {{ K.anchor.layers }} 层是 `"full_attention"`：`config["layer_types"].count("full_attention")`。它每个 token 是 {{ K.anchor.bytes | num }} 字节。
