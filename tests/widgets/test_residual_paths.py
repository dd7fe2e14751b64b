"""residual-paths: the 8 paths add up to the residual stack's derivative, measured by finite differences."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("residual-paths")


def derivative(w, residual, eps=1e-6):
    return (model.forward(w, 1 + eps, residual)[-1] - model.forward(w, 1 - eps, residual)[-1]) / (2 * eps)


@pytest.mark.parametrize("w", [[0.5, 0.5, 0.5], [0.1, -0.9, 0.3], [-1.0, 1.0, 0.0]])
def test_paths_sum_to_the_derivative_and_the_plain_stack_is_one_path(w):
    ps = model.paths(w)
    assert len(ps) == 8 and len({p["key"] for p in ps}) == 8
    assert sum(p["value"] for p in ps) == pytest.approx(derivative(w, True), abs=1e-6)
    assert next(p["value"] for p in ps if len(p["through"]) == 3) == pytest.approx(derivative(w, False), abs=1e-6)
    assert next(p["value"] for p in ps if not p["through"]) == 1.0  # the skip-everything path


def test_the_lessons_numbers():
    state = model.view(model.PARAMS)
    assert (state["out"]["plain-grad"], state["out"]["res-grad"], state["out"]["sum"]) == ("0.125", "3.375", "3.375")
    assert state["rows"]["000"]["value"] == "1.000" and state["rows"]["000"]["data-selected"] == "true"
    small = model.view({"w": [0.1, 0.1, 0.1], "path": "111"})
    assert small["out"]["plain-grad"] == "0.001" and small["through"] == [1, 2, 3]


def test_first_state_is_in_the_html_and_bad_params_fail():
    html = str(Renderer({"num": model.num})("residual-paths"))
    assert 'data-widget="residual-paths"' in html and 'data-out="res-grad">3.375<' in html
    with pytest.raises(ValueError):
        model.view({"w": [2.0, 0.0, 0.0], "path": "000"})
