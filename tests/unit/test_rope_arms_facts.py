"""course/facts/rope_arms.py on made-up exports: the arms are read against the baseline by seeds protocol v2
(gap, half-width and verdict recomputed here by hand), the declared primaries are Holm-corrected, a seed not
finished is listed, and an export whose baseline is another model is refused."""
import statistics

import pytest

from course.errors import CourseError
from course.facts import rope_arms

T975 = {8: 2.306}  # printed t table, two-sided 95 %: df = 4 + 2 + 2


def hist(val, train):
    return [{"step": 700, "tokens": 1, "train_loss": train + 0.3, "val_loss": val + 0.3},
            {"step": 1400, "tokens": 2, "train_loss": train, "val_loss": val}]


BASE_VALS = {0: 4.843, 1: 4.893, 2: 4.861, 3: 4.848, 4: 4.870}


def baseline_row():
    seeds = sorted(BASE_VALS)
    return {"seeds": seeds, "val_losses": [BASE_VALS[s] for s in seeds],
            "train_losses": [BASE_VALS[s] - 0.25 for s in seeds],
            "histories": [hist(BASE_VALS[s], BASE_VALS[s] - 0.25) for s in seeds]}


def run(variant, seed, val):
    return {"variant": variant, "seed": seed, "params": 1, "model_config": {"n_layer": 4, "n_head": 4, "d_model": 256,
            "block_size": 256}, "steps_trained": 1400, "val_loss": val, "train_loss": val - 0.25, "val_by_book": {},
            "history": hist(val, val - 0.25), "wall_seconds": 1.0, "threads": 2}


NOPE = {0: 4.95, 1: 4.99, 2: 4.97}
ONE = {0: 4.86, 1: 4.88, 2: 4.85}


def export(baseline_val0=4.843):
    runs = [run("baseline", 0, baseline_val0)] + [run("nope", s, v) for s, v in NOPE.items()] + \
           [run("one_head", s, v) for s, v in ONE.items()]
    heads = [{"layer": l, "head": h, "previous": 0.1 * h if l == 2 else 0.02, "self": 0.1, "first": 0.02,
              "same_token": 0.01, "induction": 0.01, "punctuation": 0.3 if (l, h) == (2, 4) else 0.05,
              "punctuation_before": 0.05, "with_punctuation": 0.05, "distance": 50.0}
             for l in range(1, 5) for h in range(1, 5)]
    return {"primary": {"pairs": [["nope", "baseline"], ["one_head", "baseline"], ["abs_pos", "baseline"]],
                        "key": "val_loss", "step": 1400, "predictions": {"nope-baseline": 1}, "declared": "2026-12-06",
                        "arm_seeds": [0, 1, 2]},
            "variants": [{"name": n, "description": n} for n in ("baseline", "nope", "one_head", "abs_pos")],
            "runs": runs, "missing": [["abs_pos", 0], ["abs_pos", 1], ["abs_pos", 2]],
            "heads": {"seed": 1, "models": [{"variant": "baseline", "n_head": 4, "heads": heads, "prefix_average": {"previous": 0.02},
                                  "queries": {}}]}}


def by_hand(a, b):
    arms = [BASE_VALS, NOPE, ONE]
    ss = sum(sum((x - statistics.fmean(v.values())) ** 2 for x in v.values()) for v in arms)
    df = sum(len(v) - 1 for v in arms)
    sd = (ss / df) ** 0.5
    gap = statistics.fmean(a.values()) - statistics.fmean(b.values())
    return gap, T975[df] * sd * (1 / len(a) + 1 / len(b)) ** 0.5


def test_each_arm_is_read_against_the_baseline_by_v2():
    f = rope_arms.arms_facts(export(), baseline_row())
    r = f["readings"]["val_loss"]
    assert r["arms"]["baseline"] == BASE_VALS and r["arms"]["nope"] == NOPE and "abs_pos" not in r["arms"]
    for arm, values in (("nope", NOPE), ("one_head", ONE)):
        c = r["contrasts"][f"{arm}-baseline"]
        gap, h = by_hand(values, BASE_VALS)
        assert c["gap"] == pytest.approx(gap) and c["half_width"] == pytest.approx(h, rel=2e-3)
        assert c["primary"] and c["measured"] == (abs(gap) > h)
    assert f["said"]["nope-baseline"].endswith("：测到") and f["said"]["nope-baseline"].startswith("高")
    gap, h = by_hand(ONE, BASE_VALS)
    assert abs(gap) < h and f["said"]["one_head-baseline"].endswith("在误差之内，分不出")
    assert "primary" not in f["readings"]["train_loss"]["contrasts"]["nope-baseline"]  # the other loss is description


def test_missing_seeds_and_heads_are_passed_on():
    f = rope_arms.arms_facts(export(), baseline_row())
    assert f["missing"] == [["abs_pos", 0], ["abs_pos", 1], ["abs_pos", 2]] and f["runs"]["nope"] == [0, 1, 2]
    h = f["heads"]["baseline"]
    assert f["head_seed"] == 1, "the page names whose heads it shows"
    assert f["missing_by_arm"] == {"abs_pos": [0, 1, 2]}
    assert h["previous"] == {"layer": 2, "head": 4, "share": pytest.approx(0.4)}
    assert h["punctuation"] == {"layer": 2, "head": 4, "share": 0.3}


def test_an_export_beside_another_baseline_is_refused():
    with pytest.raises(CourseError, match="baseline seed 0"):
        rope_arms.arms_facts(export(baseline_val0=4.9), baseline_row())


def test_no_export_no_facts():
    assert rope_arms.facts({}) == {"rope_arms": None}
