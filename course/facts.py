"""Numbers derived from data/ at build time: the only source of figures in lessons.

`build_facts(data)` returns nested dicts that Jinja reads as `facts.anchor.ffn_ratio`.
Every derivation is written out here once; tests pin the results.
"""
import math

import numpy as np

from . import params
from .real_model import real_model_facts


def silu(x):
    """x * sigmoid(x). >>> silu(0.0) -> 0.0"""
    return x / (1.0 + math.exp(-x))


def silu_overflow_fp16():
    """Where silu(x) * x (SwiGLU with gate input and linear input both x) first exceeds the
    largest fp16 number, by bisection: (x, fp16 max). silu(x) ~ x there, so x ~ sqrt(65,504).

    >>> silu_overflow_fp16() -> (255.94..., 65504.0)
    """
    limit = float(np.finfo(np.float16).max)
    lo, hi = 1.0, 1000.0  # silu(1) * 1 < limit < silu(1000) * 1000
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if silu(mid) * mid <= limit else (lo, mid)
    return hi, limit


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
    }


def gpt2_facts(entry):
    c = entry["config"]
    d = c["n_embd"]
    d_ff = c["n_inner"] or entry["ffn_width_rule"]["multiple_of_n_embd"] * d
    return {"name": entry["name"], "d": d, "d_ff": d_ff, "ffn_ratio": d_ff / d, "layers": c["n_layer"],
            "activation": c["activation_function"]}


def swiglu_width_facts(entry):
    """SwiGLU has three d x h matrices; matching the two d x 4d of a plain FFN gives h = 8d/3."""
    c = entry["config"]
    d, h = c["hidden_size"], c["intermediate_size"]
    eight_thirds = 8 * d / 3
    return {"name": entry["name"], "d": d, "d_ff": h, "ffn_ratio": h / d, "eight_thirds": eight_thirds,
            "multiple_of_256": h % 256 == 0 and h - eight_thirds < 256}


def clamp_facts(frontier):
    kimi = frontier["kimi-k3"]["config"]
    beta_gate, beta_linear = kimi["activation_situ_beta"], kimi["activation_situ_linear_beta"]
    return {
        "gpt_oss_limit": frontier["gpt-oss"]["config"]["swiglu_limit"],
        "deepseek_v4_limit": frontier["deepseek-v4"]["config"]["swiglu_limit"],
        "kimi_beta_gate": beta_gate,
        "kimi_beta_linear": beta_linear,
        "kimi_bound": beta_gate * beta_linear,
        "kimi_gated_mla": kimi["mla_use_output_gate"],
    }


def paper_facts(papers):
    vaswani = papers["vaswani2017"]
    shazeer = {row["row"]: row["log_ppl"] for row in papers["shazeer2020"]["rows"]}
    qiu = {row["row"]: row["first_token_share"] for row in papers["qiu2025"]["rows"]}
    widths = np.array([row["d_ff"] for row in vaswani["rows"]])
    return {
        "vaswani": {"d_model": vaswani["d_model"], "rows": vaswani["rows"],
                    "ratios": (widths / vaswani["d_model"]).tolist(),
                    "base": next(r for r in vaswani["rows"] if r["row"] == "base"),
                    "table": vaswani["table"], "paper": vaswani["paper"]},
        "shazeer": {"gelu": shazeer["FFN_GELU"], "swiglu": shazeer["FFN_SwiGLU"],
                    "steps": papers["shazeer2020"]["steps"], "model": papers["shazeer2020"]["model"]},
        "qiu": {"baseline": qiu["baseline"], "gated": next(v for k, v in qiu.items() if k != "baseline"),
                "model": papers["qiu2025"]["model"]},
    }


def build_facts(data):
    frontier = data["frontier-models"]
    return {
        "anchor": anchor_facts(data["anchor-model"]),
        "gpt2": gpt2_facts(frontier["gpt2-small"]),
        "deepseek67b": swiglu_width_facts(frontier["deepseek-llm-67b"]),
        "clamps": clamp_facts(frontier),
        "papers": paper_facts(data["papers"]),
        "silu10_times10": silu(10.0) * 10.0,
        "fp16": dict(zip(("silu_overflow_x", "max"), silu_overflow_fp16())),
        # Our own model, once lab/ has exported it (None before the first real run).
        "real": (real_model_facts(data["real-model/model-card"], data["real-model/ablation"],
                                  data["real-model/neurons"])
                 if "real-model/model-card" in data else None),
    }
