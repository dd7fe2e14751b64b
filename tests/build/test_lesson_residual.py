"""C4 第 2 课 (残差, a draft until its lab data lands): every number on the page comes from facts or a
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
