"""Facts about our own model, derived from data/real-model/ (lab/'s export of the FFN experiment).

The lesson reads these as `facts.real`; the ablation chart and the neuron
heatmap widgets receive their slices of the export from here.
"""


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
        # GPT-2's rule as lab/model.py applies it (init_std / sqrt(2 * n_layer)), recorded by the export.
        "residual_init_std": arch["residual_init_std"],
        "card": card,
        "variants": variants,
        "baseline_mean": sum(variants["baseline"]["val_losses"]) / len(variants["baseline"]["val_losses"]),
        "noise_floor": ablation["noise_floor"],
        "layer_number": neurons["layer"]["number"],
        "ablation": {
            "variants": ablation["variants"],  # the widget's page_params keeps what the page needs
            "references": ablation["references"],
            "metric": ablation["metric"],
            "tokens_per_run": ablation["tokens_per_run"],
            "date": card["date"],
        },
        "neurons": neurons,
    }


def facts(data):
    """facts.real, or None before lab/ has exported (the lesson then leaves its section out)."""
    if "real-model/model-card" not in data:
        return {"real": None}
    return {"real": real_model_facts(data["real-model/model-card"], data["real-model/ablation"],
                                     data["real-model/neurons"])}
