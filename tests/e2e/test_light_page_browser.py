"""A lesson inlines its widgets' CSS in <head> (issue 20: one render-blocking request per widget
was the first paint's cost on a phone), and Material's instant navigation swaps it between pages."""
import pytest

LESSON = "c4/l1-ffn/"


@pytest.fixture
def desktop(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    yield context
    context.close()


def inlined_css(page):
    return page.evaluate("() => [...document.head.querySelectorAll('style[data-css]')].map(s => s.dataset.css)")


def test_instant_navigation_swaps_the_inlined_widget_css(desktop, served_site):
    _, url = served_site
    page = desktop.new_page()
    page.goto(url + LESSON, wait_until="load")
    assert "widgets/ffn_xor/style.css" in inlined_css(page)
    page.evaluate("window.sameDocument = true")
    page.click("a.md-footer__link--next")  # 第 2 课, swapped in by Material without a page load
    page.wait_for_selector('[data-widget="depth-signal"]')
    page.wait_for_function("() => document.head.querySelector('style[data-css=\"widgets/depth_signal/style.css\"]')")
    styles = inlined_css(page)
    assert page.evaluate("window.sameDocument") is True, "instant navigation fell back to a full load"
    assert "widgets/ffn_xor/style.css" not in styles and len(styles) == len(set(styles)), styles
    # The swapped-in widget is styled by its own CSS: its controls sit in a row.
    shown = page.evaluate("() => getComputedStyle(document.querySelector('.ds-controls')).display")
    assert shown == "flex", shown
