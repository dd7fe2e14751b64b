"""depth-signal: the hand-written forward and backward passes against numpy and finite differences,
and the lesson's claims about depth, residuals and normalisation as the model computes them."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("depth-signal")
CASES = [(r, n, i) for r in (True, False) for n in (True, False) for i in ("unit", "scaled")]


def numpy_forward(x0, depth, residual, norm, init):
    """The same stack in numpy: every stream state, and the readout L = mean_s u . x_final."""
    layers = [(np.array(w1), np.array(w2)) for w1, w2 in model.weights(2 * depth, init)]
    _, u = model.inputs()
    x, states = x0, [x0]
    for w1, w2 in layers:
        h = x / np.sqrt((x ** 2).mean(-1, keepdims=True) + model.EPS) if norm else x
        f = np.maximum(h @ w1, 0) @ w2
        x = x + f if residual else f
        states.append(x)
    return states, float((x @ np.array(u)).mean())


@pytest.mark.parametrize("residual,norm,init", CASES)
def test_forward_rms_matches_numpy(residual, norm, init):
    x0 = np.array(model.inputs()[0])
    states, _ = numpy_forward(x0, 5, residual, norm, init)
    want = [float(np.sqrt((s ** 2).mean(-1)).mean()) for s in states]
    got = model.simulate(5, residual, norm, init)["rms"]
    assert got == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("residual,norm,init", CASES)
def test_gradient_at_layer_one_matches_finite_differences(residual, norm, init):
    depth, eps = 3, 1e-6
    x0 = np.array(model.inputs()[0])
    grad = np.zeros_like(x0)
    for s in range(x0.shape[0]):
        for i in range(x0.shape[1]):
            up, down = x0.copy(), x0.copy()
            up[s, i] += eps
            down[s, i] -= eps
            grad[s, i] = (numpy_forward(up, depth, residual, norm, init)[1]
                          - numpy_forward(down, depth, residual, norm, init)[1]) / (2 * eps)
    _, u = model.inputs()
    out = math.sqrt(sum(v * v for v in u)) / math.sqrt(model.SAMPLES)  # |dL/dx_final| over all samples
    got = model.simulate(depth, residual, norm, init)["grad"][0]
    assert got == pytest.approx(float(np.linalg.norm(grad)) / out, rel=1e-5)


def test_with_pre_ln_and_residuals_the_stream_grows_like_sqrt_of_the_writes():
    rms = model.simulate(64, True, True, "unit")["rms"]
    assert rms[-1] == pytest.approx(math.sqrt(129), rel=0.1)  # the lesson's 11.36 at 128 writes
    state = model.view({"depth": 64, "residual": True, "norm": True, "init": "unit"})
    assert state["out"]["prediction"] == "11.36"


def test_the_residual_toggle_moves_the_gradient_at_layer_one_by_orders_of_magnitude():
    plain = model.simulate(16, False, True, "unit")["grad"][0]
    skip = model.simulate(16, True, True, "unit")["grad"][0]
    assert plain < model.VANISHED and 0.1 < skip < model.EXPLODED and skip / plain > 1e3
    assert model.view({**model.PARAMS, "depth": 16})["out"]["data-verdict"] == "消失"


def test_reading_the_raw_stream_compounds_and_the_scaled_init_tames_it():
    raw = model.simulate(32, True, False, "unit")["rms"]
    assert raw[-1] > 1e6  # each write scales with the stream: growth compounds
    tamed = model.simulate(32, True, False, "scaled")["rms"]
    assert tamed[-1] < 3  # 1/sqrt(2N) on every write keeps the total bounded


def test_first_state_is_in_the_html_and_bad_params_fail():
    html = str(Renderer({"num": model.num})("depth-signal"))
    state = model.view(model.PARAMS)
    assert 'data-widget="depth-signal"' in html and f'data-out="rms-final">{state["out"]["rms-final"]}<' in html
    with pytest.raises(ValueError, match="depth"):
        model.view({**model.PARAMS, "depth": 65})
