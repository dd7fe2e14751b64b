"""The neuron-heatmap widget in Chromium: pick a neuron and the passage recolours; hover, tap or
arrow through the passage for a token's detail; the first state stands without JavaScript.

Runs on the lesson page. Until lab/ has exported data/real-model/ the lesson leaves the section
out, so the test builds a scratch copy of the project with the lab's tiny-corpus export
(tests/fixtures/real-model/) in data/real-model/ and serves that. Assertions read the page's own
data and compare with the model, so they hold for either export.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from support import PROJECT_PARTS, ROOT, scroll_to_read
from sitectl import SiteServer

from course.widgets import load_model

pytestmark = pytest.mark.e2e
ROOT_SEL = '[data-widget="neuron-heatmap"]'
LIVE = ROOT_SEL + '[data-ready="true"]'
LESSON = "c4/l1-ffn/"
model = load_model("neuron-heatmap")


@pytest.fixture(scope="module")
def heatmap_url(served_site, tmp_path_factory):
    site, url = served_site
    if 'data-widget="neuron-heatmap"' in (site / LESSON / "index.html").read_text(encoding="utf-8"):
        yield url + LESSON
        return
    project = tmp_path_factory.mktemp("heatmap") / "project"
    project.mkdir()
    for part in PROJECT_PARTS:
        src = ROOT / part
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, project / part)
    (project / "node_modules").symlink_to(ROOT / "node_modules")
    shutil.copytree(ROOT / "tests/fixtures/real-model", project / "data/real-model", dirs_exist_ok=True)
    server = SiteServer(project / "site")
    result = subprocess.run([sys.executable, str(project / "build.py"), "--out", str(project / "site")],
                            capture_output=True, text=True, cwd=project, env={**os.environ, "SITE_URL": server.url})
    assert result.returncode == 0, result.stderr
    with server as scratch_url:
        yield scratch_url + LESSON


def expect():
    return pytest.importorskip("playwright.sync_api").expect


def open_page(browser, url, **context_args):
    context = browser.new_context(**{"viewport": {"width": 1280, "height": 900}, **context_args})
    page = context.new_page()
    page.goto(url)
    return context, page


def go_live(page):
    page.locator(ROOT_SEL).scroll_into_view_if_needed()
    page.wait_for_selector(LIVE, timeout=60_000)


def page_params(page):
    return json.loads(page.get_attribute(ROOT_SEL, "data-params"))


def backgrounds(page):
    return page.eval_on_selector_all(f"{ROOT_SEL} [data-token]",
                                     "els => els.map(e => getComputedStyle(e).backgroundColor)")


def rgba(css):
    """(r, g, b, alpha) of a CSS colour as the model writes it or as Chromium computes it."""
    if css == "transparent":
        return (0, 0, 0, 0.0)
    r, g, b, a = re.fullmatch(r"rgba?\((\d+), (\d+), (\d+)(?:, ([\d.]+))?\)", css).groups()
    return (int(r), int(g), int(b), float(a or 1))


def same_colours(computed, expected):
    """Chromium stores alpha in 1/255 steps: equal hues, alphas within a step."""
    assert len(computed) == len(expected)
    for i, (c, e) in enumerate(zip(map(rgba, computed), map(rgba, expected))):
        hue_ok = c[:3] == e[:3] or c[3] == 0 == round(e[3] * 255)
        assert hue_ok and abs(c[3] - e[3]) <= 1 / 255 + 1e-9, f"token {i}: {c} != {e}"
    return True


def out(page, name):
    return page.locator(f'{ROOT_SEL} [data-out="{name}"]')


@pytest.fixture
def live(browser, heatmap_url):
    context, page = open_page(browser, heatmap_url)
    go_live(page)
    yield page
    context.close()


def test_picking_a_neuron_recolours_the_text(live):
    page, check = live, expect()
    data = page_params(page)["data"]
    before = backgrounds(page)
    first = model.view({"neuron": None, "data": data})
    assert same_colours(before, first["colors"])

    # The picker: two groups, every exported neuron, the control group labelled 随机对照.
    groups = page.eval_on_selector_all(f'{ROOT_SEL} select[name="neuron"] optgroup', "gs => gs.map(g => g.label)")
    assert groups == ["按最大激活挑出", "随机对照"]
    values = page.eval_on_selector_all(f'{ROOT_SEL} select[name="neuron"] option', "os => os.map(o => o.value)")
    assert sorted(map(int, values)) == sorted(n["index"] for n in data["neurons"])

    control = next(n["index"] for n in data["neurons"] if n["kind"] == "random")
    page.select_option(f'{ROOT_SEL} select[name="neuron"]', str(control))
    check(out(page, "verdict")).to_contain_text(f"随机对照 #{control}")
    after = backgrounds(page)
    state = model.view({"neuron": control, "data": data})
    assert same_colours(after, state["colors"]) and after != before
    check(out(page, "legend-max")).to_have_text(state["out"]["legend-max"])
    check(out(page, "contexts-title")).to_have_text(state["out"]["contexts-title"])
    assert page.locator(f'{ROOT_SEL} [data-list="contexts"] li').count() == len(state["contexts"])
    assert page.get_attribute(f"{ROOT_SEL} .nh", "data-kind") == "random"
    # The caption gives the control's maximum on both parts of the text, choosing and reading.
    check(out(page, "kind")).to_have_text(state["out"]["kind"])
    assert "→" in state["out"]["kind"] and "最大激活：" in state["out"]["kind"]
    assert f"#{control}" in page.locator(f"{ROOT_SEL} .cw-sr").inner_text()


def test_hover_tap_and_arrows_show_a_token(live):
    page, check = live, expect()
    data = page_params(page)["data"]
    details = model.view({"neuron": None, "data": data})["details"]
    detail = out(page, "token-detail")
    hint = detail.inner_text()
    whole = next(i for i, t in enumerate(data["tokens"]) if t[0] and not t[1])

    page.hover(f'{ROOT_SEL} [data-token="{whole}"]')
    check(detail).to_have_text(details[whole])
    page.mouse.move(0, 0)
    check(detail).to_have_text(hint)

    page.click(f'{ROOT_SEL} [data-token="{whole}"]')
    check(detail).to_have_text(details[whole])
    assert page.get_attribute(f'{ROOT_SEL} [data-token="{whole}"]', "data-chosen") == "true"
    page.keyboard.press("ArrowRight")
    check(detail).to_have_text(details[whole + 1])
    assert page.evaluate("document.activeElement.dataset.token") == str(whole + 1)
    check(page.locator(f"{ROOT_SEL} .cw-sr")).to_have_text(details[whole + 1])

    fragments = [i for i, t in enumerate(data["tokens"]) if t[1] and not t[0]]
    if fragments:  # a byte fragment with no character of its own: a small �, still hoverable
        page.hover(f'{ROOT_SEL} [data-token="{fragments[0]}"]')
        check(detail).to_contain_text("字节碎片")
        assert page.locator(f'{ROOT_SEL} [data-token="{fragments[0]}"]').inner_text() == "\ufffd"

    # One tab stop for the whole passage: Tab leaves it.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.token") is None


def test_without_javascript_the_heatmap_is_already_there(browser, heatmap_url):
    context, page = open_page(browser, heatmap_url, java_script_enabled=False)
    try:
        scroll_to_read(page.locator(ROOT_SEL))
        assert page.get_attribute(ROOT_SEL, "data-ready") == "false"
        data = page_params(page)["data"]
        state = model.view({"neuron": None, "data": data})
        assert same_colours(backgrounds(page), state["colors"])
        assert out(page, "verdict").inner_text() == state["out"]["verdict"]
        assert page.locator(f'{ROOT_SEL} select[name="neuron"]').input_value() == str(state["neuron"])
        assert page.locator(f'{ROOT_SEL} [data-list="contexts"] li').count() == len(state["contexts"])
    finally:
        context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_fits_a_phone(browser, heatmap_url, scheme):
    context, page = open_page(browser, heatmap_url, viewport={"width": 375, "height": 800}, color_scheme=scheme)
    try:
        go_live(page)
        box = page.eval_on_selector(f"{ROOT_SEL}",
                                    "el => [el.scrollWidth, el.clientWidth, el.getBoundingClientRect().right]")
        assert box[0] <= box[1] and box[2] <= 375, box
    finally:
        context.close()


def test_the_sticky_header_never_covers_the_colour_legend(browser, heatmap_url):
    context, page = open_page(browser, heatmap_url)
    header = page.locator(".md-header")
    legend = page.locator(f"{ROOT_SEL} .nh-legend")
    page.locator(ROOT_SEL).evaluate("el => el.scrollIntoView()")  # as a link or a script would
    page.wait_for_timeout(200)
    assert legend.bounding_box()["y"] >= header.bounding_box()["y"] + header.bounding_box()["height"] - 1
    page.locator(f"{ROOT_SEL} .nh-contexts").evaluate("el => el.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(200)  # deep in the widget, the legend sticks just below the header
    box = legend.bounding_box()
    assert header.bounding_box()["y"] + header.bounding_box()["height"] - 1 <= box["y"] < 200
    context.close()
