"""kv-memory: how much memory a KV cache takes, from a model's attention shape.

Every layer with full attention keeps, for every token read so far, one key and one value per
KV head, each head_dim numbers: 2 * layers * kv_heads * head_dim numbers per token (MHA has as
many KV heads as query heads; GQA shares one KV head among a group of query heads; MQA keeps
one). At `bits` per number and `context` tokens, the cache of one sequence is
per_token * bits / 8 * context bytes. The presets (the course's configs) come from the page,
through course/facts/kv_cache.py, which computes the lesson's bills with these same functions.
Standard library only, in the subset MicroPython shares with CPython.
"""
from numfmt import num, pct

# presets: [{"key", "name", "heads", "kv_heads", "head_dim", "layers", "context", "bits"}, ...]
# from the course's facts; the other params override the chosen preset's fields.
PARAMS = {"presets": None, "preset": None, "heads": None, "kv_heads": None, "head_dim": None,
          "layers": None, "context": None, "bits": None}
FIELDS = ("heads", "kv_heads", "head_dim", "layers", "context", "bits")
LIMITS = {"heads": (1, 1024), "kv_heads": (1, 1024), "head_dim": (1, 4096), "layers": (1, 1024),
          "context": (1, 16777216), "bits": (1, 64)}
NAMES = {"heads": "查询头数", "kv_heads": "KV 头数", "head_dim": "每个头的维数", "layers": "层数",
         "context": "上下文长度", "bits": "每个数的位数"}
CONTEXTS = (256, 1024, 4096, 8192, 32768, 131072, 262144, 1048576)
PRECISIONS = ((32, "fp32（32 位）"), (16, "bf16 / fp16（16 位）"), (8, "fp8 / int8（8 位）"),
              (6, "平均 6 位（DeepSeek-V2 部署时）"), (4, "int4（4 位）"))
UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def elements_per_token(layers, kv_heads, head_dim):
    """Numbers cached per token: a key and a value per KV head per layer.
    elements_per_token(32, 8, 128) -> 65536 (Llama 3 8B)"""
    return 2 * layers * kv_heads * head_dim


def bytes_per_token(layers, kv_heads, head_dim, bits):
    """elements_per_token * bits / 8. bytes_per_token(32, 8, 128, 16) -> 131072.0"""
    return elements_per_token(layers, kv_heads, head_dim) * bits / 8


def cache_bytes(layers, kv_heads, head_dim, bits, context):
    """One sequence's cache at `context` tokens. cache_bytes(32, 8, 128, 16, 8192) -> 1073741824.0"""
    return bytes_per_token(layers, kv_heads, head_dim, bits) * context


def size(n_bytes):
    """Bytes in binary units, as the page writes them. size(131072) -> '128 KiB', size(1610612736) -> '1.5 GiB'"""
    value, unit = float(n_bytes), 0
    while value >= 1024 and unit < len(UNITS) - 1:
        value /= 1024
        unit += 1
    if value == int(value):
        decimals = 0
    elif value >= 100:
        decimals = 0
    elif value >= 10:
        decimals = 1
    else:
        decimals = 2
    text = num(value, decimals)
    if "." in text:  # 1.50 -> 1.5
        text = text.rstrip("0").rstrip(".")
    return text + " " + UNITS[unit]


def check(s):
    """The shape's errors, in words (None when it is a shape a model can have)."""
    for f in FIELDS:
        lo, hi = LIMITS[f]
        if not lo <= s[f] <= hi:
            return NAMES[f] + "要在 " + num(lo) + " 到 " + num(hi) + " 之间"
    if s["kv_heads"] > s["heads"]:
        return "KV 头数不能多于查询头数（每个 KV 头至少要服务一个查询头）"
    if s["heads"] % s["kv_heads"]:
        return "查询头数 " + num(s["heads"]) + " 要能被 KV 头数 " + num(s["kv_heads"]) + " 整除：每组查询头一样多"
    return None


def settings(params):
    """The shape to show: the chosen preset (the first when none is named), each field the params
    give replacing the preset's. -> (preset key or None, {field: int})"""
    presets = params.get("presets") or []
    key = params.get("preset")
    chosen = None
    for p in presets:
        if p["key"] == key:
            chosen = p
    if chosen is None and presets and key is None:
        chosen = presets[0]
    s = {}
    for f in FIELDS:
        v = params.get(f)
        if v is None:
            v = chosen[f] if chosen else LIMITS[f][0]
        s[f] = int(v)
    if chosen is not None:
        for f in FIELDS:
            if s[f] != chosen[f]:
                chosen = None
                break
    return (chosen["key"] if chosen else None), s


def bill(s):
    """The numbers the widget shows for one shape s (FIELDS -> ints)."""
    per_el = elements_per_token(s["layers"], s["kv_heads"], s["head_dim"])
    per_b = bytes_per_token(s["layers"], s["kv_heads"], s["head_dim"], s["bits"])
    total = per_b * s["context"]
    mha = cache_bytes(s["layers"], s["heads"], s["head_dim"], s["bits"], s["context"])
    return {"elements": per_el, "per_token": per_b, "total": total, "mha_total": mha,
            "share_of_mha": total / mha, "group": s["heads"] // s["kv_heads"]}


def kind(s):
    """MHA, MQA or GQA-n by the shape's heads."""
    if s["kv_heads"] == s["heads"]:
        return "MHA（每个查询头有自己的键和值）"
    if s["kv_heads"] == 1:
        return "MQA（所有查询头共用一组键和值）"
    return "GQA（每 " + num(s["heads"] // s["kv_heads"]) + " 个查询头共用一组键和值）"


def view(params):
    key, s = settings(params)
    presets = params.get("presets") or []
    contexts = sorted(set(list(CONTEXTS) + [p["context"] for p in presets] + [s["context"]]))
    bits = [b for b, _ in PRECISIONS]
    precisions = [{"bits": b, "label": label} for b, label in PRECISIONS]
    if s["bits"] not in bits:
        precisions.append({"bits": s["bits"], "label": num(s["bits"]) + " 位"})
    state = {"params": dict(s), "preset": key or "custom",
             "presets": [{"key": p["key"], "name": p["name"]} for p in presets],
             "contexts": [{"value": c, "label": num(c)} for c in contexts], "precisions": precisions}
    state["params"]["preset"] = key
    state["params"]["presets"] = presets
    error = check(s)
    if error:
        state["out"] = {"error": error, "formula": "—", "per-token": "—", "total": "—", "mha": "—",
                        "kind": "—", "share": "—"}
        state["bar"] = 0
        state["announce"] = error
        return state
    b = bill(s)
    formula = ("2 × " + num(s["layers"]) + " 层 × " + num(s["kv_heads"]) + " 个 KV 头 × " +
               num(s["head_dim"]) + " 维 = " + num(b["elements"]) + " 个数")
    per_token = size(b["per_token"]) + "（" + num(b["elements"]) + " 个数 × " + num(s["bits"]) + " 位）"
    total = size(b["total"])
    state["out"] = {"error": "", "formula": formula, "per-token": per_token,
                    "total": total + "（" + num(s["context"]) + " 个 token，一条序列）",
                    "mha": size(b["mha_total"]), "kind": kind(s),
                    "share": "是 MHA 的 " + pct(b["share_of_mha"]) if b["group"] > 1 else "就是 MHA"}
    state["bar"] = round(100 * b["share_of_mha"], 1)
    state["announce"] = ("每个 token " + size(b["per_token"]) + "，" + num(s["context"]) + " 个 token 共 " + total)
    return state


def example(facts):
    """The gallery's params: the lesson's presets."""
    return {"presets": facts["kv_cache"]["presets"]}
