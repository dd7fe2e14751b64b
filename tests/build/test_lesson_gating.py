"""C4 第 4 课 (门控与 SwiGLU): every number on the page comes from facts or a widget model, the
claims the page makes hold in the models and the configs, its 真模型 sentences say what the gating
export shows, and the page has its contract's sections."""
import html as htmllib
import re

import numfmt
from support import ROOT

from course.checks import contract
from course.data import load_data
from course.facts import build_facts
from course.widgets import load_model


def page(site_dir):
    return (site_dir / "c4" / "l4-gating" / "index.html").read_text(encoding="utf-8")


def text_of(site_dir):
    """The page's text as a reader sees it (KaTeX's MathML copy and tags removed)."""
    body = re.sub(r'<span class="katex-mathml">.*?</span>', "", page(site_dir), flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", body))


def facts():
    return build_facts(load_data(ROOT / "data", ROOT))


def test_one_product_splits_the_reviews_and_one_relu_cannot(site_dir):
    text = text_of(site_dir)
    gn = load_model("gated-neuron")
    exact = gn.exact_solution("none")
    assert exact["mse"] == 0 and "MSE 是 0" in text
    for _, p, n, y in gn.REVIEWS:  # the shorter solution the page names: (p - n)^2 is the target on 0/1 inputs
        assert (p - n) ** 2 == y
    start = gn.mse(gn.PARAMS["activation"], gn.PARAMS["gate"], gn.PARAMS["up"])
    assert start > 0.1 and f"默认的权重下 MSE 是 {start:.3f}" in text
    far = gn.mse("silu", [gn.SLIDER[0], gn.SLIDER[0], 0.0], gn.PARAMS["up"])
    assert far < 0.05 and f"MSE 降到 {far:.3f}" in text  # one SiLU neuron nearly splits them: the page says so
    sig = gn.mse("sigmoid", exact["gate"], exact["up"])
    assert sig > 0.1 and f"MSE 是 {sig:.3f}" in text
    for exercise in ("one-gated-neuron", "swiglu", "llama-width"):
        assert f'data-exercise="c4/l4/{exercise}"' in page(site_dir)


def test_the_activation_facts_are_the_models(site_dir):
    text = text_of(site_dir)
    ac = load_model("activation-curves")
    g, s = ac.gelu_min(), ac.silu_min()
    assert round(g["y"], 3) == -0.170 and round(s["y"], 3) == -0.278  # the facts file's -0.170 and -0.2785
    assert f"最低 {g['y']:.3f}".replace("-", "−") in text and f"最低 {s['y']:.3f}".replace("-", "−") in text
    err = ac.tanh_form_max_error()["error"]
    assert 4.6e-4 < err < 4.8e-4 and f"最多差 {numfmt.sci(err, 2)}" in text  # the facts file's 4.7e-4 on [-10, 10]


def test_shazeers_table_is_whole_and_ranked(site_dir):
    text = text_of(site_dir)
    sz = facts()["papers"]["shazeer"]
    gated = {"glu", "bilinear", "geglu", "swiglu", "reglu"}
    assert set(sz["ranked"][:5]) == gated  # every gated FFN ahead of every ungated one, as the page says
    assert sz["bilinear"] < min(sz["relu"], sz["gelu"])
    for key in sz["ranked"]:
        assert f"{sz[key]:.3f}（{sz['std'][key]:.3f}）" in text
    assert f"中间维从 {sz['widths']['d_ff']:,} 减到 {sz['widths']['d_ff_glu']:,}" in text
    assert sz["widths"]["d_ff_glu"] * 3 == sz["widths"]["d_ff"] * 2


def test_the_widths_are_the_configs(site_dir):
    text = text_of(site_dir)
    f = facts()
    ll, ds, a = f["llama2_7b"], f["deepseek67b"], f["anchor"]
    assert ll["rule_width"] == ll["d_ff"] == 11008 and f"得到 {ll['rule_width']:,}，和 config 里的 {ll['d_ff']:,} 一致" in text
    assert f"实取 {ds['d_ff']:,}" in text and f"实取 {a['d_ff']:,}（{a['ffn_ratio']:.1f}d）" in text


def test_the_clamps_are_the_configs(site_dir):
    text = text_of(site_dir)
    sc = load_model("swiglu-clamp")
    go, v4 = facts()["clamps"]["forms"]
    assert f"`swiglu_limit` = {go['limit']:.0f}" in page(site_dir).replace("<code>", "`").replace("</code>", "`")
    assert f"输出不会超过 {sc.clamped_max(go['limit'], go['alpha'], go['linear_bias']):.4f}" in text
    assert f"不会超过 {sc.clamped_max(v4['limit'], v4['alpha'], v4['linear_bias']):.4f}" in text
    assert f"{sc.fp16_max():,.0f}" in text


def test_sections_follow_the_contract(site_dir):
    headings = re.findall(r"<h2 id=[^>]*>([^<]+)", page(site_dir))
    marks = contract({"sections": ["真模型"]})
    assert [next(m for m in marks if h.startswith(m)) for h in headings] == marks


def test_the_real_model_section_follows_the_gating_export(site_dir):
    """Every generated sentence of 真模型 is on the page and says what the export shows."""
    text = text_of(site_dir)
    n = facts()["gating"]
    if n is None:
        assert "这一节正在准备" in text
        return
    assert "这一节正在准备" not in text
    assert {r["ffn_params_per_layer"] for r in n["rows"]} == {n["ffn_params"]}
    for r in n["rows"][1:]:  # each FFN against SwiGLU at its own last step, read against that step's band
        vs = r["vs"]
        assert vs["band"] == n["bands"][vs["step"]] and vs["resolved"] == (abs(vs["diff"]) > vs["band"])
        assert f"{r['val_loss']:.4f}" in text and f"{vs['diff']:+.4f}".replace("-", "−") in text
        assert ("（带内）" if not vs["resolved"] else "（超出）") in text and f"{vs['band']:.3f}" in text
    assert n["bands"][1400] == n["band"]["range"]  # the last step's band is the export's band
    bg = n["pairs"]["bilinear-gelu"]
    word = "低" if bg["gap"] < 0 else "高"
    assert f"第 {bg['step']:,} 步，Bilinear {bg['a']:.4f}、GELU {bg['b']:.4f}，Bilinear {word} {abs(bg['gap']):.4f}" in text
    assert f"精度本身就差了 {abs(n['precision_gap']):.3f}" in text
    if not bg["resolved"]:
        assert "这两者分不出差别" in text and "既不支持也不否定" in text
    if not any(r["vs"]["resolved"] for r in n["rows"][1:]):
        assert "每种 FFN 和 SwiGLU 的差都在同一步的种子带以内" in text
    r = n["ranges"]["baseline"]
    assert f"绝对值最大 {r['hidden_max']:.2f}" in text and r["hidden_max"] < n["fp16_max"]
    go = facts()["clamps"]["forms"][0]["name"]
    if r["clamped"][go]["gate"] == 0 and r["clamped"][go]["up"] == 0:
        assert r["gate_max"] < n["limits"][go] and "一个数都不会改动" in text
    assert n["card"]["command"] in text
