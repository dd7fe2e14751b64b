"""seed-curves: every run the lesson passes is one path through its own points (mapped back from the
SVG coordinates), the failed run is told apart, the first loss is shown first, and bad data is refused."""
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import load_model  # noqa: E402

model = load_model("seed-curves")


@pytest.fixture(scope="module")
def data(facts):
    example = model.example(facts)
    if example is None:
        pytest.skip("no FFN export")
    return example["data"]


def unmap(tick_pairs, pixel):
    """Invert a linear axis from two of its (pixel, value) ticks."""
    (p0, v0), (p1, v1) = tick_pairs[0], tick_pairs[-1]
    return v0 + (pixel - p0) * (v1 - v0) / (p1 - p0)


def test_each_run_is_drawn_through_its_points(data):
    state = model.view({"data": data})
    assert [c["key"] for c in state["charts"]] == [l["key"] for l in data["losses"]]
    assert [c["shown"] for c in state["charts"]] == [True] + [False] * (len(data["losses"]) - 1)
    for chart in state["charts"]:
        xt = [(float(t["x"]), float(t["label"].replace(",", ""))) for t in chart["xticks"]]
        yt = [(float(t["y"]), float(t["label"])) for t in chart["yticks"]]
        assert len(chart["lines"]) == len(data["series"])
        by_key = {s["key"]: s for s in data["series"]}
        for line in chart["lines"]:
            pts = [tuple(map(float, p.split(","))) for p in re.findall(r"[-\d.]+,[-\d.]+", line["d"])]
            want = by_key[line["key"]]["points"][chart["key"]]
            assert len(pts) == len(want)
            for (px, py), (x, y) in zip(pts, want):
                assert unmap(xt, px) == pytest.approx(x, abs=1)
                assert unmap(yt, py) == pytest.approx(y, abs=2e-3)
            assert line["kind"] == by_key[line["key"]]["kind"]


def test_the_failed_run_is_drawn_last_and_named(data, facts):
    state = model.view({"data": data})
    failed = ["s" + str(s) for s in facts["noise"]["failed_seeds"]]
    lines = state["charts"][0]["lines"]
    assert [l["key"] for l in lines if l["kind"] == "failed"] == failed
    if failed:
        assert lines[-1]["kind"] == "failed"  # on top of the others
    assert {k["kind"] for k in state["legend"]} == {s["kind"] for s in data["series"]}


@pytest.mark.parametrize("bad", [None, {"title": "t"}, {"title": "t", "x_label": "x", "losses": [], "series": [],
                                                        "caption": ""}])
def test_bad_data_is_refused(bad):
    with pytest.raises(ValueError):
        model.view({"data": bad})


def test_a_series_missing_a_loss_is_refused(data):
    broken = dict(data, series=[dict(data["series"][0], points={"val": data["series"][0]["points"]["val"]})])
    with pytest.raises(ValueError):
        model.view({"data": broken})
