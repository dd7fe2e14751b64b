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
    readings = [abl.band_reading(real["ablation"]), abl.split_reading(real["ablation"]), *points,
                abl.attention_depth_reading(real["ablation"]), abl.evidence_sentence(real["ablation"])]
    for reading in readings:
        assert text.count(reading) == 1, reading
    for sentence in abl.sentences(real["ablation"]) + abl.curve_sentences(real["ablation"]):
        assert sentence not in text  # readings=False: the per-variant template is not repeated here
    assert "唯一的区别就是非线性" not in text and "答案以那一节的实测数据为准" not in text
    # The old rule (the larger of two seed ranges) and the old readings are gone from the page.
    for old in ("噪声底线", "明显过拟合", "线性 FFN 也在过拟合", "手上只有这个稳定的差距", "训练集只有"):
        assert old not in text, old


def seed_protocol(base, other, band):
    """The seeds protocol, written out again: base, other {seed: loss}; -> (pairs, mean gap, measured)."""
    diffs = [other[s] - base[s] for s in sorted(base) if s in other]
    gap = mean(diffs)
    if len(diffs) == 1:
        return 1, gap, abs(gap) >= 5 * band
    same = all(d > 0 for d in diffs) or all(d < 0 for d in diffs)
    return len(diffs), gap, same and abs(gap) > band


def finals(variant, key="val_losses"):
    return dict(zip(variant["seeds"], variant[key]))


def test_the_ablation_band_and_split_readings_are_true_against_the_export(text):
    """The baseline's band, the far seed that widens it, and the split by the protocol, recomputed
    here from ablation.json alone."""
    v = {x["name"]: x for x in export_files()["ablation"]["variants"]}
    base = v["baseline"]
    vals = sorted(zip(base["val_losses"], base["seeds"]))
    band = vals[-1][0] - vals[0][0]
    assert f"基线 {len(vals)} 个种子训练结束时的验证集损失在 {vals[0][0]:.3f}–{vals[-1][0]:.3f} 之间（种子带 {band:.3f}）" in text
    far, rest = vals[-1], vals[:-1]
    assert far[0] - rest[-1][0] > 2 * (rest[-1][0] - rest[0][0])  # the export this page reads: one seed far above
    assert f"其中 {len(rest)} 个挤在 {rest[0][0]:.3f}–{rest[-1][0]:.3f}，种子 {far[1]} 独自落在 {far[0]:.3f}。" in text
    hs = {s: h for s, h in zip(base["seeds"], base["histories"])}
    late = hs[far[1]]
    assert all(e["val_loss"] > max(hs[s][i]["val_loss"] for _, s in rest) for i, e in enumerate(late) if i >= 1)
    early = [hs[s][1]["val_loss"] for _, s in rest]
    assert (f"它在第 {late[0]['step']:,}–{late[1]['step']:,} 步之间落到了后面：第 {late[1]['step']:,} 步时它是 "
            f"{late[1]['val_loss']:.3f}，其余种子 {min(early):.3f}–{max(early):.3f}，此后一直没有追上。") in text
    # what the band's width hinges on: the other seeds' spread, and the pairs the far seed never joined
    rest_band = rest[-1][0] - rest[0][0]
    assert f"只看其余 {len(rest)} 个种子，种子带只有 {rest_band:.3f}；" in text
    assert f"这个「分不出」取决于种子 {far[1]} 这一次训练" in text
    assert far[1] not in v["linear_ffn"]["seeds"] and f"有的对照没有跑种子 {far[1]}" in text

    shared = [s for s in base["seeds"] if s in v["no_ffn"]["seeds"] and s in v["linear_ffn"]["seeds"]]
    m = {k: mean([finals(v[k])[s] for s in shared]) for k in ("no_ffn", "linear_ffn", "baseline")}
    total, recovered, rest_ = m["no_ffn"] - m["baseline"], m["no_ffn"] - m["linear_ffn"], m["linear_ffn"] - m["baseline"]
    n, gap, measured = seed_protocol(finals(base), finals(v["no_ffn"]), band)
    assert measured and gap == pytest.approx(total)  # the FFN's gain is measured ...
    assert (f"基线这几个种子平均 {m['baseline']:.3f}；图上的 {mean(base['val_losses']):.3f} 是全部 {len(base['seeds'])} 个种子的平均）。"
            f"在这几个种子上，从去掉 FFN 的 {m['no_ffn']:.3f} 到基线，"
            f"FFN 一共让验证集损失降了 {total:.3f}（{n} 个种子配对，每一对都高，平均高 {gap:.3f}，"
            f"是基线种子带 {band:.3f} 的 {gap / band:.1f} 倍：算测到了）") in text
    n, gap, measured = seed_protocol(finals(v["linear_ffn"]), finals(v["no_ffn"]), band)
    assert measured and recovered / total > 0.5
    assert (f"其中 {recovered:.3f}（{100 * recovered / total:.0f}%）线性 FFN 就做到了（线性 FFN 对去掉 FFN，"
            f"{n} 个种子配对，每一对都高，平均高 {gap:.3f}，是基线种子带 {band:.3f} 的 {gap / band:.1f} 倍：算测到了）") in text
    n, gap, measured = seed_protocol(finals(base), finals(v["linear_ffn"]), band)
    assert not measured and 0 < rest_ < band and gap == pytest.approx(rest_)  # ... the non-linear part is not
    assert (f"剩下的 {rest_:.3f} 是线性 FFN 比基线差的部分，按我们的规则还不算测到：{n} 个种子配对，"
            f"方向一致但平均只高 {gap:.3f}，没有超出基线种子带 {band:.3f}：分不出高下") in text
    assert "要靠非线性" not in text and "非线性的好处是真的" not in text

    t = {k: mean([finals(v[k], "train_losses")[s] for s in shared]) for k in ("no_ffn", "linear_ffn", "baseline")}
    t_total, t_rest = t["no_ffn"] - t["baseline"], t["linear_ffn"] - t["baseline"]
    t_band = max(base["train_losses"]) - min(base["train_losses"])
    n, gap, measured = seed_protocol(finals(base, "train_losses"), finals(v["linear_ffn"], "train_losses"), t_band)
    assert not measured
    assert (f"在训练集损失上做同样的拆分，是 {100 * (1 - t_rest / t_total):.0f}% 对 {100 * t_rest / t_total:.0f}%"
            f"（线性 FFN 比基线高 {t_rest:.3f}；训练损失的种子带也按同样的办法算：{n} 个种子配对，方向一致但平均只高 {gap:.3f}，"
            f"没有超出基线种子带 {t_band:.3f}：分不出高下）") in text
    # ⑦ says in its own words why the linear FFN's gap is not measured: true of this export.
    assert "基线有一个种子起步晚，把种子带撑得很宽，线性 FFN 比基线差的那部分因此还不算测到" in text


def test_the_ablation_fit_readings_are_true_against_the_export(text):
    """Training against validation loss, the first pass, the controls' gaps and the linear FFN against
    the baseline at every evaluation, recomputed from ablation.json and model-card.json."""
    files = export_files()
    card, v = files["model-card"], {x["name"]: x for x in files["ablation"]["variants"]}
    base = v["baseline"]
    train, val = mean(base["train_losses"]), mean(base["val_losses"])
    assert (f"训练集有 {card['split']['train_tokens']:,} 个 token，每个模型训练时读到的 token 数是它的 {card['training']['epochs']:.2f} 倍。"
            f"基线（{len(base['seeds'])} 个种子的平均）训练结束时训练损失 {train:.3f}、验证集损失 {val:.3f}，"
            f"验证集只高 {val - train:.3f}") in text
    hs = base["histories"]
    gaps = [mean([h[i]["val_loss"] - h[i]["train_loss"] for h in hs]) for i in range(len(hs[0]))]
    mid = len(gaps) // 2  # lab/train.py draws windows at random with replacement: no passes to speak of
    assert f"验证集只高 {val - train:.3f}；第 {hs[0][mid]['step']:,} 步时这个差距是 {gaps[mid]:.3f}。" in text
    assert "随机抽的窗口（有放回）" in text and "读第一遍" not in text and "背书" not in text
    assert all(h[-1]["val_loss"] < h[-2]["val_loss"] for h in hs)  # every seed still falling at the end
    tokens = hs[0][-1]["tokens"] - hs[0][-2]["tokens"]
    start, end = mean([h[-2]["val_loss"] for h in hs]), mean([h[-1]["val_loss"] for h in hs])
    assert (f"最后 {tokens:,} 个 token 里，每个种子的验证集损失都还在降（平均从 {start:.3f} 到 {end:.3f}）："
            "它还在学能推广到没见过的文字上的东西，没有过拟合的迹象") in text

    controls = {k: mean(x["val_losses"]) - mean(x["train_losses"]) for k, x in v.items() if k != "baseline"}
    assert all(g < val - train for g in controls.values())
    assert (f"对照模型的这个差距都比基线小（线性 FFN {controls['linear_ffn']:.3f}、去掉 FFN {controls['no_ffn']:.3f}、"
            f"纯注意力 12 层 {controls['attn_only_12l']:.3f}）") in text

    lin = {s: h for s, h in zip(v["linear_ffn"]["seeds"], v["linear_ffn"]["histories"])}
    by_seed = {s: h for s, h in zip(base["seeds"], hs)}
    steps = []  # (step, band at that step, mean paired gap, every pair higher, measured)
    for i, e in enumerate(hs[0]):
        at = [h[i]["val_loss"] for h in hs]
        band = max(at) - min(at)
        diffs = [lin[s][i]["val_loss"] - by_seed[s][i]["val_loss"] for s in lin]
        n, gap, measured = seed_protocol({s: by_seed[s][i]["val_loss"] for s in lin},
                                         {s: lin[s][i]["val_loss"] for s in lin}, band)
        steps.append((e["step"], band, gap, all(d > 0 for d in diffs), measured))
    assert not any(x[4] for x in steps)  # no evaluation measured by the band at its step
    run = []
    for x in reversed(steps):
        if not x[3]:
            break
        run.insert(0, x)
    assert len(run) > 1
    ahead = [e["step"] for i, e in enumerate(hs[0])
             if all(lin[s][i]["val_loss"] < by_seed[s][i]["val_loss"] for s in lin)]
    assert (f"线性 FFN 和基线按种子配对，在每次评估时比较（{len(lin)} 个种子）："
            + (f"第 {'、'.join(f'{a:,}' for a in ahead)} 步时每一对都是线性 FFN 更低（没有超出那一步的种子带）；" if ahead else "")
            + f"从第 {run[0][0]:,} 步起，"
            f"每次评估每一对都是线性 FFN 更高，平均差 {min(x[2] for x in run):.3f}–{max(x[2] for x in run):.3f}，"
            f"但没有一次超出基线在那一步的种子带（最窄也有 {min(x[1] for x in run):.3f}），按规则一次也不算测到") in text
    sanguo = next(b for b in card["split"]["books"] if b["file"] == files["neurons"]["corpus"]["file"])
    assert files["neurons"]["corpus"]["file"] == "sanguo-yanyi.txt"
    assert f"《三國演義》的验证集是第 {sanguo['val_chapters'][0]}–{sanguo['val_chapters'][-1]} 回" in text


def test_the_ablation_depth_and_evidence_readings_are_true_against_the_export(text):
    """The deep attention-only stack and ⑦'s evidence sentence, by the protocol, from ablation.json."""
    v = {x["name"]: x for x in export_files()["ablation"]["variants"]}
    base = v["baseline"]
    band = max(base["val_losses"]) - min(base["val_losses"])
    deep, shallow = v["attn_only_12l"], v["no_ffn"]
    n, gap, measured = seed_protocol(finals(shallow), finals(deep), band)
    assert n == 1 and not measured  # the export this page reads: one seed, under five bands
    same = mean([x for s, x in finals(shallow).items() if s in deep["seeds"]])
    assert (f"纯注意力 12 层的参数是去掉 FFN 的 {deep['params'] / shallow['params']:.1f} 倍，验证集损失 "
            f"{mean(deep['val_losses']):.3f}，同样种子的去掉 FFN 是 {same:.3f}：只有 1 个种子，高 {gap:.3f}，"
            f"是基线种子带 {band:.3f} 的 {gap / band:.1f} 倍，不到单种子所需的 5 倍：分不出高下") in text
    bigram = export_files()["ablation"]["references"]["bigram"]
    assert mean(deep["val_losses"]) > bigram and same > bigram
    assert f"两个都没有 FFN 的模型，验证集损失都还在插值 bigram（只看前一个 token 的计数模型，{bigram:.2f}）之上" in text
    assert "差距没有测到，这里不下结论。" in text and "「这样训不出来」" not in text

    words = {"linear_ffn": "线性 FFN", "no_ffn": "去掉 FFN", "attn_only_12l": "纯注意力 12 层"}
    for name, word in words.items():
        n, gap, measured = seed_protocol(finals(base), finals(v[name]), band)
        head = f"{word} {'高' if gap > 0 else '低'} {abs(gap):.3f}（"
        assert head in text, head
        if measured:
            assert f"{head}{n} 个种子配对，每一对都{'高' if gap > 0 else '低'}，平均{'高' if gap > 0 else '低'} {abs(gap):.3f}，是基线种子带 {band:.3f} 的 {abs(gap) / band:.1f} 倍：算测到了）" in text
        else:
            assert text.split(head, 1)[1].split("）", 1)[0].endswith("：分不出高下"), head
    # The FAQ's answer on the deep stack: one seed against the baseline's same seed, not measured.
    n, gap, measured = seed_protocol(finals(base), finals(deep), band)
    assert n == 1 and not measured and gap > 0
    assert (f"和同样种子的基线比，只有 1 个种子，高 {gap:.3f}，是基线种子带 {band:.3f} 的 {gap / band:.1f} 倍，"
            "不到单种子所需的 5 倍：分不出高下") in text
    assert "这个问题在我们的数据里还没有答案" in text and "在我们的实验里没有弥补上" not in text


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
    seed0 = next(x for x in files["ablation"]["variants"] if x["name"] == "baseline")["val_losses"][0]
    if neurons["command"] == files["model-card"]["command"] and neurons["model"]["val_loss"] == seed0:
        # the second edition: the heatmap reads the ablation's own checkpoint of seed 0
        assert f"这些神经元来自下面消融里的基线种子 0（验证集损失 {seed0:.3f}）" in text and "重训模型" not in text
    else:
        assert f"重训模型的验证集损失是 {neurons['model']['val_loss']:.3f}" in text
        assert f"消融里的种子 0 是 {seed0:.3f}" in text
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
