"""The lesson page in Chromium: formula terms, the ①②③ stepper, a phone-sized screen."""
import pytest

pytestmark = pytest.mark.e2e


@pytest.fixture
def lesson(browser, served_site):
    context = browser.new_context()
    page = context.new_page()
    page.goto(served_site[1] + "c4/l1-ffn/")
    yield page
    context.close()


def test_clicking_a_formula_term_explains_it(lesson):
    up, x = lesson.locator('[data-term-info="W_up"]'), lesson.locator('[data-term-info="x"]')
    lesson.click('button[data-term="W_up"]')
    assert up.is_visible() and not x.is_visible()
    assert "d \\times d_{ff}" in up.inner_html() or "形状" in up.inner_text()
    assert lesson.get_attribute('button[data-term="W_up"]', "aria-expanded") == "true"
    lesson.focus('button[data-term="b_down"]')
    lesson.keyboard.press("Enter")
    assert lesson.locator('[data-term-info="b_down"]').is_visible() and not up.is_visible()


def test_stepper_reveals_the_failure_then_the_ffn(lesson):
    ffn = lesson.locator('[data-widget="ffn-xor"]')
    proof = lesson.locator(".stepper__fail")
    assert lesson.locator('[data-widget="linear-fit"]').is_visible()
    assert not proof.is_visible() and not ffn.is_visible()
    lesson.click('button[data-step-to="2"]')
    assert proof.is_visible() and not ffn.is_visible()
    lesson.click('button[data-step-to="3"]')
    assert proof.is_visible() and ffn.is_visible()
    assert lesson.get_attribute('button[data-step-to="3"]', "aria-pressed") == "true"


@pytest.mark.parametrize("lesson,shown", [
    ("c4/l1-ffn/", ['[data-widget="ffn-xor"]', '[data-term-info="W_down"]']),
    ("c4/l2-residual/", ['[data-widget="depth-signal"]', ".stepper__fail", ".stepper__ffn",
                         '[data-widget="residual-paths"]', ".rp-paths"]),
    ("c4/l3-norm/", ['[data-widget="batch-trap"]', ".stepper__fail", ".stepper__ffn", '[data-widget="norm-token"]',
                     '[data-widget="norm-placement"]', '[data-exercise="c4/l3/rms-norm"] .cw-exercise__starter']),
])
def test_nothing_is_hidden_without_javascript(browser, served_site, lesson, shown):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(served_site[1] + lesson)
    for selector in shown:
        assert page.locator(selector).first.is_visible(), selector
    context.close()


@pytest.mark.parametrize("lesson", ["c4/l1-ffn/", "c4/l2-residual/", "c4/l3-norm/"])
def test_phone_screen_has_no_sideways_scrolling(browser, served_site, lesson):
    context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True)
    page = context.new_page()
    page.goto(served_site[1] + lesson)
    page.click('button[data-step-to="3"]')
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= 376, f"{lesson} is {width}px wide on a 375px screen"
    context.close()


@pytest.mark.parametrize("lesson", ["c4/l1-ffn/", "c4/l2-residual/", "c4/l3-norm/"])
def test_every_formula_fits_a_phone(browser, served_site, lesson):
    """A formula wider than the screen would need sideways scrolling inside it (and a focus stop)."""
    context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True)
    page = context.new_page()
    page.goto(served_site[1] + lesson)
    wide = page.evaluate("""() => [...document.querySelectorAll('.arithmatex')]
        .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.slice(0, 60))""")
    context.close()
    assert wide == []
