"""swiglu-clamp: fp16's and bf16's largest numbers against their bit patterns, the product and the overflow
points against an independent SiLU, the clamps against gpt-oss's reference function and DeepSeek-V4's form,
and the build's first state."""
import math
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("swiglu-clamp")


@pytest.fixture(scope="module")
def params(facts):
    return {**model.PARAMS, **model.example(facts)}


def forms(facts):
    return {f["key"]: f for f in facts["clamps"]["forms"]}


def half(bits):
    return struct.unpack("<e", bits.to_bytes(2, "little"))[0]


def bfloat16(bits):
    """A bfloat16 is the top half of a float32."""
    return struct.unpack(">f", (bits << 16).to_bytes(4, "big"))[0]


def test_format_maxima_are_the_largest_bit_patterns(facts):
    assert model.fp16_max() == half(0x7BFF) == 65504.0 and math.isinf(half(0x7C00))  # PyTorch's Half max bits
    assert model.bf16_max() == bfloat16(0x7F7F) == 3.3895313892515355e38 and math.isinf(bfloat16(0x7F80))
    assert model.float_max(8, 23) == struct.unpack(">f", bytes.fromhex("7f7fffff"))[0]  # float32
    assert model.float_max(11, 52) == sys.float_info.max
    assert model.fp16_max() == facts["fp16"]["max"] and model.bf16_max() == facts["bf16"]["max"]
    assert model.fp8_e4m3_max() == facts["fp8_e4m3"]["max"] == 448.0  # OCP E4M3FN: S.1111.110 = 1.75 * 2^8
    assert [f["formula"] for f in model.view({**model.PARAMS, "clamps": []})["formats"]] == ["(2 − 2⁻¹⁰)·2¹⁵", "(2 − 2⁻⁷)·2¹²⁷"]


def test_silu_and_where_the_product_overflows(facts):
    xs = np.concatenate([np.linspace(-50, 50, 1001), np.logspace(-3, 20, 200)])
    np.testing.assert_allclose([model.silu(x) for x in xs], xs / (1 + np.exp(-xs)), rtol=1e-13, atol=1e-300)
    x16 = model.overflow_x_fp16()
    assert x16 == pytest.approx(facts["fp16"]["silu_overflow_x"], rel=1e-12) and round(x16, 2) == 255.94
    assert model.silu(x16 * (1 - 1e-9)) * x16 * (1 - 1e-9) <= 65504 < model.silu(x16 * (1 + 1e-9)) * x16 * (1 + 1e-9)
    x_bf = model.overflow_x_bf16()
    assert x_bf == pytest.approx(math.sqrt(model.bf16_max()), rel=1e-12)  # SiLU(x) = x there
    assert round(model.silu(10.0) * 10.0, 3) == round(facts["silu10_times10"], 3) == 99.995


def gpt_oss_swiglu(x_glu, x_linear, alpha=1.702, limit=7.0):
    """openai/gpt-oss gpt_oss/torch/model.py swiglu(), in numpy: the gate clamped from above, the linear branch to
    [-limit, limit] plus 1."""
    x_glu = np.minimum(x_glu, limit)
    x_linear = np.clip(x_linear, -limit, limit)
    return x_glu * (1 / (1 + np.exp(-alpha * x_glu))) * (x_linear + 1)


def deepseek_v4_swiglu(gate, up, limit=10.0):
    """transformers modeling_deepseek_v4.py: gate.clamp(max=limit), up.clamp(-limit, limit), silu(gate) * up."""
    gate = np.minimum(gate, limit)
    return gate / (1 + np.exp(-gate)) * np.clip(up, -limit, limit)


def test_clamps_against_the_reference_forms(facts):
    f = forms(facts)
    g, y = np.meshgrid(np.linspace(-40, 40, 161), np.linspace(-40, 40, 161))
    for key, reference in (("gpt-oss", gpt_oss_swiglu), ("deepseek-v4", deepseek_v4_swiglu)):
        form = {k: float(v) if k in ("limit", "alpha", "linear_bias") else v for k, v in f[key].items()}
        ours = np.vectorize(lambda a, b: model.clamped(a, b, form)["value"])(g, y)
        np.testing.assert_allclose(ours, reference(g, y), rtol=1e-12, atol=1e-12)
        lo, hi = model.clamp_range(form["limit"], form["alpha"], form["linear_bias"])
        assert lo <= ours.min() + 1e-9 and ours.max() <= hi + 1e-9 and ours.max() == pytest.approx(hi, rel=1e-12)
    assert round(model.clamped_max(7.0, 1.702, 1.0), 4) == 55.9996  # 7·σ(1.702·7)·(7 + 1)
    assert model.clamp_range(7.0, 1.702, 1.0)[0] == pytest.approx(7 / (1 + math.exp(-1.702 * 7)) * -6, rel=1e-15)
    assert model.clamped_max(10.0) == pytest.approx(model.silu(10.0) * 10.0, rel=1e-15)  # DeepSeek-V4: 99.9955
    assert model.clamp_range(10.0) == pytest.approx((-model.clamped_max(10.0), model.clamped_max(10.0)), rel=1e-15)


def test_clamps_against_gpt_oss_in_torch(facts):
    torch = pytest.importorskip("torch")

    def swiglu(x, alpha: float = 1.702, limit: float = 7.0):  # verbatim from openai/gpt-oss gpt_oss/torch/model.py
        x_glu, x_linear = x[..., ::2], x[..., 1::2]
        x_glu = x_glu.clamp(min=None, max=limit)
        x_linear = x_linear.clamp(min=-limit, max=limit)
        out_glu = x_glu * torch.sigmoid(alpha * x_glu)
        return out_glu * (x_linear + 1)

    pairs = [(-300.0, 5.0), (-1.3, 50.0), (0.5, -2.0), (7.0, 7.0), (300.0, 300.0), (1e20, -1e20), (3.0, -0.5)]
    x = torch.tensor([v for pair in pairs for v in pair], dtype=torch.float64)
    form = dict(forms(facts)["gpt-oss"], linear_bias=1.0)
    np.testing.assert_allclose([model.clamped(a, b, form)["value"] for a, b in pairs], swiglu(x).numpy(), rtol=1e-12)


def test_act_min_is_silus_minimum():
    assert round(model.act_min(), 4) == -0.2785  # F8: at x ≈ −1.2785
    assert model.act_min(1.702) == pytest.approx(model.act_min() / 1.702, rel=1e-15)
    u = np.linspace(-3, 0, 300001)
    assert model.act_min() == pytest.approx((u / (1 + np.exp(-u))).min(), abs=1e-10)


def test_views_the_lesson_can_quote(params):
    first = model.view(params)
    assert (first["out"]["g"], first["out"]["silu"], first["out"]["product"]) == ("20", "20.0000", "400.00")
    # no clamp's cap: the opening state must not look clamped (99.9955 is DeepSeek-V4's cap)
    assert first["out"]["product"] not in [model.clamp_text(model.clamped_max(f["limit"], f["alpha"], f["linear_bias"]))
                                           for f in first["params"]["clamps"]]
    assert model.view({**params, "g": 10.0})["out"]["product"] == "99.9955"
    assert first["rows"]["fmt-fp16"]["data-over"] == "false" and first["out"]["clamped"] == "—（先选一种截断）"
    assert first["thresholds"] == {"fp16": "255.94", "bf16": "1.84 × 10¹⁹"}
    assert [c["label"] for c in first["choices"]] == ["不截断", "gpt-oss-120b（7）", "DeepSeek-V4（10）"]
    big = model.view({**params, "g": 300.0, "clamp": "gpt-oss"})
    assert big["out"]["product"] == "90,000" and big["rows"]["fmt-fp16"] == {"verdict": "超过了：在这种格式里变成 inf（溢出）", "data-over": "true"}
    assert big["rows"]["fmt-bf16"]["data-over"] == "false" and big["out"]["clamped"] == "55.9996"
    assert big["out"]["clamp-range"] == "截断后乘积只能落在 [−41.9997, 55.9996]，最大 55.9996，离 fp16 的 65,504 还远。"
    assert big["announce"] == "g = 300，u = 300：SiLU(g) · u = 90,000；fp16 溢出，bf16 装得下；gpt-oss-120b 截断后 = 55.9996。"
    huge = model.view({**params, "g": 2e19, "clamp": "deepseek-v4"})
    assert huge["rows"]["fmt-bf16"]["data-over"] == "true" and huge["out"]["clamped"] == "99.9955"
    assert huge["out"]["g-note"].startswith("g 本身就超过了 fp16")
    apart = model.view({**params, "tied": False, "g": -5.0, "u": 1e20})
    assert apart["params"]["u"] == 1e20 and apart["out"]["product"] == "−3.346 × 10¹⁸" and not apart["marker"]["show"]
    assert apart["stops"][apart["u_index"]] == 1e20 and apart["stops"][apart["g_index"]] == -5.0


def test_the_chart_stays_in_its_frame(params):
    for extra in ({}, {"clamp": "gpt-oss"}, {"tied": False, "u": 0.0, "clamp": "deepseek-v4"}, {"tied": False, "u": -1e20}):
        c = model.view({**params, **extra})["chart"]
        for line in ("plain", "clamped"):
            points = [tuple(map(float, p.split(","))) for p in c[line].split()] if c[line] else []
            assert len(points) in (0, model.SAMPLES + 1)
            assert all(0 <= px <= c["w"] and 0 <= py <= c["h"] for px, py in points)
    plain = model.view(params)["chart"]
    assert plain["clamped"] == "" and [line["name"] for line in plain["lines"]] == ["fp16", "bf16"]
    assert float(plain["lines"][0]["y"]) > float(plain["lines"][1]["y"])  # fp16's limit sits lower


def test_first_state_is_in_the_html_and_bad_params_fail(facts, params):
    html = str(Renderer({"num": model.num})("swiglu-clamp", clamps=facts["clamps"]["forms"]))
    assert 'data-widget="swiglu-clamp"' in html and 'data-out="product">400.00<' in html
    assert 'value="none" checked' in html and 'name="u"' in html and "disabled" in html
    assert "(2 − 2⁻¹⁰)·2¹⁵ = 65,504" in html and "(2 − 2⁻⁷)·2¹²⁷ = 3.39 × 10³⁸" in html
    for bad in ({"clamps": None}, {"clamp": "nope"}, {"g": float("nan")}, {"g": 1e21}, {"tied": False, "u": float("inf")},
                {"clamps": [dict(facts["clamps"]["forms"][0], gate_clamp="both")]}):
        with pytest.raises(ValueError):
            model.view({**params, **bad})


def test_fp8_e4m3_max_is_pytorchs():
    torch = pytest.importorskip("torch")
    assert model.fp8_e4m3_max() == torch.finfo(torch.float8_e4m3fn).max
