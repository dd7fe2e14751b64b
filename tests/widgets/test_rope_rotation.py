"""rope-rotation: the pair's score depends on the offset only (against a rotation written as a matrix
product here), the slow pairs are counted as the lab counts them, and the build's first state is in the HTML."""
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("rope-rotation")


def rot(angle):
    return [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]]


def matvec(a, v):
    return [a[0][0] * v[0] + a[0][1] * v[1], a[1][0] * v[0] + a[1][1] * v[1]]


def test_the_score_is_the_rotated_dot_product_and_depends_on_the_offset_only():
    th = model.theta(4, 10000.0)
    for m, n in ((30, 20), (130, 120), (0, 0), (255, 3), (7, 400)):
        q, k = matvec(rot(m * th), model.Q), matvec(rot(n * th), model.K)
        want = q[0] * k[0] + q[1] * k[1]
        assert model.score(model.Q, model.K, m, n, th) == pytest.approx(want, abs=1e-12)
        assert model.score_at_offset(model.Q, model.K, m - n, th) == pytest.approx(want, abs=1e-9)
    a = model.view({"pair": 4, "base": 10000.0, "m": 30, "n": 20})["out"]["score"]
    b = model.view({"pair": 4, "base": 10000.0, "m": 130, "n": 120})["out"]["score"]
    c = model.view({"pair": 4, "base": 10000.0, "m": 31, "n": 20})["out"]["score"]
    assert a == b != c


def test_the_slow_pairs_match_the_labs_count():
    # (context - 1) * base^(-2i/64) < 2 pi, counted by hand for our model
    assert model.slow_pairs(10000.0) == sum(255 * 10000 ** (-2 * i / 64) < 2 * math.pi for i in range(32)) == 19
    assert model.slow_pairs(100.0) < 19 < model.slow_pairs(500000.0)
    assert model.wavelength(0, 10000.0) == pytest.approx(2 * math.pi)
    assert "慢对" in model.view({"pair": 31, "base": 10000.0, "m": 0, "n": 0})["out"]["kind"]
    assert "快对" in model.view({"pair": 0, "base": 10000.0, "m": 0, "n": 0})["out"]["kind"]


def test_bad_params_are_refused():
    with pytest.raises(ValueError, match="pair"):
        model.view({"pair": 32, "base": 10000.0, "m": 0, "n": 0})
    with pytest.raises(ValueError, match="positions"):
        model.view({"pair": 0, "base": 10000.0, "m": 600, "n": 0})


def test_first_state_is_in_the_html():
    html = str(Renderer({"num": model.num})("rope-rotation"))
    state = model.view(model.PARAMS)
    assert 'data-widget="rope-rotation"' in html and f'data-out="score">{state["out"]["score"]}<' in html
