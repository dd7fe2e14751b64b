"""An independent parameter count of the anchor model, for the tests to check course/facts/_params.py against.

Written apart from course/facts/_params.py on purpose, in another shape: instead of
summing per-module formulas, it lists the checkpoint's tensors by name with their
shapes (as a state dict would, following transformers' modeling_qwen3_5.py and
vLLM's qwen3_5_mtp.py), then multiplies the shapes out. Its total must match the
published safetensors count.

    tensors(config) -> [("model.language_model.embed_tokens.weight", (248320, 5120)), ...]
"""
from math import prod


def _layer(prefix, t, kind):
    """Tensors of one decoder layer: its token mixer, its SwiGLU MLP, its two RMSNorms."""
    h, inter = t["hidden_size"], t["intermediate_size"]
    out = [(f"{prefix}.input_layernorm.weight", (h,)), (f"{prefix}.post_attention_layernorm.weight", (h,)),
           (f"{prefix}.mlp.gate_proj.weight", (inter, h)), (f"{prefix}.mlp.up_proj.weight", (inter, h)),
           (f"{prefix}.mlp.down_proj.weight", (h, inter))]
    if kind == "full_attention":
        hd, nq, nkv = t["head_dim"], t["num_attention_heads"], t["num_key_value_heads"]
        q_rows = nq * hd * (2 if t["attn_output_gate"] else 1)  # the output gate rides on q_proj
        out += [(f"{prefix}.self_attn.q_proj.weight", (q_rows, h)), (f"{prefix}.self_attn.k_proj.weight", (nkv * hd, h)),
                (f"{prefix}.self_attn.v_proj.weight", (nkv * hd, h)), (f"{prefix}.self_attn.o_proj.weight", (h, nq * hd)),
                (f"{prefix}.self_attn.q_norm.weight", (hd,)), (f"{prefix}.self_attn.k_norm.weight", (hd,))]
    elif kind == "linear_attention":
        nk, dk = t["linear_num_key_heads"], t["linear_key_head_dim"]
        nv, dv = t["linear_num_value_heads"], t["linear_value_head_dim"]
        channels = nk * dk * 2 + nv * dv  # q, k and v go through the short convolution together
        out += [(f"{prefix}.linear_attn.in_proj_qkv.weight", (channels, h)),
                (f"{prefix}.linear_attn.in_proj_z.weight", (nv * dv, h)),
                (f"{prefix}.linear_attn.in_proj_b.weight", (nv, h)), (f"{prefix}.linear_attn.in_proj_a.weight", (nv, h)),
                (f"{prefix}.linear_attn.conv1d.weight", (channels, 1, t["linear_conv_kernel_dim"])),
                (f"{prefix}.linear_attn.dt_bias", (nv,)), (f"{prefix}.linear_attn.A_log", (nv,)),
                (f"{prefix}.linear_attn.norm.weight", (dv,)), (f"{prefix}.linear_attn.out_proj.weight", (h, nv * dv))]
    else:
        raise ValueError(f"unknown layer type {kind!r}")
    return out


def _vision(v):
    """The ViT: Conv3d patch embedding, learned positions, blocks with LayerNorms and biases, one merger."""
    d, inter, out_d = v["hidden_size"], v["intermediate_size"], v["out_hidden_size"]
    merged = d * v["spatial_merge_size"] ** 2
    tensors = [("visual.patch_embed.proj.weight", (d, v["in_channels"], v["temporal_patch_size"], v["patch_size"],
                                                   v["patch_size"])),
               ("visual.patch_embed.proj.bias", (d,)), ("visual.pos_embed.weight", (v["num_position_embeddings"], d))]
    for i in range(v["depth"]):
        p = f"visual.blocks.{i}"
        tensors += [(f"{p}.norm1.weight", (d,)), (f"{p}.norm1.bias", (d,)), (f"{p}.norm2.weight", (d,)),
                    (f"{p}.norm2.bias", (d,)), (f"{p}.attn.qkv.weight", (3 * d, d)), (f"{p}.attn.qkv.bias", (3 * d,)),
                    (f"{p}.attn.proj.weight", (d, d)), (f"{p}.attn.proj.bias", (d,)),
                    (f"{p}.mlp.linear_fc1.weight", (inter, d)), (f"{p}.mlp.linear_fc1.bias", (inter,)),
                    (f"{p}.mlp.linear_fc2.weight", (d, inter)), (f"{p}.mlp.linear_fc2.bias", (d,))]
    tensors += [("visual.merger.norm.weight", (d,)), ("visual.merger.norm.bias", (d,)),
                ("visual.merger.linear_fc1.weight", (merged, merged)), ("visual.merger.linear_fc1.bias", (merged,)),
                ("visual.merger.linear_fc2.weight", (out_d, merged)), ("visual.merger.linear_fc2.bias", (out_d,))]
    return tensors


def tensors(config):
    """(name, shape) of every tensor in the released checkpoint: text trunk, MTP head, vision tower."""
    t = config["text_config"]
    h, vocab = t["hidden_size"], t["vocab_size"]
    out = [("model.language_model.embed_tokens.weight", (vocab, h))]
    for i, kind in enumerate(t["layer_types"]):
        out += _layer(f"model.language_model.layers.{i}", t, kind)
    out.append(("model.language_model.norm.weight", (h,)))
    if not t["tie_word_embeddings"]:
        out.append(("lm_head.weight", (vocab, h)))
    for i in range(t["mtp_num_hidden_layers"]):  # MTP: shares the trunk's embedding and lm_head
        if i == 0:
            out += [("mtp.pre_fc_norm_hidden.weight", (h,)), ("mtp.pre_fc_norm_embedding.weight", (h,)),
                    ("mtp.fc.weight", (h, 2 * h)), ("mtp.norm.weight", (h,))]
        out += _layer(f"mtp.layers.{i}", t, "full_attention")
    if t["mtp_use_dedicated_embeddings"]:
        out.append(("mtp.embed_tokens.weight", (vocab, h)))
    return out + _vision(config["vision_config"])


def count(config, where=lambda name: True):
    """Parameters of the tensors whose name passes `where`."""
    return sum(prod(shape) for name, shape in tensors(config) if where(name))


def trunk_ffn_share(config):
    """The lesson's convention: the trunk's MLP parameters over the whole checkpoint."""
    return count(config, lambda n: n.startswith("model.language_model.layers.") and ".mlp." in n) / count(config)
