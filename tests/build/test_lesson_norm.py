"""C4 第 3 课 (归一化): every number on the page comes from facts or a widget model, the claims
the page makes about the widgets hold in the models, and the page has its contract's sections."""
import re

from support import ROOT

from course.checks import contract
from course.data import load_data
from course.facts import build_facts
from course.widgets import load_model


def page(site_dir):
    return (site_dir / "c4" / "l3-norm" / "index.html").read_text(encoding="utf-8")


def facts():
    return build_facts(load_data(ROOT / "data", ROOT))


def test_the_papers_numbers_come_from_papers_json(site_dir):
    html = page(site_dir)
    f = facts()
    xi, rz = f["papers"]["xiong"], f["papers"]["rmsnorm"]
    assert f"只有 {xi['without']:.2f}；有预热时最好约 {xi['with']:.0f}" in html  # BLEU 8.45 and about 34
    assert f"运行时间省下 {rz['min_pct']}%～{rz['max_pct']}%" in html  # 7%-64%
    assert "1 × 10⁻⁶" in html and f["anchor"]["rms_norm_eps"] == 1e-6


def test_the_design_steps_read_the_models(site_dir):
    html = page(site_dir)
    bt = load_model("batch-trap").compare()
    assert bt["max_diff"] > 0.5 and f"输出最多差了 {bt['max_diff']:.3f}" in html
    nt = load_model("norm-token")
    x = nt.PARAMS["x"]
    ln, rn = nt.layer_norm(x), nt.rms_norm(x)
    assert abs(sum(ln["out"])) < 1e-9 and abs(sum(v * v for v in rn["out"]) / len(x) - 1) < 1e-4
    assert f"{rn['denom']:.3f}" in html and f"{ln['denom']:.3f}" in html


def test_the_placement_claims_hold_in_the_stack(site_dir):
    """④ 第 2 步: Post-LN's last-layer gradient about flat in depth, Pre-LN's shrinking like 1/sqrt(L)."""
    html = page(site_dir)
    npl = load_model("norm-placement")
    post2, post32 = (npl.mean_over_seeds(npl.last_layer_grad, "post", d) for d in (2, 32))
    pre2, pre32 = (npl.mean_over_seeds(npl.last_layer_grad, "pre", d) for d in (2, 32))
    assert post32 / post2 < 1.5 and 2.5 < pre2 / pre32 < 6
    assert f"2 层时是 {post2:.2f}、32 层时是 {post32:.2f}" in html
    assert f"从 2 层时的 {pre2:.2f} 降到 32 层时的 {pre32:.2f}" in html
    for widget in ("batch-trap", "norm-token", "norm-placement"):
        assert f'data-widget="{widget}"' in html
    assert 'data-exercise="c4/l3/rms-norm"' in html


def test_sections_follow_the_contract(site_dir):
    headings = re.findall(r"<h2 id=[^>]*>([^<]+)", page(site_dir))
    marks = contract({"sections": ["真模型"]})
    assert [next(m for m in marks if h.startswith(m)) for h in headings] == marks


def test_the_real_model_section_follows_the_norm_export(site_dir):
    """Every generated sentence of 真模型 is on the page and says what the export shows."""
    html = page(site_dir)
    text = re.sub(r"<[^>]+>", "", html)
    n = facts()["norm"]
    if n is None:
        assert "这一节正在准备" in text
        return
    assert "这一节正在准备" not in text
    for row in n["rows"]:  # one table row per placement run, with its loss and its reading
        reading = "发散" if not row["finite"] else "停在 unigram 附近" if row["stuck"] else "在学"
        assert f"{row['at_short']:.3f}" in text and reading in text
    cold, warm = n["cell"]["post-cold-base"], n["cell"]["post-warm-base"]
    if cold["stuck"] and not warm["stuck"]:
        assert f"没有预热的 Post-LN，{n['short_steps']} 步后验证损失还是 {cold['at_short']:.3f}" in text
    elif not cold["stuck"]:
        assert "我们的数据和教科书不一致" in text
    ratios = n["gradients"]["post_over_pre_last"]
    for depth, ratio in ratios.items():
        assert f"{depth} 层的模型里，最后一块的梯度 Post-LN 是 Pre-LN 的 {ratio:.2f} 倍" in text
    agrees = all(r > 1 for r in ratios.values())
    assert ("和定理说的一样，Post-LN 靠近输出的梯度更大" in text) == agrees
    assert ("但大小关系和 Xiong 等人的结论、也和 ④ 的组件相反" in text) == (not agrees)
    if n["layernorm"]:
        ln = n["layernorm"]  # compared with the baseline at the same step, not with its full run
        assert f"验证损失 {ln['val_loss']:.3f}；RMSNorm 基线在同一步是 {ln['baseline_then']:.3f}" in text
        assert f"{n['speed']['rmsnorm_median']:,.0f} 个 token" in text
    card = n["card"]
    assert card["command"] in text
    over = n["new_minutes"] > n["budget_minutes"]  # an overrun is said, not hidden
    assert (f"超出了 {n['budget_minutes']:.0f} 分钟的预算" if over else f"预算 {n['budget_minutes']:.0f} 分钟") in text
