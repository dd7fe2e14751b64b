"""Simulated experiments read by the seeds protocol (seeds.py): how often a rule calls a gap
measured when there is none (false positives) and when there is one (power).

The review that proposed v2 (its Part 2) modelled our runs so: a baseline arm and a variant arm,
Gaussian seed noise (sd 0.0228, the val SD of the baseline's healthy seeds at step 1,400), and a
stall that adds +0.367 (seed 4 minus the mean of seeds 0-3) to a run with some probability.
Scenarios: A no stalls, B stalls in the baseline only, C stalls in both arms.

Standard library plus rng.py, so the C14 lesson's widget draws the same numbers in every runtime.

simulate(draws=200, seed=0)["v2"] -> a fraction in [0, 1]
"""
from rng import Rng
import seeds

SD = 0.0228
STALL = 0.367
STALL_RATE = 0.2
SCENARIOS = {"A": (0.0, 0.0), "B": (STALL_RATE, 0.0), "C": (STALL_RATE, STALL_RATE)}  # (baseline, variant) stall rates


def draw_arm(r, n, mean, sd, stall_rate, stall):
    """{seed: loss} of n runs: N(mean, sd), each stalled (+stall) with probability stall_rate."""
    return {s: mean + r.gauss(0.0, sd) + (stall if r.random() < stall_rate else 0.0) for s in range(n)}


def v1_measured(base, other):
    """The old rule, for comparison only: the band is the baseline's max - min over its seeds; with
    two or more seed pairs a gap counts when every paired difference has one sign and their mean
    exceeds the band; with one pair, when it is five bands. +1 (other higher) / -1 / 0."""
    diffs = [other[s] - base[s] for s in sorted(base) if s in other]
    if not diffs or len(base) < 2:
        return 0
    band = max(base.values()) - min(base.values())
    gap = sum(diffs) / len(diffs)
    if len(diffs) == 1:
        measured = abs(gap) >= 5 * band
    else:
        measured = (all(d > 0 for d in diffs) or all(d < 0 for d in diffs)) and abs(gap) > band
    return (1 if gap > 0 else -1) if measured else 0


def simulate(gap=0.0, scenario="A", n_base=5, n_variant=4, draws=2000, seed=0, sd=SD, stall=STALL):
    """Fractions of draws read as measured in the true direction (gap > 0: the variant is worse)
    by v2 and by the old rule, and in the wrong direction ("v2_wrong", "v1_wrong"). With gap = 0
    every measured reading is a false positive: "v2" + "v2_wrong" is then the false-positive rate."""
    r = Rng(seed)
    base_rate, var_rate = SCENARIOS[scenario]
    counts = {"v2": 0, "v2_wrong": 0, "v1": 0, "v1_wrong": 0}
    for _ in range(draws):
        base = draw_arm(r, n_base, 0.0, sd, base_rate, stall)
        other = draw_arm(r, n_variant, gap, sd, var_rate, stall)
        c = seeds.contrast(seeds.read({"baseline": base, "variant": other}), "variant", "baseline")
        old = v1_measured(base, other)
        for name, d in (("v2", c["direction"]), ("v1", old)):
            if d and (d > 0) == (gap >= 0):
                counts[name] += 1
            elif d:
                counts[name + "_wrong"] += 1
    return {k: v / draws for k, v in counts.items()}
