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
])
def test_page_shows_the_computed_number(text, expected):
    assert expected in text


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
    for sentence in load_model("ablation").sentences(real["ablation"]):
        assert sentence in text
    reading = load_model("neuron-heatmap").reading({"data": real["neurons"]})
    assert reading["summary"] in text
    assert "这一节正在准备" not in text
