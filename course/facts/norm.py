"""Facts of our model's norm experiment (data/real-model/norm/norm.json, `python -m lab norm`):
facts.norm, or None before its first export. Lesson c4/l3's 真模型 reads only these."""
import statistics

KEY = "real-model/norm/norm"
STUCK = 0.1  # a run whose val loss is within this of the unigram's has learnt nothing beyond token counts


def loss_at(run, step):
    """The val loss at the evaluation nearest `step` (None where not finite)."""
    points = [h for h in run["history"] if h["val_loss"] is not None]
    if not points:
        return None
    return min(points, key=lambda h: abs(h["step"] - step))["val_loss"]


def placement_rows(runs, placement, unigram, short):
    """The placement x warm-up x lr runs, each read at the short runs' length (`at_short`; a run
    trained longer also has its last `val_loss`) against the unigram floor."""
    rows = []
    for name in placement:
        r = runs[name]
        loss = loss_at(r, short)
        rows.append({"name": name, "place": r["norm_place"], "warmup": r["warmup_steps"] > 0,
                     "lr_mult": r["lr_mult"], "steps": r["steps_trained"], "at_short": loss,
                     "val_loss": r["val_loss"], "finite": r["finite"],
                     "stuck": loss is None or loss > unigram - STUCK})
    return rows


def gradient_facts(models):
    """Step-0 gradients of the FFN's output projection (Xiong et al.'s W2), per placement and depth."""
    out = {}
    for m in models:
        ffn = [b["ffn_out_grad_norm"] for b in m["blocks"]]
        out[(m["norm_place"], m["n_layer"])] = {"place": m["norm_place"], "n_layer": m["n_layer"], "ffn": ffn,
                                                "last": ffn[-1], "first": ffn[0], "last_over_first": ffn[-1] / ffn[0]}
    depths = sorted({d for _, d in out})
    return {"by": {f"{p}-{d}": v for (p, d), v in out.items()}, "depths": depths,
            "post_over_pre_last": {d: out[("post", d)]["last"] / out[("pre", d)]["last"]
                                   for d in depths if ("post", d) in out and ("pre", d) in out}}


def gain_facts(models):
    """Each trained model's gains: the median over its norms of each norm's median gain, and the range."""
    out = {}
    for m in models:
        medians = [n["gain"]["p50"] for n in m["norms"]]
        out[m["run"]] = {"run": m["run"], "steps": m["steps_trained"], "form": m["gain_form"],
                         "decay": m["decay_on_gains"], "median": statistics.median(medians),
                         "lowest": min(n["gain"]["min"] for n in m["norms"]),
                         "highest": max(n["gain"]["max"] for n in m["norms"]),
                         "norms": [{"position": n["position"], "block": n["block"], "p50": n["gain"]["p50"],
                                    "p05": n["gain"]["p05"], "p95": n["gain"]["p95"]} for n in m["norms"]]}
    return out


def norm_facts(data):
    runs = {r["name"]: r for r in data["runs"]}
    unigram = data["references"]["unigram"]
    card = data["model_card"]
    short = card["training"]["short_steps"]
    rows = placement_rows(runs, data["placement"]["runs"], unigram, short)
    by = {(r["place"], r["warmup"], r["lr_mult"]): r for r in rows}
    high = card["training"]["high_lr_mult"]
    baseline = runs["baseline"]
    layernorm = runs.get("layernorm")
    gains = gain_facts(data["gains"]["models"])
    # The gains after the same short run without decay: what decay on g or on w moved them from.
    undecayed = next((gains[r["name"]] for r in rows if r["place"] == "pre" and r["warmup"] and r["lr_mult"] == 1.0
                      and r["name"] in gains), None)
    return {
        "card": card,
        "runs": runs,
        "references": data["references"],
        "band": data["baseline_band"],
        "rows": rows,
        "high_lr_mult": high,
        "cell": {f"{p}-{'warm' if w else 'cold'}-{'high' if m == high else 'base'}": r for (p, w, m), r in by.items()},
        "short_steps": short,
        "baseline_at_short": loss_at(baseline, short),
        "not_run": [f"{p}-{'warm' if w else 'cold'}-{'high' if m == high else 'base'}" for p in ("pre", "post")
                    for w in (False, True) for m in (1.0, high) if (p, w, m) not in by],
        "layernorm": None if layernorm is None else {
            "steps": layernorm["steps_trained"], "val_loss": layernorm["val_loss"],
            "baseline_then": loss_at(baseline, layernorm["steps_trained"]),
            "diff": layernorm["val_loss"] - loss_at(baseline, layernorm["steps_trained"])},
        "gradients": gradient_facts(data["gradients"]["models"]),
        "gains": gains,
        "undecayed": undecayed,
        "decay_factor": data["gains"]["decay_factor"],
        "speed": data["speed"],
        "new_minutes": card["budget"]["new_runs_seconds"] / 60,
        "budget_minutes": card["budget"]["limit_seconds"] / 60,
    }


def facts(data):
    return {"norm": norm_facts(data[KEY]) if KEY in data else None}
