"""residual-evidence: the readings follow the numbers and seeds protocol v2 (hand-made data flips
each one: inside the interval, one seed beyond it, two seeds measured, a failed baseline run left
out), and the lab fixture's export renders."""
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


OFFSETS = (0.0, 0.02, -0.02, 0.01, -0.01)  # the hand-made baseline's five seeds around its loss, at every step
# Their pooled SD is 0.0158 (4 degrees of freedom): one seed against the five reads ± 0.048, two single
# runs against each other ± 0.062, one run against the unigram line ± 0.044.


def history(val, train, steps=(400, 1400), early=(6.0, 5.5)):
    """Evaluations at `steps`, the last one at (val, train); the earlier ones at `early`."""
    return [{"step": s, "val_loss": early[0], "train_loss": early[1]} for s in steps[:-1]] + \
        [{"step": steps[-1], "val_loss": val, "train_loss": train}]


def baseline(val=4.85, train=3.9, offsets=OFFSETS):
    """A baseline whose seeds sit at `offsets` from (val, train) at the end and from (6.0, 5.5) at step 400."""
    return {"n_layer": 4, "params": 3_688_704, "seeds": list(range(len(offsets))),
            "val_losses": [val + d for d in offsets], "train_losses": [train + d for d in offsets],
            "histories": [history(val + d, train + d, early=(6.0 + d, 5.5 + d)) for d in offsets]}


def one_run(n, final, at_400, stop=1400):
    return {"n_layer": n, "params": 3_688_704 if n == 4 else 6_852_864, "seeds": [0], "val_losses": [final],
            "train_losses": [final], "histories": [[{"step": 400, "val_loss": at_400, "train_loss": at_400}] +
                                                   ([{"step": 1400, "val_loss": final, "train_loss": final}] if stop == 1400 else [])]}


def collapse_variants(plain, deep_plain, curve_gap=0.001, offsets=OFFSETS, deep=None):
    out = {"baseline": baseline(offsets=offsets), "no_residual": one_run(4, plain, 7.02),
           "deep_8l_no_residual": one_run(8, deep_plain, 7.02 + curve_gap)}
    if deep is not None:  # the 8-layer run with skips, stopped at step 400
        out["deep_8l"] = one_run(8, deep, deep, stop=400)
    return out


UNI = {"unigram": 6.9949}


def test_the_collapse_reading_names_the_unigram_only_when_the_models_sit_on_it():
    said = model.collapse_reading(collapse_variants(6.9986, 6.9986), UNI)
    assert "6.999、6.999" in said and "最多只差 0.004" in said and "同一个分布" in said and "相差不超过 0.001，每一步都在误差之内" in said
    assert "（各 1 个种子）" in said and "4 层去掉残差和 4 层基线的平均比，高 2.149 ± 0.048（1、5 个种子）：一个种子，待第二个种子确认" in said
    assert "种子带" not in said and "倍" not in said and "失败的训练" not in said
    said = model.collapse_reading(collapse_variants(6.2, 6.9986, curve_gap=0.3), UNI)
    assert "同一个分布" not in said and "unigram 是 6.995" in said and "相差不超过" not in said
    said = model.collapse_reading(collapse_variants(6.9986, 6.9986, curve_gap=0.3), UNI)  # apart at step 400
    assert "同一个分布" in said and "相差不超过" not in said


def test_the_collapse_reading_leaves_a_failed_baseline_run_out_and_pairs_eight_layers_at_their_step():
    said = model.collapse_reading(collapse_variants(6.9986, 6.9986, offsets=OFFSETS + (0.4,), deep=6.0), UNI)
    assert "高 2.149 ± 0.048（1、5 个种子）：一个种子，待第二个种子确认（失败的训练不计入：基线种子 5，5.250）" in said
    assert ("8 层去掉残差和 8 层有残差只能在第 400 步比（有残差的那次训练到那里停下），"
            "高 1.021 ± 0.062（各 1 个种子）：一个种子，待第二个种子确认") in said


def test_the_no_skip_models_sit_on_the_unigram_within_one_runs_interval():
    assert model.no_skip_on_unigram(collapse_variants(6.9986, 7.03), UNI)  # 0.035 off: inside ± 0.044
    assert not model.no_skip_on_unigram(collapse_variants(6.9986, 7.05), UNI)


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
    """deep_val, deep_train: one value per seed of the 8-layer run (a float: one seed)."""
    vals = deep_val if isinstance(deep_val, list) else [deep_val]
    trains = deep_train if isinstance(deep_train, list) else [deep_train] * len(vals)
    steps = (400,) if stop else (400, 1400)
    return {"baseline": baseline(base_val, base_train),
            "deep_8l": {"n_layer": 8, "params": 6_852_864, "seeds": list(range(len(vals))), "val_losses": vals,
                        "train_losses": trains, "histories": [history(v, t, steps) for v, t in zip(vals, trains)]}}


UNIGRAM = {"unigram": 6.995}


def test_the_depth_reading_follows_seeds_protocol_v2():
    said = model.depth_reading(depth_variants(4.85, 4.50), UNIGRAM)
    assert "从 4 层加深到 8 层（参数从 3,688,704 到 6,852,864），验证集损失 4.500，基线的平均 4.850；" in said
    assert "和基线比，低 0.350 ± 0.048（1、5 个种子）：一个种子，待第二个种子确认" in said
    assert "这一个种子里更深的模型更低，要第二个种子确认" in said and "多出来的层有用" not in said
    said = model.depth_reading(depth_variants(4.85, 4.87), UNIGRAM)
    assert "高 0.020 ± 0.048（1、5 个种子）：在误差之内，分不出" in said and "在第 1,400 步，8 层和 4 层分不出" in said
    assert "8 层训得动，比 unigram 低了 2.125（一次训练的误差 ±0.044）" in said and "还说不清" not in said
    assert "这一个种子里更深的模型反而落后" in model.depth_reading(depth_variants(4.85, 5.5), UNIGRAM)


def test_two_seeds_of_the_deep_run_can_measure_it():
    said = model.depth_reading(depth_variants(4.85, [4.50, 4.52]), UNIGRAM)
    assert "低 0.340 ±" in said and "（2、5 个种子）：测到" in said and "多出来的层有用" in said


def test_the_depth_reading_reads_training_loss_by_the_same_rule():
    said = model.depth_reading(depth_variants(4.85, 4.84, base_train=4.30, deep_train=3.76), UNIGRAM)
    assert "训练集上的损失（最后 50 批的平均）3.760，基线 4.300；低 0.540 ± 0.048（1、5 个种子）：一个种子，待第二个种子确认" in said


def test_a_deep_run_cut_short_is_read_at_its_step():
    said = model.depth_reading(depth_variants(4.85, 5.8, deep_train=5.3, stop=400), UNIGRAM)
    assert "（参数从 3,688,704 到 6,852,864，那次训练到第 400 步停下，和基线在同一步比）" in said and "验证集损失 5.800" in said
    assert "基线的平均 6.000（这一步的健康检查没有认出失败的训练，基线 5 次都计入）；和基线比，低 0.200 ± 0.048" in said
