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


def placement_rows(runs, placement, unigram):
    """The placement x warm-up x lr runs, each read against the unigram floor."""
    rows = []
    for name in placement:
        r = runs[name]
        loss = r["val_loss"]
        rows.append({"name": name, "place": r["norm_place"], "warmup": r["warmup_steps"] > 0,
                     "lr_mult": r["lr_mult"], "steps": r["steps_trained"], "val_loss": loss,
                     "finite": r["finite"], "stuck": loss is None or loss > unigram - STUCK,
                     "above_unigram": None if loss is None else unigram - loss})
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
    rows = placement_rows(runs, data["placement"]["runs"], unigram)
    by = {(r["place"], r["warmup"], r["lr_mult"]): r for r in rows}
    high = max(r["lr_mult"] for r in rows)
    card = data["model_card"]
    short = card["training"]["short_steps"]
    baseline = runs["baseline"]
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
        "gradients": gradient_facts(data["gradients"]["models"]),
        "gains": gain_facts(data["gains"]["models"]),
        "decay_factor": data["gains"]["decay_factor"],
        "speed": data["speed"],
        "new_minutes": card["budget"]["new_runs_seconds"] / 60,
        "budget_minutes": card["budget"]["limit_seconds"] / 60,
    }


def facts(data):
    return {"norm": norm_facts(data[KEY]) if KEY in data else None}
