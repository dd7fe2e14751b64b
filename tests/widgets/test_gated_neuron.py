"""gated-neuron: one neuron ŷ = w_o · act(g) · u on two tasks, 第 1 课's four reviews and graded strengths (target pn
on a 5 × 5 grid). The fit is numpy's least squares and the activations are torch's; the exact solutions give MSE 0
where the model says they exist and nothing on the sliders comes near 0 where it says none exist; no neuron
without a gate (u constant) reaches 0 on either task at any slider setting, and a product does; every sentence the
view prints is checked against independent computations over many settings, and the build's first state is the
view's."""
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
LO, HI, STEP = model.SLIDER
TICKS = np.array([LO + STEP * k for k in range(int(round((HI - LO) / STEP)) + 1)])
ERF = np.vectorize(math.erf)
ACT = {"none": lambda g: g, "relu": lambda g: np.maximum(g, 0.0), "sigmoid": lambda g: 1 / (1 + np.exp(-g)),
       "silu": lambda g: g / (1 + np.exp(-g)), "gelu": lambda g: g * 0.5 * (1 + ERF(g / math.sqrt(2)))}
GRID = [0.0, 0.25, 0.5, 0.75, 1.0]
POINTS = {  # (p, n, target), built here, not read from the model
    "reviews": np.array([(1, 0, 1), (1, 1, 0), (0, 0, 0), (0, 1, 1)], dtype=float),
    "graded": np.array([(p, n, p * n) for n in GRID for p in GRID]),
}
UNGATED = [0.0, 0.0, 1.0]


def numpy_fit(task, activation, gate, up):
    P, N, Y = POINTS[task].T
    m = ACT[activation](gate[0] * P + gate[1] * N + gate[2]) * (up[0] * P + up[1] * N + up[2])
    w = np.linalg.lstsq(m[:, None], Y, rcond=None)[0][0] if np.any(m) else 0.0  # least squares, no intercept
    return w, w * m, float(np.mean((w * m - Y) ** 2))


def batch_mse(task, activation, gates, ups):
    """The best-w_o MSE of many settings at once: gates and ups are (k, 3) arrays."""
    P, N, Y = POINTS[task].T
    g = gates[:, :1] * P + gates[:, 1:2] * N + gates[:, 2:]
    u = ups[:, :1] * P + ups[:, 1:2] * N + ups[:, 2:]
    m = ACT[activation](g) * u
    norm = (m * m).sum(1)
    w = np.where(norm > 0, (m * Y).sum(1) / np.where(norm > 0, norm, 1), 0.0)
    return ((w[:, None] * m - Y) ** 2).mean(1)


def all_gates():
    return np.array(list(itertools.product(TICKS, repeat=3)))


def test_the_four_reviews_are_lesson_ones_and_the_grid_is_pn():
    ffn, linear = load_model("ffn-xor"), load_model("linear-fit")
    assert model.REVIEWS == ffn.REVIEWS == linear.REVIEWS
    assert [(p, n, y) for _, p, n, y in model.points("reviews")] == [tuple(r) for r in POINTS["reviews"].tolist()]
    assert [(p, n, y) for _, p, n, y in model.points("graded")] == [tuple(r) for r in POINTS["graded"].tolist()]


SETTINGS = [(t, a, g, u) for t in model.TASK_KEYS for a in model.KEYS for g, u in (
    ([1.0, 1.0, 0.0], [0.0, 0.0, 1.0]), ([1.0, 1.0, 0.0], [-1.0, -1.0, 2.0]), ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
    ([-2.0, 0.75, -1.25], [1.5, -0.5, 0.25]), ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0]), ([1.0, -1.0, 0.0], [1.0, -1.0, 0.0]))]


@pytest.mark.parametrize("task,activation,gate,up", SETTINGS)
def test_the_fit_is_numpys_least_squares(task, activation, gate, up):
    found = model.fit(task, activation, gate, up)
    w, out, mse = numpy_fit(task, activation, gate, up)
    assert found["w_o"] == pytest.approx(w, rel=1e-12, abs=1e-15)
    np.testing.assert_allclose(found["out"], out, rtol=1e-12, atol=1e-14)
    assert found["mse"] == pytest.approx(mse, rel=1e-10, abs=1e-15) == model.mse(task, activation, gate, up)


def test_the_gate_reads_with_torchs_activations():
    torch = pytest.importorskip("torch")
    g = torch.tensor([-2.0, -0.5, 0.0, 1.0, 1.75], dtype=torch.float64)
    F = torch.nn.functional
    for key, ref in (("silu", F.silu(g)), ("sigmoid", torch.sigmoid(g)), ("gelu", F.gelu(g)), ("relu", F.relu(g))):
        assert [model.act(key, v) for v in g.tolist()] == pytest.approx(ref.tolist(), rel=1e-14, abs=1e-300)


def test_the_exact_solutions_give_mse_zero_where_the_model_says():
    fits = {"reviews": {"none", "relu", "silu", "gelu"}, "graded": {"none", "relu"}}
    for task in model.TASK_KEYS:
        for activation in model.KEYS:
            exact = model.exact_solution(task, activation)
            if activation not in fits[task]:
                assert exact is None
                continue
            assert exact["mse"] < 1e-30 and numpy_fit(task, activation, exact["gate"], exact["up"])[2] < 1e-30
            assert all(v in TICKS for v in exact["gate"] + exact["up"])  # the sliders can reach it
            assert model.kind(exact["up"]) == "gated"
    assert model.exact_solution("reviews", "none")["w_o"] == model.exact_solution("reviews", "relu")["w_o"] == 1.0
    assert model.exact_solution("reviews", "silu")["w_o"] == pytest.approx(1 + math.exp(-1))  # 1 / SiLU(1) = 1 + e^-1
    assert model.exact_solution("reviews", "gelu")["w_o"] == pytest.approx(1 / (0.5 * (1 + math.erf(1 / math.sqrt(2)))))
    # by hand: (p + n)(2 - p - n) is 1, 0, 0, 1 on the four reviews; p·n is the graded target
    P, N, Y = POINTS["reviews"].T
    np.testing.assert_array_equal((P + N) * (2 - P - N), Y)
    assert model.exact_names("reviews") == "ReLU、GELU、SiLU 或「无」" and model.exact_names("graded") == "ReLU 或「无」"


def test_no_neuron_without_a_gate_reaches_zero_on_the_sliders():
    """u constant: on the reviews, a monotone activation stays at 0.25 or above (step 1's proof), GELU and SiLU come
    near but not to 0; on graded strengths nothing comes below 0.004, whatever the activation."""
    gates = all_gates()
    ups = np.tile(UNGATED, (len(gates), 1))
    for task in model.TASK_KEYS:
        for activation in model.KEYS:
            values = batch_mse(task, activation, gates, ups)
            best = model.best_ungated(task, activation)
            assert best["mse"] == pytest.approx(values.min(), rel=1e-9, abs=1e-15)
            assert model.mse(task, activation, best["gate"], UNGATED) == best["mse"]
            assert values.min() > model.TINY * 1e6
            if task == "graded":
                assert values.min() > 0.004
            elif activation in ("relu", "none", "sigmoid"):
                assert values.min() > 0.2
    assert model.best_ungated("reviews", "relu")["mse"] == pytest.approx(0.25)
    assert model.mse("reviews", "gelu", model.FAR_GATE, UNGATED) < 1e-5  # GELU's dip all but splits the reviews


def test_the_gated_neurons_without_exact_solutions_stay_away_from_zero():
    """σ on the reviews; σ, SiLU and GELU on graded strengths: every whole-number setting and 20,000 random ones."""
    whole = np.arange(-2.0, 2.01, 1.0)
    settings = np.array(list(itertools.product(whole, repeat=6)))
    rng = np.random.default_rng(0)
    settings = np.vstack([settings, rng.uniform(LO, HI, (20000, 6))])
    assert batch_mse("reviews", "sigmoid", settings[:, :3], settings[:, 3:]).min() > 0.01
    for activation in ("sigmoid", "silu", "gelu"):
        assert batch_mse("graded", activation, settings[:, :3], settings[:, 3:]).min() > 1e-5


def test_the_near_misses_the_notes_claim():
    # a σ gate on the reviews: the larger the weights, the closer, never 0
    family = [model.mse("reviews", "sigmoid", [-k, -k, -k], [-k, -k, 0.0]) for k in (1.0, 2.0, 3.0, 4.0, 6.0, 8.0)]
    assert all(a > b > 0 for a, b in zip(family, family[1:]))
    gate, up = model.SIGMOID_NEAR
    assert model.mse("reviews", "sigmoid", gate, up) == family[1]
    # SiLU and GELU gates on graded strengths: as the gate's weight shrinks, the error goes to 0
    for activation in ("silu", "gelu"):
        shrinking = [model.mse("graded", activation, [w, 0.0, 0.0], [0.0, 1.0, 0.0]) for w in (0.25, 0.1, 0.01, 0.001)]
        assert all(a > b > 0 for a, b in zip(shrinking, shrinking[1:])) and shrinking[-1] < 1e-8
    # the proof's line: through the centre, along any direction, pn is not constant
    for theta in np.linspace(0, math.pi, 37):
        t = np.linspace(-0.5, 0.5, 11) * min(1 / max(abs(math.cos(theta)), 1e-9), 1 / max(abs(math.sin(theta)), 1e-9))
        p, n = 0.5 + t * math.cos(theta), 0.5 + t * math.sin(theta)
        assert np.ptp(p * n) > 0.01


def settings_sample():
    rng = np.random.default_rng(7)
    special = [list(model.PARAMS["gate"]), model.FAR_GATE, [0.0, 0.0, 0.0], [0.0, 0.0, -1.0], model.SMALL_GATE]
    ups = [UNGATED, [0.0, 0.0, -0.5], [0.0, 0.0, 0.0], [-1.0, -1.0, 2.0], [0.0, 1.0, 0.0], [1.0, -1.0, 0.0]]
    out = []
    for task in model.TASK_KEYS:
        for activation in model.KEYS:
            exact = model.exact_solution(task, activation)
            pairs = [(g, u) for g in special for u in ups]
            pairs += [(list(rng.choice(TICKS, 3)), list(rng.choice(TICKS, 3))) for _ in range(30)]
            pairs += [(list(rng.choice(TICKS, 3)), [0.0, 0.0, float(rng.choice(TICKS))]) for _ in range(15)]
            if exact:
                pairs.append((exact["gate"], exact["up"]))
            out += [(task, activation, [float(v) for v in g], [float(v) for v in u]) for g, u in pairs]
    return out


def test_every_sentence_holds_in_every_setting():
    for task, activation, gate, up in settings_sample():
        state = model.view({"task": task, "activation": activation, "gate": gate, "up": up})
        out = state["out"]
        w, outputs, mse = numpy_fit(task, activation, gate, up)
        exact = mse < 1e-20
        constant_u = up[0] == 0 and up[1] == 0
        baseline = float(np.mean(POINTS[task][:, 2] ** 2))
        where = (task, activation, gate, up)
        # the verdict: exact, or the MSE as numbers say it
        if exact:
            assert out["verdict"] == "输出都等于目标：精确解，MSE = 0。", where
        else:
            assert out["verdict"] == "MSE = " + model.mse_text(mse) + "（全部输出 0 时是 " + f"{baseline:.3f}）。", where
            assert model.mse_text(mse) != "0.000" and mse > 0
        # which neuron this is
        if constant_u and up[2] == 0:
            assert out["unit"] == "u 恒为 0" and out["reason"].startswith("u 恒为 0") and not np.any(outputs), where
        elif constant_u:
            assert "不带门" in out["unit"] and out["reason"].startswith("u 是常数") and not exact, where
            if task == "reviews" and activation in ("gelu", "silu"):
                far = numpy_fit(task, activation, model.FAR_GATE, UNGATED)[2]
                assert "MSE 是 " + model.mse_text(far) in out["reason"] and "不是单调的" in out["reason"]
            elif task == "reviews":
                assert "第一步证明了这样分不开四句评价" in out["reason"]
            else:
                assert "换什么激活、取什么权重都有到不了 0 的误差" in out["reason"] and "在整个正方形上" in out["reason"]
        else:
            assert "不带门" not in out["unit"] and ("门过" in out["unit"] or "门不过激活" in out["unit"]), where
            has_exact = model.exact_solution(task, activation) is not None
            if exact:
                assert out["reason"].startswith("这组读数正好给出目标") and has_exact, where
            elif has_exact:
                assert out["reason"].startswith("这个组合有精确解"), where
            else:
                assert "没有精确解" in out["reason"], where
        # the button says what it does
        assert state["exact_available"] == (model.exact_solution(task, activation) is not None)
        assert ("按钮不可用" in out["button-note"]) == (not state["exact_available"])
        # the table shows the fit
        if task == "reviews":
            shown = [state["rows"][name]["out"] for name, *_ in model.REVIEWS]
        else:
            shown = [state["rows"]["n" + str(i)]["p" + str(j)] for i in range(5) for j in range(5)]
        assert shown == [model.num(v, 3) for v in outputs], where


def test_the_view_says_what_the_model_computes():
    first = model.view(model.PARAMS)
    w, out, mse = numpy_fit("reviews", "relu", [1.0, 1.0, 0.0], UNGATED)
    assert first["params"] == {"task": "reviews", "activation": "relu", "gate": [1.0, 1.0, 0.0], "up": UNGATED}
    assert first["out"]["formula"] == "ŷ = " + model.num(w, 3) + " · ReLU(p + n) · (1)"
    assert first["out"]["unit"] == "不带门的 ReLU 神经元"
    # The first state's output has no pn term, and the page says so rather than calling it the general form.
    assert first["out"]["poly"].endswith("这组读数的 pn 系数 δ 是 0，目标 p + n − 2pn 的是 −2。")
    assert "它就不再是不带门的神经元" in first["out"]["button-note"]
    assert first["out"]["verdict"] == "MSE = " + model.num(mse, 3) + "（全部输出 0 时是 0.500）。"
    assert [first["rows"][name]["out"] for name, *_ in model.REVIEWS] == [model.num(v, 3) for v in out]
    exact = model.view({"task": "reviews", "activation": "silu", "gate": [1.0, 1.0, 0.0], "up": [-1.0, -1.0, 2.0]})
    assert exact["out"]["verdict"] == "输出都等于目标：精确解，MSE = 0。"
    assert exact["out"]["poly"].startswith("在这四句上，输出可以写成 ŷ = p + n − 2pn（")
    assert "pn 系数 δ 是 −2，" in exact["out"]["poly"] and "不带门" not in exact["out"]["button-note"]
    assert {r["data-exact"] for r in exact["rows"].values()} == {"true"}
    assert exact["announce"] == "SwiGLU（门过 SiLU）：g = p + n，u = −p − n + 2，w_o = 1.368：精确解，MSE = 0。"
    assert "SiLU(1) = 0.731" in exact["out"]["exact-note"] and "1.368" in exact["out"]["exact-note"]
    sigmoid = model.view({**model.PARAMS, "activation": "sigmoid", "up": [1.0, 0.0, 0.0]})
    assert sigmoid["exact"] is None and not sigmoid["exact_available"]
    assert model.mse_text(model.mse("reviews", "sigmoid", model.EXACT_GATE, model.EXACT_UP)) in sigmoid["out"]["limit-note"]
    graded = model.view({"task": "graded", "activation": "relu", "gate": [1.0, 0.0, 0.0], "up": [0.0, 1.0, 0.0]})
    assert graded["out"]["unit"] == "ReGLU（门过 ReLU）" and graded["out"]["target"] == "目标 y = pn"
    assert graded["out"]["verdict"] == "输出都等于目标：精确解，MSE = 0。"
    assert graded["rows"]["n2"]["p2"] == "0.250" and graded["grid"]["rows"][2]["cells"][2]["target"] == "0.25"
    assert model.reading_text([0.25, -1.0, 2.0]) == "0.25p − n + 2" and model.mse_text(1.9e-6) == "1.9 × 10⁻⁶"


def test_first_state_is_in_the_html_and_bad_params_fail():
    html = str(Renderer({"num": model.num})("gated-neuron"))
    first = model.view(model.PARAMS)
    assert 'data-widget="gated-neuron"' in html and html.count('type="range"') == 6
    assert 'value="relu" checked' in html and 'value="reviews" checked' in html and 'data-action="exact">' in html
    assert 'data-table="reviews">' in html and 'data-table="graded" hidden>' in html
    for key in ("verdict", "formula", "reason"):
        assert f'data-out="{key}">{first["out"][key]}<' in html
    sigmoid = str(Renderer({"num": model.num})("gated-neuron", task="graded", activation="sigmoid"))
    assert 'data-action="exact" disabled>' in sigmoid and 'data-table="reviews" hidden>' in sigmoid
    for bad in ({"activation": "tanh"}, {"task": "xor"}, {"gate": [1.0, 1.0]}, {"up": [0.0, 0.0, 2.5]},
                {"gate": [float("nan"), 0, 0]}):
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
