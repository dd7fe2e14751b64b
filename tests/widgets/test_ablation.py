"""The ablation chart: positions, each variant's gap to the baseline read by seeds protocol v2
(failed runs drawn apart and left out), perplexities, learning curves, and the sentences it shows
with readings=True. The lessons' own readings of these runs are tested with their fact modules
(tests/unit/test_ffn_facts.py)."""
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
# t(0.975, df), printed to 4 decimals: an independent table, not seeds.t_quantile
T975 = {1: 12.7062, 2: 4.3027, 3: 3.1824, 4: 2.7764, 5: 2.5706, 6: 2.4469, 7: 2.3646, 8: 2.3060, 9: 2.2622,
        10: 2.2281, 11: 2.2010, 12: 2.1788}


def fixture_facts():
    files = {n: json.loads((FIXTURE / f"{n}.json").read_text(encoding="utf-8"))
             for n in ("model-card", "ablation", "neurons")}
    return real_model_facts(files["model-card"], files["ablation"], files["neurons"])


def variant(name, n_layer, params, losses, curve_end=None):
    """A variant whose every seed's curve falls from 6.0 to (curve_end or its loss) over 3 evaluations
    (steps 100-300); its training loss is 0.1 under the validation loss throughout."""
    histories = [[{"step": 100 * (i + 1), "tokens": 100 * (i + 1), "epochs": 0.5 * (i + 1), "val_loss": y,
                   "train_loss": y - 0.1}
                  for i, y in enumerate((6.0, 5.0, curve_end if curve_end is not None else x))] for x in losses]
    return {"name": name, "description": "", "n_layer": n_layer, "params": params,
            "seeds": list(range(len(losses))), "val_losses": list(losses),
            "train_losses": [x - 0.1 for x in losses], "histories": histories}


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


def median(xs):
    xs = sorted(xs)
    return (xs[len(xs) // 2] + xs[(len(xs) - 1) // 2]) / 2


def v2(arms):
    """Seeds protocol v2 written out again (AUTHORING.md): arms {name: [loss, ...]} -> failed
    {name: [loss]}, healthy {name: [loss]}, T, s, df."""
    res = [x - median(a) for a in arms.values() if len(a) >= 3 for x in a]
    T = max(6 * 1.4826 * median([abs(r) for r in res]), 0.1)
    failed = {n: [x for x in a if x - median(a) > T] for n, a in arms.items()}
    healthy = {n: [x for x in a if x not in failed[n]] for n, a in arms.items()}
    ss = sum(sum((x - sum(a) / len(a)) ** 2 for x in a) for a in healthy.values() if len(a) > 1)
    df = sum(len(a) - 1 for a in healthy.values() if len(a) > 1)
    return {"failed": failed, "healthy": healthy, "T": T, "s": (ss / df) ** 0.5, "df": df}


def expected(arms, a, b):
    """What the widget must say of a against b: 「高 0.310 ± 0.036（各 3 个种子）：测到」."""
    r = v2(arms)
    A, B = r["healthy"][a], r["healthy"][b]
    gap = sum(A) / len(A) - sum(B) / len(B)
    h = T975[r["df"]] * r["s"] * (1 / len(A) + 1 / len(B)) ** 0.5
    seeds = f"各 {len(A)} 个种子" if len(A) == len(B) else f"{len(A)}、{len(B)} 个种子"
    verdict = ("在误差之内，分不出" if abs(gap) <= h else "测到" if min(len(A), len(B)) > 1
               else "一个种子，待第二个种子确认")
    return f"{'高' if gap > 0 else '低'} {abs(gap):.3f} ± {h:.3f}（{seeds}）：{verdict}", gap, h


def arms_of(data):
    return {v["name"]: v["val_losses"] for v in data["variants"]}


DIRECTED = ("确实更差", "反而比基线好")  # what a measured gap, and only a measured one, is called


def test_a_measured_gap_is_read_with_its_half_width_and_its_direction():
    data = data_with((4.90, 4.92, 4.94), (5.205,), (5.330,))
    said, gap, h = expected(arms_of(data), "linear_ffn", "baseline")
    assert said == "高 0.310 ± 0.036（各 3 个种子）：测到"  # the pooled SD of both three-seed arms, df 4
    linear, no_ffn, attn = model.sentences(data)
    assert "线性 FFN" in linear and "和基线一个不差" in linear and "3 个种子" in linear
    assert f"验证集损失 4.920（困惑度 {round(math.exp(4.92))}）；和基线比，{said}，确实更差" in linear
    state = model.view({"data": data, "selected": "linear_ffn"})
    assert state["chart"][1]["gap"] == f"+{gap:.3f} ± {h:.3f}"
    assert state["out"]["detail"].endswith(f"；和基线比，{said}")
    assert "比基线少 0.42%" in attn and "种子带" not in linear + no_ffn + attn


def test_one_seed_beyond_the_half_width_awaits_a_second():
    data = data_with((4.90, 4.92, 4.94), (5.205,), (5.330,))
    for name, sentence in zip(("no_ffn", "attn_only_12l"), model.sentences(data)[1:]):
        said, gap, h = expected(arms_of(data), name, "baseline")
        assert abs(gap) > h and said.endswith("：一个种子，待第二个种子确认")
        assert f"和基线比，{said}" in sentence and "1 个种子）" in sentence
        assert not any(v in sentence for v in DIRECTED)


def test_a_gap_inside_the_half_width_is_given_no_direction():
    data = data_with((4.61, 4.62, 4.63), (5.205,), (5.3,))
    said, gap, h = expected(arms_of(data), "linear_ffn", "baseline")
    assert abs(gap) < h and said == "高 0.010 ± 0.023（各 3 个种子）：在误差之内，分不出"
    linear = model.sentences(data)[0]
    assert f"和基线比，{said}。" in linear and not any(v in linear for v in DIRECTED)
    assert model.view({"data": data, "selected": "linear_ffn"})["chart"][1]["gap"] == "+0.010 ± 0.023"
    better = model.sentences(data_with((4.30, 4.31, 4.32), (5.205,), (5.3,)))[0]
    assert "和基线比，低 0.300 ± " in better and "：测到，反而比基线好" in better


def test_a_failed_run_is_drawn_apart_named_with_its_loss_and_left_out():
    """Baseline 4.60, 4.61, 4.62, 4.61 and 5.00: the health check fails 5.00 (0.39 above the
    median 4.61, T = 0.1), and every mean and gap leaves it out."""
    base = (4.60, 4.61, 4.62, 4.61, 5.00)
    data = data_with((4.90, 4.92, 4.94), (5.205,), (5.330,), base=base)
    r = v2(arms_of(data))
    assert r["failed"] == {"baseline": [5.00], "linear_ffn": [], "no_ffn": [], "attn_only_12l": []}
    state = model.view({"data": data, "selected": "baseline"})
    assert [d["failed"] for d in state["chart"][0]["dots"]] == [False, False, False, False, True]
    assert state["chart"][0]["mean"]["value"] == "4.610"  # the healthy four
    assert state["band"]["label"] == "基线健康训练（4 个种子）的范围 4.600–4.620" and state["failed_any"]
    clause = "基线种子 4 的 5.000 比这一组的中位数 4.610 高 0.390，超过健康检查的界限 0.100：失败的训练，不计入平均和比较"
    assert state["out"]["detail"] == ("基线：4 层，注意力 + SwiGLU FFN（3,688,704 个参数）：验证集损失 "
                                      "4.600、4.610、4.620、4.610、5.000（失败）（健康的 4 次平均 4.610，困惑度 100）；" + clause)
    assert state["sentences"][0] == clause + "。"
    said, _, _ = expected(arms_of(data), "linear_ffn", "baseline")
    assert said.startswith("高 0.310 ± ") and "（3、4 个种子）：测到" in said and f"和基线比，{said}" in state["sentences"][1]
    lines = state["curves"]["lines"]
    assert [(ln["label"], ln["failed"]) for ln in lines[:2]] == [("基线：4 层，注意力 + SwiGLU FFN", False),
                                                                 ("基线种子 4（失败的训练）", True)]
    assert lines[0]["end"] == "4.610" and lines[1]["end"] == "5.000"
    from course.widgets import Renderer
    html = str(Renderer({"num": model.num})("ablation", data=data, readings=False))
    assert html.count("abl-dot--failed") == 1 and "失败的训练（健康检查，不计入平均）" in html
    assert "abl-line--failed" in html


def test_no_legend_for_failed_runs_when_there_are_none():
    from course.widgets import Renderer
    html = str(Renderer({"num": model.num})("ablation", data=data_with((4.9,), (5.205,), (5.33,)), readings=False))
    assert "abl-dot--failed" not in html and "失败的训练" not in html


def test_a_run_cut_short_is_read_at_its_last_step_against_every_arm_there():
    data = data_with((4.90, 4.92, 4.94), (5.205,), (5.330,))
    deep = variant("deep_8l", 8, 6852864, (5.9,))
    deep["histories"] = [deep["histories"][0][:2]]  # stopped at step 200 of 300
    deep["histories"][0][-1]["val_loss"] = 5.3
    deep["full_steps"] = 300
    data["variants"].append(deep)
    at_200 = {v["name"]: [h[1]["val_loss"] for h in v["histories"]] for v in data["variants"]}
    said, gap, h = expected(at_200, "deep_8l", "baseline")
    state = model.view({"data": data, "selected": "deep_8l"})
    assert state["chart"][-1]["gap"] == f"{'+' if gap > 0 else '−'}{abs(gap):.3f} ± {h:.3f}（第 200 步）"
    assert state["out"]["detail"].endswith(f"；和基线比（第 200 步），{said}")
    assert "（只训练到第 200 步）" in state["chart"][-1]["label"]


def test_every_loss_comes_with_its_perplexity():
    linear, _, _ = model.sentences(data_with((4.90, 4.92, 4.94), (5.205,), (5.330,)))
    assert f"困惑度 {round(math.exp(4.92))}" in linear
    state = model.view({"data": data_with((4.90, 4.92, 4.94), (5.205,), (5.330,)), "selected": "baseline"})
    assert state["chart"][0]["perplexity"] == str(round(math.exp(4.61)))
    assert state["references"]["bigram_ppl"] == str(round(math.exp(5.62)))


def test_a_variant_near_the_unigram_is_said_to_ignore_the_context():
    """6.99 is the unigram, 5.62 the bigram: 6.90 is nearer the unigram, 5.70 nearer the bigram."""
    _, near_unigram, near_bigram = model.sentences(data_with((4.9,), (6.90,), (5.70,)))
    assert "unigram（6.99）比离插值 bigram（5.62）还近" in near_unigram and "几乎没有用上前文" in near_unigram
    assert "不如只看前一个 token 的插值 bigram（5.62）" in near_bigram and "unigram" not in near_bigram


def curve(*losses, tokens=(100, 200, 300)):
    return [{"step": t, "tokens": t, "val_loss": x} for t, x in zip(tokens, losses)]


def test_a_curve_still_falling_at_the_end_is_said_to_be_unfinished_and_one_seed_awaits_a_second():
    data = data_with((4.9,), (5.205,), (5.33,))
    data["variants"][3]["histories"] = [curve(6.2, 5.8, 5.33)]
    data["variants"][0]["histories"] = [curve(5.0, 4.615, x) for x in BASE]
    said = dict(zip([v["name"] for v in data["variants"]], model.curve_sentences(data)))
    assert "从 5.800 降到 5.330" in said["attn_only_12l"] and "是基线同一段的 94.0 倍" in said["attn_only_12l"]
    assert said["attn_only_12l"].endswith("只有 1 个种子，没有别的种子的降幅可比：它是否还在进步，待第二个种子确认。")
    assert "种子带" not in said["attn_only_12l"]
    assert "有的在这一段已经不降了" in said["baseline"] and "基本不再进步" in said["baseline"]  # 4.615 -> 4.62


def falling(end_losses, fall):
    """One seed's curve per final loss, falling by `fall` over its last interval."""
    return [curve(6.0, x + f, x) for x, f in zip(end_losses, fall)]


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


def test_a_curve_that_rose_at_the_end_is_not_said_to_have_fallen():
    data = data_with((4.9,), (5.205,), (5.33,))
    data["variants"][3]["histories"] = [curve(6.0, 5.32, 5.33)]
    said = model.curve_sentences(data)[3]
    assert "从 5.320 变到 5.330，没有再降" in said and "降了" not in said


def test_chart_positions_lie_on_the_axis_and_the_band_covers_the_healthy_baseline_runs():
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
    failed = sum(d["failed"] for row in state["chart"] for d in row["dots"])
    assert len(state["sentences"]) == len(real["ablation"]["variants"]) - 1 + (failed > 0)
    assert len(state["curve_sentences"]) == len(real["ablation"]["variants"])
    assert re.search(r"\d", state["out"]["detail"])


def test_the_real_export_reads_its_gaps_by_v2(facts):
    """The chart on 第 1 课: each control's gap is its v2 contrast with the baseline's healthy runs."""
    data = facts["real"]["ablation"]
    state = model.view({"data": data, "selected": "baseline"})
    arms = arms_of(data)
    r = v2(arms)
    for row in state["chart"][1:]:
        said, gap, h = expected(arms, row["name"], "baseline")
        assert row["gap"] == f"{'+' if gap > 0 else '−'}{abs(gap):.3f} ± {h:.3f}"
        detail = model.view({"data": data, "selected": row["name"]})["out"]["detail"]
        assert detail.endswith(f"；和基线比，{said}")
    flags = [d["failed"] for d in state["chart"][0]["dots"]]
    assert [x for x, f in zip(arms["baseline"], flags) if f] == r["failed"]["baseline"]


def test_readings_false_leaves_the_sentences_out_of_the_widget():
    from course.widgets import Renderer
    data = data_with((4.90, 4.92, 4.94), (5.205,), (5.330,))
    shown = str(Renderer({"num": model.num})("ablation", data=data))
    hidden = str(Renderer({"num": model.num})("ablation", data=data, readings=False))
    sentence = model.sentences(data)[0]
    assert sentence in shown and sentence not in hidden and "abl-curves" in hidden
    for reading in model.curve_sentences(data):
        assert reading in shown and reading not in hidden
