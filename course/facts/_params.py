"""Exact parameter counts from a Hugging Face Qwen3.5-family config.json.

Each count is a product of tensor shapes taken from the module definitions in
transformers' modeling_qwen3_5.py (and vLLM's qwen3_5_mtp.py for the MTP head).
No biases anywhere in the text model (attention_bias is false); the vision
tower's Linear and LayerNorm layers do have them.
"""


def linear(n_in, n_out, bias=False):
    """>>> linear(2, 3), linear(2, 3, bias=True) -> (6, 9)"""
    return n_in * n_out + (n_out if bias else 0)


def full_attention(t):
    """Gated full attention: q_proj also emits one sigmoid gate per query column."""
    h, hd = t["hidden_size"], t["head_dim"]
    nq, nkv = t["num_attention_heads"], t["num_key_value_heads"]
    q_out = nq * hd * (2 if t["attn_output_gate"] else 1)
    return {"q_proj": linear(h, q_out), "k_proj": linear(h, nkv * hd), "v_proj": linear(h, nkv * hd),
            "o_proj": linear(nq * hd, h), "q_norm": hd, "k_norm": hd}


def gated_deltanet(t):
    """Gated DeltaNet (linear attention) token mixer."""
    h = t["hidden_size"]
    key_dim = t["linear_num_key_heads"] * t["linear_key_head_dim"]
    value_dim = t["linear_num_value_heads"] * t["linear_value_head_dim"]
    conv_dim = 2 * key_dim + value_dim
    heads = t["linear_num_value_heads"]
    return {"in_proj_qkv": linear(h, conv_dim), "in_proj_z": linear(h, value_dim),
            "in_proj_b": linear(h, heads), "in_proj_a": linear(h, heads),
            "conv1d": conv_dim * t["linear_conv_kernel_dim"], "dt_bias": heads, "A_log": heads,
            "norm": t["linear_value_head_dim"], "out_proj": linear(value_dim, h)}


def mlp(t):
    """SwiGLU FFN: down(silu(x W_gate) * (x W_up))."""
    h, i = t["hidden_size"], t["intermediate_size"]
    return {"gate_proj": linear(h, i), "up_proj": linear(h, i), "down_proj": linear(i, h)}


def vision_tower(v):
    """ViT: Conv3d patch embed (bias), position table, blocks, one patch merger."""
    d, i = v["hidden_size"], v["intermediate_size"]
    patch = v["in_channels"] * v["temporal_patch_size"] * v["patch_size"] ** 2 * d + d
    block = 2 * (2 * d) + linear(d, 3 * d, True) + linear(d, d, True) + linear(d, i, True) + linear(i, d, True)
    merged = d * v["spatial_merge_size"] ** 2
    merger = 2 * d + linear(merged, merged, True) + linear(merged, v["out_hidden_size"], True)
    return {"patch_embed": patch, "pos_embed": v["num_position_embeddings"] * d,
            "blocks": v["depth"] * block, "merger": merger}


def breakdown(config):
    """Every parameter of the released checkpoint, grouped for the lesson.

    Returns counts for the parts and the totals used by the FFN-share conventions.
    """
    t, v = config["text_config"], config["vision_config"]
    h = t["hidden_size"]
    n_full = t["layer_types"].count("full_attention")
    n_linear = t["layer_types"].count("linear_attention")
    attn, gdn, ffn = sum(full_attention(t).values()), sum(gated_deltanet(t).values()), sum(mlp(t).values())
    layer_norms = 2 * h  # input_layernorm + post_attention_layernorm
    embed = t["vocab_size"] * h
    lm_head = 0 if t["tie_word_embeddings"] else embed
    parts = {
        "embed_tokens": embed,
        "lm_head": lm_head,
        "full_attention": n_full * attn,
        "gated_deltanet": n_linear * gdn,
        "trunk_mlp": (n_full + n_linear) * ffn,
        "norms": (n_full + n_linear) * layer_norms + h,
    }
    text = sum(parts.values())
    n_mtp = t["mtp_num_hidden_layers"]
    mtp_layer = attn + ffn + layer_norms
    mtp = 0 if n_mtp == 0 else (2 * h + linear(2 * h, h) + n_mtp * mtp_layer + h
                                + (embed if t["mtp_use_dedicated_embeddings"] else 0))
    vision = sum(vision_tower(v).values())
    return {
        **parts,
        "n_full": n_full, "n_linear": n_linear,
        "full_attention_each": attn, "gated_deltanet_each": gdn, "mlp_each": ffn,
        "text": text, "mtp": mtp, "vision": vision, "checkpoint": text + mtp + vision,
    }
