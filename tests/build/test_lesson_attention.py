"""C3 第 1 课 (注意力): the page's worked numbers are the toy model's, its claims about the cheap fixes
and the sqrt(d_k) saturation hold in the models, its 真模型 sentences say what the attention export
shows, the chapter is linked from C4 第 1 课, and the page has its contract's sections."""
import html as htmllib
import re

import numfmt
from support import ROOT

from course.checks import contract
from course.data import load_data
from course.facts import build_facts
from course.widgets import load_model


def page(site_dir):
    return (site_dir / "c3" / "l1-attention" / "index.html").read_text(encoding="utf-8")


def text_of(site_dir):
    body = re.sub(r'<span class="katex-mathml">.*?</span>', "", page(site_dir), flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", body))


def test_the_hand_computation_is_on_the_page(site_dir):
    text = text_of(site_dir)
    wk = load_model("attention-toy").worked("plain", "给了")
    assert f"{wk['weights'][0]:.3f}" == "0.849" and f"{wk['total']:.2f}" == "19.92"
    for x in wk["exps"]:
        assert f"{x:.2f}" in text
    assert "(0.849, 0.050, 0.000)" in text and "取回了 0.85 份小明、0.05 份苹果" in text
    for exercise in ("stable-softmax", "causal-head"):
        assert f'data-exercise="c3/l1/{exercise}"' in page(site_dir)


def test_the_cheap_fixes_fail_as_the_page_says(site_dir):
    text = text_of(site_dir)
    toy = load_model("attention-toy")
    _, ins = toy.sentence_tokens("inserted")
    pos = toy.weights(ins, 4, "position")[1]
    assert pos[1] == max(pos) and ins[1] == "昨天" and pos[0] == 0  # the fixed weights land on 昨天
    assert f"那 {pos[1]:.2f} 的权重落到了「昨天」上" in text
    qk = toy.weights(ins, 4, "qk")[1]
    assert qk[0] == max(qk) and f"照样把 {qk[0]:.3f} 的权重给了小明" in text


def test_the_saturation_numbers_are_the_widgets(site_dir):
    text = text_of(site_dir)
    both = load_model("softmax-scale").summary(64, 1)
    raw, scaled = both[False], both[True]
    assert raw["top"] > 0.8 > 0.5 > scaled["top"]
    assert f"最大的权重平均 {raw['top']:.3f}" in text and f"最大的权重 {scaled['top']:.3f}" in text


def test_the_real_model_section_reads_the_export(site_dir):
    f = build_facts(load_data(ROOT / "data", ROOT))["attention"]
    text = text_of(site_dir)
    if f is None:
        assert "它的头在看哪里" in text and "按规则的名字" not in text
        return
    assert f"{f['corpus']['measured_tokens']:,}" in text
    for h in f["heads"]:
        assert f"| {h['layer']} · {h['head']} |" not in text  # the table is rendered, not left as Markdown
    named = [h for h in f["heads"] if h["name"]]
    assert f["named_count"] == len(named)
    for m, rows in f["named"].items():
        for r in rows:  # every named head passes the rule the page states
            assert r["share"] >= f["rule"]["share"] and r["ratio"] >= f["rule"]["ratio"]
            assert f"第 {r['layer']} 层第 {r['head']} 个头（{numfmt.pct(r['share'])}" in text
    assert f["command"].startswith("python -m lab attention") and f["command"] in text


def test_chapter_c3_is_linked_and_outlined(site_dir):
    c4 = (site_dir / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    assert 'href="../../c3/l1-attention/"' in c4
    home = (site_dir / "index.html").read_text(encoding="utf-8")
    for title in ("多头与位置：RoPE", "归纳头与上下文学习", "KV 缓存"):
        assert title in home


def test_the_page_has_its_sections(site_dir):
    src = (ROOT / "lessons" / "c3" / "l1-attention.md").read_text(encoding="utf-8")
    assert contract is not None and "## 真模型" in src
    for mark in "①②③④⑤⑥⑦⑧⑨⑩":
        assert f"## {mark}" in src
