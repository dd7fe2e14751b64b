"""Facts about our own model, derived from data/real-model/ (lab/'s export).

The lesson reads these as `facts.real`; the ablation chart and the neuron
heatmap widgets receive their slices of the export from here.
"""
import math


def real_model_facts(card, ablation, neurons):
    """Numbers the lesson quotes about our model, and the data its two widgets draw."""
    arch = card["architecture"]
    variants = {v["name"]: v for v in ablation["variants"]}
    return {
        "name": card["name"],
        "date": card["date"],
        "n_layer": arch["n_layer"],
        "d_model": arch["d_model"],
        "d_ff": arch["d_ff"],
        "n_head": arch["n_head"],
        "vocab_size": arch["vocab_size"],
        "block_size": arch["block_size"],
        "init_std": arch["init_std"],
        "residual_init_std": arch["residual_init_std"],
        # GPT-2's rule: residual-output projections start at init_std / sqrt(2 * n_layer).
        "residual_init_rule": arch["init_std"] / math.sqrt(2 * arch["n_layer"]),
        "card": card,
        "variants": variants,
        "baseline_mean": sum(variants["baseline"]["val_losses"]) / len(variants["baseline"]["val_losses"]),
        "noise_floor": ablation["noise_floor"],
        "layer_number": neurons["layer"]["number"],
        "ablation": {
            "variants": [{k: v[k] for k in ("name", "description", "n_layer", "params", "seeds", "val_losses")}
                         for v in ablation["variants"]],
            "noise_floor": ablation["noise_floor"],
            "references": ablation["references"],
            "metric": ablation["metric"],
            "tokens_per_run": ablation["tokens_per_run"],
            "date": card["date"],
        },
        "neurons": neurons,
    }
