"""The course's anchor model (data/anchor-model.json): its official config, counted exactly."""
import math

from . import _params as params


def anchor_facts(anchor):
    t = anchor["config"]["text_config"]
    d, d_ff = t["hidden_size"], t["intermediate_size"]
    counts = params.breakdown(anchor["config"])
    attn = params.full_attention(t)
    heads, head_dim = t["num_attention_heads"], t["head_dim"]
    layers = t["num_hidden_layers"]
    residual_writes = layers * 2  # each layer adds its token mixer's and its FFN's output
    return {
        "name": anchor["name"],
        "d": d,
        "d_ff": d_ff,
        "ffn_ratio": d_ff / d,
        "layers": layers,
        "n_full": counts["n_full"],
        "n_linear": counts["n_linear"],
        "vocab": t["vocab_size"],
        "heads": heads,
        "kv_heads": t["num_key_value_heads"],
        "head_dim": head_dim,
        "attn": attn,
        "mlp": params.mlp(t),
        "q_proj_out": attn["q_proj"] // d,
        "q_gate_width": heads * head_dim,  # per head: head_dim query columns, then head_dim gate columns
        "params": counts,
        "published_params": anchor["published_param_count"],
        # The lesson's convention: the 64 trunk MLPs over the whole released checkpoint.
        "ffn_share": counts["trunk_mlp"] / counts["checkpoint"],
        "ffn_share_text": counts["trunk_mlp"] / counts["text"],
        "residual_writes": residual_writes,
        # Embedding plus each write, all independent with variance 1: the std of their sum.
        "residual_std": math.sqrt(residual_writes + 1),
        "rms_norm_eps": t["rms_norm_eps"],
        "dtype": t["dtype"],  # the precision its config names ("bfloat16")
        # RoPE on the first partial_rotary_factor of each head's channels, at base rope_theta (C3 第 2 课)
        "rotary_dims": int(head_dim * t["rope_parameters"]["partial_rotary_factor"]),
        "rope_theta": t["rope_parameters"]["rope_theta"],
        "context": t["max_position_embeddings"],
    }


def facts(data):
    return {"anchor": anchor_facts(data["anchor-model"])}
