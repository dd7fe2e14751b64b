"""C4 第 2 课 (残差): every number on the page comes from facts or a widget model, every
generated sentence of 真模型 is on the page and follows the committed exports, every comparison
the page prints reads as seeds protocol v2 gives it when recomputed here from the exports, and the
page has its contract's sections."""
import html as htmlmod
import json
import math
import re

from support import ROOT

from course.checks import contract
from course.data import load_data
from course.facts import build_facts
from course.widgets import load_model

import seeds  # widgets/common, on the path from conftest


def page(site_dir):
    return (site_dir / "c4" / "l2-residual" / "index.html").read_text(encoding="utf-8")


def facts():
    return build_facts(load_data(ROOT / "data", ROOT))


def test_the_numbers_come_from_facts_and_models(site_dir):
    html = page(site_dir)
    f = facts()
    anchor, gpt2, resnet = f["anchor"], f["gpt2"], f["papers"]["resnet"]
    assert f"{anchor['residual_writes']} 次写入" in html and f"{anchor['residual_std']:.2f}" in html  # 128, 11.36
    assert f"其中 {anchor['n_linear']} 层用的是线性注意力" in html
    assert f"{gpt2['residual_init_std']:.5f}" in html and "0.00408" in html  # 0.02 / sqrt(24)
    assert "nanoGPT 和 Hugging Face 的实现" in html  # N = 2 x 12 is their reading, not the paper's
    assert f"{resnet['deep']['plain']:.2f}%" in html and f"{resnet['deep']['resnet']:.2f}%" in html
    paths = load_model("residual-paths").view({"w": [0.5, 0.5, 0.5], "path": "000"})
    assert paths["out"]["plain-grad"] == "0.125" and "= 3.375" in html and "0.125" in html
    ds = load_model("depth-signal")
    d = ds.PARAMS["depth"]
    assert f"只剩输出端的 {ds.ratio(ds.first_layer_gradient(d, False, activation='sigmoid'))} 倍" in html
    spread = ds.spread(d, False)
    assert f"{ds.ratio(min(spread))} 到 {ds.ratio(max(spread))} 倍，随种子相差很大" in html
    assert f"变成输出端的 {ds.ratio(ds.first_layer_gradient(d, True))} 倍" in html
    assert f"{math.sqrt(129):.2f}" in html


def test_the_stepper_reads_the_token_identity_model(site_dir):
    """The design's failure is the one our model has: without skips the stack forgets each token."""
    html = page(site_dir)
    ti = load_model("token-identity")
    layers, seed = ti.PARAMS["layers"], ti.PARAMS["seed"]
    plain, skip = ti.summary(layers, False, seed=seed), ti.summary(layers, True, seed=seed)
    assert plain["correct"] < plain["positions"] / 2 and skip["correct"] == skip["positions"]
    assert f"{plain['positions']} 个位置里还在原来坐标里的只有 {plain['correct']} 个" in html
    assert f"{skip['positions']} 个位置里 {skip['correct']} 个还在原来的坐标里" in html
    assert f"第 {layers} 层之后的 {plain['cosine']:.2f}" in html and f"余弦是 {skip['cosine']:.2f}" in html
    ten = ti.over_seeds(layers, False, seeds=range(10))
    assert f"平均是 {ten['cosine']:.2f}" in html
    assert 'data-widget="token-identity"' in html


def test_sections_follow_the_contract(site_dir):
    html = page(site_dir)
    positions = [html.find(f">{mark}") for mark in contract({"sections": ["真模型"]})]
    assert -1 not in positions and positions == sorted(positions)
    for name in ("token-identity", "depth-signal", "residual-paths", "residual-evidence"):
        assert f'data-widget="{name}"' in html


def test_real_model_section_reads_the_export(site_dir):
    """data/real-model/residual/ is committed, so the section shows our runs, every sentence decided by them."""
    html = page(site_dir)
    r = facts()["residual"]
    assert r is not None, "data/real-model/residual/ is committed, so the section must render"
    assert "这一节正在准备" not in html
    evidence = load_model("residual-evidence")
    refs = r["comparison"]["references"]
    for sentence in (evidence.collapse_reading(r["variants"], refs),
                     evidence.gradient_reading(r["gradients"]), evidence.depth_reading(r["variants"], refs),
                     evidence.view({"data": r["evidence"]})["stream_reading"]):
        assert sentence in html
    assert ("梯度不但没有消失，反而更大" in html) == evidence.no_skip_gradients_larger(r["gradients"])
    uni = refs["unigram"]
    off = max(abs(r["variants"][n]["val_losses"][0] - uni) for n in ("no_residual", "deep_8l_no_residual"))
    assert (f"最多只差 {off:.3f}" in html) == evidence.no_skip_on_unigram(r["variants"], refs)
    assert evidence.no_skip_on_unigram(r["variants"], refs)  # the committed export: both sit on the unigram
    assert r["card"]["command"] in html
    # The chart's own per-variant bullets stay off this page: the prose reads it once.
    assert "到训练结束它仍在进步" not in html and "基本不再进步" not in html


def test_the_mechanism_runs_are_read_from_their_export(site_dir):
    html = page(site_dir)
    r = facts()["residual"]
    m = r["mechanism"]
    assert m is not None, "data/real-model/residual/mechanism.json is committed"
    sm = load_model("skip-mechanism")
    for sentence in (sm.identity_at_init(m), sm.gradient_path(m), sm.identity_path(m),
                     sm.sublayer_paths(m), sm.init_control(m)):
        assert sentence in html
    assert 'data-widget="skip-mechanism"' in html and html.count('<tr data-row="') >= len(m["order"])
    assert m["card"]["command"] in html


def test_no_tex_source_reaches_the_reader(site_dir):
    html = page(site_dir)
    toc = html[html.index("md-nav--secondary"):]
    assert "\\(" not in toc and "\\[" not in toc


def test_the_lesson_is_published_in_the_course(site_dir):
    """Written, not a draft: in the nav and the course map, and lesson 1's next gap links to it."""
    home = (site_dir / "index.html").read_text(encoding="utf-8")
    first = (site_dir / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    assert 'href="c4/l2-residual/"' in home
    assert 'href="../l2-residual/"' in first
    assert "草稿" not in page(site_dir)


# ---- seeds protocol v2, recomputed from the exports --------------------------------------------

def export(name):
    return json.loads((ROOT / "data" / "real-model" / f"{name}.json").read_text(encoding="utf-8"))


def at(history, step, key="val_loss"):
    return next((h[key] for h in history if h["step"] == step), None)


def baseline_runs():
    """Every run of the baseline: residual.json's row and, once exported, baseline-seeds.json's."""
    row = next(v for v in export("residual/residual")["variants"] if v["name"] == "baseline")
    runs = dict(zip(row["seeds"], row["histories"]))
    extra = ROOT / "data" / "real-model" / "baseline-seeds.json"
    if extra.exists():
        for r in json.loads(extra.read_text(encoding="utf-8"))["seed_runs"]:
            runs.setdefault(r["seed"], r["history"])
    return runs


def residual_arms(step, key="val_loss"):
    arms = {"baseline": {s: at(h, step, key) for s, h in baseline_runs().items() if at(h, step, key) is not None}}
    for v in export("residual/residual")["variants"]:
        if v["name"] != "baseline":
            got = {s: at(h, step, key) for s, h in zip(v["seeds"], v["histories"]) if at(h, step, key) is not None}
            if got:
                arms[v["name"]] = got
    return arms


def mechanism_arms(step, key="val_loss"):
    arms = {"baseline": residual_arms(step, key)["baseline"]}
    no_skip = next(v for v in export("residual/residual")["variants"] if v["name"] == "no_residual")
    arms["no_residual"] = {no_skip["seeds"][0]: at(no_skip["histories"][0], step, key)}
    for v in export("residual/mechanism")["variants"]:
        if v["name"] != "baseline" and at(v["history"], step, key) is not None:
            arms[v["name"]] = {v["seed"]: at(v["history"], step, key)}
    return arms


def said(arms, a, b):
    return seeds.say(seeds.contrast(seeds.read(arms), a, b))


def visible(html):
    """The page's text as a reader sees it, without the ablation chart (another lesson's widget)."""
    start = html.index('data-widget="ablation"')
    start = html.rindex("<div", 0, start)
    depth, k = 0, start
    for m in re.finditer(r"<div\b|</div>", html[start:]):
        depth += 1 if m.group() == "<div" else -1
        if depth == 0:
            k = start + m.end()
            break
    text = html[:start] + html[k:]
    text = re.sub(r"<script.*?</script>|<svg.*?</svg>", "", text, flags=re.S)
    return htmlmod.unescape(re.sub(r"<[^>]+>", "", text))


def test_every_comparison_reads_as_v2_gives_it(site_dir):
    """Recomputed from the exports: arms = every run of the experiment at that step (the baseline with
    every seed it has); a run cut short is read at its last step."""
    text = visible(page(site_dir))
    full, short = 1400, 400  # the runs' last step; the 8-layer run with skips and the init control stop at 400
    mech = export("residual/mechanism")
    assert mech["model_card"]["training"]["steps"] == full
    assert {v["name"]: v["steps_trained"] for v in mech["variants"]}["no_residual_init02"] == short
    readings = [
        said(residual_arms(full), "no_residual", "baseline"),
        said(residual_arms(short), "deep_8l_no_residual", "deep_8l"),
        said(residual_arms(short), "deep_8l", "baseline"),
        said(residual_arms(short, "train_loss"), "deep_8l", "baseline"),
        said(mechanism_arms(full), "detached_skip", "baseline"),
        said(mechanism_arms(full), "embed_readd", "no_residual"),
        said(mechanism_arms(full), "attn_skip_only", "baseline"),
        said(mechanism_arms(full), "ffn_skip_only", "baseline"),
        said(mechanism_arms(full), "ffn_skip_only", "attn_skip_only"),
        said(mechanism_arms(short), "no_residual_init02", "no_residual"),
    ]
    for reading in readings:
        assert reading in text, reading
    # the table's column: every run against the baseline at its own last step, gap ± h
    for name, step in [("no_residual", full)] + [(v["name"], v["steps_trained"]) for v in mech["variants"][1:]]:
        c = seeds.contrast(seeds.read(mechanism_arms(step)), name, "baseline")
        cell = ("+" if c["gap"] >= 0 else "−") + f"{abs(c['gap']):.3f} ± {c['half_width']:.3f}"
        assert f'<tr data-row="{name}">' in page(site_dir) and cell in text, cell


def test_the_failed_baseline_run_is_named_and_left_out(site_dir):
    """The health check, not a guess, decides which baseline runs failed; the page names each as a
    failed run and reads the noise from the healthy ones."""
    text = visible(page(site_dir))
    reading = seeds.read(residual_arms(1400))
    failed = reading["failed"]["baseline"]
    assert failed, "today's exports: the health check flags a baseline run at step 1,400"
    healthy = sorted(reading["healthy"]["baseline"].values())
    for seed_, loss in failed.items():
        assert f"基线的种子 {seed_}（{loss:.3f}，其余 {len(healthy)} 次在 {healthy[0]:.3f}–{healthy[-1]:.3f}）就是一次失败的训练" in text
    assert f"高出 {reading['threshold']:.3f} 以上的训练算失败的训练" in text
    assert f"标准差是 {reading['sd']:.3f}（自由度 {reading['df']}）" in text
    one = seeds.t_quantile(reading["df"]) * reading["sd"] * (1 + 1 / len(healthy)) ** 0.5
    assert f"95% 的误差是 ±{one:.3f}" in text
    assert "事后按 v2 读" in text and 'href="../../c3/l1-attention/"' in page(site_dir)


def test_the_primary_comparisons_are_declared_and_corrected(site_dir):
    text = visible(page(site_dir))
    arms = mechanism_arms(1400)
    primary = seeds.holm([seeds.contrast(seeds.read(arms), a, "baseline") for a in ("no_residual", "detached_skip")])
    assert "主比较" in text and "Holm" in text
    for c in primary:
        assert seeds.say(c) in text
    one_seed = [c for c in primary if c["status"] == "one_seed"]
    assert ("第二个种子是这一课最缺的证据" in text) == bool(one_seed) and (
        ("每种设置都只训练了一个种子" in text) == (not all(c["measured"] for c in primary)))


def test_no_sentence_of_the_old_rule_is_left(site_dir):
    text = visible(page(site_dir))
    for phrase in ("种子带", "分辨力不够", "回答不了", "测不出这么小的差", "还说不清", "分不出高下", "倍才算测到",
                   "一个种子也够", "起步晚"):
        assert phrase not in text, phrase
