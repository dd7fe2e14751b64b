"""norm-token: LayerNorm and RMSNorm of one token against numpy and torch, the presets' numbers, the
announcement and the build's first state."""
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("norm-token")
PRESETS = {key: x for key, label, x in model.PRESETS}
VECTORS = list(PRESETS.values()) + [[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0], [-3.5, 0.25, 7.0, -1000.0]]
SETTINGS = [(w, eps) for w in (0.0, -0.5, 0.3, 1.0) for eps in model.EPS_CHOICES + (1e-6,)]


def col(state, name):
    """One step of one norm, all 4 dimensions: col(state, "ln-out")."""
    norm, key = name.split("-", 1)
    return [state["rows"][f"{norm}-{k}"][key] for k in range(4)]


def np_layer_norm(x, w, eps):
    x = np.asarray(x, dtype=np.float64)
    return (x - x.mean()) / np.sqrt(x.var() + eps) * (1 + w)  # np.var is the biased variance


def np_rms_norm(x, w, eps):
    x = np.asarray(x, dtype=np.float64)
    return x / np.sqrt(np.mean(x ** 2) + eps) * (1 + w)


@pytest.mark.parametrize("x", VECTORS)
@pytest.mark.parametrize("w,eps", SETTINGS)
def test_both_norms_match_numpy_step_by_step(x, w, eps):
    ln, rms = model.layer_norm(x, w, eps), model.rms_norm(x, w, eps)
    a = np.asarray(x, dtype=np.float64)
    assert ln["mean"] == pytest.approx(a.mean(), abs=1e-12)
    assert ln["var"] == pytest.approx(a.var(), rel=1e-12, abs=1e-15)
    assert ln["denom"] == pytest.approx(np.sqrt(a.var() + eps), rel=1e-12)
    np.testing.assert_allclose(ln["normed"], np_layer_norm(x, 0.0, eps), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ln["out"], np_layer_norm(x, w, eps), rtol=1e-12, atol=1e-12)
    assert rms["ms"] == pytest.approx(np.mean(a ** 2), rel=1e-12, abs=1e-15)
    assert rms["denom"] == pytest.approx(np.sqrt(np.mean(a ** 2) + eps), rel=1e-12)
    np.testing.assert_allclose(rms["out"], np_rms_norm(x, w, eps), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x", VECTORS)
@pytest.mark.parametrize("w,eps", SETTINGS)
def test_both_norms_match_torch(x, w, eps):
    torch = pytest.importorskip("torch")
    t = torch.tensor(x, dtype=torch.float64)
    gain = torch.full((4,), 1 + w, dtype=torch.float64)
    ln = torch.nn.functional.layer_norm(t, (4,), weight=gain, bias=torch.zeros(4, dtype=torch.float64), eps=eps)
    np.testing.assert_allclose(model.layer_norm(x, w, eps)["out"], ln.numpy(), rtol=1e-10, atol=1e-12)
    norm = torch.nn.RMSNorm(4, eps=eps, dtype=torch.float64)  # eps inside the root, like Llama and lab/model.py
    with torch.no_grad():
        norm.weight.fill_(1 + w)
        rms = norm(t)
    np.testing.assert_allclose(model.rms_norm(x, w, eps)["out"], rms.numpy(), rtol=1e-10, atol=1e-12)
    formula = t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + eps) * (1 + w)  # lab/model.py's RMSNorm
    np.testing.assert_allclose(model.rms_norm(x, w, eps)["out"], formula.numpy(), rtol=1e-10, atol=1e-12)


def test_the_presets_numbers_the_lesson_can_quote():
    plain = model.view(model.PARAMS)
    assert plain["current"] == "plain"
    assert [plain["out"][k] for k in ("ln-mean", "ln-var", "ln-denom", "rms-ms", "rms-denom")] == \
        ["3.000", "3.500", "1.871", "12.500", "3.536"]
    assert col(plain, "ln-out") == ["−1.069", "−0.535", "0", "1.604"]
    assert col(plain, "rms-out") == ["0.283", "0.566", "0.849", "1.697"]
    assert plain["out"]["ln-std-out"] == plain["out"]["rms-rms-out"] == "1.000"
    assert plain["out"]["rms-mean-out"] == "0.849"  # RMSNorm keeps the mean

    outlier = model.view({**model.PARAMS, "preset": "outlier"})
    assert outlier["params"]["x"] == [0.5, -0.3, 0.2, 40.0] and outlier["current"] == "outlier"
    assert col(outlier, "ln-out") == ["−0.556", "−0.602", "−0.573", "1.732"]  # √3: the bound
    assert col(outlier, "rms-out") == ["0.025", "−0.015", "0.0100", "2.000"]  # √4: the bound
    assert "第 4 维，占了 Σx² 的 99.98%" in outlier["out"]["big"]

    near = model.view({**model.PARAMS, "preset": "near-zero"})
    assert near["out"]["ln-var"] == "1.5 × 10⁻⁶" and near["out"]["ln-denom"] == "0.0034"
    assert col(near, "ln-out") == ["0.295", "−0.590", "0.295", "0"]
    assert near["out"]["ln-eps"] == ("LayerNorm：ε 占了 σ² + ε 的 86.96%，分母被 ε 撑大，输出被压小："
                                     "乘增益之前，绝对值最大的一维是 −0.590，不加 ε 会是 −1.633。")
    # with a gain the note still speaks of the vector before it, and says so (the column shows it times 1 + w)
    gained = model.view({**model.PARAMS, "eps": 1.0, "w": 0.5})
    assert "乘增益之前，绝对值最大的一维是 1.633" in gained["out"]["rms-eps"]
    assert "1.633" not in col(gained, "rms-out") and "2.449" in col(gained, "rms-out")  # 1.633 x 1.5
    big = model.view({**model.PARAMS, "preset": "near-zero", "eps": 1.0})
    assert col(big, "rms-out") == ["0.0010", "−0.0020", "0.0010", "0"]
    assert "超过 99.99%" in big["out"]["rms-eps"]
    assert "不到 0.01%" in plain["out"]["ln-eps"]  # on an ordinary vector eps changes nothing visible


def test_gain_scales_the_output_and_beta_is_zero():
    half = model.view({**model.PARAMS, "w": -0.5})
    assert half["out"]["gain"] == "0.5" and col(half, "ln-out") == ["−0.535", "−0.267", "0", "0.802"]
    np.testing.assert_allclose(model.layer_norm([1, 2, 3, 6], 0.0)["out"], model.layer_norm([1, 2, 3, 6], 0.0)["normed"])
    assert "β = 0" in str(Renderer({"num": model.num})("norm-token"))


def test_zero_variance_and_zero_vector_stay_finite():
    same = model.view({**model.PARAMS, "x": [2.0, 2.0, 2.0, 2.0]})
    assert col(same, "ln-out") == ["0"] * 4 and "0/0" in same["out"]["ln-eps"]
    zero = model.view({**model.PARAMS, "x": [0.0, 0.0, 0.0, 0.0]})
    assert "0/0" in zero["out"]["rms-eps"] and "√ε = 0.0032" in zero["out"]["rms-eps"]


def test_announce_says_both_outputs():
    assert model.view(model.PARAMS)["announce"] == (
        "x = 1、2、3、6，增益 1 + w = 1.0，ε = 1 × 10⁻⁵："
        "LayerNorm 输出 −1.069、−0.535、0、1.604；RMSNorm 输出 0.283、0.566、0.849、1.697。")
    assert "ε = 0.01" in model.view({**model.PARAMS, "eps": 0.01})["announce"]


def test_first_state_is_in_the_html_and_bad_params_fail():
    html = str(Renderer({"num": model.num})("norm-token"))
    assert 'data-widget="norm-token"' in html
    for key, value in (("ln-mean", "3.000"), ("ln-var", "3.500"), ("rms-ms", "12.500"), ("rms-denom", "3.536")):
        assert f'data-out="{key}">{value}<' in html
    assert '<td class="nt-out" data-out="out">1.604<' in html and '<td class="nt-out" data-out="out">1.697<' in html
    assert 'data-preset="plain" aria-pressed="true"' in html and 'data-preset="outlier" aria-pressed="false"' in html
    assert '<option value="1e-05" selected>' in html and 'name="w"' in html and html.count('type="number"') == 4
    outlier = str(Renderer({"num": model.num})("norm-token", preset="outlier"))
    assert 'name="x4" step="any" min="-1000.0" max="1000.0" inputmode="decimal" value="40"' in outlier
    for bad in ({"x": [1.0, 2.0, 3.0]}, {"x": [1.0, 2.0, 3.0, float("nan")]}, {"x": [1.0, 2.0, 3.0, 1e6]},
                {"w": 1.5}, {"eps": 0.0}, {"preset": "nope"}):
        with pytest.raises(ValueError):
            model.view({**model.PARAMS, **bad})
