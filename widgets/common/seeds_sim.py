"""Simulated experiments read by the seeds protocol (seeds.py): how often a rule calls a gap
measured when there is none (false positives) and when there is one (power).

The review that proposed v2 (its Part 2) modelled our runs so: a baseline arm and a variant arm,
Gaussian seed noise (sd 0.0228, the val SD of the baseline's healthy seeds at step 1,400), and a
stall that adds +0.367 (seed 4 minus the mean of seeds 0-3) to a run with some probability.
Scenarios: A no stalls, B stalls in the baseline only, C stalls in both arms. A failure rate per
arm (base_rate, var_rate) may be given instead of a scenario: C14 第 1 课's seeds-simulator sets
it with a slider.

Standard library plus rng.py, so the C14 lesson's widget draws the same numbers in every runtime.

simulate(draws=200, seed=0)["v2"] -> a fraction in [0, 1]
"""
from rng import Rng
import seeds

SD = 0.0228
STALL = 0.367
STALL_RATE = 0.2
SCENARIOS = {"A": (0.0, 0.0), "B": (STALL_RATE, 0.0), "C": (STALL_RATE, STALL_RATE)}  # (baseline, variant) stall rates
COUNTS = ("v2", "v2_wrong", "v1", "v1_wrong", "sd", "sd_wrong")  # what simulate() and tally() count
# "sd": the pooled SD and interval of v2 without its health check (every run kept), to show which
# part of v2 rescues the reading when runs fail


def draw_runs(r, n, mean, sd, stall_rate, stall):
    """({seed: loss}, [stalled seeds]) of n runs: N(mean, sd), each stalled (+stall) with
    probability stall_rate. Each run draws its noise, then whether it stalls (two numbers of r)."""
    runs, stalled = {}, []
    for s in range(n):
        x = mean + r.gauss(0.0, sd)
        if r.random() < stall_rate:
            x += stall
            stalled.append(s)
        runs[s] = x
    return runs, stalled


def draw_arm(r, n, mean, sd, stall_rate, stall):
    """{seed: loss} of n runs: N(mean, sd), each stalled (+stall) with probability stall_rate."""
    return draw_runs(r, n, mean, sd, stall_rate, stall)[0]


ONE_SEED = 5  # the old rule with one seed pair: the gap had to be this many bands


def old_rule(base, other):
    """The old rule, for comparison only: the band is the baseline's max - min over its seeds; with
    two or more seed pairs a gap counts when every paired difference has one sign and their mean
    exceeds the band; with one pair, when it is ONE_SEED bands. base, other: {seed: loss}.

    Returns {"band", "diffs" [(seed, other - base)], "gap" (their mean), "same_sign", "pairs",
    "measured", "direction" (+1 other higher, -1 lower, 0 not measured)}; band None below two
    baseline seeds, gap None without a pair (then nothing is measured).
    old_rule({0: 5.0, 1: 5.1}, {0: 5.5, 1: 5.6})["direction"] -> 1
    """
    diffs = [(s, other[s] - base[s]) for s in sorted(base) if s in other]
    values = [d for _, d in diffs]
    band = max(base.values()) - min(base.values()) if len(base) > 1 else None
    gap = sum(values) / len(values) if values else None
    same_sign = bool(values) and (all(d > 0 for d in values) or all(d < 0 for d in values))
    if band is None or gap is None:
        measured = False
    elif len(values) == 1:
        measured = abs(gap) >= ONE_SEED * band
    else:
        measured = same_sign and abs(gap) > band
    return {"band": band, "diffs": diffs, "gap": gap, "same_sign": same_sign, "pairs": len(values),
            "measured": measured, "direction": ((1 if gap > 0 else -1) if measured else 0)}


def no_health(base, other):
    """v2's pooled SD and interval on every run, no health check: seeds.contrast of variant - baseline."""
    reading = {"healthy": {"baseline": base, "variant": other}, "failed": {}, "split": {}}
    reading["sd"], reading["df"] = seeds.pooled(reading["healthy"])
    return seeds.contrast(reading, "variant", "baseline")


def v1_measured(base, other):
    """The old rule's verdict (old_rule): +1 (other higher) / -1 / 0."""
    return old_rule(base, other)["direction"]


def experiment(r, gap, n_base, n_variant, sd, base_rate, var_rate, stall):
    """One simulated experiment, read by both rules: the baseline's runs (true mean 0) and the
    variant's (true mean gap), which runs stalled, v2's reading and contrast (variant - baseline),
    the old rule's reading (old_rule) and the pooled SD without the health check (no_health)."""
    base, base_stalled = draw_runs(r, n_base, 0.0, sd, base_rate, stall)
    other, other_stalled = draw_runs(r, n_variant, gap, sd, var_rate, stall)
    reading = seeds.read({"baseline": base, "variant": other})
    old = old_rule(base, other)
    return {"base": base, "other": other, "base_stalled": base_stalled, "other_stalled": other_stalled,
            "reading": reading, "v2": seeds.contrast(reading, "variant", "baseline"), "v1": old,
            "sd": no_health(base, other)}


def tally(counts, gap, v2_direction, v1_direction, sd_direction=None):
    """Add one experiment's verdicts to counts ({name: n} over COUNTS): a measured reading in
    the true direction (gap > 0: the variant is worse; gap 0 counts as positive) or the other."""
    pairs = [("v2", v2_direction), ("v1", v1_direction)]
    if sd_direction is not None:
        pairs.append(("sd", sd_direction))
    for name, d in pairs:
        if d and (d > 0) == (gap >= 0):
            counts[name] += 1
        elif d:
            counts[name + "_wrong"] += 1
    return counts


def simulate(gap=0.0, scenario="A", n_base=5, n_variant=4, draws=2000, seed=0, sd=SD, stall=STALL,
             base_rate=None, var_rate=None):
    """Fractions of draws read as measured in the true direction (gap > 0: the variant is worse)
    by v2, by the old rule and by the pooled SD without a health check ("sd"), and in the wrong
    direction ("v2_wrong", "v1_wrong", "sd_wrong"). With gap = 0
    every measured reading is a false positive: "v2" + "v2_wrong" is then the false-positive rate.
    base_rate, var_rate (stall probabilities per run) replace the scenario's when given."""
    r = Rng(seed)
    rates = SCENARIOS[scenario]
    base_rate = rates[0] if base_rate is None else base_rate
    var_rate = rates[1] if var_rate is None else var_rate
    counts = {k: 0 for k in COUNTS}
    for _ in range(draws):
        e = experiment(r, gap, n_base, n_variant, sd, base_rate, var_rate, stall)
        tally(counts, gap, e["v2"]["direction"], e["v1"]["direction"], e["sd"]["direction"])
    return {k: counts[k] / draws for k in COUNTS}
