"""activation-curves: the four curves against torch and math.erf, the minima against a dense grid and
mpmath's roots, the tanh form's largest error against a dense grid, what the view says and draws,
and the build's first state."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("activation-curves")
XS = [i / 20 for i in range(-80, 81)]  # the slider's every step


def exact_gelu(x):
    return x * 0.5 * (1 + math.erf(x / math.sqrt(2)))


def test_the_curves_match_their_definitions():
    for x in XS + [-10.0, -0.7518, 7.5]:
        assert model.relu(x) == max(0.0, x)
        assert model.gelu(x) == pytest.approx(exact_gelu(x), rel=1e-14, abs=1e-300)
        assert model.gelu_tanh(x) == pytest.approx(
            0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))), rel=1e-14, abs=1e-300)
        assert model.silu(x) == pytest.approx(x / (1 + math.exp(-x)), rel=1e-14, abs=1e-300)
    assert model.silu(-800.0) == 0.0 and model.silu(800.0) == 800.0  # no overflow at the far ends


def test_the_curves_match_torch():
    torch = pytest.importorskip("torch")
    t = torch.tensor(XS, dtype=torch.float64)
    F = torch.nn.functional
    np.testing.assert_allclose([model.gelu(x) for x in XS], F.gelu(t).numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose([model.gelu_tanh(x) for x in XS], F.gelu(t, approximate="tanh").numpy(),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose([model.silu(x) for x in XS], F.silu(t).numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose([model.relu(x) for x in XS], F.relu(t).numpy())


def grid_min(f, lo=-3.0, hi=0.0, step=1e-5):
    xs = np.arange(lo, hi, step)
    ys = np.array([f(x) for x in xs])
    k = int(np.argmin(ys))
    return xs[k], ys[k]


def test_the_minima_against_a_dense_grid_and_mpmath():
    mpmath = pytest.importorskip("mpmath")
    gx, gy = grid_min(exact_gelu)
    gmin = model.gelu_min()
    assert abs(gmin["x"] - gx) < 2e-5 and gmin["y"] <= gy + 1e-15 and gmin["y"] == pytest.approx(gy, abs=1e-9)
    root = mpmath.findroot(lambda x: mpmath.ncdf(x) + x * mpmath.npdf(x), -0.75)  # GELU's slope is 0
    assert gmin["x"] == pytest.approx(float(root), abs=1e-12)
    sx, sy = grid_min(lambda x: x / (1 + math.exp(-x)))
    smin = model.silu_min()
    assert abs(smin["x"] - sx) < 2e-5 and smin["y"] == pytest.approx(sy, abs=1e-9)
    w = float(mpmath.lambertw(1 / mpmath.e))  # the slope is 0 at x = -1 - W(1/e), where SiLU = x + 1
    assert smin["x"] == pytest.approx(-1 - w, abs=1e-12) and smin["y"] == pytest.approx(-w, abs=1e-12)
    # the facts file's rounded values (FACTS-L2-L4, F8)
    assert (model.num(gmin["y"], 3), model.num(gmin["x"], 3)) == ("−0.170", "−0.752")
    assert (model.num(smin["y"], 4), model.num(smin["x"], 4)) == ("−0.2785", "−1.2785")


def test_the_tanh_forms_largest_error_against_a_dense_grid():
    xs = np.arange(-10.0, 10.0 + 1e-9, 1e-4)
    errors = np.array([model.gelu_tanh(x) - exact_gelu(x) for x in xs])
    k = int(np.argmax(np.abs(errors)))
    found = model.tanh_form_max_error(-10, 10)
    assert abs(found["error"]) >= abs(errors[k]) - 1e-18 and found["error"] == pytest.approx(errors[k], rel=1e-6)
    assert abs(found["x"]) == pytest.approx(abs(xs[k]), abs=2e-4) and found["both_signs"]
    assert model.sci(abs(found["error"]), 2) == "4.7 × 10⁻⁴"  # FACTS-L2-L4, F8
    assert model.tanh_form_max_error(-4, 4)["error"] == pytest.approx(found["error"], rel=1e-12)
    # a range on one side: the peak there, on the right side of 0
    right = model.tanh_form_max_error(0.5, 1.5)
    xs = np.arange(0.5, 1.5 + 1e-9, 1e-5)
    errors = np.array([model.gelu_tanh(x) - exact_gelu(x) for x in xs])
    assert right["x"] == pytest.approx(xs[int(np.argmax(np.abs(errors)))], abs=2e-5) and not right["both_signs"]
    assert model.tanh_form_max_error(-1.5, -0.5)["x"] == pytest.approx(-right["x"], abs=1e-9)
    with pytest.raises(ValueError):
        model.tanh_form_max_error(1, 1)


def test_gelu_lies_above_silu_and_both_approach_x():
    assert all(model.gelu(x) >= model.silu(x) for x in XS)  # Φ(x) > σ(x) for x > 0, < for x < 0
    assert 4 - model.gelu(4) < 2e-4 and 4 - model.silu(4) < 0.08


def test_the_view_states_the_differences_with_computed_numbers():
    state = model.view(model.PARAMS)
    assert state["out"]["negative"] == (
        "负半轴：ReLU 处处是 0；GELU 最低降到 −0.170（z ≈ −0.752），SiLU 更深，降到 −0.278（z ≈ −1.278）。"
        "过了最低点再往左，两条都回到 0：z = −4 时 GELU 是 −1.3 × 10⁻⁴，SiLU 还有 −0.072。")
    assert state["out"]["positive"] == ("正半轴：GELU、SiLU 都比 z 低（ReLU 就等于 z），低的正是负半轴上同一个 |z| 处的深度：z = 4 时 ReLU 正好是 4，"
                                        "GELU 比它小 1.3 × 10⁻⁴，SiLU 小 0.072，和 z = −4 处一样。")
    assert state["out"]["tanh"] == ("两条 GELU 在图上重合：tanh 近似和精确式在 [−4, 4] 上最多差 4.7 × 10⁻⁴（z ≈ ±2.699），"
                                    "放宽到 [−10, 10] 也还是这么多。")
    assert [state["rows"][k]["value"] for k in model.KEYS] == ["0.0000", "−0.1587", "−0.1588", "−0.2689"]
    assert state["out"]["diff"] == model.sci(model.gelu_tanh(-1.0) - exact_gelu(-1.0), 2)
    assert state["announce"] == "z = −1.000：ReLU = 0.0000，GELU = −0.1587，GELU 的 tanh 近似 = −0.1588，SiLU = −0.2689。"


@pytest.mark.parametrize("x", XS)
def test_every_slider_step_reads_the_curves(x):
    state = model.view({**model.PARAMS, "x": x})
    assert [state["rows"][k]["value"] for k in model.KEYS] == [model.num(f(x), 4) for f in (
        lambda v: max(0.0, v), exact_gelu, model.gelu_tanh, lambda v: v / (1 + math.exp(-v)))]
    here = state["out"]["here"]
    if x < 0:
        assert "ReLU 把它截成 0" in here and model.small(exact_gelu(x)) in here
    elif x > 0:
        assert "是 z 的" in here and ("贴近 z" in here) == (1 / (1 + math.exp(-x)) >= 0.95)
    else:
        assert here == "z = 0：四条曲线都是 0。"


def test_jumping_to_a_minimum_says_so():
    at_gelu = model.view({**model.PARAMS, "x": model.gelu_min()["x"]})
    assert "这里正是 GELU 的最低点" in at_gelu["out"]["here"] and at_gelu["out"]["x"] == "−0.752"
    at_silu = model.view({**model.PARAMS, "x": model.silu_min()["x"]})
    assert "这里正是 SiLU 的最低点" in at_silu["out"]["here"] and at_silu["rows"]["silu"]["value"] == "−0.2785"
    assert [j["x"] for j in at_silu["jumps"]] == [model.gelu_min()["x"], model.silu_min()["x"]]


def unscale(panel, cx, cy):
    key, caption, (x0, x1), (y0, y1), ticks = [p for p in model.PANELS if p[0] == panel["key"]][0]
    return x0 + float(cx) / model.W * (x1 - x0), y1 - float(cy) / model.H * (y1 - y0)


def test_the_panels_draw_the_curves_and_the_markers_where_the_values_are():
    state = model.view({**model.PARAMS, "x": 2.5, "curves": ["silu", "relu"]})
    assert state["params"]["curves"] == ["relu", "silu"]  # CURVES order, whatever the page sends
    full, zoom = state["panels"]
    for panel in (full, zoom):
        px = model.W / (model.PANELS[0 if panel is full else 1][2][1] - model.PANELS[0 if panel is full else 1][2][0])
        py = model.H / (model.PANELS[0 if panel is full else 1][3][1] - model.PANELS[0 if panel is full else 1][3][0])
        for line in panel["lines"]:
            assert line["shown"] == (line["key"] in ("relu", "silu"))
            for pair in line["points"].split(" "):
                x, y = unscale(panel, *pair.split(","))
                f = model.FUNCTIONS[line["key"]]
                assert abs(f(x) - y) * py < 0.06 + abs(f(x + 0.05 / px) - f(x)) * py  # tenths of a unit
        for m in panel["markers"]:
            x, y = unscale(panel, m["cx"], m["cy"])
            assert x == pytest.approx(2.5, abs=0.1 / px) and y == pytest.approx(model.value(m["key"], 2.5), abs=0.1 / py)
    assert [m["shown"] for m in full["markers"]] == [True, False, False, True]
    assert not any(m["shown"] for m in zoom["markers"])  # 2.5 is outside the magnified panel
    assert [m["label"] for m in zoom["minima"]] == ["−0.170", "−0.278"] and full["minima"] == []
    assert [state["rows"][k]["data-shown"] for k in model.KEYS] == ["true", "false", "false", "true"]


def test_first_state_is_in_the_html_and_bad_params_fail():
    html = str(Renderer({"num": model.num})("activation-curves"))
    first = model.view(model.PARAMS)
    assert 'data-widget="activation-curves"' in html and html.count('type="checkbox"') == 4
    assert html.count('name="curve" value=') == 4 and html.count(" checked") == 4
    for key in ("negative", "positive", "tanh", "here"):
        assert f'data-out="{key}">{first["out"][key]}<' in html
    assert '<td class="ac-value" data-out="value">−0.2689<' in html
    assert html.count("<polyline") == 8 and html.count('data-marker="') == 8
    assert f'data-x="{model.gelu_min()["x"]!r}"' in html
    for bad in ({"x": 4.5}, {"x": float("nan")}, {"curves": ["tanh"]}, {"curves": "relu"}):
        with pytest.raises(ValueError):
            model.view({**model.PARAMS, **bad})


def test_it_stays_html_inside_a_markdown_div():
    """A lesson's stepper embeds widgets in <div markdown> (md_in_html), where a line indented by 4 or more
    spaces can turn the rest of the widget into a code block: the template keeps its lines shallower."""
    markdown = pytest.importorskip("markdown")
    html = str(Renderer({"num": model.num})("activation-curves"))
    page = markdown.markdown('<div class="stepper__fail" markdown>\n\ntext\n\n' + html + '\n\n</div>\n',
                             extensions=["md_in_html", "attr_list", "tables"])
    assert "<pre>" not in page and "&lt;" not in page
