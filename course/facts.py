"""Numbers derived from data/ at build time: the only source of figures in lessons.

`build_facts(data)` returns nested dicts that Jinja reads as `facts.anchor.ffn_ratio`.
Every derivation is written out here once; tests pin the results.
"""
from . import params


def anchor_facts(anchor):
    t = anchor["config"]["text_config"]
    d, d_ff = t["hidden_size"], t["intermediate_size"]
    counts = params.breakdown(anchor["config"])
    return {
        "name": anchor["name"],
        "d": d,
        "d_ff": d_ff,
        "ffn_ratio": d_ff / d,
        "layers": t["num_hidden_layers"],
        "n_full": counts["n_full"],
        "n_linear": counts["n_linear"],
        "params": counts,
        "published_params": anchor["published_param_count"],
        # Convention of the lesson: the 64 trunk MLPs over the whole released checkpoint.
        "ffn_share": counts["trunk_mlp"] / counts["checkpoint"],
        "ffn_share_text": counts["trunk_mlp"] / counts["text"],
    }


def build_facts(data):
    return {"anchor": anchor_facts(data["anchor-model"])}
