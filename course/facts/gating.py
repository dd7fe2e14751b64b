"""Facts of our model's gating experiment (data/real-model/gating/gating.json, `python -m lab gating`):
facts.gating, or None before its first export. Lesson c4/l4's 真模型 reads only these.

The runs were trained before seeds protocol v2 (widgets/common/seeds.py) and are read by it after
the fact: one reading per loss and evaluation step over the arms this page compares (ARMS) --
SwiGLU, the baseline, with every seed the FFN experiment has (course/facts/_baseline.py, so seeds
trained later for it join here), GELU, ReLU and Bilinear (this export and its seeds.json), and
第 1 课's linear FFN (no activation, no gate; ablation.json) -- each a health check (failed runs
out, counted per arm), the pooled within-arm SD of the healthy runs, and gap ± h per pair.

Primary comparisons (PRIMARY, on PRIMARY_KEY at the last step) were declared after the runs had
been seen, so post hoc: Holm's correction over them; every other reading is description.
"""
from course.widgets import common_module

from . import _baseline

numfmt = common_module("numfmt")  # first: seeds imports it
seeds = common_module("seeds")

KEY = "real-model/gating/gating"
SEEDS = "real-model/gating/seeds"  # its extra seeds (`extra_seeds=`), when exported
ARMS_FILE = "real-model/gating/arms"  # variants added after it, every seed (`arm=`), when exported
CARD = "real-model/model-card"
CONTROL = "real-model/attention/attention"  # C3 第 1 课's content-blind attention control
ORDER = ("baseline", "gelu_ffn", "relu_ffn", "silu_ffn", "bilinear_ffn")  # the page's table: SwiGLU first
LINEAR = "linear_ffn"  # 第 1 课's FFN without activation or gate, in ablation.json
ARMS = (*ORDER, LINEAR)
LABELS = {"baseline": "SwiGLU", "gelu_ffn": "GELU", "relu_ffn": "ReLU", "silu_ffn": "SiLU", "bilinear_ffn": "Bilinear",
          LINEAR: "线性 FFN"}
KEYS = ("train_loss", "val_loss")
# The comparisons the page reads, a - b: each FFN against SwiGLU; the gate without an activation
# against each activation without a gate (Shazeer's test of "the gate, not the activation"); the
# two ungated activations against each other; the product alone against no non-linearity at all.
PAIRS = (("gelu_ffn", "baseline"), ("relu_ffn", "baseline"), ("bilinear_ffn", "baseline"),
         ("bilinear_ffn", "gelu_ffn"), ("bilinear_ffn", "relu_ffn"), ("relu_ffn", "gelu_ffn"),
         ("bilinear_ffn", LINEAR), (LINEAR, "baseline"),
         # The SiLU arm (arms.json) tells the gate from the activation: SiLU - SwiGLU adds the gate and
         # keeps the activation; ReLU - SiLU changes the activation and adds no gate (their sum is
         # ReLU - SwiGLU); Bilinear - SwiGLU keeps the gate and drops the activation. The linear FFN
         # against SiLU: how far an ungated SiLU FFN is from no non-linearity at all. All description.
         ("silu_ffn", "baseline"), ("relu_ffn", "silu_ffn"), ("silu_ffn", "gelu_ffn"), ("bilinear_ffn", "silu_ffn"),
         (LINEAR, "silu_ffn"))
# Declared after the runs (post hoc): each ungated FFN against SwiGLU, and the gate without an
# activation against the worse ungated FFN, on validation loss at the last step.
# Declared before its runs ended (commit of 2026-12-06, while seed 0 of silu_ffn was training): the
# gate at a fixed activation, SiLU FFN - SwiGLU on validation loss at the last step; predicted: SiLU
# higher, measured (as GELU - SwiGLU is). Holm-corrected with the post hoc ones.
DECLARED = (("silu_ffn", "baseline"),)
DECLARED_PREDICTION = {"pair": "silu_ffn-baseline", "direction": 1, "date": "2026-12-06"}
PRIMARY = (("gelu_ffn", "baseline"), ("relu_ffn", "baseline"), ("bilinear_ffn", "gelu_ffn"), *DECLARED)
PRIMARY_KEY = "val_loss"
UNGATED = ("gelu_ffn", "relu_ffn", "silu_ffn")


def at_step(history, step, key):
    """`key` at evaluation `step` of one run's history, or None."""
    return next((row[key] for row in history if row["step"] == step), None)


def variant(ablation, name):
    return next((v for v in ablation["variants"] if v["name"] == name), None)


def arm(name, step, key, runs, seed_runs, ablation):
    """{seed: loss at `step`} of one arm: the baseline and the linear FFN from the FFN experiment's
    rows (ablation, the baseline's later seeds included), the gating variants from this export's
    runs and seed_runs. Runs that did not reach `step` are left out."""
    if name in ("baseline", LINEAR):
        v = variant(ablation, name)
        pairs = zip(v["seeds"], v["histories"]) if v else ()
    else:
        rows = [runs[name], *[s for s in seed_runs if s["name"] == name]] if name in runs else []
        pairs = ((r["seed"], r["history"]) for r in rows)
    out = {seed: at_step(history, step, key) for seed, history in pairs}
    return {seed: value for seed, value in sorted(out.items()) if value is not None}


def mean(values):
    values = list(values)
    return sum(values) / len(values) if values else None


def sd(values):
    """The sample standard deviation, None below two values."""
    values = list(values)
    if len(values) < 2:
        return None
    m = mean(values)
    return (sum((x - m) ** 2 for x in values) / (len(values) - 1)) ** 0.5


def spread(values):
    """max - min, None below two values (a description, not a rule)."""
    values = list(values)
    return max(values) - min(values) if len(values) > 1 else None


def gap_text(c):
    """「高 0.060 ± 0.021」, or 「高 0.060」 with no half-width."""
    return seeds.gap_text(c, lambda x: numfmt.num(x, 3))


def than(a, b):
    """「GELU 比 SwiGLU」, 「Bilinear 比线性 FFN」: a space only before a Latin name."""
    a, b = LABELS.get(a, a), LABELS.get(b, b)
    return f"{a} 比{' ' if b[0].isascii() else ''}{b}"


def phrase(c):
    """A pair in words for running prose: 「GELU 比 SwiGLU 高 0.060 ± 0.021」 when measured,
    「ReLU 和 SwiGLU 分不出（高 0.009 ± 0.021）」 within the error, else what v2 says."""
    a, b = LABELS[c["a"]], LABELS[c["b"]]
    if c["status"] == "measured":
        return f"{than(c['a'], c['b'])} {gap_text(c)}"
    if c["status"] in ("within", "holm"):
        return f"{a} 和 {b} 分不出（{gap_text(c)}）"
    return f"{a} 对 {b}：{c['say']}"


def contrast(reading, a, b):
    """seeds.contrast with the page's words: "say" (the table cell), "text" (gap ± h), "phrase"."""
    c = seeds.contrast(reading, a, b)
    return dressed(c)


def dressed(c):
    c = {**c, "say": seeds.say(c, names=LABELS), "text": gap_text(c) if c["gap"] is not None else None}
    c["phrase"] = phrase(c)
    return c


def read_at(step, key, runs, seed_runs, ablation):
    """v2's reading of every arm at one step and loss, and every pair of PAIRS in it (by "a-b")."""
    arms = {n: arm(n, step, key, runs, seed_runs, ablation) for n in ARMS}
    reading = seeds.read({n: a for n, a in arms.items() if a})
    pairs = {f"{a}-{b}": contrast(reading, a, b) for a, b in PAIRS if arms[a] and arms[b]}
    return {"reading": reading, "pairs": pairs, "arms": arms}


def with_primaries(pairs):
    """The pairs with PRIMARY Holm-corrected together (each marked "primary"); the others as read."""
    names = [f"{a}-{b}" for a, b in PRIMARY if f"{a}-{b}" in pairs]
    held = seeds.holm([pairs[n] for n in names])
    return {**pairs, **{n: {**dressed(c), "primary": True} for n, c in zip(names, held)}}


def summary(contrasts):
    """How a set of contrasts reads together: {"measured": how many, "of": how many, "direction":
    +1 or -1 when every measured one points that way (0 when none is measured or they disagree),
    "all": every one measured that way}.
    summary([{"direction": -1, "measured": True}, {"direction": 0, "measured": False}])
      -> {"measured": 1, "of": 2, "direction": -1, "all": False}"""
    dirs = {c["direction"] for c in contrasts if c["measured"]}
    direction = dirs.pop() if len(dirs) == 1 else 0
    measured = sum(1 for c in contrasts if c["measured"])
    return {"measured": measured, "of": len(contrasts), "direction": direction,
            "all": bool(contrasts) and direction != 0 and measured == len(contrasts)}


def failures(read, arms_of):
    """The failed runs at one step over both losses: [{"arm", "seed", "losses" {key: loss},
    "residual" {key: loss - its arm's median}, "flagged" [the losses whose health check failed it]}],
    and per arm [failed, runs] (a run failed on either loss counts once)."""
    found = {}
    for key in KEYS:
        r = read[key]["reading"]
        for name, failed in r["failed"].items():
            for seed in failed:
                found.setdefault((name, seed), []).append(key)
    runs = []
    for (name, seed), flagged in sorted(found.items(), key=lambda x: (ARMS.index(x[0][0]), x[0][1])):
        losses = {key: read[key]["arms"][name][seed] for key in KEYS if seed in read[key]["arms"][name]}
        runs.append({"arm": name, "label": LABELS[name], "seed": seed, "losses": losses, "flagged": flagged,
                     "residual": {key: v - seeds.median(read[key]["arms"][name].values()) for key, v in losses.items()}})
    counts = {n: [sum(1 for f in runs if f["arm"] == n), len(arms_of[n])] for n in ARMS if arms_of.get(n)}
    return runs, counts


def failed_course(by_step, name, seed, key):
    """A failed run's course over the evaluations on one loss, at the steps where its arm is read
    (not split): the steps at which the health check fails it, the first step from which it fails
    it at every later one ("since", None if it does not at the end), and its least and largest
    residual (loss - its arm's median) from then on."""
    steps = [s for s in sorted(by_step) if name not in by_step[s][key]["reading"]["split"]]
    failed = [s for s in steps if seed in by_step[s][key]["reading"]["failed"].get(name, {})]
    since = None
    for s in reversed(steps):
        if s not in failed:
            break
        since = s
    res = [by_step[s][key]["arms"][name][seed] - seeds.median(by_step[s][key]["arms"][name].values())
           for s in steps if since is not None and s >= since]
    # Every evaluation, split or not: the residual, the threshold, and whether the arm was split there.
    every = [{"step": s, "residual": by_step[s][key]["arms"][name][seed] - seeds.median(by_step[s][key]["arms"][name].values()),
              "threshold": by_step[s][key]["reading"]["threshold"], "split": name in by_step[s][key]["reading"]["split"]}
             for s in sorted(by_step) if seed in by_step[s][key]["arms"][name]]
    # The first evaluation from which the run stands over the threshold at every later one (split or not).
    over = None
    for e in reversed(every):
        if e["residual"] <= e["threshold"]:
            break
        over = e
    tail = [e["residual"] for e in every if over is not None and e["step"] >= over["step"]]
    return {"steps": failed, "since": since, "residual": [min(res), max(res)] if res else None,
            "every": every, "over": over,
            # its lag smaller at every evaluation than at the one before, from `over` on
            "shrinking": len(tail) > 1 and all(b < a for a, b in zip(tail, tail[1:]))}


def recovered(by_step, key, last):
    """Runs the health check failed at some evaluation where their arm is read (not split) and not at
    the last: [{"arm", "label", "seed", "steps", "residual" (at the first of them), "back" (the first
    later step it is healthy at)}]: one step's failure is not a run's verdict."""
    out = {}
    steps = sorted(by_step)
    for s in steps:
        r = by_step[s][key]
        for name, failed in r["reading"]["failed"].items():
            if name in r["reading"]["split"]:
                continue
            for seed in failed:
                if seed not in by_step[last][key]["reading"]["failed"].get(name, {}):
                    row = out.setdefault((name, seed), {"arm": name, "label": LABELS[name], "seed": seed, "steps": [],
                                                        "residual": failed[seed] - seeds.median(r["arms"][name].values())})
                    row["steps"].append(s)
    for row in out.values():
        row["back"] = next(s for s in steps if s > row["steps"][-1]
                           and row["seed"] not in by_step[s][key]["reading"]["failed"].get(row["arm"], {}))
    return list(out.values())


def own_noise(end, a, b, key):
    """Pair a-b read with the two arms' own pooled SD (their healthy runs only, df = n_a + n_b - 2)
    instead of every arm's: whether it is still beyond its half-width. v2 pools every arm,
    which assumes the arms vary alike across seeds."""
    healthy = end[key]["reading"]["healthy"]
    s, df = seeds.pooled({a: healthy[a], b: healthy[b]})
    c = end[key]["pairs"][f"{a}-{b}"]
    if s is None or df < 1:
        return None
    h = seeds.t_quantile(df) * s * (1 / c["n_a"] + 1 / c["n_b"]) ** 0.5
    return {"sd": s, "df": df, "half_width": h, "beyond": abs(c["gap"]) > h}


MARGINAL = 2  # a failed run at most this many thresholds over its arm's median is said to fail marginally


def as_healthy(reading, name, seeds_):
    """v2's reading with the failed runs `seeds_` of arm `name` counted healthy, the health check otherwise
    as it was: the pooled SD and its df recomputed over the healthy runs of the arms not split."""
    healthy = {n: dict(a) for n, a in reading["healthy"].items()}
    failed = {n: dict(a) for n, a in reading["failed"].items()}
    for seed in seeds_:
        healthy[name][seed] = failed[name].pop(seed)
    sd, df = seeds.pooled({n: a for n, a in healthy.items() if n not in reading["split"]})
    return {**reading, "healthy": healthy, "failed": failed, "sd": sd, "df": df}


def sensitivity(end, failed, before):
    """The primaries (Holm-corrected together, as on the page) and the pairs to SwiGLU, read on PRIMARY_KEY
    at the last step with a marginal failed run counted healthy: one per failed run at most MARGINAL x the
    threshold over its arm's median (a description beside the primaries, not a second rule).
    [{"arm", "label", "seed", "residual", "threshold", "sd", "df", "pairs" {name: contrast}, "changed" [the
    primaries whose verdict differs from `before`'s, the page's pairs on PRIMARY_KEY], "gate_or_activation"}]"""
    r = end[PRIMARY_KEY]["reading"]
    out = []
    for f in failed:
        res = f["residual"].get(PRIMARY_KEY)
        if PRIMARY_KEY not in f["flagged"] or res is None or res > MARGINAL * r["threshold"]:
            continue
        alt = as_healthy(r, f["arm"], [f["seed"]])
        arms = end[PRIMARY_KEY]["arms"]
        pairs = {f"{a}-{b}": contrast(alt, a, b) for a, b in PAIRS if arms.get(a) and arms.get(b)}
        pairs = with_primaries(pairs)
        changed = [n for n in pairs if pairs[n].get("primary") and pairs[n]["measured"] != before[n]["measured"]]
        out.append({"arm": f["arm"], "label": f["label"], "seed": f["seed"], "residual": res, "threshold": r["threshold"],
                    "sd": alt["sd"], "df": alt["df"], "pairs": pairs, "changed": changed,
                    "gate_or_activation": gate_or_activation(pairs)})
    return out


def fisher_one_sided(k, n, failures, total):
    """P(an arm of n runs holds k or more of `failures` failed runs among `total` runs) when every run is
    equally likely to fail: Fisher's exact test, one-sided. fisher_one_sided(2, 8, 2, 26) -> 28/325"""
    from math import comb
    return sum(comb(n, x) * comb(total - n, failures - x) for x in range(k, min(n, failures) + 1)) / comb(total, failures)


def failure_rate(counts, name="baseline"):
    """One arm's failed runs against every other arm's: {"failed", "runs", "others_failed", "others_runs", "p"}
    (Fisher's exact test, one-sided: how likely so many of the failures fall on this arm by chance), None when
    the arm has no failed run."""
    if not counts.get(name) or not counts[name][0]:
        return None
    k, n = counts[name]
    of = sum(c[0] for a, c in counts.items() if a != name)
    on = sum(c[1] for a, c in counts.items() if a != name)
    return {"failed": k, "runs": n, "others_failed": of, "others_runs": on, "p": fisher_one_sided(k, n, k + of, n + on)}


def all_runs(end, name="baseline", key=PRIMARY_KEY):
    """An arm's mean over every run at the last step, failed ones too (a description, not a v2 reading),
    and the arms whose healthy mean is below it."""
    a = end[key]["arms"].get(name) or {}
    if not a:
        return None
    m = mean(a.values())
    healthy = end[key]["reading"]["healthy"]
    below = [n for n in ARMS if n != name and healthy.get(n) and mean(healthy[n].values()) < m]
    return {"mean": m, "runs": len(a), "below": below}


def gate_or_activation(pairs):
    """On one loss at the last step: adding the gate at a fixed activation (SiLU - SwiGLU), changing the
    activation with no gate (ReLU - SiLU), and their sum, ReLU - SwiGLU, which says which of the two did
    more. "verdict": "equal" (both measured as helping, the sum within the error), "gate" or "activation"
    (the sum measured, the gate's or the activation's side larger), None otherwise."""
    g, a, d = (pairs.get(p) for p in ("silu_ffn-baseline", "relu_ffn-silu_ffn", "relu_ffn-baseline"))
    if not (g and a and d):
        return None
    verdict = None
    if g["measured"] and g["direction"] > 0 and a["measured"] and a["direction"] < 0:
        verdict = "gate" if d["measured"] and d["direction"] > 0 else "activation" if d["measured"] else "equal"
    return {"gate": g, "activation": a, "sum": d, "verdict": verdict}


def ungated_order(rows, pairs, key=PRIMARY_KEY):
    """The FFNs without a gate (the linear one included), highest mean first on `key`, and whether each
    neighbour's gap is measured (read in either orientation of PAIRS)."""
    means = {r["name"]: r[key] for r in rows if r["name"] in (*UNGATED, LINEAR)}
    order = sorted(means, key=lambda n: -means[n])

    def read(a, b):
        return pairs.get(f"{a}-{b}") or pairs.get(f"{b}-{a}")
    steps = [read(a, b) for a, b in zip(order, order[1:])]
    return {"order": order, "means": means, "all_measured": bool(steps) and all(c and c["measured"] for c in steps)}


def first_step(by_step, first, key):
    """Each ungated FFN against SwiGLU at the first evaluation on one loss, each read on its own, and whether
    SwiGLU's arm is split there; summary() of them."""
    r = by_step[first][key]
    pairs = {f"{n}-baseline": r["pairs"][f"{n}-baseline"] for n in UNGATED if f"{n}-baseline" in r["pairs"]}
    return {"step": first, "split": "baseline" in r["reading"]["split"], "pairs": pairs,
            "summary": summary(list(pairs.values()))}


def row(name, end, runs, ablation):
    """The table's row of one FFN at the last step: its healthy seeds, its failed ones, and per loss
    the mean and SD over its healthy runs."""
    healthy = {key: end[key]["reading"]["healthy"].get(name, {}) for key in KEYS}
    failed = sorted({s for key in KEYS for s in end[key]["reading"]["failed"].get(name, {})})
    if name == LINEAR:
        v = variant(ablation, LINEAR)
        shape = {"ffn": v["ffn"], "d_ff": v["d_ff"], "matrices": 2}
    else:
        shape = {k: runs[name][k] for k in ("ffn", "d_ff", "matrices")}
    return {"name": name, "label": LABELS[name], **shape,
            "seeds": sorted(set(healthy["val_loss"]) & set(healthy["train_loss"])), "failed": failed,
            **{key: mean(v.values()) for key, v in healthy.items()},
            "sd": {key: sd(v.values()) for key, v in healthy.items()}}


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


def control_facts(doc):
    """C3 第 1 课's control (attention replaced by the prefix average: it cannot read content), its
    validation losses at the end, or None before that export."""
    c = (doc or {}).get("control")
    if not c:
        return None
    losses = c["control"]["val_losses"]
    return {"min": min(losses), "max": max(losses), "seeds": len(losses)}


def with_arms(data, extra, arms):
    """gating.json's runs by name and every other seed's row: seeds.json's, and arms.json's, where
    each arm's run_seed row (else its lowest seed) stands in the runs for its shape."""
    runs = {r["name"]: r for r in data["runs"]}
    seed_runs = list(extra["seed_runs"]) if extra else []
    run_seed = data["model_card"]["training"]["seed"]
    rows = sorted(arms["seed_runs"] if arms else [], key=lambda r: (r["seed"] != run_seed, r["seed"]))
    for r in rows:
        if r["name"] in runs:
            seed_runs.append(r)
        else:
            runs[r["name"]] = r
    return runs, seed_runs


def gating_facts(data, extra, ablation, card, control=None, arms=None):
    runs, seed_runs = with_arms(data, extra, arms)
    baseline = runs["baseline"]
    steps = [h["step"] for h in baseline["history"]]
    last = steps[-1]
    full = [n for n in ORDER if n in runs and runs[n]["steps_trained"] == last]
    by_step = {s: {key: read_at(s, key, runs, seed_runs, ablation) for key in KEYS} for s in steps}
    end = by_step[last]
    end_pairs = {key: with_primaries(end[key]["pairs"]) if key == PRIMARY_KEY else end[key]["pairs"] for key in KEYS}
    failed, counts = failures(end, end[PRIMARY_KEY]["arms"])
    shown = full + ([LINEAR] if end[PRIMARY_KEY]["arms"].get(LINEAR) else [])
    rows = [row(n, end, runs, ablation) for n in shown]
    healthy_sd = {n: r["sd"][PRIMARY_KEY] for n, r in zip(shown, rows)}
    # Each failed run's course on validation loss, and whether the same seed failed in any other arm.
    for f in failed:
        f["course"] = failed_course(by_step, f["arm"], f["seed"], PRIMARY_KEY)
        f["trained_by"] = [n for n in full if n != f["arm"] and f["seed"] in end[PRIMARY_KEY]["arms"].get(n, {})]
        f["failed_elsewhere"] = [n for n in f["trained_by"]
                                 if any(f["seed"] in by_step[s][key]["reading"]["failed"].get(n, {})
                                        for s in steps for key in KEYS)]
    pair = {key: end_pairs[key] for key in KEYS}
    gelu_share = None
    rg, bg = pair[PRIMARY_KEY].get("relu_ffn-gelu_ffn"), pair[PRIMARY_KEY].get("bilinear_ffn-gelu_ffn")
    if rg and bg and rg["direction"] < 0 and bg["direction"] < 0:
        gelu_share = rg["gap"] / bg["gap"]  # how much of Bilinear's lead over GELU ReLU has too
    first = steps[0]
    over_steps = [s for s in steps if "gelu_ffn-baseline" in by_step[s][PRIMARY_KEY]["pairs"]]
    fragile = {key: [p for p, c in pair[key].items() if c["measured"] and "baseline" in p.split("-")
                     and (o := own_noise(end, *p.split("-"), key)) and not o["beyond"]] for key in KEYS}
    tails = {n: r["tail_by_layer"] for n, r in range_facts(data["ranges"]["models"], data["ranges"]["limits"],
                                                           data["ranges"]["fp16_max"]).items()}
    tokens = last * tokens_per_step(data)
    epochs = tokens / card["split"]["train_tokens"] if card and "split" in card else None
    ranges = data["ranges"]
    tcard = data["model_card"]
    base = variant(ablation, "baseline")
    reading = {key: {**{k: end[key]["reading"][k] for k in ("threshold", "scale", "sd", "df", "runs")},
                     "t": seeds.t_quantile(end[key]["reading"]["df"])} for key in KEYS}
    return {
        "card": tcard,
        "seeds_card": extra["model_card"] if extra else None,
        "arms_card": arms["model_card"] if arms else None,
        "declared": declared_result(pair[PRIMARY_KEY]),
        "extra_seeds": sorted({r["seed"] for r in seed_runs}),
        "runs": runs,
        "labels": LABELS,
        "steps": steps,
        "last": last,
        "full": full,
        "rows": rows,
        "cut": [runs[n] for n in ORDER if n in runs and n not in full],
        "seeds_of": {n: sorted({runs[n]["seed"], *[s["seed"] for s in seed_runs if s["name"] == n]}) for n in runs},
        "baseline_seeds": base["seeds"],
        "variant_seeds": {n: sorted({runs[n]["seed"], *[s["seed"] for s in seed_runs if s["name"] == n]})
                          for n in full[1:]},
        "linear_seeds": variant(ablation, LINEAR)["seeds"] if variant(ablation, LINEAR) else [],
        # v2 at the last step: per loss the health check's threshold, the robust scale, the pooled SD, its
        # df and the t quantile of h; the rule's constants; every pair (the primaries Holm-corrected on
        # PRIMARY_KEY).
        "reading": reading,
        "rule": {"scales": seeds.FAIL_SCALES, "floor": seeds.FAIL_FLOOR, "robust": seeds.ROBUST, "alpha": seeds.ALPHA},
        "end": pair,
        "pairs": [f"{a}-{b}" for a, b in PAIRS if f"{a}-{b}" in pair[PRIMARY_KEY]],
        "pair_labels": {f"{a}-{b}": than(a, b) for a, b in PAIRS},
        "primary": [f"{a}-{b}" for a, b in PRIMARY if f"{a}-{b}" in pair[PRIMARY_KEY]],
        # the primaries declared after the runs had been seen, and those declared before their runs ended
        "post_hoc": [f"{a}-{b}" for a, b in PRIMARY if (a, b) not in DECLARED and f"{a}-{b}" in pair[PRIMARY_KEY]],
        "declared_pairs": [f"{a}-{b}" for a, b in DECLARED if f"{a}-{b}" in pair[PRIMARY_KEY]],
        "primary_key": PRIMARY_KEY,
        "failed": failed,
        "failure_counts": counts,
        # SwiGLU's failed runs against the other arms' (Fisher, one-sided), and its mean over every run.
        "failure_rate": failure_rate(counts),
        "all_runs": all_runs(end),
        # The primaries with a marginal failed run (at most MARGINAL x the threshold over its median)
        # counted healthy: a description beside them.
        "marginal": sensitivity(end, failed, pair[PRIMARY_KEY]),
        "marginal_factor": MARGINAL,
        # Gate against activation (SiLU - SwiGLU, ReLU - SiLU, and their sum ReLU - SwiGLU), per loss.
        "gate_or_activation": {key: gate_or_activation(pair[key]) for key in KEYS},
        # The FFNs without a gate, highest validation loss first, and whether each neighbour's gap is measured.
        "ungated_order": ungated_order(rows, pair[PRIMARY_KEY]),
        # The ungated FFNs against SwiGLU at the first evaluation, on training loss.
        "first_train": first_step(by_step, first, "train_loss"),
        # Runs failed at some evaluation and healthy at the last: one step's check is not a run's verdict.
        "recovered": recovered(by_step, PRIMARY_KEY, last),
        # The arms' own SD over their healthy runs (PRIMARY_KEY), and the measured pairs to SwiGLU that
        # would not be beyond their half-width with the two arms' own pooled SD.
        "healthy_sd": healthy_sd,
        "fragile": fragile,
        # At the first evaluation: v2's reading of SwiGLU (split or not) and each arm's own range.
        "first": {"step": first, "split": by_step[first][PRIMARY_KEY]["reading"]["split"],
                  "spread": {n: spread(a.values()) for n, a in by_step[first][PRIMARY_KEY]["arms"].items() if a}},
        # GELU - SwiGLU on PRIMARY_KEY at each evaluation, each step read on its own.
        "over_run": [{"step": s, **by_step[s][PRIMARY_KEY]["pairs"]["gelu_ffn-baseline"]} for s in over_steps],
        # Bilinear's lead over GELU that ReLU has too (both measured below GELU), None otherwise.
        "gelu_share": gelu_share,
        "gate_with_activation": summary([pair[key][f"{n}-baseline"] for key in KEYS for n in UNGATED
                                         if f"{n}-baseline" in pair[key]]),
        "product_over_ungated": summary([pair[key][f"bilinear_ffn-{n}"] for key in KEYS for n in UNGATED
                                         if f"bilinear_ffn-{n}" in pair[key]]),
        "control": control,
        "ungated": [n for n in UNGATED if n in full],  # the ungated FFNs trained over the whole schedule
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
        "new_minutes": (tcard["budget"]["new_runs_seconds"]
                        + sum(x["model_card"]["budget"]["new_runs_seconds"]
                              + sum(e["runs_seconds"] for e in x["model_card"].get("earlier", []))
                              for x in (extra, arms) if x)) / 60,
        "budget_minutes": tcard["budget"]["limit_seconds"] / 60,
    }


def declared_result(pairs):
    """The comparison declared before its runs ended (DECLARED_PREDICTION): its reading, and whether
    it came out as predicted (measured, after Holm, in the predicted direction); None before its arm."""
    c = pairs.get(DECLARED_PREDICTION["pair"])
    if c is None:
        return None
    held = c["measured"] and c["direction"] == DECLARED_PREDICTION["direction"]
    return {**DECLARED_PREDICTION, "reading": c, "held": held}


def tokens_per_step(data):
    t = data["model_card"]["training"]
    return t["batch_size"] * t["block_size"]


def corpus_files(corpus):
    """{(file, sha256)} of a model card's corpus (one book before the seven-book edition)."""
    return {(f["file"], f["sha256"]) for f in corpus.get("files", [corpus])}


def same_runs_as_first(doc, first, where):
    """A later export (seeds.json, arms.json) must share gating.json's corpus and training settings."""
    if corpus_files(doc["model_card"]["corpus"]) != corpus_files(first["model_card"]["corpus"]):
        raise ValueError(f"{where}: its corpus is not gating.json's")
    mine, theirs = doc["model_card"]["configs"]["train"], first["model_card"]["configs"]["train"]
    free = ("device", "threads", "progress", "eval_every", "ckpt_every")  # they do not change a trajectory
    diff = sorted(k for k in mine.keys() | theirs.keys() if k not in free and mine.get(k) != theirs.get(k))
    if diff:
        raise ValueError(f"{where}: model_card.configs.train differs from gating.json's in {diff}")


def check_seeds(extra, first):
    """seeds.json must add seeds to gating.json's runs: same corpus and training settings, variants
    that gating.json trained in full, the same schedule, the same seeds for each of them."""
    where = "data/real-model/gating/seeds.json"
    same_runs_as_first(extra, first, where)
    last = first["runs"][0]["steps_trained"]
    full = {r["name"] for r in first["runs"][1:] if r["steps_trained"] == last}
    for i, r in enumerate(extra["seed_runs"]):
        if r["name"] not in full or r["steps_trained"] != last:
            raise ValueError(f"{where}: seed_runs[{i}]: {r['name']} seed {r['seed']} is not a seed of a variant"
                             f" gating.json trained over its {last:,} steps")
    # The variants share batches seed by seed: every one gets the same seeds, so the arms stay alike.
    have = {n: sorted(r["seed"] for r in extra["seed_runs"] if r["name"] == n) for n in sorted(full)}
    if len({tuple(v) for v in have.values()}) > 1:
        raise ValueError(f"{where}: every variant gating.json trained in full needs the same extra seeds, got {have}:"
                         " train the missing ones (python -m lab gating ... extra_seeds=...)")


def check_arms(arms, first):
    """arms.json must add variants gating.json does not hold, with its corpus, training settings and schedule."""
    where = "data/real-model/gating/arms.json"
    same_runs_as_first(arms, first, where)
    last = first["runs"][0]["steps_trained"]
    held = {r["name"] for r in first["runs"]}
    for i, r in enumerate(arms["seed_runs"]):
        if r["name"] in held or r["name"] not in ORDER or r["steps_trained"] != last:
            raise ValueError(f"{where}: seed_runs[{i}]: {r['name']} seed {r['seed']} is not a variant the page reads"
                             f" beside gating.json's, trained over its {last:,} steps")


def facts(data):
    if KEY not in data:
        return {"gating": None}
    corpus = data[KEY]["model_card"]["corpus"]
    card = data.get(CARD)
    if not card or corpus_files(card["corpus"]) != corpus_files(corpus):
        raise ValueError("data/real-model/gating/gating.json: its corpus is not the FFN experiment's"
                         " (data/real-model/model-card.json), whose baseline it is read against")
    extra = data.get(SEEDS)
    if extra:
        check_seeds(extra, data[KEY])
    arms = data.get(ARMS_FILE)
    if arms:
        check_arms(arms, data[KEY])
    return {"gating": gating_facts(data[KEY], extra, _baseline.ablation(data), card,
                                   control_facts(data.get(CONTROL)), arms)}
