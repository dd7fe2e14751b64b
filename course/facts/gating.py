"""Facts of our model's gating experiment (data/real-model/gating/gating.json, `python -m lab gating`):
facts.gating, or None before its first export. Lesson c4/l4's 真模型 reads only these."""
KEY = "real-model/gating/gating"
# The baseline's 5 seeds with a val loss at every evaluation, from the FFN experiment of the same
# edition as the gating export: the 三國-only edition's copy while gating.json is of that edition.
ABLATION = "real-model/ablation"
ABLATION_ED1 = "real-model/gating/ffn-ablation-ed1"
ORDER = ("baseline", "gelu_ffn", "bilinear_ffn", "relu_ffn")  # the page's table: SwiGLU first


def loss_at(run, step):
    """The val loss at evaluation `step` of a run's history (None if it has no such step)."""
    return next((h["val_loss"] for h in run["history"] if h["step"] == step), None)


def bands_by_step(ablation):
    """{step: the range of the baseline's val loss over its seeds at that evaluation}: the noise
    floor a gap at that step must clear (the FFN experiment's seeds, one history each)."""
    base = next(v for v in ablation["variants"] if v["name"] == "baseline")
    steps = [h["step"] for h in base["histories"][0]]
    out = {}
    for i, step in enumerate(steps):
        losses = [h[i]["val_loss"] for h in base["histories"]]
        out[step] = round(max(losses) - min(losses), 6)
    return out


def compare(run, baseline, bands):
    """A run against the baseline at the run's own last step (a run the budget cut short is read
    where it stopped): the gap, the seed band at that step, and whether the gap clears it."""
    step = run["steps_trained"]
    then = loss_at(baseline, step)
    diff = run["val_loss"] - then if then is not None and run["val_loss"] is not None else None
    band = bands.get(step)
    return {"step": step, "baseline_then": then, "diff": diff, "band": band,
            "resolved": diff is not None and band is not None and abs(diff) > band,
            "full": step == baseline["steps_trained"]}


def pair(a, b, bands):
    """Run a against run b at the last step both reached (the shorter run's): their losses there,
    the gap a - b, the seed band at that step, and whether the gap clears it."""
    step = min(a["steps_trained"], b["steps_trained"])
    la, lb = loss_at(a, step), loss_at(b, step)
    gap = la - lb if la is not None and lb is not None else None
    band = bands.get(step)
    return {"step": step, "a": la, "b": lb, "gap": gap, "band": band,
            "resolved": gap is not None and band is not None and abs(gap) > band}


def range_facts(models, limits, fp16_max):
    """Per model, the largest hidden value over its layers against fp16's limit, and per config's
    clamp the largest share of gate and up entries it would change in any layer."""
    out = {}
    for m in models:
        layers = m["layers"]
        hidden = max(layer["hidden"]["max_abs"] for layer in layers)
        row = {"run": m["run"], "ffn": m["ffn"], "layers": layers, "hidden_max": hidden,
               "hidden_over_fp16": hidden / fp16_max,
               "up_max": max(layer["up"]["max_abs"] for layer in layers),
               "clamped": {name: {"up": max(layer["clamped_share"][name]["up"] for layer in layers)}
                           for name in limits}}
        if "gate" in layers[0]:
            row["gate_max"] = max(layer["gate"]["max"] for layer in layers)
            row["gate_min"] = min(layer["gate"]["min"] for layer in layers)
            for name in limits:
                row["clamped"][name]["gate"] = max(layer["clamped_share"][name]["gate"] for layer in layers)
        out[m["run"]] = row
    return out


def gating_facts(data, ablation):
    runs = {r["name"]: r for r in data["runs"]}
    baseline = runs["baseline"]
    band = data["baseline_band"]
    card = data["model_card"]
    bands = bands_by_step(ablation)
    rows = [{**runs[n], "vs": compare(runs[n], baseline, bands)} for n in ORDER if n in runs]
    base = next(v for v in ablation["variants"] if v["name"] == "baseline")
    seed0 = base["val_losses"][base["seeds"].index(baseline["seed"])]
    ranges = data["ranges"]
    return {
        "card": card,
        "runs": runs,
        "rows": rows,
        "by": {r["name"]: r for r in rows},
        "references": data["references"],
        "band": band,
        "bands": bands,
        # The same seed in the FFN experiment's precision (bf16 autocast) and in this export's:
        # what the precision alone moves the baseline's loss by.
        "seed_in_band_precision": seed0, "precision_gap": baseline["val_loss"] - seed0,
        "ffn_params": baseline["ffn_params_per_layer"],
        "limits": ranges["limits"],
        "fp16_max": ranges["fp16_max"],
        "bf16_max": ranges["bf16_max"],
        "top_share": ranges["top_share"],
        "ranges": range_facts(ranges["models"], ranges["limits"], ranges["fp16_max"]),
        "not_trained": [n for n in ORDER if n not in runs],
        # Shazeer's two comparisons at our scale: the gate without an activation against the
        # activation without a gate, and ReLU against GELU (each at the shorter run's last step).
        "pairs": {f"{x}-{y}": pair(runs[f"{x}_ffn"], runs[f"{y}_ffn"], bands)
                  for x, y in (("bilinear", "gelu"), ("relu", "gelu")) if f"{x}_ffn" in runs and f"{y}_ffn" in runs},
        "new_minutes": card["budget"]["new_runs_seconds"] / 60,
        "budget_minutes": card["budget"]["limit_seconds"] / 60,
    }


def same_edition_ablation(data):
    """The FFN export of the gating export's corpus: the site's own when their model cards name the
    same files (by name and sha256); the 三國-only edition's copy while gating.json is of that one."""
    corpus = data[KEY]["model_card"]["corpus"]
    card = data.get("real-model/model-card")
    if card and corpus_files(card["corpus"]) == corpus_files(corpus):
        return data[ABLATION]
    if "files" not in corpus and ABLATION_ED1 in data:
        return data[ABLATION_ED1]
    raise ValueError("data/real-model/gating/gating.json: no FFN export of its corpus to give the seed band")


def corpus_files(corpus):
    """{(file, sha256)} of a model card's corpus (one book before the seven-book edition)."""
    return {(f["file"], f["sha256"]) for f in corpus.get("files", [corpus])}


def facts(data):
    return {"gating": gating_facts(data[KEY], same_edition_ablation(data)) if KEY in data else None}
