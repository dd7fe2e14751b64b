"""C3 第 4 课 (KV 缓存): the page's bills are the configs' (and DeepSeek-V2's 93.3 % is split as the
facts split it), the build's own generation run says what the page says, the worked cached step
equals the whole table, the widgets and exercises are on the page, and its 真模型 section reads
the lab's export when there is one."""
import functools
import html as htmllib
import json
import re

import numfmt
from support import ROOT

from course.data import load_data
from course.facts import build_facts
from course.widgets import load_model


def page(site_dir):
    return (site_dir / "c3" / "l4-kv-cache" / "index.html").read_text(encoding="utf-8")


def text_of(site_dir):
    body = re.sub(r'<span class="katex-mathml">.*?</span>', "", page(site_dir), flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", body))


@functools.cache
def facts():
    return build_facts(load_data(ROOT / "data", ROOT))


def test_the_bills_are_the_configs(site_dir):
    K = facts()["kv_cache"]
    text = text_of(site_dir)
    o, a, L3, D = K["ours"], K["anchor"], K["llama3"], K["ds67b"]
    assert f"每个 token {o['per_token']}；读满 {o['context']} 个 token 的窗口是 {o['full_size']}" in text
    assert (o["per_token"], o["full_size"]) == ("8 KiB", "2 MiB")
    assert f"{L3['name']}：{L3['layers']} 层，每个 token {L3['per_token']}" in text and L3["per_token"] == "128 KiB"
    assert f"所以它每个 token 只存 {a['per_token']}，读满 {a['context']:,} 个位置是 {a['full_size']}" in text
    assert (a["per_token"], a["full_size"], a["layers"]) == ("64 KiB", "16 GiB", 16)
    assert f"每个 token $2 \\times {D['layers']}" not in text  # the formula is typeset, not left as source
    assert f"{D['elements']:,} 个数" in text and D["per_token"] in text


def test_the_93_3_percent_is_split_into_mla_and_six_bits(site_dir):
    M = facts()["kv_cache"]["mla"]
    text = text_of(site_dir)
    assert M["reproduces_paper"] and round(M["cut_bytes"], 3) == M["paper_cut"]
    assert f"DeepSeek-V2 是 {M['elements']:,} 个，少了 {numfmt.pct(M['cut_elements'])}" in text
    assert numfmt.pct(M["cut_elements"]) == "82.2%"
    assert f"字节数少了 {numfmt.pct(M['cut_bytes'])}，正好是摘要里的 {numfmt.pct(M['paper_cut'])}" in text
    assert f"只看存的数，是 {numfmt.pct(M['cut_elements'])}，其中每一层 MLA 存 {M['latent']} 个数" in text
    assert f"每层少 {numfmt.pct(M['cut_per_layer'])}" in text and "论文自己没有这样拆" in text
    assert f"DeepSeek-V2 按 {M['bits']} 位是 {M['per_token_q']}" in text


def test_the_gqa_table_is_ainslies(site_dir):
    K = facts()["kv_cache"]
    papers = json.loads((ROOT / "data" / "papers.json").read_text(encoding="utf-8"))["ainslie2023"]
    html = page(site_dir)
    for r in papers["rows"]:
        assert re.search(rf"<td>{re.escape(r['row'])}</td>\s*<td>{r['t_infer_s']:.2f}</td>\s*<td>{r['average']:.1f}</td>", html)
    assert f"GQA-8 比 MHA-XXL 快 {K['gqa']['gqa_speedup']:.1f} 倍" in text_of(site_dir)


def test_the_builds_own_run_is_what_the_page_says(site_dir):
    G = load_model("kv-generate")
    vocab = json.loads((ROOT / "data" / "tiny-gpt.json").read_text(encoding="utf-8"))["vocab"]
    n = G.PARAMS["n"]
    R = G.run_all({"vocab": vocab, "n": n})
    text = text_of(site_dir)
    assert R["numbers"]["cached"]["same"] and R["numbers"]["cached"]["largest"] == 0.0
    assert not R["numbers"]["wrong"]["same"]
    assert f"用缓存的那一遍{R['verdicts']['cached']}写错位置的那一遍{R['verdicts']['wrong']}" in text
    w = G.work(n, len(vocab))
    assert f"整段重算要 {w['full']:,} 次" in text and f"乘加次数是 {w['cached']:,}" in text
    assert f"差 {numfmt.num(w['ratio'], 1)} 倍" in text


def test_the_worked_step_is_the_whole_table(site_dir):
    toy = load_model("attention-toy")
    m = toy.matrices("plain")
    steps = load_model("kv-generate").cached_rows(m["Q"], m["K"], m["V"])
    assert [s["out"] for s in steps] == toy.head(m["Q"], m["K"], m["V"])
    text = text_of(site_dir)
    assert "两列输出逐行相同" in text and "(0.849, 0.050, 0.050, 0.050)" in text


def test_the_widgets_and_exercises_are_on_the_page(site_dir):
    html = page(site_dir)
    for w in ("kv-generate", "kv-memory"):
        assert f'data-widget="{w}"' in html
    for e in ("cached-step", "cache-bill"):
        assert f'data-exercise="c3/l4/{e}"' in html


def test_the_real_model_section_reads_the_export(site_dir):
    K = facts()["kv_cache"]
    text = text_of(site_dir)
    section = text[text.index("各生成一遍¶"):text.index("⑥ 常见误解¶")]  # the section, not the contents' entry
    if K["run"] is None:
        assert "导出还没有进入这一页的数据" in section
        return
    assert "导出还没有进入这一页的数据" not in section
    X = K["run"]
    if X["same"]:
        assert f"两遍生成的 {X['n']} 个 token 完全相同。每一步两边 logits 的最大差是 {numfmt.sci(X['max_diff'])}" in section
    sp = X["speed"]
    assert (f"不用缓存每秒 {numfmt.num(sp['full_tokens_per_second'], 1)} 个 token，用缓存每秒 "
            f"{numfmt.num(sp['cached_tokens_per_second'], 1)} 个，快 {numfmt.num(X['speedup'], 1)} 倍") in section
    assert X["cache_matches_bill"] and f"正是 ④ 第 2 步按配置算出的 {K['ours']['per_token']}" in section
    for b in X["controls"].values():
        if not b["same_tokens"]:
            assert f"从第 {b['first_divergence'] + 1} 个生成的 token 起就和正确的不同" in section
        assert f"有 {b['forced']['argmax_changed_steps']} 步最大的那个 logit 换成了别的 token" in section
    if X["past_context"]:
        assert f"比训练时的窗口（{X['config']['block_size']}）多出 {X['past_context']} 个" in section
    assert X["command"].startswith("python -m lab kvcache") and X["command"] in section
