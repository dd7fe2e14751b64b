"""skip-mechanism: every reading follows the numbers and seeds protocol v2 (hand-made data flips
each one: inside the interval, one seed beyond it, a failed baseline run left out), and the lab
fixture's export renders as a table with one row per run."""
import copy
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.facts.residual import mechanism_facts  # noqa: E402
from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("skip-mechanism")
FIXTURE = json.loads((ROOT / "tests/fixtures/real-model/residual/mechanism.json").read_text(encoding="utf-8"))
OFFSETS = (0.0, 0.02, -0.02, 0.01, -0.01)  # the hand-made baseline's five seeds around its loss, at every step
# Their pooled SD is 0.0158 (4 degrees of freedom): one seed against the five reads
# gap ± t(0.975, 4) * 0.0158 * sqrt(1 + 1/5) = ± 0.048; two single runs against each other ± 0.062;
# one run against the unigram line ± 0.044.


def probe(top1=0.0, modal=0.01, cos=0.3, own1=0.0):
    return {"step": 0, "current_token_top1": top1, "modal_top1_share": modal, "cosine_final": cos,
            "cosine_by_depth": [0.0, cos], "own_embedding_cosine_by_depth": [1.0, own1]}


def curve(stop, val, early=7.021):
    """A run's evaluations at 200, 400 (and 1,400 unless it stopped at 400), ending at `val`."""
    return [{"step": 200, "val_loss": 7.03}, {"step": 400, "val_loss": val if stop == 400 else early}] + \
        ([] if stop == 400 else [{"step": 1400, "val_loss": val}])


def data(stops=("no_residual_init02",), offsets=OFFSETS, **vals):
    """A mechanism export in facts form: each variant's val loss (and, for the stopped one, its step);
    the baseline's seeds sit at `offsets` from its loss at every step."""
    losses = {"baseline": 4.85, "detached_skip": 4.86, "embed_readd": 6.0,
              "attn_skip_only": 4.9, "ffn_skip_only": 7.0, "no_residual_init02": 7.02}
    losses.update(vals)
    variants = []
    for name, val in losses.items():
        stopped = name in stops
        steps = 400 if stopped else 1400
        start = probe(top1=0.999, own1=0.88) if name == "baseline" else probe()
        end = {**probe(modal=1.0 if name == "ffn_skip_only" else 0.05, cos=0.99 if name == "ffn_skip_only" else 0.2),
               "step": steps}
        variants.append({"name": name, "steps_trained": steps, "val_loss": val, "seed": 0,
                         "history": curve(steps, val), "probes": [start, end]})
    doc = copy.deepcopy(FIXTURE)
    doc["variants"] = [{**v, **{k: x for k, x in FIXTURE["variants"][0].items() if k not in v}} for v in variants]
    doc["references"] = {"unigram": 7.01, "bigram": 5.62}
    doc["model_card"]["training"]["steps"] = 1400
    doc["no_skip_init"]["probe"] = probe()
    no_skip = {"seeds": [0], "val_losses": [7.0], "histories": [curve(1400, 7.0)]}
    base = losses["baseline"]
    runs = [[{**h, "val_loss": h["val_loss"] + d} for h in curve(1400, base)] for d in offsets]
    baseline = {"seeds": list(range(len(offsets))), "val_losses": [base + d for d in offsets], "histories": runs}
    return mechanism_facts(doc, no_skip, baseline, doc["model_card"]["training"]["precision"])


def test_identity_at_init_quotes_both_probes():
    said = model.identity_at_init(data())
    assert "99.9% 的位置上" in said and "这个比例是 0.0%" in said and "0.88" in said


def test_the_gradient_path_reading_follows_seeds_protocol_v2():
    said = model.gradient_path(data())  # 0.010 above the baseline's mean: inside ± 0.048
    assert "基线 4.850（5 次健康训练的平均）" in said and "高 0.010 ± 0.048（1、5 个种子）：在误差之内，分不出" in said
    assert "看不出那条梯度的捷径是必需的" in said
    said = model.gradient_path(data(detached_skip=5.7))  # beyond, far from the unigram: one seed
    assert "高 0.850 ± 0.048（1、5 个种子）：一个种子，待第二个种子确认" in said
    assert "差距是「去掉全部残差」那段（2.150）的 39.5%" in said and "只有一个种子，要第二个种子确认才算数" in said
    said = model.gradient_path(data(detached_skip=7.0))
    assert "和去掉全部残差的模型（7.000）一样停在 unigram 上" in said and "训练却同样失败" in said
    assert "这一次训练指向：梯度的那条捷径也是必需的" in said and "梯度的那条捷径也是必需的。" not in said
    ratio = FIXTURE["gradients"]["models"][1]["blocks"][0]["param_grad_norm"] / FIXTURE["gradients"]["models"][0]["blocks"][0]["param_grad_norm"]
    assert ("AdamW 按每个参数自己的梯度大小缩放步长" in said) == (ratio < 0.1)
    assert "比基线还低" in model.gradient_path(data(detached_skip=4.7))


def test_a_failed_baseline_run_is_left_out_and_named():
    d = data(offsets=OFFSETS + (0.4,), detached_skip=5.0)  # seed 5, 0.4 above: past T = 6 x 1.4826 x 0.015 = 0.133
    said = model.gradient_path(d)
    assert "基线 4.850（5 次健康训练的平均）" in said and "高 0.150 ± 0.048（1、5 个种子）" in said
    note = model.noise_note(d)
    assert note.startswith("第 1,400 步：基线种子 5（5.250）高出同组中位数超过门槛 0.133，是失败的训练，不计入；")
    assert "噪声（健康训练的组内标准差）0.016，自由度 4，一个种子的对照和基线 5 次的平均比，误差 ±0.048" in note
    assert "健康检查没有认出失败的训练" not in note.split("；第 400 步")[0]
    assert "第 400 步：基线种子 5" in note  # the failed run is 0.4 above at step 400 too
    assert "第 400 步：健康检查没有认出失败的训练（门槛 0.100）" in model.noise_note(data())
    html = str(Renderer({"num": model.num})("skip-mechanism", data=d))
    assert "基线 6 次训练里健康的那几次" in html and "基线种子 5（5.250）" in html


def test_the_identity_path_reading_compares_with_no_skips_by_the_protocol():
    said = model.identity_path(data())
    assert "去掉全部残差是 7.000（unigram 7.010）" in said and "低 1.000 ± 0.062（各 1 个种子）：一个种子，待第二个种子确认" in said
    assert "这一个种子里，它离开了 unigram，收回了「去掉全部残差」那段差距（到基线的平均）的约 47%" in said
    said = model.identity_path(data(embed_readd=6.98))
    assert "在误差之内，分不出" in said and "两者在误差之内" in said and "离开了 unigram" not in said
    assert "回答不了" not in said and "几个种子配对" not in said
    assert "这一个种子里，把词嵌入加回去反而更差" in model.identity_path(data(embed_readd=7.6))


def test_the_sublayer_reading_says_which_skip_matters_and_on_how_many_seeds():
    said = model.sublayer_paths(data())
    assert "只给注意力留残差：4.900；和基线 4.850（5 次健康训练的平均）比，高 0.050 ± 0.048（1、5 个种子）：一个种子，待第二个种子确认" in said
    assert "只给 FFN 留残差：7.000，停在 unigram 上；和基线比" in said
    assert "这一个种子指向注意力外面那条更要紧，和 Dong 等人的预测一致" in said and "在 100.0% 的位置上给出同一个首选预测" in said
    assert "这一个种子指向 FFN 外面那条更要紧" in model.sublayer_paths(data(attn_skip_only=7.0, ffn_skip_only=5.0))
    said = model.sublayer_paths(data(attn_skip_only=6.6))
    assert "只给注意力留残差：6.600，比 unigram（7.010）低 0.410；和基线" in said
    said = model.sublayer_paths(data(attn_skip_only=5.0, ffn_skip_only=5.03))  # 0.03 apart: inside ± 0.062
    assert said.endswith("高 0.030 ± 0.062（各 1 个种子）：在误差之内，分不出。两条残差在这一步没有分出先后。")


def test_the_init_control_compares_at_the_same_step():
    said = model.init_control(data())
    assert "训练到第 400 步验证集损失 7.020，原来的初始化在同一步是 7.021" in said
    assert "低 0.001 ± 0.062（各 1 个种子）：在误差之内，分不出" in said and "小初始化不是它卡住的原因" in said
    said = model.init_control(data(no_residual_init02=6.0))
    assert "一个种子，待第二个种子确认" in said and "这一个种子里它离开了 unigram：初始化可能是原因之一" in said


def test_the_fixture_export_renders_one_row_per_run():
    residual = json.loads((ROOT / "tests/fixtures/real-model/residual/residual.json").read_text(encoding="utf-8"))
    no_skip = next(v for v in residual["variants"] if v["name"] == "no_residual")
    baseline = next(v for v in residual["variants"] if v["name"] == "baseline")
    facts = mechanism_facts(FIXTURE, no_skip, baseline, residual["model_card"]["training"]["precision"])
    html = str(Renderer({"num": model.num})("skip-mechanism", data=facts))
    assert html.count("<tr data-row=") == len(FIXTURE["variants"]) + 1  # and the earlier no-skip run
    assert "* 只训练了学习率日程的前段：「去掉残差，写回矩阵按 0.02 初始化」 4 步" in html  # the fixture stops init02 early
    assert "† 去掉全部残差：残差那组实验里的同一次训练" in html and "没有训练结束时的探针（—）" in html
    assert html.count("<th scope=\"col\">") == 7  # model, step-0 probe, steps, loss, gap, the protocol's reading, cosine
    assert f"基线 {len(baseline['seeds'])} 次训练里健康的那几次" in html and "种子带" not in html and "倍" not in html
    for v in FIXTURE["variants"]:
        assert model.label(v["name"]) in html and model.label(v["name"]) != v["name"]


def test_a_run_stopped_early_is_compared_with_the_baseline_at_the_same_step():
    d = data(stops=("no_residual_init02", "attn_skip_only", "ffn_skip_only"), attn_skip_only=6.0)
    said = model.sublayer_paths(d)
    assert "只给注意力留残差：6.000；和基线 7.021（5 次健康训练的平均）比，低 1.021 ± 0.048" in said and "（都在第 400 步）" in said
    rows = {r["name"]: r for r in model.rows(d)}
    assert rows["attn_skip_only"]["delta"] == "−1.021 ± 0.048" and rows["attn_skip_only"]["label"].endswith("*")
    assert rows["attn_skip_only"]["reading"] == "一个种子，待确认"
    assert model.rows(data())[2]["reading"] == "在误差之内"  # the detached skip, 0.010 from the baseline
    assert model.rows(data())[2]["delta"] == "+0.010 ± 0.048"
    assert rows["baseline"]["delta"] == "—"


def test_identity_at_init_claims_the_loss_only_when_the_probes_show_it():
    d = data()
    assert "流不再指向自己的嵌入" in model.identity_at_init(d) and "这是个诊断，不是成绩" in model.identity_at_init(d)
    d["variants"]["no_residual"]["init"] = probe(top1=0.45, own1=0.6)
    d["variants"]["baseline"]["init"] = probe(top1=0.6, own1=0.88)
    said = model.identity_at_init(d)
    assert "流不再指向自己的嵌入" not in said and "45.0%" in said


def test_the_verdicts_follow_the_runs():
    v = model.verdicts(data())
    assert v == {"identity_lost_at_init": True, "gradient_path_stuck": False, "gradient_path_needed": False,
                 "identity_at_output": "one_seed_helps"}
    v = model.verdicts(data(detached_skip=7.0, embed_readd=6.99))
    assert v["gradient_path_stuck"] and not v["gradient_path_needed"]  # one seed: never a finding
    assert v["identity_at_output"] == "within"
    assert model.verdicts(data(detached_skip=5.3))["gradient_path_stuck"] is False  # above, but off the unigram
    assert model.verdicts(data(embed_readd=7.6))["identity_at_output"] == "one_seed_hurts"


def test_the_model_card_says_which_runs_stopped_early():
    d = data(stops=("no_residual_init02", "attn_skip_only", "ffn_skip_only"))
    assert model.stops_sentence(d) == ("「只给注意力留残差」、「只给 FFN 留残差」、「去掉残差，写回矩阵按 0.02 初始化」"
                                       "训练到第 400 步停下（同一个学习率日程的前段，和基线在同一步比）；")


def test_small_shares_keep_their_digits():
    assert model.pct(0.0005) == "0.05%" and model.pct(0.999) == "99.9%" and model.pct(0.0) == "0.0%"
