"""Frontier models' official configs (data/frontier-models.json): widths, init and clamps."""
import math

from ..widgets import load_model


def gpt2_facts(entry):
    c = entry["config"]
    d = c["n_embd"]
    d_ff = c["n_inner"] or entry["ffn_width_rule"]["multiple_of_n_embd"] * d
    residual_layers = 2 * c["n_layer"]  # N in GPT-2's 1/sqrt(N): two residual branches per block
    return {"name": entry["name"], "d": d, "d_ff": d_ff, "ffn_ratio": d_ff / d, "layers": c["n_layer"],
            "activation": c["activation_function"], "init_std": c["initializer_range"],
            "residual_layers": residual_layers,
            "residual_init_std": c["initializer_range"] / math.sqrt(residual_layers)}


def swiglu_width_facts(entry):
    """SwiGLU has three d x h matrices; matching the two d x 4d of a plain FFN gives h = 8d/3."""
    c = entry["config"]
    d, h = c["hidden_size"], c["intermediate_size"]
    eight_thirds = 8 * d / 3
    return {"name": entry["name"], "d": d, "d_ff": h, "ffn_ratio": h / d, "eight_thirds": eight_thirds,
            "multiple_of_256": h % 256 == 0 and h - eight_thirds < 256}


def llama_facts(entry):
    """Llama 2 7B: its config's width against the rule in Meta's code, and the weights per FFN."""
    rule = {k: entry["ffn_width_rule"][k] for k in ("multiple_of_dim", "scale_num", "scale_den", "multiple_of")}
    out = swiglu_width_facts(entry)
    d, h = out["d"], out["d_ff"]
    out.update({"rule": rule, "rule_width": load_model("gate-width").llama_width(d, rule),  # the widget's rule, the one copy
                "plain_d_ff": rule["multiple_of_dim"] * d,
                "swiglu_weights": 3 * d * h, "plain_weights": 2 * d * rule["multiple_of_dim"] * d})
    return out


def clamped_form(entry):
    """A config's clamped SwiGLU: the limit and the form around it (data/frontier-models.json "swiglu")."""
    s = entry["swiglu"]
    return {"name": entry["name"], "limit": entry["config"]["swiglu_limit"], "alpha": s["alpha"],
            "linear_bias": s["linear_bias"], "gate_clamp": s["gate_clamp"], "linear_clamp": s["linear_clamp"]}


def clamp_facts(frontier):
    kimi = frontier["kimi-k3"]["config"]
    beta_gate, beta_linear = kimi["activation_situ_beta"], kimi["activation_situ_linear_beta"]
    return {
        "gpt_oss_limit": frontier["gpt-oss"]["config"]["swiglu_limit"],
        "deepseek_v4_limit": frontier["deepseek-v4"]["config"]["swiglu_limit"],
        # The two forms in the order a page lists them (a list: every runtime keeps it).
        "forms": [dict(clamped_form(frontier[k]), key=k) for k in ("gpt-oss", "deepseek-v4")],
        "kimi_beta_gate": beta_gate,
        "kimi_beta_linear": beta_linear,
        "kimi_bound": beta_gate * beta_linear,
        "kimi_gated_mla": kimi["mla_use_output_gate"],
    }


def facts(data):
    frontier = data["frontier-models"]
    return {"gpt2": gpt2_facts(frontier["gpt2-small"]),
            "deepseek67b": swiglu_width_facts(frontier["deepseek-llm-67b"]),
            "llama2_7b": llama_facts(frontier["llama-2-7b"]),
            "clamps": clamp_facts(frontier)}
