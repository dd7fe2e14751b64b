"""C4 第 3 课 (归一化): every number on the page comes from facts or a widget model, the claims
the page makes about the widgets hold in the models, and the page has its contract's sections."""
import json
import re

from support import ROOT

from course.checks import contract
from course.data import load_data
from course.facts import build_facts
from course.widgets import common_module, load_model

numfmt = common_module("numfmt")
num, pct = numfmt.num, numfmt.pct


def page(site_dir):
    return (site_dir / "c4" / "l3-norm" / "index.html").read_text(encoding="utf-8")


def facts():
    return build_facts(load_data(ROOT / "data", ROOT))


def test_the_papers_numbers_come_from_papers_json(site_dir):
    html = page(site_dir)
    f = facts()
    xi, rz = f["papers"]["xiong"], f["papers"]["rmsnorm"]
    assert f"只有 {xi['without']:.2f}；有预热时最好约 {xi['with']:.0f}" in html  # BLEU 8.45 and about 34
    short = xi["short_warmup"]  # their own Post-LN with 500 warm-up steps: 31.16 at lr 5e-4, 2.77 at 1e-3
    assert (short[0.001]["bleu"], short[0.0005]["bleu"], short[0.001]["warmup_steps"]) == (2.77, 31.16, 500)
    assert f"预热 500 步、最大学习率 0.001 时 BLEU 也只有 {short[0.001]['bleu']:.2f}（0.0005 时 {short[0.0005]['bleu']:.2f}）" in html
    assert f"运行时间省下 {rz['min_pct']}%～{rz['max_pct']}%" in html  # 7%-64%
    assert "1 × 10⁻⁶" in html and f["anchor"]["rms_norm_eps"] == 1e-6


def test_the_design_steps_read_the_models(site_dir):
    html = page(site_dir)
    bt = load_model("batch-trap").compare()
    assert bt["max_diff"] > 0.5 and f"输出最多差了 {bt['max_diff']:.3f}" in html
    nt = load_model("norm-token")
    x = nt.PARAMS["x"]
    ln, rn = nt.layer_norm(x), nt.rms_norm(x)
    assert abs(sum(ln["out"])) < 1e-9 and abs(sum(v * v for v in rn["out"]) / len(x) - 1) < 1e-4
    assert f"{rn['denom']:.3f}" in html and f"{ln['denom']:.3f}" in html


def test_the_placement_claims_hold_in_the_stack(site_dir):
    """④ 第 2 步: under Xiong's unit writes Post-LN's last-layer gradient stays flat in depth and
    Pre-LN's shrinks; under GPT-2's scaled write-backs Pre-LN's hardly shrinks; the page says both."""
    html = page(site_dir)
    npl = load_model("norm-placement")
    post2, post32 = (npl.mean_over_seeds(npl.last_layer_grad, "post", d) for d in (2, 32))
    pre2, pre32 = (npl.mean_over_seeds(npl.last_layer_grad, "pre", d) for d in (2, 32))
    assert post32 / post2 < 1.5 and 2.5 < pre2 / pre32 < 6
    assert f"2 层时是 {post2:.2f}、32 层时是 {post32:.2f}" in html
    assert f"从 2 层时的 {pre2:.2f} 降到 32 层时的 {pre32:.2f}" in html
    pre32_first = npl.mean_over_seeds(npl.first_layer_grad, "pre", 32)
    assert pre32_first > pre32 and f"32 层时第 1 层 {pre32_first:.2f}，最后一层 {pre32:.2f}" in html
    pre2s, pre32s = (npl.mean_over_seeds(npl.last_layer_grad, "pre", d, init="scaled") for d in (2, 32))
    assert pre32s > 0.7 * pre2s and f"从 2 层的 {pre2s:.2f} 到 32 层的 {pre32s:.2f}，几乎不随层数变小" in html
    for widget in ("batch-trap", "norm-token", "norm-placement", "warmup-curves"):
        assert f'data-widget="{widget}"' in html
    assert 'data-exercise="c4/l3/rms-norm"' in html and 'data-exercise="c4/l3/pre-post-stack"' in html


def test_the_rms_norm_exercise_checks_scale_invariance_first(site_dir):
    """Student read 5, F7: the visible checks ask the lesson's question (does 1000 x give what x
    gives?); the numbers, ⑤'s x among them, are hidden cases, and ⑤'s are the widget's."""
    check = json.loads((site_dir / "exercises" / "c4" / "l3" / "rms-norm" / "check.json").read_text(encoding="utf-8"))
    seen = [c for c in check["cases"] if c["seen"]]
    hidden = [c for c in check["cases"] if not c["seen"]]
    assert seen and all(c["input"][0] == "scale" and c["expected"] is True for c in seen)
    assert hidden and all(c["input"][0] == "value" for c in hidden)
    nt = load_model("norm-token")
    x = nt.PARAMS["x"]
    fifth = next(c for c in hidden if c["input"][1] == x and not any(c["input"][2]))
    assert all(abs(a - b) < 1e-9 for a, b in zip(fifth["expected"], nt.rms_norm(x, 0.0, 1e-5)["out"]))
    assert any(not any(c["input"][1]) for c in hidden), "the all-zero vector"


def test_the_student_fifth_read_steps_are_on_the_page(site_dir):
    """Student read 5: F4 Xiong's two phenomena (theorem and experiment told apart), F6 why the
    tangent scales, F8 what the last sub-layer reads under c, F3 no init-gradient clause in 误解五,
    F9 warm-up glossed where first named, Kosson's batch-size clause, why Post-LN is still wanted."""
    html = page(site_dir)
    text = re.sub(r"<[^>]+>", "", html)
    assert "他们的实验（不是定理）还显示了另一件事" in text and "定理说的两个" not in text
    assert "为什么是正切" in text
    ts = facts()["residual"]["trained_stream"]
    if ts:
        r = ts["relative"]
        assert f"最后一个子层之前流是 {num(r[-2], 2)}，除以" in text and f"它读到的是 {num(r[-2] / r[-1], 2)}" in text
    assert "反而比 Pre-LN 的小" not in text.split("误解五")[1].split("⑦ 证据三问")[0]
    assert "第 3 步细讲" in text and "临界批大小" in text and "Post-LN 也没有被扔掉" in text


def test_sections_follow_the_contract(site_dir):
    headings = re.findall(r"<h2 id=[^>]*>([^<]+)", page(site_dir))
    marks = contract({"sections": ["真模型"]})
    assert [next(m for m in marks if h.startswith(m)) for h in headings] == marks


def test_the_real_model_section_follows_the_norm_export(site_dir):
    """Every generated sentence of 真模型 is on the page and says what the export shows."""
    html = page(site_dir)
    text = re.sub(r"<[^>]+>", "", html)
    n = facts()["norm"]
    if n is None:
        assert "这一节正在准备" in text
        return
    assert "这一节正在准备" not in text
    for row in n["rows"]:  # one table row per placement run, with its loss and its reading
        reading = "发散" if not row["finite"] else "还在平台上：只学会了词频" if row["stuck"] else "离开了平台"
        assert f"{row['at_short']:.3f}" in text and reading in text
    check_v2_readings(html, text, n)
    g = n["gradients"]
    d = g["depths"][0]
    assert f"最后一块，Pre-LN 是 Post-LN 的 {num(g['pre_over_post_last'][d], 1)} 倍" in text
    if g["by"][f"pre-{d}"]["stream_rms_out"]:  # exports before schema 3 did not record it
        assert f"实测 {num(g['pre_over_post_last'][d], 1)} 倍" in text
        assert f"放大了约 {num(g['predicted_pre_over_post'][d], 1)} 倍" in text  # 1 / RMS of the stream
    if n["adam"]:
        ad = n["adam"]
        assert f"是它初始大小的 {pct(ad['write_back_share'])}" in text
        for m in ad["models"].values():
            assert pct(m["head_input_change"]) in text
    if n["layernorm"]:
        ln = n["layernorm"]  # compared with the baseline at the same step, not with its full run
        assert f"验证损失 {ln['val_loss']:.3f}；同一个种子、同一串批次的 RMSNorm 基线在同一步是 {ln['baseline_then']:.3f}" in text
        assert f"LayerNorm 减去基线：{ln['compare']['say']}" in text
        # the researcher's third read (4): the same-seed pair beside the baseline's seeds, no direction
        b, c = ln["base"], ln["compare"]
        assert f"同种子的差是 {numfmt.signed(ln['diff'], 3)}" in text
        assert f"基线的 {b['n']} 个种子在这一步从 {num(b['min'], 3)} 到 {num(b['max'], 3)}" in text
        assert f"对 {c['n_b']} 个种子的平均 {num(c['mean_b'], 3)}，差是 {numfmt.signed(c['gap'], 3)}" in text
        assert "一个种子读不出方向" in text and "LayerNorm 高" not in text and "LayerNorm 低" not in text
        assert f"{n['speed']['rmsnorm_median']:,.0f} 个 token" in text
    card = n["card"]
    assert card["command"] in text
    over = n["new_minutes"] > n["budget_minutes"]  # an overrun is said, not hidden
    assert (f"超出了 {n['budget_minutes']:.0f} 分钟的预算" if over else f"预算 {n['budget_minutes']:.0f} 分钟") in text


# What the page may no longer say: the old rule's band and the hedges it forced; and the readings
# the second review (l2-l3-review-2, 3-1 to 3-3, 3-7, 3-9) found wrong: a direction read from the one
# 1,400-step Post-LN pair, the widget's scaled init called our model's setting, the theorem's
# direction said to need its premise, 第 2 课's unprobed no-skip run cited as probed, OLMo 2's year.
OLD_RULE = ("种子带", "分辨力", "回答不了", "测不出这么小", "单种子的规则", "按规则不算测到", "预热看来有用", "一个种子也够",
            "在日程末尾开始离开平台", "松动的迹象", "开始从内部分开", "方向和 Xiong 一致", "还是一次波动",
            "像是在日程末尾", "和我们模型用的设定之间切换", "定理讲的方向，要在它的前提下才成立",
            "去掉残差、困在 unigram 上的模型是同一种样子", "2025 年的 OLMo 2")


def check_v2_readings(html, text, n):
    """真模型 reads every comparison by seeds v2, after the fact, and says so once."""
    assert text.count("事后按 v2 读") >= 1 and 'C3 第 1 课</a>' in html and "/c3/l1-" in html
    for phrase in OLD_RULE:
        assert phrase not in text, phrase
    v, t = n["compare"]["val_loss"], n["compare"]["train_loss"]
    assert f"第 {n['short_steps']} 步的健康检查，门槛 T = {num(v['threshold'], 3)}" in text
    ns = v["noise"]  # the researcher's third read (7): where the band comes from
    if ns["stuck_df"] and ns["moving"]:
        assert f"标准差是 {num(ns['sd'], 3)}（{ns['df']} 个自由度）；其中 {ns['stuck_df']} 个自由度来自停在平台上的" in text
        assert f"组内最多差 {num(ns['stuck_range'], 3)}" in text and f"组内标准差是 {num(ns['moving_sd'], 3)}" in text
        if ns["moving_sd"] > ns["sd"]:
            assert "对已经离开平台、还在快速下降的组偏小" in text
    # the student's fifth read (F5): a reading outside the primary comparisons is description, and
    # says so where it is beyond the band (「超出误差（描述）」, not 「测到」)
    def shown(c):
        return c["say"] if c.get("primary") else c["say"].replace("：测到", "：超出误差（描述）")
    for name in ("post_warm-pre_cold", "post_cold-pre_cold", "post_cold-post_warm", "pre_cold-pre_warm"):
        assert shown(v[name]) in text and shown(t[name]) in text, name
        for c in (v[name], t[name]):
            if c["measured"] and not c.get("primary"):
                assert c["say"] not in text, c["say"]
    for name in ("post_warm-pre_warm", "post_cold-pre_warm"):
        assert shown(v[name]) in text, name
    assert "超出误差时写作「超出误差（描述）」" in text and "先定还是后定都改不了它" in text
    xi = v["post_warm-pre_cold"]
    assert ("Holm 校正后仍算测到" in text) == bool(xi["holm"])
    if xi["direction"] > 0:  # the thesis, where v2 measures it
        assert "不预热的 Pre-LN 好得多" in text and "有预热的 Post-LN 比不预热的 Pre-LN 还差" in text
    base = v["base"]
    if base["split"]:
        assert "「分成了两拨」：这一步不拿基线比" in text
        if base["low"]:
            assert "低出 T 以上的有种子 " + "、".join(str(s) for s in base["low"]) in text
    else:
        assert "「分成了两拨」" not in text.split("常见误解")[0]
    for L in n["longer"]:
        assert L["vs_baseline"]["say"] in text
        if L["vs_baseline"]["status"] == "one_seed":  # one seed carries no thesis
            assert "一个种子，待第二个种子确认" in L["vs_baseline"]["say"]
    longest = max(n["longer"], key=lambda L: L["steps"]) if n["longer"] else None
    if longest and longest["base"]["failed"]:
        b = longest["base"]
        for seed, loss in b["failed"].items():  # each failed baseline run named, with its loss
            assert f"第 {num(longest['steps'])} 步是 {loss:.3f}（健康的 {b['healthy_n']} 个在" in text
            assert f"种子 {seed} " in text
        assert "把它标成失败的训练" in text
        assert f"{b['healthy_n']} 个健康的种子在 {b['healthy_min']:.3f}～{b['healthy_max']:.3f}" in text
    if n["late"]:
        assert f"不预热减去有预热，{n['late']['say']}" in text
        ln_ = n["late"]["noise"]  # the student's third read (F5): a band from other runs is said as such
        if len(ln_["arms"]) == 1 and not ln_["stuck_df"]:
            a = ln_["arms"][0]
            assert f"这个 ± {num(n['late']['half_width'], 3)} 只来自{a['label']} {a['n']} 个健康的种子之间的起伏" in text
            assert f"这里的 ± 只来自{a['label']} {a['n']} 个健康的种子之间的起伏" in text
    for L in n["longer"]:  # F6 / the researcher's (9): which evaluations the last one is set against
        pts = L["points"][:-1][-5:]
        tail = [p["val_loss"] for p in pts]
        if L["points"][-1]["val_loss"] < min(tail) - (max(tail) - min(tail)):
            assert f"比第 {num(pts[0]['step'])}～{num(pts[-1]['step'])} 步的 {len(pts)} 次评估（每 {pts[1]['step'] - pts[0]['step']} 步评估一次" in text
    assert "前面五次" not in text and "按训练损失和按验证损失读出的结论不同" not in text


def sections(html):
    """{circled numeral, or 真模型: that section's HTML}, split at the page's h2 headings."""
    out = {}
    for part in re.split(r"<h2 id=[^>]*>", html)[1:]:
        heading = re.sub(r"<[^>]+>", "", part.split("</h2>")[0]).strip()
        out["真模型" if heading.startswith("真模型") else heading[0]] = part
    return out


def test_every_warm_up_verdict_sits_in_one_box_that_the_other_sections_link(site_dir):
    """3-1/3-4: our model's warm-up readings are gathered in one box (id warmup-measured); ⑦,
    误解四/五 and ⑧ link it instead of restating it, and no section reads a direction from the one
    1,400-step Post-LN pair."""
    html = page(site_dir)
    n = facts()["norm"]
    if n is None:
        return
    assert html.count('id="warmup-measured"') == 1
    box = html.split('id="warmup-measured"')[1].split("</div>")[0]
    btext = re.sub(r"<[^>]+>", "", box)
    assert "我们的模型在预热上量到了什么" in btext
    w = n["warmup"]
    for key in ("val_loss", "train_loss"):  # Pre-LN and Post-LN with against without, both losses, by v2
        assert w[key]["pre"]["say"] in btext and w[key]["post"]["say"] in btext
        # each seed's own pair (same seed, same batches), as the page prints it
        pairs = "、".join(numfmt.signed(v, 3) for v in w[key]["post_pairs"].values())
        assert pairs in btext, pairs
    val, train = n["compare"]["val_loss"], n["compare"]["train_loss"]
    for s in (0, 1, 2):  # the pairs are the arms' own losses
        assert abs(w["val_loss"]["post_pairs"][s] - (val["arms"]["post_cold"][s] - val["arms"]["post_warm"][s])) < 1e-12
    if not (val["post_cold-post_warm"]["measured"] or train["post_cold-post_warm"]["measured"]):
        assert "都在误差之内，不是方向" in btext
    late = w.get("late")
    if late:
        assert f"各只有 1 个种子（种子 0）" in btext and f"不预热减去有预热，{late['say']}" in btext
        assert not late["measured"]  # one seed each: never a measurement
        probe = n["runs"]["post_ln_warmup"]["probes"][-1]
        if probe["modal_top1_share"] > 0.9 and probe["cosine_final"] > 0.9:
            assert f"余弦 {num(probe['cosine_final'], 3)}" in btext and f"{pct(probe['modal_top1_share'])} 的位置预测同一个 token" in btext
        assert "一个种子说不了" in btext and "种子 1、2 也训到第 1,400 步" in btext
        pl = w["plateau"]  # the runs stuck on the plateau on the same batches: the drop is real in that run
        if pl:
            assert pl["n"] >= 2 and pl["warm_below"] > 10 * pl["spread_last"]
            assert f"彼此最多差 {num(pl['spread'], 4)}" in btext and f"比它们中最低的还低 {num(pl['warm_below'], 3)}" in btext
    # Ma & Yarats' untuned default, 2 / (1 - beta2), from papers.json and our optimiser's beta2
    papers = load_data(ROOT / "data", ROOT)["papers"]
    beta2 = n["card"]["configs"]["train"]["beta2"]
    untuned = papers["ma2021"]["rows"][0]["warmup_times_one_over_one_minus_beta2"] / (1 - beta2)
    assert round(untuned) == 40 and f"在我们这里是 {untuned:.0f} 步，比我们用的 {n['card']['training']['warmup_steps']} 步还短" in btext
    # the student's third read (F1): the verdicts are printed once, in the box; the others point to it
    assert "别的地方只指向这里" in btext
    text = re.sub(r"<[^>]+>", "", html)
    for c in (val["post_cold-post_warm"], train["post_cold-post_warm"], train["pre_cold-pre_warm"]):
        if c["status"] != "split":
            assert text.count(c["say"]) == 1, c["say"]
    secs = sections(html)
    assert val["post_cold-post_warm"]["say"] not in secs["⑦"] and "没有测到差别" not in secs["⑥"]
    for mark in ("⑦", "⑧"):
        assert 'href="#warmup-measured"' in secs[mark], mark
    mis = secs["⑥"]
    for title in ("误解四", "误解五"):
        block = mis.split(title)[1].split("误解")[0]
        assert 'href="#warmup-measured"' in block, title
    # ⑧ no longer restates the 1,400-step runs in its one sentence
    assert "训满整个日程" not in secs["⑧"]


def test_the_first_step_is_read_as_an_angle_and_the_cold_pre_ln_step_as_saturated(site_dir):
    """3-2: the head reads a normed vector, so ||dh||/||h|| = 2 sin(theta/2) <= 2; Pre-LN's cold
    step is past the linear range (the warm step x 60 would exceed it), Post-LN's scales with the lr."""
    import math
    text = re.sub(r"<[^>]+>", "", page(site_dir))
    n = facts()["norm"]
    if n is None or not n["adam"]:
        return
    hc, w = n["adam"]["head_change"], n["card"]["training"]["warmup_steps"]
    turn = {k: math.degrees(2 * math.asin(v / 2)) for k, v in hc.items()}
    assert 50 < turn["pre-cold"] < 60  # the review's "about 56 degrees"
    assert f"Pre-LN 每个位置的向量平均转了约 {turn['pre-cold']:.0f}°" in text
    # Scaled as the update before the normalisation scales: the turn's tangent times w (the researcher's
    # read: 60 x 1.6 degrees or 60 x the change is not what a 60 times larger step does to a unit vector)
    scaled = {p: math.degrees(math.atan(w * math.tan(math.radians(turn[f"{p}-warm"])))) for p in ("pre", "post")}
    assert abs(scaled["pre"] - turn["pre-cold"]) < 6  # about 60 against the measured 56
    assert f"Pre-LN 有预热时转约 {turn['pre-warm']:.1f}°" in text and f"放大后该是约 {scaled['pre']:.0f}°" in text
    assert "走出了线性范围" not in text and "饱和" not in text.split("我们的模型在预热上量到了什么")[0].split("这一列要换成角度来读")[1]
    assert "Kosson 等人" in text
    assert "（按比例应是" not in text  # the old linear reading of the Pre-LN step


def test_the_widget_keeps_post_ln_larger_under_gpt2_writes_and_our_embedding_flips_it(site_dir):
    """3-3: under GPT-2's scaled write-backs the widget's Post-LN last layer is larger at every depth
    and seed; the page says so with the widget's own range, and blames our small embedding for the
    flip in our model (its RMS-1 control)."""
    text = re.sub(r"<[^>]+>", "", page(site_dir))
    npl = load_model("norm-placement")
    r = [npl.last_layer_grad("post", d, s, "scaled") / npl.last_layer_grad("pre", d, s, "scaled")
         for d in range(1, 33) for s in npl.SEEDS]
    assert min(r) > 1 and npl.post_over_pre_range("scaled") == (min(r), max(r))
    assert f"Post-LN 最后一层都是 Pre-LN 的 {num(min(r), 1)}～{num(max(r), 1)} 倍" in text
    assert "GPT-2 式的写回规则之间切换" in text
    n = facts()["norm"]
    if n:
        g = n["gradients"]
        assert f"只把嵌入放大到 RMS 1、写回规则不变，两者就成了 {num(g['controls']['embed_unit']['pre_over_post'], 2)} 倍" in text
        # the student's fifth read (F3): the stack's leftover ratio is not taught as a standing direction
        assert "这个方向还在" not in text and "这个比值跟着流有多大走" in text
    # 3-12: 4.2 is explained by the stream's measured RMS ratio, the rest said
    rms = [sum(npl.final_rms("pre", d, s) for s in npl.SEEDS) for d in (2, 32)]
    assert f"32 层时流的 RMS 是 2 层时的 {num(rms[1] / rms[0], 1)} 倍" in text and "其余约" in text


def test_literature_and_placements_come_from_papers_json(site_dir):
    """3-5, 3-6, 3-9: Ma & Yarats, Kosson, Noci (and the cheap test), Peri-LN and Gemma, OLMo 2's date."""
    text = re.sub(r"<[^>]+>", "", page(site_dir))
    p = facts()["papers"]
    # the researcher's third read (10): Ma & Yarats' claim is theirs, not a settled refutation; OLMo 2
    # credits the reordered norm to earlier work itself
    assert f"Ma 和 Yarats（{p['untuned_warmup']['year']}）" in text and "Ma 和 Yarats 认为这一分析不成立" in text
    assert "反驳" not in text
    credit = p["olmo2"]["credit"]  # the paper's own words (papers.json, FACTS-L2-L4 F10), not our identification
    assert "Liu et al. (2021) first introduced" in credit["quote"] and "Chameleon Team (2024)" in credit["quote"]
    assert (f"它的论文自己说，最早提出它的是 Liu 等人（{credit['first_year']}），后来 Chameleon（{credit['then_year']}）"
            "也用了") in text
    assert f"Kosson 等人（{p['kosson']['year']}）" in text
    assert f"Noci 等人（{p['noci']['year']}）" in text and "Q、K 的梯度大小和注意力的熵" in text
    assert f"{p['olmo2']['year']} 年底的 OLMo 2" in text and p["olmo2"]["year"] == 2024
    assert "Peri-LN" in text and "、".join(p["periln"]["models"]) in text


def test_one_seed_figures_say_their_seed_and_the_chart_says_its_lines_are_validation(site_dir):
    """3-10 and 3-8."""
    text = re.sub(r"<[^>]+>", "", page(site_dir))
    n = facts()["norm"]
    if n is None:
        return
    assert "Post-LN 不预热的模型（种子 0）" in text and "基线（种子 0）同一步" in text and "种子 0 的初始化" in text
    if n["warmup"]["post_short_one_vector"]:
        assert f"{len(n['warmup']['post_short_seeds'])} 个种子（0、1、2）在这一步全都是这样" in text
    assert "验证集上只看词频（unigram）" in text and "在验证集上能做到的损失" in text


def test_xiongs_claim_comes_before_the_widget_that_tests_it(site_dir):
    """The student's third read (F3): ④ 第 2 步 states Xiong's explanation first and presents the
    placement widget as a test of its first link; it no longer teaches 「梯度大就改得多」 as a motivation."""
    html = page(site_dir)
    step2 = html.split("第 2 步：放在哪")[-1].split("第 3 步：预热")[0]  # the section, not the table of contents
    claim = step2.index("这一页检验的解释是 Xiong 等人")
    assert claim < step2.index('data-widget="norm-placement"')
    assert "这一步用一个组件检验第一环" in step2 and "梯度大就改得多" not in html
    assert "最早的" not in html  # researcher's fifth read (8): earlier accounts exist; Xiong's is the one tested


def test_our_post_ln_reads_a_tiny_embedding_and_the_run_that_would_tell_is_not_run(site_dir):
    """The researcher's third read (2, 5, 6): our Post-LN's first block reads the small embedding
    (the 2017 design scales it by sqrt(d)); the embedding x 1/RMS run comes first in ⑦ and is said
    not run; the Noci account says what it does not explain; the gain decay has a reference beside it."""
    html = page(site_dir)
    text = re.sub(r"<[^>]+>", "", html)
    n = facts()["norm"]
    if n is None or not n["adam"]:
        return
    e0, S = n["adam"]["embedding_init_rms"], n["short_steps"]
    limits = text.split("这些结果能说到哪一步。")[1].split("常见误解")[0]
    assert f"我们的嵌入初始化时 RMS 只有 {num(e0, 2)}" in limits and "2017 年的原版 Transformer 把嵌入乘上" in limits
    change = re.sub(r"<[^>]+>", "", sections(html)["⑦"]).split("什么会改变结论")[1]
    first = f"最先该做、也最便宜的检验：把我们的 Post-LN 的嵌入乘 {num(1 / e0, 0)}"
    assert change.index(first) < change.index("如果更长的预热")
    assert f"训 {S} 步、一个种子。这次训练还没有跑" in change
    assert abs(1 / e0 - 50) < 1  # lab's embed_unit hook multiplies by 50
    assert f"bigram（验证集上 {num(n['references']['bigram'], 3)}）" in text and "不解释当前 token 怎么丢的" in text
    bc = n["block_cosines"]
    assert f"第 2 块之后已是 {num(bc[2][0], 2)}～{num(bc[2][1], 2)}" in text
    gr = n["gain_reference"]
    if gr:  # researcher's fifth read (3): the same-schedule run is the reference, not the no-warm-up one
        assert f"「{gr['label']}」那次（只把 RMSNorm 换成了 LayerNorm）：它的中位数和不衰减那次只差 {num(abs(gr['ref_median_gap']), 3)}" in text
        assert f"比不衰减的低（低 {num(-gr['decay_max'], 3)}～{num(-gr['decay_min'], 3)}）" in text
        for o in n["undecayed_others"]:
            if o["run"] != "layernorm":
                assert f"「{o['label']}」那次的中位数是 {num(o['median'], 3)}" in text
                assert "但它换了学习率日程，这个差是另一处改动的效果，不是种子之间的起伏" in text
        assert "不衰减的几次训练之间的起伏" not in text and "次之间就差了" not in text
        assert "增益没有可比的噪声估计" not in text


def test_the_fifth_reads_split_embedding_and_attention_wording(site_dir):
    """The researcher's and the student's fifth reads: the baseline's step-200 split is the rule's low
    T (plateau arms, zero residuals), not two kinds of run; the small-embedding caveat is placement
    with the small embedding (Pre-LN's first block reads a normalised copy), not instead of it; every
    head starts near uniform in either placement (C3 第 1 课), the 0.02^2 factor slows the scores;
    block 1 keeps each token's own direction in most Post-LN runs; sqrt(v-hat)."""
    html = page(site_dir)
    text = re.sub(r"<[^>]+>", "", html)
    n = facts()["norm"]
    if n is None:
        return
    for gone in ("两种走法", "主要由停在平台上", "第 1 块的注意力开头几乎是平均的", "困住靠的是小嵌入",
                 "也可能主要是它，而不是放法本身"):
        assert gone not in text, gone
    source = (ROOT / "lessons" / "c4" / "l3-norm.md").read_text(encoding="utf-8")
    assert "$\\sqrt{v}$ 就是" not in source and "校正后的 $\\sqrt{\\hat v}$ 就是 $|g|$" in source
    V = n["compare"]["val_loss"]
    ts, B = V["threshold_sources"], V["base"]
    if B and B["split"] and B["low"] and not B["failed"] and ts["stuck"] and ts["moving_threshold"] > V["threshold"]:
        assert f"其中 {ts['stuck']} 个来自停在平台上、几乎不动的组，{ts['zeros']} 个恰好是 0" in text
        assert f"只用离开了平台的组定门槛，T 是 {num(ts['moving_threshold'], 2)}，基线就不算分成两拨" in text
        assert "不是基线混着两类训练的证据" in text
    ns = V["noise"]
    if ns["moving"] and ns["moving_sd"] > ns["sd"]:
        assert f"却占了 {ns['df']} 个自由度里的 {ns['stuck_df']} 个" in text
    if n["adam"]:
        e0 = n["adam"]["embedding_init_rms"]
        limits = text.split("这些结果能说到哪一步。")[1].split("常见误解")[0]
        assert "它的第 1 块读的是归一化之后的副本，RMS 为 1" in limits
        assert "可能是放法和小嵌入合在一起造成的" in limits
        assert "注意力开头几乎是平均的，这在两种放法里都一样（C3 第 1 课" in limits
        assert "分数拉开得慢得多" in limits
        change = re.sub(r"<[^>]+>", "", sections(html)["⑦"])
        assert f"困住是放法和小嵌入合在一起造成的：Pre-LN 的第 1 块读归一化后的副本（RMS 1），Post-LN 的第 1 块直接读 RMS {num(e0, 2)} 的嵌入" in change
    od = n["own_direction"]
    if od and od["kept"] * 2 > od["n"]:
        assert f"{od['n']} 次里有 {od['kept']} 次各位置还大致留着自己那个 token 嵌入的方向" in text
        assert f"（和自己嵌入的余弦 {num(od['kept_min'], 2)}～{num(od['kept_max'], 2)}，Pre-LN 的训练在这里最多 {num(od['pre_max'], 2)}）" in text
        assert "塌缩从最前面的块就开始了" not in text
