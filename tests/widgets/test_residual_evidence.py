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
    assert "4 层时是 5.5 倍，8 层时是 20.0 倍" in text and "反而更大" in text and "不是梯度变小了" in text
    g["no_residual"], g["deep_8l_no_residual"] = grads("n", [0.01, 1, 1, 1]), grads("x", [0.02] + [1] * 7)
    assert "几乎收不到学习信号" in model.gradient_reading(g) and "反而更大" not in model.gradient_reading(g)
    g["no_residual"] = grads("n", [0.5, 1, 1, 1])
    assert "同一个量级" in model.gradient_reading(g)


def history(val, train, steps=(600, 1400), early=(6.0, 5.5)):
    """Evaluations at `steps`, the last one at (val, train); the earlier ones at `early`."""
    return [{"step": s, "val_loss": early[0], "train_loss": early[1]} for s in steps[:-1]] + \
        [{"step": steps[-1], "val_loss": val, "train_loss": train}]


def baseline(val=4.85, train=3.9, band=0.05, train_band=0.05):
    """A two-seed baseline whose seeds are `band` apart (validation) and `train_band` apart (training),
    at the end and at step 600 (where the seeds sit at 6.0 and 5.5, and the same gaps apart)."""
    return {"n_layer": 4, "params": 3_688_704, "seeds": [0, 1], "val_losses": [val, val + band],
            "train_losses": [train, train + train_band],
            "histories": [history(val, train), history(val + band, train + train_band, early=(6.0 + band, 5.5 + train_band))]}


def collapse_variants(plain, deep_plain, curve_gap=0.001):
    def v(n, final, offset):
        return {"n_layer": n, "seeds": [0], "val_losses": [final],
                "histories": [[{"step": 200, "val_loss": 7.02 + offset}, {"step": 400, "val_loss": final}]]}
    return {"baseline": baseline(band=0.048), "no_residual": v(4, plain, 0.0), "deep_8l_no_residual": v(8, deep_plain, curve_gap)}


def test_the_collapse_reading_names_the_unigram_only_when_the_models_sit_on_it():
    said = model.collapse_reading(collapse_variants(6.9985, 6.9985), {"unigram": 6.9949})
    assert "6.998、6.998" in said and "最多只差 0.004" in said and "同一个分布" in said and "相差不超过 0.001" in said
    assert "（各 1 个种子）" in said and "只有 1 个种子，高 2.149，是基线种子带 0.048 的 44.8 倍" in said
    said = model.collapse_reading(collapse_variants(6.2, 6.9985, curve_gap=0.3), {"unigram": 6.9949})
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


def depth_variants(base_val, deep_val, base_train=3.9, deep_train=3.9, stop=None):
    steps = (600,) if stop else (600, 1400)
    return {"baseline": baseline(base_val, base_train),
            "deep_8l": {"n_layer": 8, "params": 6_852_864, "seeds": [0], "val_losses": [deep_val], "train_losses": [deep_train],
                        "histories": [history(deep_val, deep_train, steps)]}}


UNIGRAM = {"unigram": 6.995}


def test_the_depth_reading_follows_the_seeds_protocol():
    said = model.depth_reading(depth_variants(4.85, 4.50), UNIGRAM)  # 7 bands
    assert "从 4 层加深到 8 层（参数从 3,688,704 到 6,852,864），验证集损失 4.500；" in said
    assert "只有 1 个种子，低 0.350，是基线种子带 0.050 的 7.0 倍（至少 5 倍）：一个种子也够，算测到了" in said
    assert "多出来的层有用" in said
    said = model.depth_reading(depth_variants(4.85, 4.70), UNIGRAM)  # 3 bands: one seed is not enough
    assert "不到单种子所需的 5 倍：分不出高下" in said and "还说不清" in said and "多出来的层有用" not in said
    assert "8 层训得动，比 unigram 低了 2.295" in said
    assert "拖了后腿" in model.depth_reading(depth_variants(4.85, 5.5), UNIGRAM)


def test_the_depth_reading_reads_training_loss_by_the_same_rule():
    said = model.depth_reading(depth_variants(4.85, 4.84, base_train=4.30, deep_train=3.76), UNIGRAM)
    assert "训练集上的损失（最后 50 批的平均）3.760；和基线比，只有 1 个种子，低 0.540，是基线种子带 0.050 的 10.8 倍" in said


def test_a_deep_run_cut_short_is_read_at_its_step():
    said = model.depth_reading(depth_variants(4.85, 5.8, deep_train=5.3, stop=600), UNIGRAM)
    assert "（参数从 3,688,704 到 6,852,864，那次训练到第 600 步停下，和基线在同一步比）" in said and "验证集损失 5.800" in said
    assert "低 0.200，是基线种子带 0.050 的 4.0 倍，不到单种子所需的 5 倍" in said  # against 6.0 at step 600
