"""course/facts/rope.py on the lab's tiny-corpus export (tests/fixtures/real-model/rope/rope.json): what the
page says comes from the export's rows, the buckets are the mean of their positions, the slow pairs are the
export's count."""
import json
from pathlib import Path

import pytest

from course.facts import rope

ROOT = Path(__file__).resolve().parents[2]
DOC = json.loads((ROOT / "tests/fixtures/real-model/rope/rope.json").read_text(encoding="utf-8"))


def test_no_export_no_facts():
    assert rope.facts({}) == {"rope": None}


def test_the_shift_rows_are_the_exports():
    f = rope.facts({rope.KEY: DOC})["rope"]
    full, short, control = DOC["shift"]["rows"]
    assert f["full"]["max_diff"] == full["max_weight_diff"] and f["full"]["reach"] == full["positions"][1][1]
    assert f["full"]["fp64"]["max_diff"] == full["fp64"]["max_weight_diff"]
    assert f["control"]["max_diff"] == control["max_weight_diff"] and f["control"]["trained"] is False
    assert f["control"]["max_diff"] > 1000 * f["full"]["max_diff"]  # the page's contrast, on the fixture too
    assert f["shift"] == DOC["shift"]["shift"] and f["short"]["tokens"] == short["tokens"]


def test_the_control_says_what_its_position_table_adds():
    card = {"variants": [{"name": "baseline", "params": DOC["shift"]["control"]["params"] - 32 * 256}]}
    f = rope.facts({rope.KEY: DOC, rope.CARD: card})["rope"]
    assert f["control"]["extra_params"] == 32 * 256


def test_the_long_windows_buckets_are_the_mean_of_their_positions():
    f = rope.facts({rope.KEY: DOC})["rope"]["long"]
    losses = DOC["long"]["loss_by_position"]
    assert len(f["buckets"]) == -(-len(losses) // rope.BUCKET)
    assert f["buckets"][0]["loss"] == pytest.approx(sum(losses[:rope.BUCKET]) / len(losses[:rope.BUCKET]))
    assert f["past"] == pytest.approx(DOC["long"]["second_half"] - DOC["long"]["second_half_alone"])
    assert rope.buckets([1, 3, 5, 7], 2) == [{"first": 0, "last": 1, "loss": 2.0}, {"first": 2, "last": 3, "loss": 6.0}]


def test_the_slow_pairs_are_the_exports_count():
    f = rope.facts({rope.KEY: DOC})["rope"]["pairs"]
    assert f["slow"] == sum(t < 1 for t in DOC["pairs"]["turns"]) and f["n"] == 32
