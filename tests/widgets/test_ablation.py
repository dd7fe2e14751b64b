"""The ablation chart: positions, the noise band and sentences that follow the numbers."""
import json
import re

import pytest
from support import ROOT

from course.real_model import real_model_facts
from course.widgets import load_model

model = load_model("ablation")
FIXTURE = ROOT / "tests" / "fixtures" / "real-model"


def fixture_facts():
    files = {n: json.loads((FIXTURE / f"{n}.json").read_text(encoding="utf-8"))
             for n in ("model-card", "ablation", "neurons")}
    return real_model_facts(files["model-card"], files["ablation"], files["neurons"])


def data_with(no_ffn, attn_only, base=(4.60, 4.61, 4.62, 4.60, 4.615)):
    return {
        "variants": [
            {"name": "baseline", "description": "", "n_layer": 4, "params": 3688704, "seeds": [0, 1, 2, 3, 4],
             "val_losses": list(base)},
            {"name": "no_ffn", "description": "", "n_layer": 4, "params": 1574144, "seeds": [0], "val_losses": [no_ffn]},
            {"name": "attn_only_12l", "description": "", "n_layer": 12, "params": 3673344, "seeds": [0],
             "val_losses": [attn_only]},
        ],
        "noise_floor": {"variant": "baseline", "seeds": [0, 1, 2, 3, 4], "min": min(base), "max": max(base),
                        "range": max(base) - min(base)},
        "references": {"unigram": 6.99, "bigram": 5.62}, "metric": "nats", "tokens_per_run": 1000, "date": "2026-11-29",
    }


def test_worse_variants_are_called_worse_with_their_multiple_of_the_floor():
    no_ffn, attn = model.sentences(data_with(5.205, 5.330))
    assert "去掉 FFN" in no_ffn and "升到 5.205" in no_ffn and "确实更差" in no_ffn
    assert "纯注意力 12 层" in attn and "比基线少 0.42%" in attn and "确实更差" in attn
    assert "是噪声底线 0.020 的" in no_ffn


def test_a_gap_inside_the_noise_floor_is_not_called_a_difference():
    _, attn = model.sentences(data_with(5.205, 4.605))
    assert "分不出两者的高下" in attn and "更差" not in attn


def test_a_better_variant_is_called_better():
    _, attn = model.sentences(data_with(5.205, 4.40))
    assert "反而比基线好" in attn


def test_chart_positions_lie_on_the_axis_and_the_band_covers_the_baseline_runs():
    state = model.view({"data": data_with(5.205, 5.330), "selected": "no_ffn"})
    xs = [d["x"] for row in state["chart"] for d in row["dots"]]
    assert all(0 <= x <= 100 for x in xs)
    base_xs = [d["x"] for d in state["chart"][0]["dots"]]
    band = state["band"]
    assert band["left"] == pytest.approx(min(base_xs)) and band["left"] + band["width"] == pytest.approx(max(base_xs))
    assert "去掉 FFN" in state["out"]["detail"] and "5.205" in state["out"]["detail"]


def test_fixture_export_renders():
    real = fixture_facts()
    state = model.view({"data": real["ablation"], "selected": "baseline"})
    assert len(state["sentences"]) == 2
    assert re.search(r"\d", state["out"]["detail"])


def test_a_variant_worse_than_the_bigram_reference_is_said_to_be():
    no_ffn, attn = model.sentences(data_with(5.90, 5.30))
    assert "不如只看前一个 token 的插值 bigram（5.62）" in no_ffn
    assert "bigram" not in attn
