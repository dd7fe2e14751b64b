"""C4 第 2 课 (残差): every number on the page comes from facts or a
widget model, and the page has its contract's sections."""
import math

from support import ROOT

from course.checks import contract
from course.data import load_data
from course.facts import build_facts
from course.widgets import load_model


def page(site_dir):
    return (site_dir / "c4" / "l2-residual" / "index.html").read_text(encoding="utf-8")


def test_the_numbers_come_from_facts_and_models(site_dir):
    html = page(site_dir)
    facts = build_facts(load_data(ROOT / "data", ROOT))
    anchor, gpt2, resnet = facts["anchor"], facts["gpt2"], facts["papers"]["resnet"]
    assert f"{anchor['residual_writes']} 次写入" in html and f"{anchor['residual_std']:.2f}" in html  # 128, 11.36
    assert f"{gpt2['residual_init_std']:.5f}" in html and "0.00408" in html  # 0.02 / sqrt(24)
    assert f"{resnet['deep']['plain']:.2f}%" in html and f"{resnet['deep']['resnet']:.2f}%" in html
    paths = load_model("residual-paths").view({"w": [0.5, 0.5, 0.5], "path": "000"})
    assert paths["out"]["plain-grad"] == "0.125" and "= 3.375" in html and "0.125" in html
    ds = load_model("depth-signal")
    ratio = ds.ratio(ds.simulate(16, True, True, "unit")["grad"][0] / ds.simulate(16, False, True, "unit")["grad"][0])
    assert f"梯度差了 {ratio} 倍" in html
    assert f"{math.sqrt(129):.2f}" in html


def test_sections_follow_the_contract(site_dir):
    html = page(site_dir)
    positions = [html.find(f">{mark}") for mark in contract({"sections": ["真模型"]})]
    assert -1 not in positions and positions == sorted(positions)
    assert 'data-widget="depth-signal"' in html and 'data-widget="residual-paths"' in html


def test_real_model_section_reads_the_export(site_dir):
    """data/real-model/residual/ is committed, so the section shows our runs, every sentence decided by them."""
    html = page(site_dir)
    r = build_facts(load_data(ROOT / "data", ROOT))["residual"]
    assert r is not None, "data/real-model/residual/ is committed, so the section must render"
    assert "这一节正在准备" not in html
    for sentence in load_model("ablation").sentences(r["comparison"]):
        assert sentence in html
    evidence = load_model("residual-evidence")
    assert evidence.depth_reading(r["variants"], r["band"]["range"]) in html
    state = evidence.view({"data": r["evidence"]})
    assert state["stream_reading"] in html
    for reading in state["gradient_readings"]:
        assert reading in html
    assert f"{r['band']['min']:.3f}–{r['band']['max']:.3f}" in html  # the baseline's seed band
    assert r["card"]["command"] in html


def test_the_lesson_is_published_in_the_course(site_dir):
    """Written, not a draft: in the nav and the course map, and lesson 1's next gap links to it."""
    home = (site_dir / "index.html").read_text(encoding="utf-8")
    first = (site_dir / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    assert 'href="c4/l2-residual/"' in home
    assert 'href="../l2-residual/"' in first
    assert "草稿" not in page(site_dir)
