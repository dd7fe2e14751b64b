"""C4 第 2 课 (残差): every number on the page comes from facts or a widget model, every
generated sentence of 真模型 is on the page and follows the committed exports, and the page
has its contract's sections."""
import math

from support import ROOT

from course.checks import contract
from course.data import load_data
from course.facts import build_facts
from course.widgets import load_model


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
    assert f"{r['band']['min']:.3f}–{r['band']['max']:.3f}" in html  # the baseline's seed band
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
