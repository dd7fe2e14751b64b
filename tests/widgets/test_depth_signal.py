"""depth-signal: the hand-written forward and backward passes against numpy and finite differences,
and what the widget tells the reader about depth, residuals, normalisation, activation, width and seed,
checked so that no setting can teach a false lesson (review of 第 2 课, B1)."""
import json
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
ACTS = ("relu", "sigmoid")


def act(z, activation):
    return np.maximum(z, 0) if activation == "relu" else 1 / (1 + np.exp(-z))


def numpy_forward(x0, depth, residual, norm, init, activation="relu", seed=0):
    """The same stack in numpy: every stream state, and the readout L = mean_s u . x_final."""
    layers = [(np.array(w1), np.array(w2)) for w1, w2 in model.weights(2 * depth, init, seed)]
    _, u = model.inputs()
    x, states = x0, [x0]
    for w1, w2 in layers:
        h = x / np.sqrt((x ** 2).mean(-1, keepdims=True) + model.EPS) if norm else x
        f = act(h @ w1, activation) @ w2
        x = x + f if residual else f
        states.append(x)
    return states, float((x @ np.array(u)).mean())


@pytest.mark.parametrize("activation", ACTS)
@pytest.mark.parametrize("residual,norm,init", CASES)
def test_forward_rms_matches_numpy(residual, norm, init, activation):
    x0 = np.array(model.inputs()[0])
    for seed in (0, 2):
        states, _ = numpy_forward(x0, 5, residual, norm, init, activation, seed)
        want = [float(np.sqrt((s ** 2).mean(-1)).mean()) for s in states]
        got = model.simulate(5, residual, norm, init, activation=activation, seed=seed)["rms"]
        assert got == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("activation", ACTS)
@pytest.mark.parametrize("residual,norm,init", CASES)
def test_gradient_at_layer_one_matches_finite_differences(residual, norm, init, activation):
    depth, eps, seed = 3, 1e-6, 1
    x0 = np.array(model.inputs()[0])
    grad = np.zeros_like(x0)
    for s in range(x0.shape[0]):
        for i in range(x0.shape[1]):
            up, down = x0.copy(), x0.copy()
            up[s, i] += eps
            down[s, i] -= eps
            grad[s, i] = (numpy_forward(up, depth, residual, norm, init, activation, seed)[1]
                          - numpy_forward(down, depth, residual, norm, init, activation, seed)[1]) / (2 * eps)
    _, u = model.inputs()
    out = math.sqrt(sum(v * v for v in u)) / math.sqrt(model.SAMPLES)  # |dL/dx_final| over all samples
    got = model.simulate(depth, residual, norm, init, activation, seed)["grad"][0]
    assert got == pytest.approx(float(np.linalg.norm(grad)) / out, rel=1e-5)


def test_four_positional_arguments_keep_their_meaning():
    """The lesson calls simulate(depth, residual, norm, init): ReLU, the first seed."""
    a = model.simulate(16, False, True, "unit")
    assert a == model.simulate(16, False, True, "unit", activation="relu", seed=model.SEEDS[0])
    assert model.first_layer_gradient(16, False) == a["grad"][0]
    assert len(a["rms"]) == 33 and len(a["grad"]) == 17 and a["grad"][-1] == pytest.approx(1.0)
    assert model.spread(16, False) == [model.simulate(16, False, True, "unit", seed=s)["grad"][0] for s in model.SEEDS]


def test_layer_k_is_the_same_network_at_every_depth_and_for_both_activations():
    short = model.weights(4, "unit", 1)
    long = model.weights(40, "unit", 1)
    assert short == long[:4]
    assert model.weights(4, "unit", 0) != short  # another seed, another draw
    scaled = model.weights(4, "scaled", 1)
    assert np.allclose(np.array(scaled[0][1]), np.array(short[0][1]) / 2)  # W2 / sqrt(2L), 2L = 4


@pytest.mark.parametrize("seed", model.SEEDS)
def test_with_pre_ln_and_residuals_the_stream_grows_like_sqrt_of_the_writes(seed):
    rms = model.simulate(64, True, True, "unit", seed=seed)["rms"]
    assert rms[-1] / rms[0] == pytest.approx(math.sqrt(129), rel=0.25)  # the lesson's 11.36 at 128 writes
    state = model.view({**model.PARAMS, "depth": 64, "residual": True, "seed": seed})
    assert state["out"]["prediction"] == "11.36" and "= 11.36" in state["out"]["compare"]
    assert state["rms_chart"]["prediction"]  # the dashed line is drawn


@pytest.mark.parametrize("seed", model.SEEDS)
def test_a_plain_sigmoid_stack_loses_the_gradient_at_every_seed_and_residuals_bring_it_back(seed):
    for depth in (16, 64):
        plain = model.first_layer_gradient(depth, False, activation="sigmoid", seed=seed)
        skip = model.first_layer_gradient(depth, True, activation="sigmoid", seed=seed)
        assert plain < 1e-6 and 0.1 < skip < 10
    state = model.view({**model.PARAMS, "activation": "sigmoid", "seed": seed})
    assert state["out"]["data-verdict"] == "消失" and "1/4" in state["out"]["grad-note"]
    assert state["out"]["formula"] == "F(h) = sigmoid(h W₁) W₂"
    skip = model.view({**model.PARAMS, "activation": "sigmoid", "seed": seed, "residual": True})
    assert skip["rms_chart"]["prediction"] == "" and "方差小于 1" in skip["out"]["compare"]  # no unit-variance claim
    assert "不累加" in state["out"]["compare"]


def test_a_plain_relu_stack_with_norm_keeps_its_gradient_for_most_seeds_at_16_layers():
    """At width 16 the ReLU plain stack's gradient at layer 1 swings from seed to seed; most seeds do
    not vanish, and every note says the swing comes from the narrow width."""
    g = model.spread(16, False)
    assert sum(v > model.VANISHED for v in g) >= 2
    assert max(g) / min(g) > 10  # the spread the note talks about
    for seed in model.SEEDS:
        for depth in (16, 64):
            for norm in (True, False):
                note = model.view({**model.PARAMS, "depth": depth, "norm": norm, "seed": seed})["out"]["grad-note"]
                assert f"宽度只有 {model.WIDTH}" in note and "种子" in note and str(model.OUR_WIDTH) in note


def numpy_plain_stack(width, depth, norm, activation, seed, samples=4):
    """An independent plain stack with numpy's own draws: layer 1's gradient relative to the output's."""
    rng = np.random.default_rng(seed)
    n = 2 * depth
    w1 = rng.normal(0, math.sqrt(2 / width), (n, width, width))
    w2 = rng.normal(0, math.sqrt(1 / width), (n, width, width))
    x = rng.normal(0, 1, (samples, width))
    u = rng.normal(0, 1, width)
    cache = []
    for k in range(n):
        r = np.sqrt((x ** 2).mean(-1, keepdims=True) + 1e-12)
        h = x / r if norm else x
        z = h @ w1[k]
        a = act(z, activation)
        cache.append((r, h, z, a))
        x = a @ w2[k]
    g = np.tile(u / np.linalg.norm(u) / samples, (samples, 1))
    out = np.linalg.norm(g)
    for k in range(n - 1, -1, -1):
        r, h, z, a = cache[k]
        ga = g @ w2[k].T
        gz = ga * (z > 0) if activation == "relu" else ga * a * (1 - a)
        g = gz @ w1[k].T
        if norm:
            g = (g - h * (h * g).sum(-1, keepdims=True) / width) / r
    return np.linalg.norm(g) / out


@pytest.mark.parametrize("norm", [True, False])
def test_the_notes_claim_about_our_width_holds(norm):
    """「换成宽度 256，同样 16 层，第 1 层的梯度还是 1 的量级」, and sigmoid vanishes there too."""
    for seed in range(4):
        assert 0.1 < numpy_plain_stack(model.OUR_WIDTH, 16, norm, "relu", seed) < 10
    assert numpy_plain_stack(model.OUR_WIDTH, 16, norm, "sigmoid", 0) < 1e-6


def test_our_width_is_our_models_d_model():
    card = json.loads((ROOT / "data" / "real-model" / "model-card.json").read_text(encoding="utf-8"))
    assert model.OUR_WIDTH == card["architecture"]["d_model"]


def test_the_residual_toggle_brings_the_relu_gradient_towards_one():
    for seed in model.SEEDS:
        plain = model.first_layer_gradient(16, False, seed=seed)
        skip = model.first_layer_gradient(16, True, seed=seed)
        assert 1 < skip < 20 and skip > plain
        assert "1 + F′" in model.view({**model.PARAMS, "residual": True, "seed": seed})["out"]["grad-note"]


def test_reading_the_raw_stream_compounds_and_the_scaled_init_tames_it():
    raw = model.simulate(32, True, False, "unit")["rms"]
    assert raw[-1] > 1e6  # each write scales with the stream: growth compounds
    tamed = model.simulate(32, True, False, "scaled")["rms"]
    assert tamed[-1] < 3  # 1/sqrt(2L) on every write keeps the total bounded
    assert "÷√(2L)" in model.INITS["scaled"] and "2N" not in model.INITS["scaled"]


def test_width_and_seed_are_stated_and_every_setting_gives_plain_json():
    for activation in ACTS:
        for residual, norm, init in CASES:
            for depth in (1, 64):
                p = {"depth": depth, "residual": residual, "norm": norm, "init": init,
                     "activation": activation, "seed": 2}
                state = model.view(p)
                json.dumps(state, allow_nan=False)  # no NaN or infinity reaches the browser
                assert state["out"]["setup"] == f"宽度 {model.WIDTH}，随机种子 2"
                assert state["out"]["grad-note"] and state["out"]["grad-note"] in state["announce"]
                assert state["out"]["stack"] in state["announce"]


def test_seeds_are_drawn_only_when_asked_for():
    model._draws.clear()
    model.view(model.PARAMS)
    assert sorted(model._draws) == [model.PARAMS["seed"]]
    assert len(model._draws[model.PARAMS["seed"]][1]) == 2 * model.PARAMS["depth"]


def test_first_state_is_in_the_html_and_bad_params_fail():
    html = str(Renderer({"num": model.num})("depth-signal"))
    state = model.view(model.PARAMS)
    assert 'data-widget="depth-signal"' in html and f'data-out="rms-final">{state["out"]["rms-final"]}<' in html
    assert f'data-out="setup">{state["out"]["setup"]}<' in html and state["out"]["grad-note"] in html
    assert 'name="ds-seed" value="0" checked' in html and 'name="ds-activation" value="relu" checked' in html
    for label in html.split("<label")[1:]:  # no label wraps both a control and an <output>
        label = label.split("</label>")[0]
        assert not ("<input" in label and "<output" in label)
    for bad in ({"depth": 65}, {"activation": "tanh"}, {"seed": 7}, {"init": "xavier"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            model.view({**model.PARAMS, **bad})
