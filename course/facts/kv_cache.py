"""The KV cache's memory bill (C3 第 4 课), computed from the configs in data/, and our model's
generation with and without the cache (data/real-model/kv-cache/, lab/'s export) when it exists.

facts.kv_cache:
  models        per config: its attention shape, numbers and bytes per token, and the cache at its
                longest context; `presets` is the same list in the kv-memory widget's shape
  ours / anchor / llama3 / ds67b / mla   the lesson's rows, by name
  mla           DeepSeek-V2's MLA against DeepSeek 67B: the cut in numbers (MLA alone), the cut in
                bytes once MLA's cache is stored at 6 bits on average (§3.2.3), and the two papers'
                figures it reproduces (the abstract's 93.3 %, Table 1's 2.25 groups)
  gqa           Ainslie et al. 2023 Table 1 rows by name
  run           our model's generation both ways (None before the lab's export)

The per-token formula is the kv-memory widget's (one copy): 2 * layers * kv_heads * head_dim.
"""
from ..widgets import load_model
from .real_model import BOOK_TITLES

BITS = {"float32": 32, "fp32": 32, "bfloat16": 16, "bf16": 16, "float16": 16, "fp16": 16}
# DeepSeek 67B's cache precision is not in its config or the V2 paper: counted at 16 bits (its
# weights' bf16). At 16 bits the abstract's 93.3 % comes out exactly; the page says it is assumed.
DS67B_BITS = 16
RUN = "real-model/kv-cache/kv-cache"


def row(key, name, heads, kv_heads, head_dim, layers, context, bits, **extra):
    """One model's bill: its shape (the widget's fields) and what it costs per token and in full."""
    mem = load_model("kv-memory")
    out = {"key": key, "name": name, "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim,
           "layers": layers, "context": context, "bits": bits,
           "elements": mem.elements_per_token(layers, kv_heads, head_dim),
           "bytes": mem.bytes_per_token(layers, kv_heads, head_dim, bits),
           "full": mem.cache_bytes(layers, kv_heads, head_dim, bits, context),
           "mha_bytes": mem.bytes_per_token(layers, heads, head_dim, bits)}
    out["per_token"] = mem.size(out["bytes"])
    out["full_size"] = mem.size(out["full"])
    out["mha_per_token"] = mem.size(out["mha_bytes"])
    out.update(extra)
    return out


def ours(card):
    a = card["architecture"]
    bits = 16 if card["hardware"].get("bf16_autocast") else 32  # every lab run is fp32 unless autocast
    r = row("ours", "我们的小模型", a["n_head"], a["n_head"], a["d_model"] // a["n_head"], a["n_layer"],
            a["block_size"], bits)
    params = next(v["params"] for v in card["variants"] if v["name"] == "baseline")
    r["params"] = params
    r["weights_bytes"] = params * bits / 8
    r["weights_size"] = load_model("kv-memory").size(r["weights_bytes"])
    r["full_over_weights"] = r["full"] / r["weights_bytes"]
    return r


def anchor(doc):
    t = doc["config"]["text_config"]
    types = t["layer_types"]
    full = sum(1 for x in types if x == "full_attention")
    bits = BITS[t["dtype"]]
    r = row("anchor", doc["name"], t["num_attention_heads"], t["num_key_value_heads"], t["head_dim"], full,
            t["max_position_embeddings"], bits)
    mem = load_model("kv-memory")
    r["all_layers"] = len(types)
    r["linear_layers"] = len(types) - full
    # If every layer held a cache, with its GQA heads and as MHA.
    r["if_all_full"] = mem.size(mem.bytes_per_token(len(types), t["num_key_value_heads"], t["head_dim"], bits))
    r["if_all_full_mha"] = mem.size(mem.bytes_per_token(len(types), t["num_attention_heads"], t["head_dim"], bits))
    return r


def gqa_row(key, entry, context=None, bits=None):
    c = entry["config"]
    return row(key, entry["name"], c["num_attention_heads"], c["num_key_value_heads"],
               c["hidden_size"] // c["num_attention_heads"], c["num_hidden_layers"],
               context or c["max_position_embeddings"], bits or BITS[c["torch_dtype"]])


def mla(v2, ds67b, paper):
    """DeepSeek-V2's cache against DeepSeek 67B's, split into what MLA cuts (numbers) and what the
    6-bit storage cuts (bytes)."""
    c = v2["config"]
    rows = {r["row"]: r for r in paper["rows"]}
    bits = rows["§3.2.3"]["kv_cache_bits"]
    latent = c["kv_lora_rank"] + c["qk_rope_head_dim"]        # d_c + d_h^R per token and layer
    elements = latent * c["num_hidden_layers"]
    base = ds67b["elements"]
    mha_elements = 2 * c["num_attention_heads"] * c["v_head_dim"] * c["num_hidden_layers"]
    size = load_model("kv-memory").size
    bytes_16 = elements * DS67B_BITS / 8
    bytes_q = elements * bits / 8
    cut_bytes = 1 - bytes_q / ds67b["bytes"]
    return {"name": v2["name"], "layers": c["num_hidden_layers"], "d_c": c["kv_lora_rank"],
            "d_rope": c["qk_rope_head_dim"], "heads": c["num_attention_heads"], "head_dim": c["v_head_dim"],
            "latent": latent, "elements": elements, "ds67b_bits": DS67B_BITS, "bits": bits,
            "bytes_16": bytes_16, "per_token_16": size(bytes_16), "bytes_q": bytes_q, "per_token_q": size(bytes_q),
            "cut_elements": 1 - elements / base, "cut_bytes": cut_bytes,
            # per layer: what the latent alone saves; the rest of the 82 % is 60 layers against 95
            "base_per_layer": base / ds67b["layers"], "base_layers": ds67b["layers"],
            "cut_per_layer": 1 - latent / (base / ds67b["layers"]),
            "groups_equivalent": latent / (2 * c["v_head_dim"]),
            "mha_elements": mha_elements, "share_of_mha": elements / mha_elements,
            "paper_cut": rows["abstract"]["kv_cache_reduction"], "throughput": rows["abstract"]["max_throughput_ratio"],
            "paper_groups": rows["Table 1 caption"]["gqa_groups_equivalent"],
            # The abstract's 93.3 % to its last digit, and Table 1's 2.25 groups, from the configs.
            "reproduces_paper": round(cut_bytes, 3) == rows["abstract"]["kv_cache_reduction"]
            and latent / (2 * c["v_head_dim"]) == rows["Table 1 caption"]["gqa_groups_equivalent"],
            "paper": paper["paper"]}


def gqa_table(paper):
    by = {r["row"]: r for r in paper["rows"]}
    mha, mqa, gqa = by["MHA-XXL"], by["MQA-XXL"], by["GQA-8-XXL"]
    return {"rows": paper["rows"], "by": by, "paper": paper["paper"], "tasks": paper["tasks"],
            "uptrain_fraction": paper["uptrain_fraction"],
            "mqa_speedup": mha["t_infer_s"] / mqa["t_infer_s"], "gqa_speedup": mha["t_infer_s"] / gqa["t_infer_s"],
            "mqa_loss": mha["average"] - mqa["average"], "gqa_loss": mha["average"] - gqa["average"]}


CONFIG_FIELDS = ("num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
                 "layer_types")


def configs(data):
    """The config fields a cache's size is read from, as each source writes them (the exercise's
    inputs): Llama 3 8B and DeepSeek 67B (no head_dim: hidden_size / heads), the anchor's
    text_config (head_dim and layer_types given), and our model as a config would say it (no
    num_key_value_heads: MHA)."""
    frontier = data["frontier-models"]
    a = data["real-model/model-card"]["architecture"]

    def pick(c):
        return {k: c[k] for k in CONFIG_FIELDS if k in c}

    return {"ours": {"num_hidden_layers": a["n_layer"], "num_attention_heads": a["n_head"], "hidden_size": a["d_model"]},
            "anchor": pick(data["anchor-model"]["config"]["text_config"]),
            "llama3": pick(frontier["llama-3-8b"]["config"]), "ds67b": pick(frontier["deepseek-llm-67b"]["config"])}


def run_facts(doc, ours_row):
    """Our model's generation both ways (lab/experiments/kv_cache.py's export), with what the page
    reads from it: the controls by name, the speed, and whether the export's cache per token is the
    bill computed here from the model card (the same model, counted two ways)."""
    if doc is None:
        return None
    controls = {c["name"]: c for c in doc["controls"]}
    gen, speed = doc["generation"], doc["speed"]
    return {"doc": doc, "book": BOOK_TITLES.get(doc["corpus"]["file"], doc["corpus"]["file"]), "model": doc["model"], "config": doc["model_config"], "prompt": doc["prompt"],
            "n": gen["new_tokens"], "positions": gen["positions"], "past_context": gen["past_context"],
            "dtype": gen["dtype"], "same": doc["same_tokens"], "first": doc["first_divergence"],
            "max_diff": doc["max_abs_logit_diff"], "max_logit": doc["max_abs_logit"],
            "prefill_diff": doc["prefill_max_abs_logit_diff"],
            "full_text": doc["full"]["text"], "cached_text": doc["cached"]["text"],
            "speed": speed, "speedup": speed["speedup"],
            "cache": doc["cache"], "cache_matches_bill": doc["cache"]["bytes_per_token"] == ours_row["bytes"],
            "cache_size": load_model("kv-memory").size(doc["cache"]["bytes"]),
            "controls": controls, "position_0": controls.get("position_0"), "off_by_one": controls.get("off_by_one"),
            "command": doc["command"], "date": doc["date"]}


def kv_facts(data):
    frontier = data["frontier-models"]
    r_ours = ours(data["real-model/model-card"])
    r_anchor = anchor(data["anchor-model"])
    r_llama = gqa_row("llama3", frontier["llama-3-8b"])
    r_67b = gqa_row("ds67b", frontier["deepseek-llm-67b"], bits=DS67B_BITS)
    models = [r_ours, r_anchor, r_llama, r_67b]
    fields = ("key", "name", "heads", "kv_heads", "head_dim", "layers", "context", "bits")
    return {"models": models, "presets": [{f: m[f] for f in fields} for m in models],
            "ours": r_ours, "anchor": r_anchor, "llama3": r_llama, "ds67b": r_67b,
            "mla": mla(frontier["deepseek-v2"], r_67b, data["papers"]["deepseek2024"]),
            "gqa": gqa_table(data["papers"]["ainslie2023"]),
            "configs": configs(data), "run": run_facts(data.get(RUN), r_ours)}


def facts(data):
    return {"kv_cache": kv_facts(data)}
