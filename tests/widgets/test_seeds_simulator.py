"""seeds-simulator: every experiment it counts is read again here by an independent v2 (numpy, a
printed t table) and an independent old rule; the counts add up across batches; the old rule's
power stops near (1 - p)^n while v2's does not (the lesson's point); the exercises' helpers agree
with the same independent reading; the params are checked."""
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

import seeds_sim  # noqa: E402
from rng import Rng  # noqa: E402

from course.widgets import load_model  # noqa: E402

model = load_model("seeds-simulator")

# Student's t, two-sided 95 % (the 0.975 quantile), from a printed table (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2)
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086}


def independent_v2(base, other):
    """v2 as AUTHORING.md states it, written again with numpy: (direction, failed {arm: seeds}, gap, h)."""
    arms = {"baseline": base, "variant": other}
    med = {n: np.median(list(a.values())) for n, a in arms.items()}
    res = [v - med[n] for n, a in arms.items() if len(a) >= 3 for v in a.values()]
    T = max(6 * 1.4826 * np.median(np.abs(res)), 0.1) if res else 0.1
    failed = {n: {s for s, v in a.items() if v - med[n] > T} for n, a in arms.items()}
    split = any(failed[n] and 2 * len(failed[n]) >= len(a) for n, a in arms.items()) or \
        any(v - med[n] < -T for n, a in arms.items() for v in a.values())
    healthy = {n: np.array([v for s, v in a.items() if s not in failed[n]]) for n, a in arms.items()}
    df = sum(len(h) - 1 for h in healthy.values() if len(h) > 1)
    if split or df < 1 or min(len(h) for h in healthy.values()) == 0:
        return 0, failed, None, None
    ss = sum(((h - h.mean()) ** 2).sum() for h in healthy.values() if len(h) > 1)
    s = np.sqrt(ss / df)
    A, B = healthy["variant"], healthy["baseline"]
    gap = A.mean() - B.mean()
    h = T975[df] * s * np.sqrt(1 / len(A) + 1 / len(B))
    measured = abs(gap) > h and min(len(A), len(B)) >= 2
    return (int(np.sign(gap)) if measured else 0), failed, gap, h


def independent_no_health(base, other):
    """The pooled SD and t interval on every run, no health check (the simulator's middle counter)."""
    A, B = np.array(list(other.values())), np.array(list(base.values()))
    df = sum(len(x) - 1 for x in (A, B) if len(x) > 1)
    if df < 1:
        return 0
    s = np.sqrt(sum(((x - x.mean()) ** 2).sum() for x in (A, B) if len(x) > 1) / df)
    gap = A.mean() - B.mean()
    h = T975[df] * s * np.sqrt(1 / len(A) + 1 / len(B))
    return int(np.sign(gap)) if abs(gap) > h and min(len(A), len(B)) >= 2 else 0


def independent_v1(base, other):
    """The old rule: the baseline's max - min; every pair one sign and the mean pair beyond it (one
    pair: five times it)."""
    band = max(base.values()) - min(base.values())
    diffs = [other[s] - base[s] for s in sorted(base) if s in other]
    mean = sum(diffs) / len(diffs)
    if len(diffs) == 1:
        return int(np.sign(mean)) if abs(mean) >= 5 * band else 0
    one_sign = all(d > 0 for d in diffs) or all(d < 0 for d in diffs)
    return int(np.sign(mean)) if one_sign and abs(mean) > band else 0


def recount(p, batch, seed):
    """The batch's counts, every experiment drawn again with rng.py and read by the independent rules."""
    r = Rng(seed * 100003 + batch)
    base_rate = p["fail"]
    var_rate = p["fail"] if p["where"] == "both" else 0.0
    counts = {k: 0 for k in model.COUNTS}
    for _ in range(model.BATCH):
        base, base_stalled = seeds_sim.draw_runs(r, p["n_base"], 0.0, p["sd"], base_rate, p["stall"])
        other, _ = seeds_sim.draw_runs(r, p["n_variant"], p["gap"], p["sd"], var_rate, p["stall"])
        v2, _, _, _ = independent_v2(base, other)
        v1 = independent_v1(base, other)
        sd_only = independent_no_health(base, other)
        for name, d in (("v2", v2), ("v1", v1), ("sd", sd_only)):
            if d and (d > 0) == (p["gap"] >= 0):
                counts[name] += 1
            elif d:
                counts[name + "_wrong"] += 1
        counts["n"] += 1
        if base_stalled:
            counts["base_failed"] += 1
            counts["base_failed_v1"] += bool(v1)
    return counts


SETTINGS = [{}, {"gap": 0.0}, {"gap": 0.0, "where": "both"}, {"fail": 0.0, "gap": 0.03},
            {"n_base": 3, "n_variant": 2, "fail": 0.3}, {"n_variant": 1, "gap": 0.2}, {"sd": 0.01, "stall": 0.15, "n_base": 8}]


@pytest.mark.parametrize("change", SETTINGS)
def test_every_count_is_what_an_independent_reading_gives(change):
    p = {**model.PARAMS, **change}
    state = model.view(p)
    assert state["tally"] == recount(p, 0, p["seed"])
    assert state["batch"] == 1


def test_without_the_health_check_the_pooled_sd_is_as_blind_as_the_range():
    """The lesson's point 3: what rescues the reading is the health check, not the SD."""
    runs = seeds_sim.simulate(0.1, "B", draws=600, seed=3, sd=0.02, stall=0.37)
    assert abs(runs["sd"] - runs["v1"]) < 0.1 and runs["v2"] > runs["sd"] + 0.4
    clean = seeds_sim.simulate(0.1, "A", draws=300, seed=3, sd=0.02, stall=0.37)
    assert clean["sd"] == clean["v2"]


def test_the_page_s_first_batch_is_typical():
    """The widget opens on a batch whose rates are near the long run's (the lesson prints both)."""
    P = {**model.PARAMS, "sd": 0.02, "stall": 0.37}
    first, long = model.view(P)["tally"], model.long_run(P)
    assert abs(first["v1"] / first["n"] - long["v1"]) < 0.05 and abs(first["v2"] / first["n"] - long["v2"]) < 0.05


def test_the_counts_add_up_batch_by_batch():
    first = model.view(model.PARAMS)
    second = model.view({**model.PARAMS, "tally": first["tally"], "batch": first["batch"]})
    again = recount(model.PARAMS, 1, model.PARAMS["seed"])
    assert second["tally"] == {k: first["tally"][k] + again[k] for k in model.COUNTS}
    assert second["out"]["n"] == str(2 * model.BATCH) and second["batch"] == 2


def test_the_last_experiment_is_drawn_as_read():
    """The chart's dots and interval are the last experiment's runs, v2's failed runs hollow."""
    p = dict(model.PARAMS)
    counts, e = model.run_batch(model.check(p))
    _, failed, gap, h = independent_v2(e["base"], e["other"])
    chart = model.view(p)["chart"]
    lo, hi = model.domain(model.check(p))
    xs = [float(d["x"]) for d in chart["dots"]]
    assert len(xs) == p["n_base"] + p["n_variant"] and all(0 <= x <= model.W for x in xs)
    hollow = [d for d in chart["dots"] if d["failed"]]
    assert len(hollow) == len(failed["baseline"]) + len(failed["variant"])
    assert abs(e["v2"]["gap"] - gap) < 1e-12 and abs(e["v2"]["half_width"] - h) < 2e-3 * h
    assert abs(float(chart["gap"]["x"]) - model.W * (gap - lo) / (hi - lo)) < 0.06


def test_the_old_rule_stops_near_the_chance_that_no_baseline_run_fails():
    """The lesson's point: with a 1-in-5 failure in 5 baseline seeds, the old rule finds a 0.1 gap in
    about (1 - 0.2)^5 = 33 % of experiments, whatever the gap below the failure's size; v2 in most."""
    p = model.PARAMS
    assert model.cap(p) == pytest.approx(0.8 ** 5)
    for gap in (0.1, 0.2):
        run = model.long_run({**p, "gap": gap}, draws=2000, seed=3)
        assert abs(run["v1"] - model.cap(p)) < 0.04, run
        assert run["v2"] > 0.85, run
    clean = model.long_run({**p, "fail": 0.0}, draws=1000, seed=3)
    assert clean["v1"] > 0.9 and clean["v2"] > 0.95  # without failures both rules see it
    null = model.long_run({**p, "gap": 0.0}, draws=4000, seed=4)
    assert 0.02 < null["v2"] + null["v2_wrong"] < 0.08  # v2 keeps about 5 % false positives


def test_the_texts_say_the_counts():
    state = model.view(model.PARAMS)
    t, n = state["tally"], model.BATCH
    assert state["out"]["v1"] == f"{t['v1']} 次（{round(100 * t['v1'] / n)}%）"
    assert state["out"]["v2"] == f"{t['v2']} 次（{round(100 * t['v2'] / n)}%）"
    assert "(1 − 0.20)⁵ = 33%" in state["out"]["cap"]
    null = model.view({**model.PARAMS, "gap": 0.0})
    assert null["out"]["measure"].startswith("误报") and "方向判反" not in null["out"]["v1-wrong"]
    clean = model.view({**model.PARAMS, "fail": 0.0})
    assert "不会失败" in clean["out"]["cap"]


@pytest.mark.parametrize("bad", [{"gap": -0.1}, {"sd": 0.2}, {"fail": "x"}, {"n_base": 11}, {"where": "left"},
                                 {"batch": -1}, {"tally": {"n": 1}}, {"tally": dict.fromkeys(model.COUNTS, -1)}])
def test_bad_params_are_refused(bad):
    with pytest.raises(ValueError):
        model.view({**model.PARAMS, **bad})


def independent_health(arms):
    """The health check on lists, with numpy: [T, {arm: [failed indices]}]."""
    med = {k: np.median(v) for k, v in arms.items()}
    res = [x - med[k] for k, v in arms.items() if len(v) >= 3 for x in v]
    T = max(6 * 1.4826 * np.median(np.abs(res)), 0.1) if res else 0.1
    return [T, {k: [i for i, x in enumerate(v) if x - med[k] > T] for k, v in arms.items()}]


def test_the_exercise_helpers_agree_with_an_independent_reading():
    r = Rng(5)
    for _ in range(40):
        arms = {}
        for k in range(1 + r.below(3)):
            n = 2 + r.below(5)
            xs = [5.0 + r.gauss(0, 0.02) for _ in range(n)]
            if n >= 3 and r.random() < 0.5:
                xs[r.below(n)] += 0.4
            arms[f"a{k}"] = xs
        T, failed = model.health_check(arms)
        T2, failed2 = independent_health(arms)
        assert T == pytest.approx(T2) and failed == failed2
    arms = {"A": [5.02, 5.05, 4.99], "B": [5.10, 5.13], "C": [5.31]}
    s, df, gap, h = model.pooled_interval(arms, "C", "A")
    ss = sum(((np.array(v) - np.mean(v)) ** 2).sum() for v in arms.values())
    assert df == 3 and s == pytest.approx(np.sqrt(ss / 3))
    assert gap == pytest.approx(5.31 - np.mean(arms["A"]))
    assert h == pytest.approx(T975[3] * s * np.sqrt(1 + 1 / 3), rel=2e-4)
    assert [round(t, 3) for t in model.t975(20)[1:]] == [T975[d] for d in range(1, 21)]
