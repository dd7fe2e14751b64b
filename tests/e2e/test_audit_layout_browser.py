"""The cross-browser audit's three layout faults (../shared/reviews/cross-browser-2.md §6), each
measured in Chromium: nothing a reader must read is covered or squeezed."""
import pytest

from support import open_live_widget

pytestmark = pytest.mark.e2e


def open_page(browser, url, width, height):
    """A fresh context at width x height with `url` open: (context, page)."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(url)
    return context, page


def box(locator):
    b = locator.bounding_box()
    return b["x"], b["y"], b["x"] + b["width"], b["y"] + b["height"]


def test_no_marker_covers_a_minimums_label(browser, served_site):
    """After 跳到 GELU 的最低点 (where the audit saw the SiLU marker over the −0.170 label), each shown
    minimum's value label is what the reader sees at its own centre and at its ends: no marker is painted over it."""
    W = '[data-widget="activation-curves"]'
    context, page = open_live_widget(browser, served_site[1] + "authors/gallery/", "activation-curves")
    page.click(f'{W} button[data-jump="gelu"]')
    page.wait_for_function(f"document.querySelector('{W} [data-out=\"x\"]').textContent === '−0.752'")
    labels = page.locator(f'{W} [data-panel="zoom"] .ac-min[data-shown="true"] text')
    assert labels.count() >= 2
    for i in range(labels.count()):
        labels.nth(i).scroll_into_view_if_needed()
        x0, y0, x1, y1 = box(labels.nth(i))
        for fx in (0.15, 0.5, 0.85):
            hit = page.evaluate("([x, y]) => document.elementFromPoint(x, y).outerHTML", [x0 + fx * (x1 - x0), (y0 + y1) / 2])
            assert hit.startswith("<text") and 'class="ac-min-label"' in hit, (labels.nth(i).inner_html(), fx, hit[:80])
    context.close()


def test_the_clamp_charts_labels_are_readable_on_a_phone(browser, served_site):
    """At 390 px the log-log chart is drawn at about half size; its tick and limit labels stay at 10 px or more."""
    context, page = open_page(browser, served_site[1] + "c4/l4-gating/", 390, 844)
    fig = page.locator('[data-widget="swiglu-clamp"] .sc-fig')
    fig.scroll_into_view_if_needed()
    texts = fig.locator("svg text")
    heights = [texts.nth(i).bounding_box()["height"] for i in range(texts.count()) if texts.nth(i).is_visible()]
    assert heights and min(heights) >= 10, heights
    context.close()


def test_the_placement_tables_headers_stand_apart(browser, served_site):
    """The norm-placement table's column headers do not run into each other."""
    context, page = open_page(browser, served_site[1] + "c4/l3-norm/", 1280, 900)
    heads = page.locator('[data-widget="norm-placement"] table thead th')
    heads.first.scroll_into_view_if_needed()
    words = []
    for i in range(heads.count()):  # the text's own box, not the cell's
        words.append(page.evaluate("""el => { const r = document.createRange(); r.selectNodeContents(el);
            const b = r.getBoundingClientRect(); return [b.left, b.right]; }""", heads.nth(i).element_handle()))
    for (l1, r1), (l2, r2) in zip(words, words[1:]):
        assert l2 - r1 >= 8, (words, "headers closer than 8 px")
    context.close()
