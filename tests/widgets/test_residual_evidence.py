"""residual-evidence: the readings follow the numbers (hand-made data flips each one), and the
lab fixture's export renders."""
import json
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.facts.residual import gradient_facts, residual_facts, stream_facts  # noqa: E402
from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("residual-evidence")
FIXTURE = json.loads((ROOT / "tests/fixtures/real-model/residual/residual.json").read_text(encoding="utf-8"))


def stream(write_rms, stream_rms):
    """A trained baseline's stream: the embedding then each write, sizes as given."""
    points, total = [], 0.0
    for k, (w, s) in enumerate(zip(write_rms, stream_rms)):
        total += w * w
        points.append({"writes": k, "write": "embedding" if k == 0 else "ffn", "block": None, "stream_rms": s,
                       "write_rms": w, "rms_if_independent": math.sqrt(total)})
    return stream_facts({"variant": "baseline", "state": "trained", "seed": 0, "points": points})


def grads(name, norms):
    return gradient_facts({"variant": name, "blocks": [{"block": k + 1, "stream_grad_norm": v, "param_grad_norm": v}
                                                       for k, v in enumerate(norms)]})


@pytest.mark.parametrize("final,word", [(3.0, "互相加强"), (1.2, "抵消"), (math.sqrt(3), "相差不到一成")])
def test_the_stream_reading_compares_with_independent_writes(final, word):
    s = stream([1.0, 1.0, 1.0], [1.0, 1.5, final])  # independent: sqrt(3) = 1.73
    assert word in model.stream_reading(s)
    assert "√(2 + 1) = 1.73 倍" in model.stream_reading(s)


def test_the_gradient_reading_says_whether_block_one_was_starved():
    g = {"baseline": grads("baseline", [1.0, 0.9, 0.8, 0.8]), "no_residual": grads("no_residual", [5.5, 2, 1, 1]),
         "deep_8l": grads("deep_8l", [2, 1.5, 1.2, 1, 1, 1, 1, 1]),
         "deep_8l_no_residual": grads("x", [40, 10, 3, 1, 1, 1, 1, 1])}
    text = model.gradient_reading(g)
    assert "4 层时是 5.5 倍，8 层时是 20.0 倍" in text and "反而更大" in text and "不是它训不动的原因" in text
    g["no_residual"], g["deep_8l_no_residual"] = grads("n", [0.01, 1, 1, 1]), grads("x", [0.02] + [1] * 7)
    assert "几乎收不到学习信号" in model.gradient_reading(g) and "反而更大" not in model.gradient_reading(g)
    g["no_residual"] = grads("n", [0.5, 1, 1, 1])
    assert "同一个量级" in model.gradient_reading(g)


def collapse_variants(plain, deep_plain, curve_gap=0.001):
    def v(n, final, offset):
        return {"n_layer": n, "val_losses": [final],
                "histories": [[{"step": 200, "val_loss": 7.02 + offset}, {"step": 400, "val_loss": final}]]}
    return {"no_residual": v(4, plain, 0.0), "deep_8l_no_residual": v(8, deep_plain, curve_gap)}


def test_the_collapse_reading_names_the_unigram_only_when_the_models_sit_on_it():
    said = model.collapse_reading(collapse_variants(6.9985, 6.9985), {"unigram": 6.9949}, 0.048)
    assert "6.998、6.998" in said and "最多只差 0.004" in said and "同一个分布" in said and "相差不超过 0.001" in said
    said = model.collapse_reading(collapse_variants(6.2, 6.9985, curve_gap=0.3), {"unigram": 6.9949}, 0.048)
    assert "同一个分布" not in said and "unigram 是 6.995" in said and "相差不超过" not in said


def test_the_fixture_export_renders_both_charts():
    evidence = residual_facts(FIXTURE)["evidence"]
    html = str(Renderer({"num": model.num})("residual-evidence", data=evidence))
    assert html.count("<polyline") == 3 + len(FIXTURE["gradients"]["models"])
    state = model.view({"data": evidence})
    for chart in (state["stream"], state["gradient"]):
        for line in chart["lines"]:
            for pair in line["points"].split():
                x, y = map(float, pair.split(","))
                assert 0 <= x <= model.W and 0 <= y <= model.H


def depth_variants(base_val, deep_val, base_train=3.9, deep_train=3.9):
    def v(n_layer, val, train):
        return {"n_layer": n_layer, "val_losses": [val], "train_losses": [train]}
    return {"baseline": v(4, base_val, base_train), "deep_8l": v(8, deep_val, deep_train)}


def test_the_depth_reading_counts_only_gaps_beyond_the_floor():
    said = model.depth_reading(depth_variants(4.85, 4.70), 0.05)
    assert "有残差时，从 4 层加深到 8 层，验证集损失降了 0.150（超过噪声底线 0.050）" in said
    assert "记得更牢" not in said and "在背它" not in said and "去掉残差" not in said
    assert "反而升了 0.100" in model.depth_reading(depth_variants(4.85, 4.95), 0.05)
    assert "只变了 −0.010，在噪声底线 0.050 以内" in model.depth_reading(depth_variants(4.85, 4.84), 0.05)


def test_a_deeper_model_that_fits_only_the_training_text_is_said_to_memorise():
    said = model.depth_reading(depth_variants(4.85, 4.84, base_train=4.30, deep_train=3.76), 0.05)
    assert "训练集上的损失却从 4.300 降到 3.760" in said and "记得更牢" in said


def test_equal_depths_that_both_fit_the_training_text_are_said_to_be_limited_by_the_data():
    said = model.depth_reading(depth_variants(4.85, 4.84, base_train=3.73, deep_train=3.76), 0.05)
    assert "有残差的这两个模型，训练集上的损失（3.730、3.760）都远低于验证集上的（4.850、4.840）" in said
    assert "在背它" in said and "记得更牢" not in said
