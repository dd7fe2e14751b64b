"""The built lesson shows every computed number the seed's lesson quotes, and its structure."""
import re

import pytest
from support import build_copy

from course.checks import contract


@pytest.fixture(scope="module")
def text(site_dir):
    html = (site_dir / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    html = re.sub(r'<span class="katex-mathml">.*?</span></span>', "", html, flags=re.S)  # keep KaTeX's visible text once
    plain = re.sub(r"<[^>]+>", "", html)
    return re.sub(r"\s+", " ", plain)


@pytest.mark.parametrize("expected", [
    "5,120 → 17,408",           # the anchor's FFN widening
    "3.4 倍",                   # 17,408 / 5,120
    "768 → 3,072",              # GPT-2 small, 4x
    "8,192 → 22,016",           # DeepSeek-LLM-67B and the 8d/3 rule
    "5,120 → 12,288 = 2 × 6,144",  # q_proj with the output gate
    "61.6%",                    # FFN share, whole checkpoint
    "63.6%",                    # FFN share, text model only
    "17,112,760,320",           # the 64 trunk MLPs
    "27,781,427,952",           # the checkpoint, equal to the published count
    "128 次",                   # 64 layers x 2 residual writes
    "11.36",                    # sqrt(129)
    "99.995",                   # SiLU(10) x 10
    "1,024 / 2,048 / 4,096",    # Vaswani Table 3 widths
    "5.12 / 4.92 / 4.75",       # ... their dev perplexities
    "53M / 65M / 90M",          # ... their sizes
    "GELU 1.983 对 SwiGLU 1.944",  # Shazeer 2020 Table 1
    "46.7%",                    # Qiu et al. 2025, first-token share
    "4.8%",
    "gpt-oss 7",                # swiglu_limit
    "DeepSeek V4 10",
    "4 × 25 = 100",             # Kimi K3's SiTU-GLU bound
    "0.841、0.272、0.318、0.841",  # the two-neuron FFN with GPT-2's GELU
    "ŷ = −p − n + 2",           # ... without an activation
    "255.94",                   # sqrt(65,504): where SiLU(x) * x leaves fp16
    "3.39 × 10³⁸",              # bf16's maximum, the anchor's dtype
    "21,845",                   # DeepSeek's 8d/3, which 22,016 only approximates
    "2.69",                     # ... 22,016 / 8,192
    "c_fc、c_proj 各带一个偏置（3,072 个和 768 个数）",  # what the shape widget leaves out
    "设计 1 · 朴素方案",          # stepper tabs that collide neither with ①-⑩ nor with ④'s 第 1/2/3 步
    "（④ 第 3 步的打乱实验）",      # 误解 1 names the step it means
    "（权重本身也随内容变，见误解 2）",  # ⑩'s first answer keeps 误解 2's caveat
    "按 ② 末尾的假设（权重定下之后，值通路是线性的）",  # ③'s naive plan is stated as the assumption it is
    "Geva 等 2021",              # the key-value analogy's source
    "尤其在高层，它把概率集中到紧跟在这些模式后面的词上",  # ... no stronger than its abstract
    "Hyper-Connections，DeepSeek 的 mHC",  # F15: the widened stream, sourced
])
def test_page_shows_the_computed_number(text, expected):
    assert expected in text


@pytest.mark.parametrize("unsourced", [
    "第 1 步 · 朴素方案",        # the old stepper tabs
    "Gated Residual",            # FACTS-L2-L4 F15: not found
    "QK-Clip",                   # DeepSeek V4's "QKV RMSNorm replaces QK-Clip": in no checked source
    "weight decay 拉向 0",        # the standard gain's weight decay: in no checked source
])
def test_page_leaves_out(text, unsourced):
    assert unsourced not in text


def test_the_ffn_xor_answer_is_behind_a_closed_details(site_dir):
    """Tip 3 asks which review goes wrong first; the widget's answer waits in a collapsed 「看答案」."""
    from course.widgets import load_model
    html = (site_dir / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    answer = load_model("ffn-xor").view({"activation": "relu", "b2": -1.0})["out"]["first-wrong"]
    at = html.index(answer)
    opened = html.rindex("<details", 0, at)
    assert "</details>" not in html[opened:at] and html[opened:html.index(">", opened)] == '<details class="ffn-first-wrong"'
    assert "看答案" in html[opened:at]


def test_header_counts_the_in_page_experiments(site_dir, text):
    html = (site_dir / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    count = len(set(re.findall(r'data-widget="([a-z-]+)"', html)))
    assert f"页内实验 ×{count}" in text and count >= 4
    assert "本课一问：注意力取回信息之后，每个 token 自己还要做什么加工？" in text


def test_sections_in_order(text):
    positions = [text.find(mark) for mark in contract({"sections": ["真模型"]})]
    assert -1 not in positions and positions == sorted(positions)


def test_formula_terms_are_buttons_with_explanations(site_dir):
    html = (site_dir / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    terms = re.findall(r'<button type="button" class="term" data-term="([^"]+)"', html)
    assert terms == ["act", "x", "W_up", "b_up", "W_down", "b_down"]
    for term in terms:
        assert f'data-term-info="{term}"' in html


def test_lesson_without_a_section_fails_the_build(scratch_project):
    lesson = scratch_project / "lessons" / "c4" / "l1-ffn.md"
    lesson.write_text(lesson.read_text(encoding="utf-8").replace("## ⑧ 一句话", "## 一句话"), encoding="utf-8")
    result = build_copy(scratch_project)
    assert result.returncode != 0 and "lessons/c4/l1-ffn.md" in result.stderr and "⑧" in result.stderr


def test_real_model_section_reads_the_export(text):
    """Once lab/ has exported, the section shows our model's numbers, decided by the data."""
    from support import ROOT
    from course.data import load_data
    from course.facts import build_facts
    from course.widgets import load_model
    real = build_facts(load_data(ROOT / "data", ROOT))["real"]
    assert real is not None, "data/real-model/ is committed, so the section must render"
    assert f"= {real['residual_init_std']:.5f}" in text  # 0.02 / sqrt(2 x 4) in the evolution table
    reading = load_model("neuron-heatmap").reading({"data": real["neurons"]})
    assert len(reading["points"]) == 3 and all(text.count(p) == 1 for p in reading["points"])
    assert "这一节正在准备" not in text


def real_facts():
    from support import ROOT
    from course.data import load_data
    from course.facts import build_facts
    return build_facts(load_data(ROOT / "data", ROOT))["real"]


def export_files():
    import json
    from support import ROOT
    return {n: json.loads((ROOT / "data" / "real-model" / f"{n}.json").read_text(encoding="utf-8"))
            for n in ("model-card", "ablation", "neurons")}


def mean(xs):
    return sum(xs) / len(xs)


def test_the_lessons_readings_of_the_ablation_are_on_the_page(text):
    """Every generated reading of the chart (the widget shows none on this page) is printed once."""
    from course.widgets import load_model
    real, abl = real_facts(), load_model("ablation")
    points = abl.fit_points(real["ablation"], real["train_tokens"], real["epochs"], real["val_chapters"])
    assert len(points) == 4  # short bullets on a phone
    readings = [abl.split_reading(real["ablation"]), *points,
                abl.attention_depth_reading(real["ablation"]), abl.evidence_sentence(real["ablation"])]
    for reading in readings:
        assert text.count(reading) == 1, reading
    for sentence in abl.sentences(real["ablation"]) + abl.curve_sentences(real["ablation"]):
        assert sentence not in text  # readings=False: the per-variant template is not repeated here
    assert "唯一的区别就是非线性" not in text and "答案以那一节的实测数据为准" not in text


def test_the_ablation_readings_are_true_against_the_export(text):
    """The figures in those readings, recomputed here from ablation.json and model-card.json alone."""
    files = export_files()
    v = {x["name"]: x for x in files["ablation"]["variants"]}
    m = {k: mean(x["val_losses"]) for k, x in v.items()}
    rng = {k: max(x["val_losses"]) - min(x["val_losses"]) for k, x in v.items()}
    total, recovered, rest = m["no_ffn"] - m["baseline"], m["no_ffn"] - m["linear_ffn"], m["linear_ffn"] - m["baseline"]
    floor = max(rng["linear_ffn"], rng["baseline"])
    assert rest > floor and 0.5 < recovered / total < 1  # the export this page reads: the linear map does most
    assert f"FFN 一共让验证集损失降了 {total:.3f}" in text
    assert f"其中 {recovered:.3f}（{100 * recovered / total:.0f}%）线性 FFN 就做到了" in text
    assert f"剩下的 {rest:.3f}（{100 * rest / total:.0f}%）要靠非线性，是这组比较噪声底线 {floor:.3f} 的 {rest / floor:.1f} 倍" in text
    card = files["model-card"]
    train = mean(v["baseline"]["train_losses"])
    assert f"训练集只有 {card['split']['train_tokens']:,} 个 token，每个模型把它读了 {card['training']['epochs']:.1f} 遍" in text
    assert f"基线最后的训练损失是 {train:.3f}、验证集损失 {m['baseline']:.3f}，差 {m['baseline'] - train:.3f}" in text
    hs = v["baseline"]["histories"]
    gaps = [mean([h[i]["val_loss"] - h[i]["train_loss"] for h in hs]) for i in range(len(hs[0]))]
    half = len(gaps) // 2
    assert all(b > a for a, b in zip(gaps[half:], gaps[half + 1:]))  # the gap grows through the second half
    assert f"第 {hs[0][half]['step']:,} 步时是 {gaps[half]:.3f}" in text
    for name in ("linear_ffn", "no_ffn", "attn_only_12l"):
        gap = m[name] - mean(v[name]["train_losses"])
        assert gap < m["baseline"] - train and f" {gap:.3f}" in text
    deep, shallow = v["attn_only_12l"], v["no_ffn"]
    assert m["attn_only_12l"] - m["no_ffn"] > max(rng["attn_only_12l"], rng["no_ffn"])
    assert f"纯注意力 12 层的参数是去掉 FFN 的 {deep['params'] / shallow['params']:.1f} 倍" in text
    assert f"它在训练集上的损失 {mean(deep['train_losses']):.3f}" in text and "「这样训不出来」" in text
    for name in ("linear_ffn", "no_ffn", "attn_only_12l"):
        assert f"{m[name] - m['baseline']:.3f}" in text


def test_the_overfitting_readings_are_true_against_the_export(text):
    """The linear FFN overfits too (less), the gap between the two FFNs holds still, and the split on
    the training losses: recomputed here from ablation.json's final losses and histories."""
    v = {x["name"]: x for x in export_files()["ablation"]["variants"]}
    train = {k: mean(x["train_losses"]) for k, x in v.items()}
    val = {k: mean(x["val_losses"]) for k, x in v.items()}
    total, rest = train["no_ffn"] - train["baseline"], train["linear_ffn"] - train["baseline"]
    assert f"在训练集损失上做同样的拆分，是 {100 * (1 - rest / total):.0f}% 对 {100 * rest / total:.0f}%" in text
    assert rest > val["linear_ffn"] - val["baseline"] and f"非线性在训练集上拿到的好处（{rest:.3f}）" in text

    def gaps(name):
        hs = v[name]["histories"]
        return [(hs[0][i]["step"], mean([h[i]["val_loss"] - h[i]["train_loss"] for h in hs])) for i in range(len(hs[0]))]

    lin, half = gaps("linear_ffn"), len(gaps("linear_ffn")) // 2
    assert all(b[1] > a[1] for a, b in zip(lin[half:], lin[half + 1:]))  # the linear FFN's gap grows too
    end, base_end = val["linear_ffn"] - train["linear_ffn"], val["baseline"] - train["baseline"]
    assert end < base_end
    assert (f"线性 FFN 也在过拟合，只是轻一些：它的这个差距也越训越大（第 {lin[half][0]:,} 步 {lin[half][1]:.3f} → "
            f"训练结束 {end:.3f}，是基线的 {100 * end / base_end:.0f}%）") in text

    def val_curve(name):
        hs = v[name]["histories"]
        return [mean([h[i]["val_loss"] for h in hs]) for i in range(len(hs[0]))]

    steps = [e["step"] for e in v["baseline"]["histories"][0]]
    diff = [a - b for a, b in zip(val_curve("linear_ffn"), val_curve("baseline"))]
    rng = lambda xs: max(xs) - min(xs)  # noqa: E731
    floor = max(rng(v["linear_ffn"]["val_losses"]), rng(v["baseline"]["val_losses"]))
    start = min(k for k in range(len(diff) - 2) if rng(diff[k:]) <= floor / 2)
    assert start > 0 and rng(diff[start - 1:]) > floor / 2
    assert (f"基线和线性 FFN 在验证集上的差距，从第 {steps[start]:,} 步起一直在 {min(diff[start:]):.3f}–"
            f"{max(diff[start:]):.3f} 之间（起落 {rng(diff[start:]):.3f}，不到噪声底线 {floor:.3f} 的一半）") in text
    assert "手上只有这个稳定的差距" in text
    # ⑦: training longer on the same data makes the baseline overfit more; the question says which way.
    assert "训练更久（基线停住、对照继续降）或数据更多（基线不再过拟合）之后" in text
    assert "线性 FFN 也在过拟合，只是轻一些。所以这些差距" in text


def test_the_heatmap_caption_shows_both_maxima_from_the_export(text):
    """Chosen on the selection chapters, read on the others: every option shows both maxima, and the
    opening neuron's caption names the chapters (from neurons.json's select_max and read_max)."""
    from course.widgets import load_model
    neurons = export_files()["neurons"]
    sel, read = neurons["split"]["select_chapters"], neurons["split"]["read_chapters"]
    for n in neurons["neurons"]:
        assert f"#{n['index']} · {n['select_max']:.3f} → {n['read_max']:.3f}" in text
    first = load_model("neuron-heatmap").view({"neuron": None, "data": neurons})
    n = next(x for x in neurons["neurons"] if x["index"] == first["neuron"])
    assert (f"最大激活：第 {sel[0]}–{sel[1]} 回 {n['select_max']:.3f} → 第 {read[0]}–{read[1]} 回 "
            f"{n['read_max']:.3f}") in text
    assert f"神经元 · 最大激活（第 {sel[0]}–{sel[1]} 回 → 第 {read[0]}–{read[1]} 回）" in text


def test_the_linear_control_and_the_widths_are_described_from_the_shapes(text):
    files = export_files()
    arch = files["model-card"]["architecture"]
    d, d_ff = arch["d_model"], arch["d_ff"]
    lin = next(x for x in files["ablation"]["variants"] if x["name"] == "linear_ffn")["d_ff"]
    assert 2 * d * lin == 3 * d * d_ff
    assert f"效果等于一个 {d}×{d} 矩阵（{d * d:,} 个数）" in text  # one d x d map
    assert "只能表达" not in text
    # Two linear layers merge into one, not none: what the no-FFN model lacks, and why it is not redundant here.
    assert "合成的是一层，不是零层" in text and "那个玩具在这一层之后什么都没有" in text
    assert "两层线性合成一层" in text and "门控的乘法也一起拿掉了" in text and "没有为它们单独调过" in text
    assert d_ff == 43 * 16 and "43×16" in text.replace(" ", "")
    assert f"多 {100 * (3 * d * d_ff / (2 * d * 4 * d) - 1):.1f}%" in text
    assert "nats / token" in text and "为底" in text


def test_the_model_card_gives_the_train_losses_and_the_neuron_export(text):
    files = export_files()
    for x in files["ablation"]["variants"]:
        assert f"{mean(x['train_losses']):.3f}" in text
    neurons = files["neurons"]
    assert neurons["command"] in text and files["model-card"]["command"] in text
    assert f"重训模型的验证集损失是 {neurons['model']['val_loss']:.3f}" in text
    seed0 = next(x for x in files["ablation"]["variants"] if x["name"] == "baseline")["val_losses"][0]
    assert f"消融里的种子 0 是 {seed0:.3f}" in text
    assert ("全程用 fp32 计算" in text) == (neurons["model"]["precision"] == "fp32")
    # The card's configs.export predates the 8-neuron control group and cannot be re-exported without
    # every run: no page reads it (the group sizes come from neurons.json).
    assert "n_random" not in text and "configs" not in text


def test_the_heatmap_reading_is_true_against_the_export(text):
    """Chosen on some validation chapters, read on the others; the counts recomputed from neurons.json."""
    from course.widgets import load_model
    neurons = export_files()["neurons"]
    split = neurons["split"]
    assert split["select_chapters"][1] < split["read_chapters"][0] <= neurons["passage"]["chapter"]
    assert all(split["read_chapters"][0] <= c["chapter"] for n in neurons["neurons"] for c in n["top_contexts"])
    kinds = [n["kind"] for n in neurons["neurons"]]
    assert kinds.count("random") >= kinds.count("top")

    def concentrated(n):
        whole = [c["token"] for c in n["top_contexts"] if not c["fragment"]]
        return any(2 * whole.count(t) > len(n["top_contexts"]) for t in whole)

    top = [n for n in neurons["neurons"] if n["kind"] == "top"]
    rnd = [n for n in neurons["neurons"] if n["kind"] == "random"]
    reading = load_model("neuron-heatmap").reading({"data": neurons})
    assert (reading["top"]["concentrated"], reading["random"]["concentrated"]) == \
        (sum(map(concentrated, top)), sum(map(concentrated, rnd)))
    assert all(p in text for p in reading["points"]) and "这只是一个示意" in reading["summary"]
    sel, read = split["select_chapters"], split["read_chapters"]
    assert f"在第 {sel[0]}–{sel[1]} 回按最大激活挑出 {len(top)} 个神经元" in text
    assert f"都只来自第 {read[0]}–{read[1]} 回" in text and "不能拿来比较两组" in text
