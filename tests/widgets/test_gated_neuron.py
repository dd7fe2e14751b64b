"""gated-neuron: one gated neuron on 第 1 课's four reviews. The data is lesson 1's, the fit is numpy's least
squares, the exact solution gives MSE 0 (with no activation and with SiLU), a σ gate gets nowhere near 0 on
the sliders, and the view and the build's first state say what the model computes."""
import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("gated-neuron")
P = np.array([p for _, p, _, _ in model.REVIEWS], dtype=float)
N = np.array([n for _, _, n, _ in model.REVIEWS], dtype=float)
Y = np.array([y for *_, y in model.REVIEWS], dtype=float)
ACT = {"none": lambda g: g, "sigmoid": lambda g: 1 / (1 + np.exp(-g)), "silu": lambda g: g / (1 + np.exp(-g))}
LO, HI, STEP = model.SLIDER
TICKS = [LO + STEP * k for k in range(int(round((HI - LO) / STEP)) + 1)]


def numpy_fit(activation, gate, up):
    m = ACT[activation](gate[0] * P + gate[1] * N + gate[2]) * (up[0] * P + up[1] * N + up[2])
    w = np.linalg.lstsq(m[:, None], Y, rcond=None)[0][0] if np.any(m) else 0.0  # least squares, no intercept
    return w, w * m, float(np.mean((w * m - Y) ** 2))


def test_the_four_reviews_are_lesson_ones():
    ffn, linear = load_model("ffn-xor"), load_model("linear-fit")
    assert model.REVIEWS == ffn.REVIEWS == linear.REVIEWS
    assert [(p, n, y) for _, p, n, y in model.REVIEWS] == [(p, n, p + n - 2 * p * n) for _, p, n, _ in model.REVIEWS]


SETTINGS = [(a, g, u) for a in model.KEYS for g, u in (
    ([1.0, 1.0, 0.0], [0.0, 0.0, 1.0]), ([1.0, 1.0, 0.0], [-1.0, -1.0, 2.0]), ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
    ([-2.0, 0.75, -1.25], [1.5, -0.5, 0.25]), ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0]), ([1.0, -1.0, 0.0], [1.0, -1.0, 0.0]))]


@pytest.mark.parametrize("activation,gate,up", SETTINGS)
def test_the_fit_is_numpys_least_squares(activation, gate, up):
    found = model.fit(activation, gate, up)
    w, out, mse = numpy_fit(activation, gate, up)
    assert found["w_o"] == pytest.approx(w, rel=1e-12, abs=1e-15)
    np.testing.assert_allclose(found["out"], out, rtol=1e-12, atol=1e-14)
    assert found["mse"] == pytest.approx(mse, rel=1e-10, abs=1e-15) == model.mse(activation, gate, up)


def test_the_gate_reads_with_torchs_activations():
    torch = pytest.importorskip("torch")
    g = torch.tensor([-2.0, -0.5, 0.0, 1.0, 1.75], dtype=torch.float64)
    assert [model.act("silu", v) for v in g.tolist()] == pytest.approx(torch.nn.functional.silu(g).tolist(), rel=1e-14)
    assert [model.act("sigmoid", v) for v in g.tolist()] == pytest.approx(torch.sigmoid(g).tolist(), rel=1e-14)


def test_the_exact_solution_gives_mse_zero():
    for activation in ("none", "silu"):
        exact = model.exact_solution(activation)
        assert exact["mse"] < 1e-30 and numpy_fit(activation, exact["gate"], exact["up"])[2] < 1e-30
        assert all(v in TICKS for v in exact["gate"] + exact["up"])  # the sliders can reach it
        assert model.fit(activation, exact["gate"], exact["up"])["out"] == pytest.approx(list(Y), abs=1e-15)
    assert model.exact_solution("none")["w_o"] == 1.0
    assert model.exact_solution("silu")["w_o"] == pytest.approx(1 + math.exp(-1))  # 1 / SiLU(1) = 1 + e^-1
    assert model.exact_solution("sigmoid") is None
    # by hand: (p + n)(2 - p - n) is 1, 0, 0, 1 on the four reviews
    np.testing.assert_array_equal((P + N) * (2 - P - N), Y)


def test_a_sigmoid_gate_stays_away_from_zero_on_the_sliders():
    """No exact solution (the widget says why); on every whole-number setting and 3,000 random ones the
    best MSE stays above 0.01, while no activation and SiLU reach 0."""
    whole = [float(v) for v in range(int(LO), int(HI) + 1)]
    settings = [(list(g), list(u)) for g in itertools.product(whole, repeat=3) for u in itertools.product(whole, repeat=3)]
    rng = np.random.default_rng(0)
    settings += [(list(rng.uniform(LO, HI, 3)), list(rng.uniform(LO, HI, 3))) for _ in range(3000)]
    best = min(model.mse("sigmoid", g, u) for g, u in settings)
    assert 0.01 < best < 0.05


def test_multilinear_writes_any_output_on_the_four_reviews():
    rng = np.random.default_rng(4)
    for values in [list(Y)] + [list(rng.normal(size=4)) for _ in range(5)]:
        a, b, c, d = model.multilinear(values)
        np.testing.assert_allclose(a + b * P + c * N + d * P * N, values, atol=1e-12)
    assert model.multilinear(list(Y)) == [0, 1, 1, -2]


def test_the_view_says_what_the_model_computes():
    first = model.view(model.PARAMS)
    w, out, mse = numpy_fit("silu", [1.0, 1.0, 0.0], [0.0, 0.0, 1.0])
    assert first["out"]["formula"] == "ŷ = " + model.num(w, 3) + " · SiLU(p + n) · (1)"
    assert first["out"]["verdict"] == "MSE = " + model.num(mse, 3) + "（四句一律输出 0 时是 0.500）。"
    assert [first["rows"][name]["out"] for name, *_ in model.REVIEWS] == [model.num(v, 3) for v in out]
    assert first["exact_available"] and first["out"]["unit"] == "SwiGLU"
    exact = model.view({"activation": "silu", "gate": [1.0, 1.0, 0.0], "up": [-1.0, -1.0, 2.0]})
    assert exact["out"]["verdict"] == "四句的输出都等于目标：精确解，MSE = 0。"
    assert exact["out"]["poly"].startswith("在这四句上，输出可以写成 ŷ = p + n − 2pn（")
    assert {r["data-exact"] for r in exact["rows"].values()} == {"true"}
    assert exact["announce"] == "SwiGLU：g = p + n，u = −p − n + 2，w_o = 1.368：精确解，MSE = 0。"
    assert "SiLU(1) = 0.731，w_o 取 1 ÷ 0.731 = 1.368" in exact["out"]["exact-note"]
    sigmoid = model.view({**model.PARAMS, "activation": "sigmoid"})
    assert sigmoid["exact"] is None and not sigmoid["exact_available"]
    assert model.num(model.mse("sigmoid", [1.0, 1.0, 0.0], [-1.0, -1.0, 2.0]), 3) in sigmoid["out"]["sigmoid-note"]


def test_first_state_is_in_the_html_and_bad_params_fail():
    html = str(Renderer({"num": model.num})("gated-neuron"))
    first = model.view(model.PARAMS)
    assert 'data-widget="gated-neuron"' in html and html.count('type="range"') == 6
    assert 'value="silu" checked' in html and 'data-action="exact">' in html
    assert f'data-out="verdict">{first["out"]["verdict"]}<' in html
    assert f'data-out="formula">{first["out"]["formula"]}<' in html
    sigmoid = str(Renderer({"num": model.num})("gated-neuron", activation="sigmoid"))
    assert 'data-action="exact" disabled>' in sigmoid
    for bad in ({"activation": "relu"}, {"gate": [1.0, 1.0]}, {"up": [0.0, 0.0, 2.5]}, {"gate": [float("nan"), 0, 0]}):
        with pytest.raises(ValueError):
            model.view({**model.PARAMS, **bad})


def test_it_stays_html_inside_a_markdown_div():
    """A lesson's stepper embeds widgets in <div markdown> (md_in_html), where a line indented by 4 or more
    spaces can turn the rest of the widget into a code block: the template keeps its lines shallower."""
    markdown = pytest.importorskip("markdown")
    html = str(Renderer({"num": model.num})("gated-neuron"))
    page = markdown.markdown('<div class="stepper__fail" markdown>\n\ntext\n\n' + html + '\n\n</div>\n',
                             extensions=["md_in_html", "attr_list", "tables"])
    assert "<pre>" not in page and "&lt;" not in page
