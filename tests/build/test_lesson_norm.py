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
