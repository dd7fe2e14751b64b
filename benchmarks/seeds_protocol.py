"""The seeds protocol's error rates on simulated experiments (widgets/common/seeds_sim.py): how
often v2 and the old range rule read a gap as measured, by scenario and true gap.

    python benchmarks/seeds_protocol.py [--draws 20000] [--variant-seeds 4]

Scenarios (the review behind v2, Part 2): A no stalls, B a 1-in-5 stall in the baseline only,
C in both arms; 5 baseline seeds; noise sd 0.0228; a stall adds +0.367. Each cell: % of draws
measured in the true direction, with the wrong direction in brackets when it is 0.5 % or more;
at gap 0 every measured reading is a false positive.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "widgets" / "common"))

import seeds_sim  # noqa: E402

GAPS = (0.0, 0.02, 0.05, 0.1)


def cell(right, wrong, gap):
    if gap == 0:
        return f"{100 * (right + wrong):.1f}"
    return f"{100 * right:.0f}" + (f" ({100 * wrong:.1f})" if wrong >= 0.005 else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=20000)
    ap.add_argument("--variant-seeds", type=int, default=4)
    args = ap.parse_args()
    start = time.perf_counter()
    print(f"| scenario | true gap | v2 | old range rule |  ({args.draws} draws a cell, "
          f"5 baseline seeds, {args.variant_seeds} variant seeds)")
    print("|---|---|---|---|")
    for scenario in seeds_sim.SCENARIOS:
        for i, gap in enumerate(GAPS):
            sim = seeds_sim.simulate(gap, scenario, n_variant=args.variant_seeds, draws=args.draws, seed=i)
            print(f"| {scenario} | {gap} | {cell(sim['v2'], sim['v2_wrong'], gap)} | {cell(sim['v1'], sim['v1_wrong'], gap)} |")
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
