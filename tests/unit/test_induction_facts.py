"""facts.copy_task (course/facts/induction.py): per arm, the start, the end range over seeds, each seed's cliff
(the first evaluation below half of ln(vocab), None where it never comes) and the heads' end ranges, read from a
hand-made export, and None before the first export."""
from course.facts import induction


def point(step, loss, prev=0.1, pm=0.1):
    head = lambda s: {"layer": 1, "head": 1, "share": s}  # noqa: E731
    return {"step": step, "copy_loss": loss, "first_loss": 3.4, "previous": head(prev), "prefix_matching": head(pm)}


def doc():
    runs = [{"variant": "attn_only_2l", "seed": 0, "points": [point(0, 3.5), point(25, 3.0), point(50, 1.0, 0.8, 0.9)]},
            {"variant": "attn_only_2l", "seed": 1, "points": [point(0, 3.4), point(25, 1.5), point(50, 0.5, 0.7, 0.95)]},
            {"variant": "attn_only_1l", "seed": 0, "points": [point(0, 3.5), point(25, 3.2), point(50, 3.1)]}]
    return {"task": {"uniform_loss": 3.4657, "vocab": 32, "min_len": 8, "max_len": 24}, "runs": runs}


def test_each_arm_is_read_over_its_seeds():
    f = induction.facts({induction.KEY: doc()})["copy_task"]
    two, one = f["arms"]["attn_only_2l"], f["arms"]["attn_only_1l"]
    assert two["cliff"] == [50, 25] and (two["cliff_lo"], two["cliff_hi"]) == (25, 50)
    assert (two["end_lo"], two["end_hi"]) == (0.5, 1.0) and two["start"] == 3.5
    assert (two["prefix_lo"], two["prefix_hi"]) == (0.9, 0.95) and (two["previous_lo"], two["previous_hi"]) == (0.7, 0.8)
    assert one["cliff"] == [None] and one["cliff_lo"] is None and one["cliff_hi"] is None


def test_no_export_no_facts():
    assert induction.facts({}) == {"copy_task": None, "induction_scan": None, "induction_curves": None,
                                   "induction_head_share": induction.HEAD_SHARE}


def test_the_seen_symbols_floor_is_the_mean_log_of_distinct_symbols_by_enumeration():
    """Every sequence of L draws from 3 symbols, counted by hand: the recursion must give the same mean ln D."""
    import itertools
    import math
    task = {"vocab": 3, "min_len": 2, "max_len": 3}
    want = sum((L - 1) * sum(math.log(len(set(s))) for s in itertools.product(range(3), repeat=L)) / 3 ** L
               for L in (2, 3)) / (1 + 2)
    assert abs(induction.seen_symbols_floor(task) - want) < 1e-12
    assert round(induction.seen_symbols_floor({"vocab": 32, "min_len": 8, "max_len": 24}), 4) == 2.5725


def test_the_plateau_is_the_last_step_every_seed_is_still_near_the_start():
    f = induction.facts({induction.KEY: doc()})["copy_task"]
    assert f["arms"]["attn_only_2l"]["plateau"] == {"step": 0, "lo": 3.4, "hi": 3.5}  # seed 1 is off it by step 25
    assert f["arms"]["attn_only_1l"]["plateau"] == {"step": 25, "lo": 3.2, "hi": 3.2}  # 3.1 < 0.9 ln 32 = 3.12


def curve_run(variant, seed, val, gain, pm=0.01, prev=0.2):
    head = lambda s: {"layer": 1, "head": 1, "share": s}  # noqa: E731
    pts = [{"step": s, "repeat_gain": g, "prefix_matching": head(pm), "previous": head(prev), "icl": -0.05,
            "train_loss": None, "val_loss": None} for s, g in ((0, 0.0), (50, gain))]
    return {"variant": variant, "seed": seed, "steps": 50, "val_loss": val, "n_layer": 1, "points": pts}


def curves_doc(runs):
    return {"runs": runs, "reference": {"prefix_matching": 0.0108, "previous": 0.0108},
            "model_card": {"train_config": {"batch_size": 2, "block_size": 4}}}


def test_the_primary_contrasts_leave_out_a_failed_run_by_its_loss_and_read_the_gain():
    runs = [curve_run("attn_only_1l", s, 5.2 + 0.01 * s, 0.2 + 0.01 * s) for s in range(3)]
    runs += [curve_run("attn_only_2l", s, 5.3 + 0.01 * s, -2.0 - 0.01 * s, pm=0.5) for s in range(3)]
    runs += [curve_run("smeared_1l", s, 5.2, 0.21 + 0.01 * s) for s in range(2)]
    runs += [curve_run("smeared_1l", 2, 9.0, -9.0)]  # a failed run: its loss, not its gain, rules it out
    f = induction.curves_facts(curves_doc(runs))
    two, smeared = f["primary"]
    assert (two["a"], two["b"], two["status"]) == ("attn_only_2l", "attn_only_1l", "measured")
    assert abs(two["gap"] - (-2.01 - 0.21)) < 1e-9 and two["direction"] == -1
    assert smeared["failed_a"] == {2: 9.0} and smeared["n_a"] == 2 and smeared["status"] == "within"
    assert f["arms"]["attn_only_2l"]["formed"] == [50, 50, 50] and f["arms"]["attn_only_1l"]["formed"] == [None] * 3
    assert f["tokens_per_step"] == 8


def test_no_primary_reading_before_every_arm_has_run():
    assert induction.curves_facts(curves_doc([curve_run("attn_only_2l", 0, 5.3, -0.04)]))["primary"] == []
