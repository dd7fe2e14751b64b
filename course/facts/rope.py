"""Facts of RoPE on our model (data/real-model/rope/rope.json, `python -m lab rope`): facts.rope, or None
before its first export. Lesson c3/l2's 真模型 reads only these.

facts.rope:
  shift        positions moved by this many places
  full         the trained RoPE model on full windows (shifted positions past the context): windows,
               tokens, reach (the last shifted position), max_diff / mean_diff (attention weights),
               max_logit_diff, loss (both ways), loss_diff, fp64 (the same in float64: windows, max_diff)
  short        the same model on the control's windows (block_size - shift tokens)
  control      the learned-position model on those windows: variant, trained (False: at initialisation),
               step, max_diff, mean_diff, loss, loss_diff, extra_params (its position table)
  long         windows twice the context: tokens, windows, first / second (the halves' loss), alone (the
               second half's tokens run alone from position 0), past (second - alone: the cost of the unseen
               positions with more context), buckets (mean loss per BUCKET positions)
  pairs        RoPE's frequency pairs: n, slow (turn less than once in the context), head_dim, base, context,
               fast_wavelength / slow_wavelength (tokens per turn), slow_turns (the slowest pair's turns)
  model        the run read: variant, seed, val_loss
"""
KEY = "real-model/rope/rope"
CARD = "real-model/model-card"
BUCKET = 64  # positions per bucket of the long windows' loss


def row(r):
    out = {"windows": r["windows"], "tokens": r["tokens"], "reach": r["positions"][1][1],
           "max_diff": r["max_weight_diff"], "mean_diff": r["mean_weight_diff"], "max_logit_diff": r["max_logit_diff"],
           "loss": r["loss"], "loss_diff": r["loss_diff"], "trained": r["trained"], "variant": r["model"]}
    if "fp64" in r:
        out["fp64"] = {"windows": r["fp64"]["windows"], "max_diff": r["fp64"]["max_weight_diff"],
                       "max_logit_diff": r["fp64"]["max_logit_diff"]}
    return out


def buckets(losses, size):
    """Mean loss of each run of `size` positions. buckets([1, 3, 5, 7], 2) -> [{'first': 0, 'last': 1, 'loss': 2.0}, ...]"""
    return [{"first": i, "last": min(i + size, len(losses)) - 1, "loss": sum(losses[i:i + size]) / len(losses[i:i + size])}
            for i in range(0, len(losses), size)]


def rope_facts(doc, card=None):
    full, short, control = (row(r) for r in doc["shift"]["rows"])
    c = doc["shift"]["control"]
    control.update({"step": c["step"], "params": c["params"]})
    if card is not None:
        base = next((v["params"] for v in card["variants"] if v["name"] == "baseline"), None)
        control["extra_params"] = c["params"] - base if base else None
    long, pairs = doc["long"], doc["pairs"]
    return {
        "shift": doc["shift"]["shift"], "full": full, "short": short, "control": control,
        "long": {"tokens": long["tokens"], "windows": long["windows"], "first": long["first_half"],
                 "second": long["second_half"], "alone": long["second_half_alone"],
                 "past": long["second_half"] - long["second_half_alone"],
                 "buckets": buckets(long["loss_by_position"], BUCKET)},
        "pairs": {"n": pairs["pairs"], "slow": pairs["slow"], "head_dim": pairs["head_dim"], "base": pairs["base"],
                  "context": pairs["context"], "fast_wavelength": pairs["wavelength"][0],
                  "slow_wavelength": pairs["wavelength"][-1], "slow_turns": pairs["turns"][-1],
                  "wavelength": pairs["wavelength"], "turns": pairs["turns"]},
        "model": {"variant": doc["model"]["variant"], "seed": doc["model"]["seed"], "val_loss": doc["model"]["val_loss"]},
    }


def facts(data):
    if KEY not in data:
        return {"rope": None}
    return {"rope": rope_facts(data[KEY], data.get(CARD))}
