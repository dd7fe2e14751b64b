"""Facts of our model's gating experiment (data/real-model/gating/gating.json, `python -m lab gating`):
facts.gating, or None before its first export. Lesson c4/l4's 真模型 reads only these.

Every comparison is read by the seeds protocol (widgets/common/seeds.py), on training and on
validation loss, against the baseline's seed band at the same step. The baseline's seeds, and the
linear FFN of 第 1 课 (no activation, no gate), are the FFN experiment's (ablation.json) of the same
corpus; its seed 0 is the gating export's baseline run.
"""
from course.widgets import common_module

common_module("numfmt")  # first: seeds imports it
seeds = common_module("seeds")

KEY = "real-model/gating/gating"
SEEDS = "real-model/gating/seeds"  # its extra seeds (`extra_seeds=`), when exported
ABLATION = "real-model/ablation"
CARD = "real-model/model-card"
ORDER = ("baseline", "gelu_ffn", "bilinear_ffn", "relu_ffn")  # the page's table: SwiGLU first
LINEAR = "linear_ffn"  # 第 1 课's FFN without activation or gate, in ablation.json
KEYS = ("train_loss", "val_loss")
# The comparisons the page reads, a - b: each variant against SwiGLU; the gate without an
# activation against the activation without a gate (Shazeer's test of "the gate, not the
# activation"); ReLU against GELU (which ungated activation); the product alone against no
# non-linearity at all.
PAIRS = (("gelu_ffn", "baseline"), ("relu_ffn", "baseline"), ("bilinear_ffn", "baseline"),
         ("bilinear_ffn", "gelu_ffn"), ("bilinear_ffn", "relu_ffn"), ("relu_ffn", "gelu_ffn"),
         ("bilinear_ffn", LINEAR), (LINEAR, "baseline"))
UNGATED = ("gelu_ffn", "relu_ffn")


def variant(ablation, name):
    return next((v for v in ablation["variants"] if v["name"] == name), None)


def arm(name, step, key, runs, seed_runs, ablation):
    """{seed: loss at `step`} of one arm: the baseline and the linear FFN from the FFN experiment's
    seeds, the gating variants from this export's runs and seed_runs."""
    if name in ("baseline", LINEAR):
        v = variant(ablation, name)
        return seeds.history_by_seed(v, step, key) if v else {}
    rows = [runs[name], *[s for s in seed_runs if s["name"] == name]] if name in runs else []
    return seeds.runs_by_seed(rows, step, key)


def mean(values):
    values = list(values)
    return sum(values) / len(values) if values else None


def compare_at(step, runs, seed_runs, ablation, drop=None):
    """Every pair of PAIRS at evaluation `step`, on both losses, by the protocol against the
    baseline's band at that step (for two non-baseline arms too: the protocol's one band). With
    `drop`, that seed is left out of every arm, the band included."""
    out = {}
    for key in KEYS:
        def losses(name):
            return {sd: v for sd, v in arm(name, step, key, runs, seed_runs, ablation).items() if sd != drop}
        base = losses("baseline")
        width = seeds.band(base.values())
        out[key] = {"band": width}
        for a, b in PAIRS:
            arms = losses(b), losses(a)
            if arms[0] and arms[1]:
                c = seeds.compare(*arms, width)
                out[key][f"{a}-{b}"] = {**c, "say": seeds.verdict(c), "brief": seeds.brief(c), "a": mean(arms[1].values()),
                                        "b": mean(arms[0].values())}
    return out


def row(name, step, runs, seed_runs, ablation, only=None):
    """The table's row of one FFN at `step`: its seeds (those in `only`, when given) and its mean
    losses over them."""
    losses = {key: {s: v for s, v in arm(name, step, key, runs, seed_runs, ablation).items()
                    if only is None or s in only} for key in KEYS}
    return {"name": name, "ffn": runs[name]["ffn"], "d_ff": runs[name]["d_ff"], "matrices": runs[name]["matrices"],
            "seeds": sorted(losses["val_loss"]), **{key: mean(v.values()) for key, v in losses.items()},
            "by_seed": losses}


def slow_start(early, variants):
    """Is every variant, and the linear FFN, measured below SwiGLU at this step (`early`: one loss)?"""
    arms = [*variants, LINEAR]
    return bool(variants) and all(f"{n}-baseline" in early and early[f"{n}-baseline"]["direction"] < 0 for n in arms)


def lag(losses, seed):
    """How far `seed`'s loss is above the worst of the other seeds (negative: it is not the worst)."""
    rest = [v for sd, v in losses.items() if sd != seed]
    return losses[seed] - max(rest) if rest else None


def worst_course(losses_by_step, seed):
    """`seed`'s lag behind its arm's other seeds at each step (lag), the step pair across which it grew
    most (when it fell behind), and its least and largest lag from then on.
    worst_course([{0: 5.0, 4: 5.05}, {0: 4.0, 4: 4.4}, {0: 3.9, 4: 4.25}], 4)["fell"] -> 1"""
    lags = [lag(v, seed) for v in losses_by_step]
    fell = max(range(1, len(lags)), key=lambda i: lags[i] - lags[i - 1]) if len(lags) > 1 else 0
    return {"lags": lags, "fell": fell, "after": [min(lags[fell:]), max(lags[fell:])]}


def split_gap(losses, base_losses, seed):
    """Paired gaps with `seed` apart: {"rest": mean over the other seeds, "seeds": them, "diffs": their
    gaps, "seed": `seed`'s gap or None}."""
    gaps = {sd: v - base_losses[sd] for sd, v in losses.items() if sd in base_losses}
    rest = {sd: g for sd, g in gaps.items() if sd != seed}
    return {"rest": mean(rest.values()), "seeds": sorted(rest), "diffs": [rest[sd] for sd in sorted(rest)],
            "seed": gaps.get(seed)}


def flipped_by(end_losses, base_losses, seed):
    """A pair whose gaps on every other seed share one sign and whose gap on `seed` has the other:
    {"others": [least, largest], "seeds": the others, "seed": its gap}, or None. base_losses,
    end_losses: {seed: loss}."""
    split = split_gap(end_losses, base_losses, seed)
    rest = split["diffs"]
    if split["seed"] is None or len(rest) < 2 or not (all(g > 0 for g in rest) or all(g < 0 for g in rest)):
        return None
    if (split["seed"] > 0) == (rest[0] > 0):
        return None
    return {"others": [min(rest), max(rest)], "seeds": split["seeds"], "seed": split["seed"]}


def spread_facts(arms, steps, shared, runs, seed_runs, ablation):
    """Each arm's own range over the seeds every arm ran (`shared`), per loss and step, and whether the
    baseline's is the widest at every step on both losses: the band of non-baseline pairs is the
    baseline's, which assumes the arms vary alike across seeds."""
    spread = {n: {key: [seeds.band(v for sd, v in arm(n, st, key, runs, seed_runs, ablation).items() if sd in shared)
                        for st in steps] for key in KEYS} for n in arms}
    others = [n for n in arms if n != "baseline"]
    widest = len(shared) > 1 and bool(others) and all(
        spread["baseline"][key][i] is not None
        and all(spread[n][key][i] is not None and spread[n][key][i] < spread["baseline"][key][i] for n in others)
        for key in KEYS for i in range(len(steps)))
    return {"seeds": sorted(shared), "by_arm": spread, "baseline_widest": widest,
            "others_at_end": {key: [spread[n][key][-1] for n in others] for key in KEYS}}


def crossings(end, without):
    """The pairs unmeasured by the rule (`end`) that would read as measured with the baseline's worst
    seed left out of everything, band and pairs (`without`: compare_at(..., drop=worst)): what
    dropping that seed after seeing the results would have read."""
    return [{"pair": p, "key": key, "gap": c["gap"], "narrow": without[key]["band"]}
            for key in KEYS for p, c in without[key].items()
            if p != "band" and c["measured"] and p in end[key] and not end[key][p]["measured"]]


def tail_order(tails, gated, plain):
    """Per layer, is the `gated` FFN's tail heavier than every `plain` one's: "heavier" in every layer,
    "lighter" in every layer, or "mixed"; and whether SwiGLU's is the heaviest of all in every layer."""
    heavier = [all(tails[gated][i] > tails[n][i] for n in plain) for i in range(len(tails[gated]))]
    lighter = [all(tails[gated][i] < tails[n][i] for n in plain) for i in range(len(tails[gated]))]
    heaviest = all(tails["baseline"][i] > max(t[i] for n, t in tails.items() if n != "baseline")
                   for i in range(len(tails["baseline"])))
    return {"bilinear": "heavier" if all(heavier) else "lighter" if all(lighter) else "mixed",
            "swiglu_heaviest": heaviest}


def range_facts(models, limits, fp16_max):
    """Per model, the largest hidden value over its layers against fp16's limit, per layer its
    maximum and tail (the maximum over the top 1-in-10^4 value: how far the largest entry stands out),
    and per config's clamp the largest share of gate and up entries it would change in any layer."""
    out = {}
    for m in models:
        layers = m["layers"]
        hidden = max(layer["hidden"]["max_abs"] for layer in layers)
        r = {"run": m["run"], "ffn": m["ffn"], "layers": layers, "hidden_max": hidden,
             "hidden_max_block": max(layers, key=lambda layer: layer["hidden"]["max_abs"])["block"],
             "hidden_by_layer": [layer["hidden"]["max_abs"] for layer in layers],
             "tail_by_layer": [layer["hidden"]["max_abs"] / layer["hidden"]["top_abs"] for layer in layers],
             "hidden_over_fp16": hidden / fp16_max,
             "hidden_top": max(layer["hidden"]["top_abs"] for layer in layers),
             "up_max": max(layer["up"]["max_abs"] for layer in layers),
             "clamped": {name: {"up": max(layer["clamped_share"][name]["up"] for layer in layers)}
                         for name in limits}}
        if "gate" in layers[0]:
            r["gate_max"] = max(layer["gate"]["max"] for layer in layers)
            r["gate_min"] = min(layer["gate"]["min"] for layer in layers)
            for name in limits:
                r["clamped"][name]["gate"] = max(layer["clamped_share"][name]["gate"] for layer in layers)
        out[m["run"]] = r
    return out


def gating_facts(data, extra, ablation, card):
    runs = {r["name"]: r for r in data["runs"]}
    seed_runs = extra["seed_runs"] if extra else []
    baseline = runs["baseline"]
    steps = [h["step"] for h in baseline["history"]]
    last = steps[-1]
    full = [n for n in ORDER if n in runs and runs[n]["steps_trained"] == last]
    # The baseline's row shows the seeds the variants pair with: a mean over other seeds is no comparison.
    paired = {s for n in full[1:] for s in arm(n, last, "val_loss", runs, seed_runs, ablation)} or None
    by_step = {s: compare_at(s, runs, seed_runs, ablation) for s in steps}
    base = variant(ablation, "baseline")
    band_seeds = {key: {s: seeds.history_by_seed(base, last, key)[s] for s in base["seeds"]} for key in KEYS}
    worst = max(band_seeds["val_loss"], key=band_seeds["val_loss"].get)
    arms = full + ([LINEAR] if variant(ablation, LINEAR) else [])
    shared = set.intersection(*[set(arm(n, last, "val_loss", runs, seed_runs, ablation)) for n in arms])
    worst_courses = {n: {key: worst_course([arm(n, st, key, runs, seed_runs, ablation) for st in steps], worst)
                         for key in KEYS}
                     for n in full if worst in arm(n, last, "val_loss", runs, seed_runs, ablation)}
    tails = {n: r["tail_by_layer"] for n, r in range_facts(data["ranges"]["models"], data["ranges"]["limits"],
                                                           data["ranges"]["fp16_max"]).items()}
    tokens = last * tokens_per_step(data)
    epochs = tokens / card["split"]["train_tokens"] if card and "split" in card else None
    ranges = data["ranges"]
    tcard = data["model_card"]
    return {
        "card": tcard,
        "seeds_card": extra["model_card"] if extra else None,
        "extra_seeds": sorted({r["seed"] for r in seed_runs}),
        "runs": runs,
        "steps": steps,
        "last": last,
        "rows": [row(n, last, runs, seed_runs, ablation, paired) for n in full],
        "cut": [runs[n] for n in ORDER if n in runs and n not in full],
        "seeds_of": {n: sorted({runs[n]["seed"], *[s["seed"] for s in seed_runs if s["name"] == n]}) for n in runs},
        "baseline_seeds": base["seeds"],
        "linear_seeds": variant(ablation, LINEAR)["seeds"] if variant(ablation, LINEAR) else [],
        "by_step": by_step,
        "end": by_step[last],
        # How each variant's paired gap to SwiGLU moves over the run, on both losses.
        "over_run": {f"{n}-baseline": {key: [{"step": s, **by_step[s][key][f"{n}-baseline"]} for s in steps
                                            if f"{n}-baseline" in by_step[s][key]] for key in KEYS}
                     for n in ORDER[1:] if n in runs},
        # The band's seeds at the end: which seed sets its width.
        "band_seeds": band_seeds,
        # The baseline seed with the worst validation loss at the end, and whether any variant trained it.
        "worst_seed": worst,
        "worst_seed_trained": any(worst in arm(n, last, "val_loss", runs, seed_runs, ablation) for n in full[1:]),
        # Per arm that trained the worst seed, on both losses: how far that seed trails the arm's others, step by step.
        "worst_seed_course": worst_courses,
        # How far the other arms' worst seed ever trails their other seeds, on either loss, at any step.
        "worst_seed_others_max": max((x for n, c in worst_courses.items() if n != "baseline"
                                      for key in KEYS for x in c[key]["lags"]), default=None),
        # The baseline's band over its other seeds, step by step: the others caught up, the worst did not.
        "band_without_worst": {key: [seeds.band(v for sd, v in arm("baseline", st, key, runs, seed_runs, ablation).items()
                                                if sd != worst) for st in steps] for key in KEYS},
        # The pairs to SwiGLU whose sign the worst seed alone turns, on each loss at the end.
        "worst_seed_flips": {key: {n: f for n in full[1:]
                                   if (f := flipped_by(arm(n, last, key, runs, seed_runs, ablation),
                                                       arm("baseline", last, key, runs, seed_runs, ablation), worst))}
                             for key in KEYS},
        # Every arm measured below SwiGLU on training loss at the first evaluation: SwiGLU starts slowly.
        "slow_start": slow_start(by_step[steps[0]]["train_loss"], full[1:]),
        "spread": spread_facts(arms, steps, shared, runs, seed_runs, ablation),
        "crossings": crossings(by_step[last], compare_at(last, runs, seed_runs, ablation, drop=worst)),
        # Each pair to SwiGLU with the worst seed's pair apart: the other seeds' mean and that seed's gap.
        "worst_seed_split": {key: {n: split_gap(arm(n, last, key, runs, seed_runs, ablation),
                                                arm("baseline", last, key, runs, seed_runs, ablation), worst)
                                   for n in full[1:]} for key in KEYS},
        # GELU − SwiGLU on training loss over the run, the worst seed's pair apart.
        "over_run_split": [split_gap(arm("gelu_ffn", st, "train_loss", runs, seed_runs, ablation),
                                     arm("baseline", st, "train_loss", runs, seed_runs, ablation), worst)
                           for st in steps] if "gelu_ffn" in full else None,
        # Each full arm's own range over its seeds, step by step.
        "own_band": {n: {key: [seeds.band(arm(n, st, key, runs, seed_runs, ablation).values()) for st in steps]
                         for key in KEYS} for n in full},
        "tails": tail_order(tails, "bilinear_ffn", [n for n in UNGATED if n in tails])
                 if "bilinear_ffn" in tails and "baseline" in tails else None,
        "epochs": epochs,
        "tokens": tokens,
        "train_tokens": card["split"]["train_tokens"] if card and "split" in card else None,
        "references": data["references"],
        "ffn_params": baseline["ffn_params_per_layer"],
        "limits": ranges["limits"],
        "fp16_max": ranges["fp16_max"],
        "bf16_max": ranges["bf16_max"],
        "top_share": ranges["top_share"],
        "ranges": range_facts(ranges["models"], ranges["limits"], ranges["fp16_max"]),
        "not_trained": [n for n in ORDER if n not in runs],
        # What our runs measured of an ungated FFN against SwiGLU at the end, on either loss.
        "gate_verdict": gate_verdict(by_step[last]),
        "one_seed_factor": seeds.ONE_SEED_FACTOR,
        "new_minutes": (tcard["budget"]["new_runs_seconds"]
                        + (extra["model_card"]["budget"]["new_runs_seconds"] if extra else 0)
                        + sum(e["runs_seconds"] for e in (extra["model_card"].get("earlier", []) if extra else []))) / 60,
        "budget_minutes": tcard["budget"]["limit_seconds"] / 60,
    }


def gate_verdict(end):
    """'worse' when some ungated FFN (GELU, ReLU) is measured worse than SwiGLU on a loss and none
    better, 'better' the other way round, 'mixed' when both happen, 'none' when nothing is measured.
    gate_verdict({"val_loss": {"gelu_ffn-baseline": {"direction": 1}}}) -> 'worse'
    """
    seen = {end[key][f"{n}-baseline"]["direction"] for key in end for n in UNGATED
            if f"{n}-baseline" in end[key]} - {0}
    return {frozenset(): "none", frozenset({1}): "worse", frozenset({-1}): "better"}.get(frozenset(seen), "mixed")


def tokens_per_step(data):
    t = data["model_card"]["training"]
    return t["batch_size"] * t["block_size"]


def corpus_files(corpus):
    """{(file, sha256)} of a model card's corpus (one book before the seven-book edition)."""
    return {(f["file"], f["sha256"]) for f in corpus.get("files", [corpus])}


def check_seeds(extra, first):
    """seeds.json must add seeds to gating.json's runs: same corpus and training settings, variants
    that gating.json trained in full, the same schedule, the same seeds for each of them."""
    where = "data/real-model/gating/seeds.json"
    if corpus_files(extra["model_card"]["corpus"]) != corpus_files(first["model_card"]["corpus"]):
        raise ValueError(f"{where}: its corpus is not gating.json's")
    mine, theirs = extra["model_card"]["configs"]["train"], first["model_card"]["configs"]["train"]
    free = ("device", "threads", "progress", "eval_every", "ckpt_every")  # they do not change a trajectory
    diff = sorted(k for k in mine.keys() | theirs.keys() if k not in free and mine.get(k) != theirs.get(k))
    if diff:
        raise ValueError(f"{where}: model_card.configs.train differs from gating.json's in {diff}")
    last = first["runs"][0]["steps_trained"]
    full = {r["name"] for r in first["runs"][1:] if r["steps_trained"] == last}
    for i, r in enumerate(extra["seed_runs"]):
        if r["name"] not in full or r["steps_trained"] != last:
            raise ValueError(f"{where}: seed_runs[{i}]: {r['name']} seed {r['seed']} is not a seed of a variant"
                             f" gating.json trained over its {last:,} steps")
    # The table's SwiGLU row averages the seeds the variants pair with: every row must pair with the same ones.
    have = {n: sorted(r["seed"] for r in extra["seed_runs"] if r["name"] == n) for n in sorted(full)}
    if len({tuple(v) for v in have.values()}) > 1:
        raise ValueError(f"{where}: every variant gating.json trained in full needs the same extra seeds, got {have}:"
                         " train the missing ones (python -m lab gating ... extra_seeds=...)")


def facts(data):
    if KEY not in data:
        return {"gating": None}
    corpus = data[KEY]["model_card"]["corpus"]
    card = data.get(CARD)
    if not card or corpus_files(card["corpus"]) != corpus_files(corpus):
        raise ValueError("data/real-model/gating/gating.json: its corpus is not the FFN experiment's"
                         " (data/real-model/model-card.json), whose seeds give the band")
    extra = data.get(SEEDS)
    if extra:
        check_seeds(extra, data[KEY])
    return {"gating": gating_facts(data[KEY], extra, data[ABLATION], card)}
