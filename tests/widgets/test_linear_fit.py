"""The linear-fit model: least squares against numpy, the identity, the lesson's numbers."""
import random

import numpy as np
import pytest
from support import ROOT

from course.widgets import load_model

model = load_model("linear-fit")


@pytest.mark.parametrize("seed", range(5))
def test_lstsq_equals_numpy_on_random_data(seed):
    rng = random.Random(seed)
    rows = [[rng.uniform(-3, 3) for _ in range(3)] + [1.0] for _ in range(20)]
    targets = [rng.uniform(-1, 1) for _ in rows]
    expected = np.linalg.lstsq(np.array(rows), np.array(targets), rcond=None)[0]
    assert model.lstsq(rows, targets) == pytest.approx(expected.tolist(), abs=1e-9)


@pytest.mark.parametrize("seed", range(20))
def test_identity_holds_for_any_a_b_c(seed):
    rng = random.Random(seed)
    params = {k: rng.uniform(-2, 2) for k in "abc"}
    out = model.view(params)["out"]
    assert out["identity-left"] == out["identity-right"]
    yhat = {name: model.predict(params, p, n) for name, p, n, _ in model.REVIEWS}
    assert yhat["好吃"] + yhat["不难吃"] == pytest.approx(yhat["不好吃"] + yhat["难吃"])


def test_no_linear_plan_beats_the_constant_baseline():
    rng = random.Random(0)
    best = min(model.mse({k: rng.uniform(-2, 2) for k in "abc"}) for _ in range(2000))
    assert best >= model.baseline_mse() == 0.25


def test_least_squares_lands_on_the_lessons_answer():
    state = model.least_squares(model.PARAMS)
    assert state["params"] == {"a": 0.0, "b": 0.0, "c": 0.5}
    assert state["out"]["mse"] == "0.250"
    assert {row["yhat"] for row in state["rows"].values()} == {"0.50"}


def test_first_state_reads_only_p():
    out = model.view(model.PARAMS)
    assert out["rows"]["好吃"]["yhat"] == "1.00" and out["rows"]["不难吃"]["yhat"] == "0.00"
    assert out["out"]["mse"] == "0.500"


def test_singular_system_says_so():
    with pytest.raises(ValueError, match="singular"):
        model.lstsq([[1, 1], [2, 2]], [1, 2])
