"""C3 第 3 课 (归纳头): the page says what the exports say — the copy task's arms, the scan's count of seeds
with an induction head (by the rule course/facts/induction.py declares), the text check's shares, one table row
per natural-text run, Olsson's figures from papers.json — and the widget and both exercises are on it."""
import functools
import html as htmllib
import re

import numfmt
from support import ROOT

from course.data import load_data
from course.facts import build_facts


def page(site_dir):
    return (site_dir / "c3" / "l3-induction" / "index.html").read_text(encoding="utf-8")


def text_of(site_dir):
    body = re.sub(r'<span class="katex-mathml">.*?</span>', "", page(site_dir), flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", body))


@functools.cache
def facts():
    return build_facts(load_data(ROOT / "data", ROOT))


def test_the_copy_task_arms_are_the_exports(site_dir):
    ct = facts()["copy_task"]
    two, one, sm = (ct["arms"][v] for v in ("attn_only_2l", "attn_only_1l", "smeared_1l"))
    text = text_of(site_dir)
    assert f"都在第 {two['cliff_lo']}～{two['cliff_hi']} 步之间掉到一半以下" in text
    assert f"一直停在 {numfmt.num(one['end_lo'], 2)}～{numfmt.num(one['end_hi'], 2)}" in text
    assert f"比「只知道出现过哪些符号」的 {numfmt.num(ct['seen_floor'], 2)} 还差一点" in text
    assert one["end_lo"] > ct["seen_floor"]  # the sentence's 「还差一点」 is true
    assert f"第 {sm['cliff_lo']}～{sm['cliff_hi']} 步就过半" in text
    assert 'data-widget="copy-task"' in page(site_dir)


def test_the_scan_is_read_by_the_declared_rule(site_dir):
    S = facts()["induction_scan"]
    base = S["arms"]["baseline"]
    text = text_of(site_dir)
    n = len(base["seeds"])
    assert f"{n} 个种子里有归纳头的：{base['with_induction_head']} 个。" in text
    assert f"可重复收益只有 {numfmt.num(base['gain']['lo'], 3)}～{numfmt.num(base['gain']['hi'], 3)} 奈特" in text
    T = S["text"]
    assert f"猜对 {numfmt.pct(T['copy_right'])}" in text and f"只有 {numfmt.pct(T['copy_only'])}" in text
    assert abs(T["copy_only"] - (T["copy_right"] - T["both_right"])) < 1e-12


def test_every_natural_text_run_has_its_row(site_dir):
    C = facts()["induction_curves"]
    text = text_of(site_dir)
    rows = [r for v in ("attn_only_2l", "attn_only_1l", "smeared_1l") if v in C["arms"] for r in C["arms"][v]["runs"]]
    assert rows
    for r in rows:
        assert f"{r['seed']}{numfmt.num(r['val_loss'], 3)}{numfmt.num(r['gain'], 3)}" in re.sub(r"\s+", "", text)


def test_olssons_figures_come_from_papers_json(site_dir):
    O = facts()["papers"]["olsson"]
    text = text_of(site_dir)
    assert f"约 {numfmt.num(O['phase']['after_nats'], 1)} 奈特" in text
    assert f"第 {O['icl']['late_token']} 个 token 的损失减第 {O['icl']['early_token']} 个" in text
    assert f"{O['size']['models']} 个模型" in text


def test_both_exercises_are_on_the_page(site_dir):
    html = page(site_dir)
    for name in ("two-head-copier", "prefix-matching"):
        assert f'id="{name}"' in html or f'data-exercise="c3/l3/{name}"' in html, name
