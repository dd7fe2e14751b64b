"""skip-mechanism: every reading follows the numbers (hand-made data flips each one), and the lab
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
BAND = 0.1  # the hand-made baseline's seed band at every step: a one-seed gap counts at 0.5


def probe(top1=0.0, modal=0.01, cos=0.3, own1=0.0):
    return {"step": 0, "current_token_top1": top1, "modal_top1_share": modal, "cosine_final": cos,
            "cosine_by_depth": [0.0, cos], "own_embedding_cosine_by_depth": [1.0, own1]}


def curve(stop, val, early=7.021):
    """A run's evaluations at 200, 400 (and 1,400 unless it stopped at 400), ending at `val`."""
    return [{"step": 200, "val_loss": 7.03}, {"step": 400, "val_loss": val if stop == 400 else early}] + \
        ([] if stop == 400 else [{"step": 1400, "val_loss": val}])


def data(stops=("no_residual_init02",), **vals):
    """A mechanism export in facts form: each variant's val loss (and, for the stopped one, its step);
    the baseline's two seeds are BAND apart at every step."""
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
    baseline = {"seeds": [0, 1], "val_losses": [base, base + BAND],
                "histories": [curve(1400, base), [{**h, "val_loss": h["val_loss"] + BAND} for h in curve(1400, base)]]}
    return mechanism_facts(doc, no_skip, baseline, doc["model_card"]["training"]["precision"])


def test_identity_at_init_quotes_both_probes():
    said = model.identity_at_init(data())
    assert "99.9% 的位置上" in said and "这个比例是 0.0%" in said and "0.88" in said


def test_the_gradient_path_reading_follows_the_seeds_protocol():
    said = model.gradient_path(data())
    assert "只有 1 个种子，高 0.010，是基线种子带 0.100 的 0.1 倍" in said and "分不出高下" in said
    assert "还不能说那条梯度的捷径是必需的" in said
    said = model.gradient_path(data(detached_skip=5.2))  # 3.5 bands: one seed is not enough
    assert "不到单种子所需的 5 倍：分不出高下" in said and "必需" in said and "训却同样失败" not in said
    said = model.gradient_path(data(detached_skip=5.7))  # 8.5 bands, far from the unigram
    assert "算测到了" in said and "差距是「去掉全部残差」那段（2.150）的 39.5%" in said
    said = model.gradient_path(data(detached_skip=7.0))
    assert "和去掉全部残差的模型（7.000）一样停在 unigram 上" in said and "训练却同样失败" in said
    ratio = FIXTURE["gradients"]["models"][1]["blocks"][0]["param_grad_norm"] / FIXTURE["gradients"]["models"][0]["blocks"][0]["param_grad_norm"]
    assert ("梯度的那条捷径也是必需的" in said) == (ratio < 0.1)


def test_the_identity_path_reading_compares_with_no_skips_by_the_protocol():
    said = model.identity_path(data())
    assert "去掉全部残差是 7.000（unigram 7.010）" in said and "低 1.000，是基线种子带 0.100 的 10.0 倍" in said
    assert "它离开了 unigram，收回了「去掉全部残差」那段差距的约 47%" in said
    said = model.identity_path(data(embed_readd=6.8))
    assert "分不出高下" in said and "这一组还回答不了" in said and "离开了 unigram" not in said
    assert "反而更差" in model.identity_path(data(embed_readd=7.6))


def test_the_sublayer_reading_says_which_skip_matters_only_when_measured():
    said = model.sublayer_paths(data())
    assert "只给注意力留残差：4.900；和基线（4.850）比，只有 1 个种子，高 0.050" in said
    assert "只给 FFN 留残差：7.000，停在 unigram 上；和基线（4.850）比" in said
    assert "注意力外面那条，和 Dong 等人的预测一致" in said and "在 100.0% 的位置上给出同一个首选预测" in said
    assert "FFN 外面那条更要紧" in model.sublayer_paths(data(attn_skip_only=7.0, ffn_skip_only=5.0))
    said = model.sublayer_paths(data(attn_skip_only=6.6))  # off the unigram; 0.4 from the FFN-only run: 4 bands
    assert "只给注意力留残差：6.600，比 unigram（7.010）低 0.410；和基线（4.850）比" in said and said.endswith("一个种子还说不清。")
    assert "一个种子还说不清" in model.sublayer_paths(data(attn_skip_only=5.0, ffn_skip_only=5.3))


def test_the_init_control_compares_at_the_same_step():
    said = model.init_control(data())
    assert "训练到第 400 步验证集损失 7.020，原来的初始化在同一步是 7.021" in said and "小初始化不是它卡住的原因" in said
    said = model.init_control(data(no_residual_init02=6.0))
    assert "算测到了" in said and "初始化确实是原因之一" in said


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
    assert "差距要至少是基线种子带的 5 倍才算测到" in html
    for v in FIXTURE["variants"]:
        assert model.label(v["name"]) in html and model.label(v["name"]) != v["name"]


def test_a_run_stopped_early_is_compared_with_the_baseline_at_the_same_step():
    d = data(stops=("no_residual_init02", "attn_skip_only", "ffn_skip_only"), attn_skip_only=6.0)
    said = model.sublayer_paths(d)
    assert "只给注意力留残差：6.000；和基线（7.021）比，只有 1 个种子，低 1.021" in said and "（都在第 400 步）" in said
    assert "后者在" not in said or d["variants"]["ffn_skip_only"]["steps_trained"] == 400
    rows = {r["name"]: r for r in model.rows(d)}
    assert rows["attn_skip_only"]["delta"] == "−1.021" and rows["attn_skip_only"]["label"].endswith("*")
    assert rows["attn_skip_only"]["reading"] == "测到（10.2 倍）"
    assert model.rows(data())[2]["reading"] == "分不出（0.1 倍）"  # the detached skip, 0.010 from the baseline
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
    assert v == {"identity_lost_at_init": True, "gradient_path_needed": False, "identity_at_output": "helps"}
    v = model.verdicts(data(detached_skip=7.0, embed_readd=6.99))
    assert v["gradient_path_needed"] and v["identity_at_output"] == "unresolved"
    assert model.verdicts(data(detached_skip=5.3))["gradient_path_needed"] is False  # 4.5 bands: not measured


def test_the_model_card_says_which_runs_stopped_early():
    d = data(stops=("no_residual_init02", "attn_skip_only", "ffn_skip_only"))
    assert model.stops_sentence(d) == ("「只给注意力留残差」、「只给 FFN 留残差」、「去掉残差，写回矩阵按 0.02 初始化」"
                                       "训练到第 400 步停下（同一个学习率日程的前段，和基线在同一步比）；")


def test_small_shares_keep_their_digits():
    assert model.pct(0.0005) == "0.05%" and model.pct(0.999) == "99.9%" and model.pct(0.0) == "0.0%"
