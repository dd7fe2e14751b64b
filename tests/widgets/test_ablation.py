"""The ablation chart: positions, each comparison's noise floor, perplexities, learning
curves, and sentences that follow the numbers."""
import json
import math
import re

import pytest
from support import ROOT

from course.facts.real_model import real_model_facts
from course.widgets import load_model

model = load_model("ablation")
FIXTURE = ROOT / "tests" / "fixtures" / "real-model"
BASE = (4.60, 4.61, 4.62)


def fixture_facts():
    files = {n: json.loads((FIXTURE / f"{n}.json").read_text(encoding="utf-8"))
             for n in ("model-card", "ablation", "neurons")}
    return real_model_facts(files["model-card"], files["ablation"], files["neurons"])


def variant(name, n_layer, params, losses, curve_end=None):
    """A variant whose every seed's curve falls from 6.0 to (curve_end or its loss) over 3 evaluations."""
    histories = [[{"tokens": 100, "val_loss": 6.0}, {"tokens": 200, "val_loss": 5.0},
                  {"tokens": 300, "val_loss": curve_end if curve_end is not None else x}] for x in losses]
    return {"name": name, "description": "", "n_layer": n_layer, "params": params,
            "seeds": list(range(len(losses))), "val_losses": list(losses), "histories": histories}


def data_with(linear, no_ffn, attn_only, base=BASE, attn_end=None):
    return {
        "variants": [
            variant("baseline", 4, 3688704, base),
            variant("linear_ffn", 4, 3688704, linear),
            variant("no_ffn", 4, 1574144, no_ffn),
            variant("attn_only_12l", 12, 3673344, attn_only, attn_end),
        ],
        "references": {"unigram": 6.99, "bigram": 5.62}, "metric": "nats", "tokens_per_run": 300, "date": "2026-11-29",
    }


def test_worse_variants_are_called_worse_with_their_multiple_of_the_comparisons_floor():
    linear, no_ffn, attn = model.sentences(data_with((4.90, 4.92, 4.94), (5.205,), (5.330,)))
    assert "线性 FFN" in linear and "和基线一个不差" in linear and "3 个种子" in linear
    # floor of linear vs baseline = the larger seed range: max(0.02, 0.04) = 0.04; gap 0.31 = 7.8 x
    assert "高出 0.310" in linear and "噪声底线 0.040 的 7.8 倍" in linear and "确实更差" in linear
    assert "去掉 FFN" in no_ffn and "升到 5.205" in no_ffn and "只跑了 1 次" in no_ffn
    assert "噪声底线 0.020 的" in no_ffn  # one run: the baseline's range is the floor
    assert "纯注意力 12 层" in attn and "比基线少 0.42%" in attn


def test_every_loss_comes_with_its_perplexity():
    linear, _, _ = model.sentences(data_with((4.90, 4.92, 4.94), (5.205,), (5.330,)))
    assert f"困惑度 {round(math.exp(4.92))}" in linear
    state = model.view({"data": data_with((4.90, 4.92, 4.94), (5.205,), (5.330,)), "selected": "baseline"})
    assert state["chart"][0]["perplexity"] == str(round(math.exp(4.61)))
    assert state["references"]["bigram_ppl"] == str(round(math.exp(5.62)))


def test_a_gap_inside_the_noise_floor_is_not_called_a_difference():
    linear, _, _ = model.sentences(data_with((4.60, 4.63, 4.62), (5.205,), (5.3,)))
    assert "分不出两者的高下" in linear and "更差" not in linear


def test_a_variant_near_the_unigram_is_said_to_ignore_the_context():
    """6.99 is the unigram, 5.62 the bigram: 6.90 is nearer the unigram, 5.70 nearer the bigram."""
    _, near_unigram, near_bigram = model.sentences(data_with((4.9,), (6.90,), (5.70,)))
    assert "unigram（6.99）比离插值 bigram（5.62）还近" in near_unigram and "几乎没有用上前文" in near_unigram
    assert "不如只看前一个 token 的插值 bigram（5.62）" in near_bigram and "unigram" not in near_bigram


def test_a_better_variant_is_called_better():
    _, _, attn = model.sentences(data_with((4.9,), (5.205,), (4.40,)))
    assert "反而比基线好" in attn


def test_a_curve_still_falling_at_the_end_is_said_to_be_unfinished():
    data = data_with((4.9,), (5.205,), (5.33,), attn_end=None)
    data["variants"][3]["histories"] = [[{"tokens": 100, "val_loss": 6.2}, {"tokens": 200, "val_loss": 5.8},
                                         {"tokens": 300, "val_loss": 5.33}]]
    data["variants"][0]["histories"] = [[{"tokens": 100, "val_loss": 5.0}, {"tokens": 200, "val_loss": 4.615},
                                         {"tokens": 300, "val_loss": x}] for x in BASE]
    said = dict(zip([v["name"] for v in data["variants"]], model.curve_sentences(data)))
    assert "从 5.800 降到 5.330" in said["attn_only_12l"] and "还没学完" in said["attn_only_12l"]
    assert "是基线同一段的 94.0 倍" in said["attn_only_12l"]  # 0.47 against the baseline's 0.005
    assert "比噪声底线 0.020 还大" in said["attn_only_12l"]  # one run: its fall against the comparison's floor
    assert "有的在这一段已经不降了" in said["baseline"] and "基本不再进步" in said["baseline"]  # 4.615 -> 4.62


def falling(end_losses, fall):
    """One seed's curve per final loss, falling by `fall` over its last interval."""
    return [[{"tokens": 100, "val_loss": 6.0}, {"tokens": 200, "val_loss": x + f}, {"tokens": 300, "val_loss": x}]
            for x, f in zip(end_losses, fall)]


def test_seeds_falling_together_count_as_still_learning_however_far_apart_their_levels():
    """Judged within each run: three seeds 0.10 apart in level, each still falling by about 0.04."""
    data = data_with((4.9,), (5.205,), (5.60, 5.65, 5.70))
    data["variants"][3]["histories"] = falling((5.60, 5.65, 5.70), (0.040, 0.045, 0.035))
    data["variants"][0]["histories"] = falling(BASE, (0.02, -0.01, 0.01))
    said = dict(zip([v["name"] for v in data["variants"]], model.curve_sentences(data)))
    assert "3 个种子在这一段都在降，降幅彼此只差 0.010" in said["attn_only_12l"]
    assert "还没学完" in said["attn_only_12l"] and "是基线同一段的 6.0 倍" in said["attn_only_12l"]
    data["variants"][3]["histories"] = falling((5.60, 5.65, 5.70), (0.010, 0.050, 0.015))  # spread 0.04 > mean 0.025
    said = dict(zip([v["name"] for v in data["variants"]], model.curve_sentences(data)))
    assert "降幅彼此相差 0.040，不比平均降幅小" in said["attn_only_12l"] and "基本不再进步" in said["attn_only_12l"]


def test_chart_positions_lie_on_the_axis_and_the_band_covers_the_baseline_runs():
    state = model.view({"data": data_with((4.9,), (5.205,), (5.330,)), "selected": "no_ffn"})
    xs = [d["x"] for row in state["chart"] for d in row["dots"]]
    assert all(0 <= x <= 100 for x in xs)
    base_xs = [d["x"] for d in state["chart"][0]["dots"]]
    band = state["band"]
    assert band["left"] == pytest.approx(min(base_xs)) and band["left"] + band["width"] == pytest.approx(max(base_xs))
    assert "去掉 FFN" in state["out"]["detail"] and "5.205" in state["out"]["detail"]


def test_curves_lie_inside_their_box():
    curves = model.view({"data": data_with((4.9,), (5.205,), (5.330,)), "selected": "baseline"})["curves"]
    assert len(curves["lines"]) == 4
    for line in curves["lines"]:
        for pair in line["points"].split():
            x, y = map(float, pair.split(","))
            assert 0 <= x <= curves["w"] and 0 <= y <= curves["h"]


def test_fixture_export_renders_one_sentence_per_variant():
    real = fixture_facts()
    state = model.view({"data": real["ablation"], "selected": "baseline"})
    assert len(state["sentences"]) == len(real["ablation"]["variants"]) - 1
    assert len(state["curve_sentences"]) == len(real["ablation"]["variants"])
    assert re.search(r"\d", state["out"]["detail"])


def test_a_variant_worse_than_the_bigram_reference_is_said_to_be():
    _, no_ffn, attn = model.sentences(data_with((4.9,), (5.90,), (5.30,)))
    assert "不如只看前一个 token 的插值 bigram（5.62）" in no_ffn
    assert "bigram" not in attn


def test_a_curve_that_rose_at_the_end_is_not_said_to_have_fallen():
    data = data_with((4.9,), (5.205,), (5.33,))
    data["variants"][3]["histories"] = [[{"tokens": 100, "val_loss": 6.0}, {"tokens": 200, "val_loss": 5.32},
                                         {"tokens": 300, "val_loss": 5.33}]]
    said = model.curve_sentences(data)[3]
    assert "从 5.320 变到 5.330，没有再降" in said and "降了" not in said and "基本不再进步" in said


# --- the lesson's own reading of the FFN chart (lesson 1 shows the widget with readings=False) ---

def fitted(name, n_layer, params, val, train, gaps=(0.1, 0.2, 0.3, 0.4)):
    """A variant whose seeds end at `val`/`train`, its train/val gap per evaluation = `gaps`."""
    n = len(gaps)  # validation falls by 0.1 per evaluation and ends at the seed's loss
    histories = [[{"step": 100 * (i + 1), "tokens": 100 * (i + 1), "val_loss": x + (n - 1 - i) * 0.1,
                   "train_loss": x + (n - 1 - i) * 0.1 - g} for i, g in enumerate(gaps)] for x in val]
    return {"name": name, "description": "", "n_layer": n_layer, "params": params, "seeds": list(range(len(val))),
            "val_losses": list(val), "train_losses": list(train), "histories": histories}


def ffn_data(linear=(5.05, 5.04), no_ffn=(5.52, 5.50), attn=(5.70, 5.69), base=(4.84, 4.85),
             base_gaps=(0.0, 0.5, 0.8, 1.1)):
    return {"variants": [fitted("baseline", 4, 3688704, base, (3.73, 3.73), base_gaps),
                         fitted("linear_ffn", 4, 3688704, linear, (4.39, 4.39)),
                         fitted("no_ffn", 4, 1574144, no_ffn, (5.25, 5.25)),
                         fitted("attn_only_12l", 12, 3673344, attn, (5.52, 5.52))],
            "references": {"unigram": 6.99, "bigram": 5.62}, "metric": "nats", "tokens_per_run": 400, "date": "x"}


def test_the_split_is_computed_from_the_means_and_the_comparisons_floor():
    data = ffn_data()
    s = model.split_at(data)
    assert s["total"] == pytest.approx(5.51 - 4.845) and s["recovered"] == pytest.approx(5.51 - 5.045)
    assert s["rest"] == pytest.approx(5.045 - 4.845) and s["floor"] == pytest.approx(0.01)
    assert s["recovered_share"] + s["rest_share"] == pytest.approx(1.0)
    text = model.split_reading(data)
    assert "FFN 一共让验证集损失降了 0.665" in text and "0.465（70%）线性 FFN 就做到了" in text
    assert "剩下的 0.200（30%）要靠非线性，是这组比较噪声底线 0.010 的 20.0 倍" in text
    assert "较小的那一部分" in text


def test_a_nonlinear_part_inside_the_floor_or_below_zero_is_not_called_real():
    inside = model.split_reading(ffn_data(linear=(4.86, 4.84)))
    assert "分不出非线性有没有额外的好处" in inside and "是真的" not in inside
    better = model.split_reading(ffn_data(linear=(4.60, 4.61)))
    assert "反而比基线还低" in better and "%" not in better
    most = model.split_reading(ffn_data(linear=(5.40, 5.41)))
    assert "不到一半" in most and "占了大头" in most


def test_the_fit_reading_follows_the_histories():
    points = model.fit_points(ffn_data(), 488497, 8.8, [109, 120])
    text = model.fit_reading(ffn_data(), 488497, 8.8, [109, 120])
    assert len(points) == 4 and text == "".join(points)  # four short bullets, or one paragraph
    assert points[0].startswith("训练集只有 488,497 个 token，每个模型把它读了 8.8 遍。")
    assert "基线最后的训练损失是 3.730、验证集损失 4.845，差 1.115，而且越训越大（第 300 步时是 0.800）" in points[0]
    assert "去掉 FFN 0.260、纯注意力 12 层 0.175" in points[1] and "其余对照的差距小得多" in points[1]
    assert "第 109–120 回" in points[3] and text.endswith("只对这个训练量和这份语料成立。")
    shrinking = model.fit_reading(ffn_data(base_gaps=(0.0, 0.5, 1.2, 1.1)), 488497, 8.8, [109, 120])
    assert "越训越大（第" not in shrinking.split("。")[1] and "明显过拟合" not in shrinking


def test_the_linear_ffn_overfits_too_but_less():
    """Its gap grows at every evaluation of the second half (0.3 -> 0.4 in the histories) and ends at
    0.655 of the final losses, 59% of the baseline's 1.115."""
    data = ffn_data()
    lin = model.overfits(data)
    assert lin["overfits"] and lin["growing"] and lin["share"] == pytest.approx(0.655 / 1.115)
    second = model.fit_points(data, 488497, 8.8, [109, 120])[1]
    assert second.startswith("线性 FFN 也在过拟合，只是轻一些：它的这个差距也越训越大"
                             "（第 300 步 0.300 → 训练结束 0.655，是基线的 59%）")
    assert "到训练结束还在降" in second and "勉强" not in second
    flat = ffn_data()
    for h in flat["variants"][1]["histories"]:  # the linear FFN's gap stops growing
        h[-1]["train_loss"] = h[-1]["val_loss"] - 0.25
    assert not model.overfits(flat)["overfits"]
    assert "后半程没有一直变大" in model.fit_points(flat, 488497, 8.8, [109, 120])[1]


def test_a_fall_just_above_the_seeds_spread_is_called_barely_still_falling():
    data = ffn_data()
    for h, f in zip(data["variants"][1]["histories"], (0.020, 0.008)):  # mean 0.014, spread 0.012
        h[-2]["val_loss"] = h[-1]["val_loss"] + f
    assert model.overfits(data)["barely"]
    second = model.fit_points(data, 488497, 8.8, [109, 120])[1]
    assert "验证集损失降了 0.014，只比 2 个种子降幅之间的差别 0.012 大一点，勉强算还在降" in second


def test_steady_tail_is_the_longest_final_run_within_the_tolerance():
    curve = [(200, 0.063), (400, 0.179), (600, 0.215), (800, 0.214), (1000, 0.213), (1200, 0.209), (1400, 0.203)]
    tail = model.steady_tail(curve, 0.024)
    assert (tail["step"], tail["lo"], tail["hi"], tail["end"], tail["points"]) == (600, 0.203, 0.215, 0.203, 5)
    assert model.steady_tail(curve, 0.001) is None  # no three final points that close
    assert model.steady_tail(curve[-2:], 1.0) is None  # too short to call steady


def test_the_gap_between_the_two_ffns_is_read_from_the_histories():
    data = ffn_data()  # both fall by 0.1 per evaluation: the gap is 0.2 throughout
    steady = model.steady_gap(data)
    assert [round(d, 9) for _, d in steady["curve"]] == [0.2] * 4 and steady["floor"] == pytest.approx(0.01)
    third = model.fit_points(data, 488497, 8.8, [109, 120])[2]
    assert third.startswith("基线和线性 FFN 在验证集上的差距，从第 100 步起一直是 0.200（起落 0.000，不到噪声底线 0.010 的一半）")
    assert "基线的训练/验证差距从 0.000 涨到 1.115：过拟合在加重" in third and "最后一段" not in third
    # The baseline stalls over the last interval while the linear FFN still falls: the gap ends at its lowest.
    for h, f in zip(data["variants"][0]["histories"], (0.004, -0.002)):
        h[-2]["val_loss"] = h[-1]["val_loss"] + f
    for h in data["variants"][1]["histories"]:
        h[-2]["val_loss"] = h[-1]["val_loss"] + 0.004
    third = model.fit_points(data, 488497, 8.8, [109, 120])[2]
    assert "一直在 0.200–0.203 之间" in third and "最后一段基线停住、线性 FFN 还在降，差距到了最小的 0.200" in third
    assert "手上只有这个稳定的差距" in third
    moving = ffn_data()
    for h in moving["variants"][1]["histories"]:  # the linear FFN closes in by 0.05 an evaluation
        for i, e in enumerate(h):
            e["val_loss"] -= 0.05 * i
    assert model.steady_gap(moving)["tail"] is None
    assert "从第 300 步的 0.100 变到训练结束的 0.050" in model.fit_points(moving, 488497, 8.8, [109, 120])[2]


def test_the_split_reading_adds_the_split_of_the_training_losses():
    text = model.split_reading(ffn_data())  # train: no FFN 5.25, linear 4.39, baseline 3.73
    assert "在训练集损失上做同样的拆分，是 57% 对 43%" in text
    assert "非线性在训练集上拿到的好处（0.660）比在验证集上（0.200）大，只有一部分带到了没见过的文字上" in text
    t = model.split_at(ffn_data(), key="train_losses")
    assert t["total"] == pytest.approx(1.52) and t["rest"] == pytest.approx(0.66)
    no_train = ffn_data()
    for v in no_train["variants"]:
        del v["train_losses"]
    assert "训练集" not in model.split_reading(no_train)


def test_overfitting_needs_a_growing_gap_a_stalled_validation_loss_and_the_widest_gap():
    data = ffn_data()
    for v in data["variants"]:  # one baseline seed rose over the last interval, every control still falling fast
        for k, h in enumerate(v["histories"]):
            h[-2]["val_loss"] = h[-1]["val_loss"] + ((0.004, -0.002)[k] if v["name"] == "baseline" else 0.05)
    over = model.overfitting(data)
    assert over["growing"] and over["stalled"] and over["gap"] == pytest.approx(1.115)
    assert model.overfitting(ffn_data(base_gaps=(0.0, 0.5, 1.2, 1.1)))["stalled"] is False


def test_the_deep_attention_stack_is_read_as_a_training_failure_only_when_it_is_worse():
    worse = model.attention_depth_reading(ffn_data())
    assert "纯注意力 12 层的参数是去掉 FFN 的 2.3 倍" in worse and "还高 0.185" in worse
    assert "也只比插值 bigram 在验证集上的 5.62 低 0.10" in worse and "「这样训不出来」" in worse
    level = model.attention_depth_reading(ffn_data(attn=(5.51, 5.50)))
    assert "分不出高下" in level and "训不出来" not in level


def test_the_evidence_sentence_gives_every_gap_and_the_split_once():
    text = model.evidence_sentence(ffn_data())
    assert "线性 FFN、去掉 FFN、纯注意力 12 层的验证集损失比基线分别高 0.200、0.665、0.850" in text
    assert "都超出了噪声底线" in text and "线性映射拿走 70%，非线性占 30%" in text
    mixed = model.evidence_sentence(ffn_data(linear=(4.60, 4.61)))
    assert "减去基线分别是 −0.240、+0.665" in mixed and "%" not in mixed


def test_readings_false_leaves_the_sentences_out_of_the_widget():
    from course.widgets import Renderer
    data = ffn_data()
    shown = str(Renderer({"num": model.num})("ablation", data=data))
    hidden = str(Renderer({"num": model.num})("ablation", data=data, readings=False))
    sentence = model.sentences(data)[0]
    assert sentence in shown and sentence not in hidden and "abl-curves" in hidden
