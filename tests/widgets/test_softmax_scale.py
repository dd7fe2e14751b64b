"""softmax-scale: the softmax is numpy's and stays finite on large scores; without the 1/sqrt(d_k)
the scores spread as sqrt(d_k) and the softmax saturates, with it the spread stays near 1."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import load_model  # noqa: E402

model = load_model("softmax-scale")


@pytest.mark.parametrize("scores", [[1.0, 2.0, 3.0], [1000.0, 1001.0], [-1000.0, -999.0, 0.0]])
def test_softmax_is_stable(scores):
    s = np.asarray(scores)
    want = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    assert np.allclose(model.softmax(scores), want)


def test_the_spread_grows_as_sqrt_dk_and_scaling_undoes_it():
    for d in model.D_KS:
        both = model.summary(d, 1)
        # the population std of 8 scores underestimates sqrt(d) a little: within 30%
        assert both[False]["spread"] == pytest.approx(math.sqrt(d), rel=0.3)
        assert both[True]["spread"] == pytest.approx(1.0, rel=0.3)
    raw, scaled = model.summary(64, 1)[False], model.summary(64, 1)[True]
    assert raw["top"] > 0.8 and scaled["top"] < 0.5
    assert raw["slope"] < 0.3 < 0.7 < scaled["slope"]


def test_view_reads_its_numbers():
    s = model.view(model.PARAMS)
    raw = model.summary(64, 1)[False]
    assert len(s["bars"]) == model.KEYS and s["out"]["top"] == f"{raw['top']:.3f}"
    with pytest.raises(ValueError):
        model.view({**model.PARAMS, "d_k": 5})
