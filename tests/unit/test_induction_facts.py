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
    return {"task": {"uniform_loss": 3.4657}, "runs": runs}


def test_each_arm_is_read_over_its_seeds():
    f = induction.facts({induction.KEY: doc()})["copy_task"]
    two, one = f["arms"]["attn_only_2l"], f["arms"]["attn_only_1l"]
    assert two["cliff"] == [50, 25] and (two["cliff_lo"], two["cliff_hi"]) == (25, 50)
    assert (two["end_lo"], two["end_hi"]) == (0.5, 1.0) and two["start"] == 3.5
    assert (two["prefix_lo"], two["prefix_hi"]) == (0.9, 0.95) and (two["previous_lo"], two["previous_hi"]) == (0.7, 0.8)
    assert one["cliff"] == [None] and one["cliff_lo"] is None and one["cliff_hi"] is None


def test_no_export_no_facts():
    assert induction.facts({}) == {"copy_task": None}
