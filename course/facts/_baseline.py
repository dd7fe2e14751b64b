"""The baseline arm every experiment reads its variants against: the FFN experiment's baseline
seeds (data/real-model/ablation.json) plus the seeds trained later for it
(data/real-model/baseline-seeds.json, `python -m lab ffn ... extra_seeds=5,6,7`), one row.

A fact module that reads the baseline asks here (`ablation(data)` or `baseline_row(data)`), so a
seed added to the baseline reaches every lesson at once and no two lessons count its seeds apart.
"""
ABLATION = "real-model/ablation"
EXTRA = "real-model/baseline-seeds"


def extend_row(row, extra):
    """A variant row of ablation.json (seeds, val_losses, train_losses, histories) with the extra
    export's runs appended in seed order; a seed the row has already is kept as it is."""
    if not extra:
        return row
    runs = sorted((r for r in extra["seed_runs"] if r["seed"] not in row["seeds"]), key=lambda r: r["seed"])
    return {**row,
            "seeds": row["seeds"] + [r["seed"] for r in runs],
            "val_losses": row["val_losses"] + [r["val_loss"] for r in runs],
            "train_losses": row["train_losses"] + [r["train_loss"] for r in runs],
            "histories": row["histories"] + [r["history"] for r in runs]}


def ablation(data):
    """ablation.json with its baseline row extended by baseline-seeds.json (when present)."""
    doc = data[ABLATION]
    extra = data.get(EXTRA)
    if not extra:
        return doc
    return {**doc, "variants": [extend_row(v, extra) if v["name"] == "baseline" else v for v in doc["variants"]]}


def baseline_row(data):
    """The baseline's row, every seed it has."""
    return next(v for v in ablation(data)["variants"] if v["name"] == "baseline")


def extra_runs(data):
    """The later baseline runs' rows (with their per-step training losses), [] before any."""
    extra = data.get(EXTRA)
    return list(extra["seed_runs"]) if extra else []
