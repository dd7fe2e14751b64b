"""Facts of our model's residual experiment (data/real-model/residual/residual.json, lab/'s
`python -m lab residual`): facts.residual, or None before its first export; and of its
mechanism runs (mechanism.json, `python -m lab mechanism`): facts.residual.mechanism, or None."""
import math

KEY = "real-model/residual/residual"
MECHANISM_KEY = "real-model/residual/mechanism"


def stream_facts(model):
    """One model's stream: RMS after each write relative to the embedding's, beside the two
    predictions: sqrt(writes + 1) (every write as large as the embedding, all independent) and
    the measured writes' sizes added as if independent."""
    points = model["points"]
    base = points[0]["stream_rms"]
    return {"variant": model["variant"], "state": model["state"], "seed": model["seed"],
            "writes": [p["writes"] for p in points], "labels": [p["write"] for p in points],
            "relative": [p["stream_rms"] / base for p in points],
            "sqrt_rule": [math.sqrt(p["writes"] + 1) for p in points],
            "independent": [p["rms_if_independent"] / base for p in points],
            "write_relative": [p["write_rms"] / base for p in points]}


def gradient_facts(model):
    """Step-0 gradients of one model: the parameters' (what an optimiser step reads) per block,
    and dL/d(stream) at each block's input."""
    params = [b["param_grad_norm"] for b in model["blocks"]]
    stream = [b["stream_grad_norm"] for b in model["blocks"]]
    return {"variant": model["variant"], "n_layer": len(params), "norms": params, "stream_norms": stream,
            "first_over_last": params[0] / params[-1], "max_over_min": max(params) / min(params)}


def mechanism_facts(data, no_skip=None, baseline=None, no_skip_precision=None):
    """The mechanism runs by name, each with its probes at step 0 and at its last evaluation.
    `no_skip` is residual.json's no_residual variant: that run is the mechanism export's no-skip
    model too (its loss and curve from there, its step-0 probes from mechanism.json).
    `baseline` is residual.json's baseline variant: its seeds' histories give the seed band at
    every step (the seeds protocol); `no_skip_precision` is residual.json's training precision."""
    steps = data["model_card"]["training"]["steps"]
    variants = {}
    for v in data["variants"]:
        variants[v["name"]] = {**v, "init": v["probes"][0], "end": v["probes"][-1],
                               "stopped_early": v["steps_trained"] < steps, "elsewhere": False}
    order = [v["name"] for v in data["variants"]]
    if no_skip is not None:
        variants["no_residual"] = {"name": "no_residual", "seed": no_skip["seeds"][0], "val_loss": no_skip["val_losses"][0],
                                   "history": no_skip["histories"][0], "steps_trained": steps,
                                   "init": data["no_skip_init"]["probe"], "end": None, "stopped_early": False,
                                   "elsewhere": True}
        order.insert(1, "no_residual")
    # The same seed of the baseline in both exports, where their precisions differ: how far the
    # two precisions move one run (None when both are the same run, trained once).
    precision_gap = None
    first = data["variants"][0]
    if (baseline is not None and first["seed"] in baseline["seeds"]
            and no_skip_precision not in (None, data["model_card"]["training"]["precision"])):
        precision_gap = first["val_loss"] - baseline["val_losses"][baseline["seeds"].index(first["seed"])]
    return {"variants": variants, "order": order, "precision_gap": precision_gap,
            "baseline_histories": baseline["histories"] if baseline is not None else [first["history"]],
            "references": data["references"], "card": data["model_card"],
            "gradients": {m["variant"]: m for m in data["gradients"]["models"]},
            "grad_batch": data["gradients"]["batch"], "probe_batch": data["probes"]}


def residual_facts(data, mechanism=None):
    card = data["model_card"]
    steps = card["training"]["steps"]
    variants = {v["name"]: {**v, "steps_trained": v["histories"][0][-1]["step"], "full_steps": steps}
                for v in data["variants"]}
    stream = [stream_facts(m) for m in data["stream"]["models"]]
    return {
        "card": card,
        "variants": variants,
        "band": data["baseline_band"],
        "trained_stream": next(s for s in stream if s["variant"] == "baseline" and s["state"] == "trained"),
        "stream": stream,
        "gradients": {m["variant"]: gradient_facts(m) for m in data["gradients"]["models"]},
        "grad_batch": data["gradients"]["batch"],
        # What the comparison chart (the ablation widget) draws.
        "comparison": {
            # the widget's page_params keeps what the page needs; full_steps marks a run cut short
            "variants": [{**v, "full_steps": card["training"]["steps"]} for v in data["variants"]],
            "references": data["references"], "metric": data["metric"],
            "tokens_per_run": data["tokens_per_run"], "date": card["date"],
        },
        "evidence": {"stream": stream, "gradients": [gradient_facts(m) for m in data["gradients"]["models"]]},
        "mechanism": mechanism_facts(mechanism, variants.get("no_residual"), variants.get("baseline"),
                                     card["training"].get("precision")) if mechanism else None,
    }


def facts(data):
    return {"residual": residual_facts(data[KEY], data.get(MECHANISM_KEY)) if KEY in data else None}
