"""gate-width: the widths against Meta's code and the configs (data/ through facts), parameter counts
counted independently, and the build's first state."""
import sys
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("gate-width")


@pytest.fixture(scope="module")
def params(facts):
    return {**model.PARAMS, **model.example(facts)}


def meta_feed_forward_width(dim, multiple_of=256):
    """meta-llama/llama llama/model.py (689c7f2), line for line: TransformerBlock passes 4 * dim."""
    hidden_dim = 4 * dim
    hidden_dim = int(2 * hidden_dim / 3)
    return multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)


def test_the_rule_is_metas_code(facts):
    rule = facts["llama2_7b"]["rule"]
    for d in list(model.D_CHOICES) + [5120, 2880, 7168, 1, 3, 65536]:
        assert model.llama_width(d, rule) == meta_feed_forward_width(d), d
    assert model.two_thirds(4096, rule) == 10922 and model.llama_width(4096, rule) == 11008


def test_the_configs_widths(facts):
    rule = facts["llama2_7b"]["rule"]
    llama, ds, anchor = facts["llama2_7b"], facts["deepseek67b"], facts["anchor"]
    assert (llama["d"], llama["d_ff"]) == (4096, 11008) == (4096, model.llama_width(4096, rule))
    assert (ds["d"], ds["d_ff"]) == (8192, 22016) == (8192, model.llama_width(8192, rule))  # DeepSeek follows it too
    assert round(ds["d_ff"] / ds["d"], 4) == 2.6875
    assert (anchor["d"], anchor["d_ff"]) == (5120, 17408) and anchor["d_ff"] / anchor["d"] == 3.4
    assert model.llama_width(5120, rule) == 13824 != anchor["d_ff"]  # the anchor is wider than parameter matching
    assert facts["llama2_7b"]["rule_width"] == model.llama_width(4096, rule)  # the fact and the widget agree


def test_eight_thirds_matches_the_plain_ffns_weights(facts):
    rule = facts["llama2_7b"]["rule"]
    for d in model.D_CHOICES:
        plain = 2 * d * (4 * d)  # two d x 4d matrices
        assert model.plain_weights(d, rule) == plain
        assert 3 * d * Fraction(8 * d, 3) == plain  # three d x 8d/3 matrices
        assert model.matched_width(d, rule) == pytest.approx(8 * d / 3, rel=1e-15)
    assert model.swiglu_weights(4096, 11008) == 135_266_304 and model.plain_weights(4096, rule) == 134_217_728


def test_llama_d_shows_every_step(params):
    state = model.view({**params, "d": 4096})
    out = state["out"]
    assert (out["d"], out["plain"], out["plain-weights"]) == ("4,096", "16,384", "134,217,728")
    assert (out["matched"], out["raw"], out["rule"], out["rule-weights"]) == ("10,922.67", "10,922", "11,008", "135,266,304")
    assert out["rule-vs-plain"] == "多 0.78%" and out["d-names"] == "（Llama 2 7B 的 d）"
    assert state["valuetext"] == "4,096（Llama 2 7B）" and state["stops"][state["index"]]["d"] == 4096
    assert [state["rows"]["model-" + str(k)]["data-current"] for k in range(3)] == ["false", "false", "true"]
    assert state["announce"] == ("d = 4,096：两矩阵 FFN 宽 16,384，权重 134,217,728；参数相同的 SwiGLU 宽 8d/3 = 10,922.67；"
                                 "Llama 的规则取 11,008，权重 135,266,304，多 0.78%。")
    assert [b["share"] for b in state["bars"]] == ["100.0", "66.7", "67.2"]


def test_the_models_cards(params):
    rows = model.view(params)["rows"]
    anchor, ds, llama = rows["model-0"], rows["model-1"], rows["model-2"]
    assert (anchor["d"], anchor["d_ff"], anchor["ratio"], anchor["matched"]) == ("5,120", "17,408", "3.40d", "13,653.33")
    assert anchor["verdict"] == "不是：规则给 13,824，它另取了宽度" and anchor["vs-plain"] == "多 27.50%"
    assert (ds["d_ff"], ds["ratio"], ds["rule"], ds["verdict"]) == ("22,016", "2.69d", "22,016", "和这条规则给的宽度相同")
    assert (llama["d_ff"], llama["weights"], llama["vs-plain"]) == ("11,008", "135,266,304", "多 0.78%")


def test_default_d_is_the_first_models_and_every_stop_works(params):
    state = model.view(params)
    assert state["params"]["d"] == 5120 and state["out"]["d-names"] == "（Qwen3.8-27B 的 d）"
    assert [s["d"] for s in state["stops"]] == sorted({*model.D_CHOICES, 5120})
    for stop in state["stops"]:
        assert model.view({**params, "d": float(stop["d"])})["params"]["d"] == stop["d"]  # a float from the browser


def test_first_state_is_in_the_html_and_bad_params_fail(facts, params):
    html = str(Renderer({"num": model.num})(
        "gate-width", models=[facts["anchor"], facts["deepseek67b"], facts["llama2_7b"]], rule=facts["llama2_7b"]["rule"]))
    assert 'data-widget="gate-width"' in html and 'data-out="rule">13,824<' in html
    assert 'data-stops="512 768 1024 1536 2048 3072 4096 5120 6144 8192"' in html and 'aria-valuetext="5,120（Qwen3.8-27B）"' in html
    assert '"published_params"' not in html  # the page carries only the fields the model reads
    assert model.page_params({**params, "models": [facts["anchor"]]})["models"] == [{"name": "Qwen3.8-27B", "d": 5120, "d_ff": 17408}]
    for bad in ({"models": None}, {"rule": None}, {"d": 0}, {"d": 100000}, {"d": 4096.5}, {"models": []},
                {"rule": {"multiple_of_dim": 4, "scale_num": 2, "scale_den": 0, "multiple_of": 256}}):
        with pytest.raises(ValueError):
            model.view({**params, **bad})
