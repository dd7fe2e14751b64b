"""The ffn-xor widget in Chromium: the lesson's three "try this" experiments, clicks and keys only."""
import pytest

from support import scroll_to_read

pytestmark = pytest.mark.e2e
ROOT = '[data-widget="ffn-xor"]'
LIVE = ROOT + '[data-ready="true"]'
NAMES = ["好吃", "不好吃", "难吃", "不难吃"]


@pytest.fixture
def page(browser, served_site):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(served_site[1] + "c4/l1-ffn/")
    yield page
    context.close()


def expect():
    return pytest.importorskip("playwright.sync_api").expect


def out(page, name, row=None):
    scope = f'{ROOT} [data-row="{row}"]' if row else ROOT
    return page.locator(f'{scope} [data-out="{name}"]').first


def yhats(page):
    return [out(page, "yhat", row).inner_text() for row in NAMES]


def correct(page):
    return [page.get_attribute(f'{ROOT} [data-row="{row}"]', "data-correct") for row in NAMES]


def show(page):
    """Open the lesson's stepper at ③ (the widget's step) and scroll the widget into view."""
    step_three = page.locator('[data-stepper] button[data-step-to="3"]')
    if step_three.count():
        scroll_to_read(step_three.first).click()
    scroll_to_read(page.locator(ROOT))


def go_live(page):
    """Show the widget, then wait for Python."""
    show(page)
    page.wait_for_selector(LIVE, timeout=60_000)


def test_activation_bias_and_step_by_step(page):
    check = expect()
    # The build's first state (Python, starting, shows the same): ReLU solves it, the seed's example is expanded.
    show(page)
    assert yhats(page) == ["1", "0", "0", "1"] and out(page, "mse").inner_text() == "0.000"
    assert "(−1) = 1 → ReLU → 1 → × (−2) = −2" in out(page, "steps").inner_text()
    go_live(page)

    # Try ②: GELU gives nearby values, all still correct; "none" collapses to one line.
    page.check(f'{ROOT} input[name="activation"][value="gelu"]')
    check(out(page, "yhat", "不好吃")).to_have_text("0.272")
    assert yhats(page) == ["0.841", "0.272", "0.318", "0.841"]
    assert correct(page) == ["true"] * 4
    page.check(f'{ROOT} input[name="activation"][value="none"]')
    check(out(page, "mse")).to_have_text("1.000")
    assert out(page, "collapse").inner_text() == "ŷ = −p − n + 2"
    assert correct(page) == ["true", "true", "false", "true"]
    assert "「难吃」判错" in page.locator(f"{ROOT} .cw-sr").inner_text()

    # The collapsed line follows the bias: drag it with the keyboard to −0.5.
    slider = page.locator(f'{ROOT} input[name="b2"]')
    slider.focus()
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    check(out(page, "b2")).to_have_text("−0.500")
    check(out(page, "collapse")).to_have_text("ŷ = −p − n + 1")

    # Try ③: with ReLU, drag the bias from −1 towards 0 and watch which review goes wrong first.
    page.check(f'{ROOT} input[name="activation"][value="relu"]')
    slider.focus()
    page.keyboard.press("Home")
    check(out(page, "mse")).to_have_text("0.000")
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    check(out(page, "b2")).to_have_text("−0.800")
    assert correct(page) == ["true"] * 4
    page.keyboard.press("ArrowRight")
    check(out(page, "b2")).to_have_text("−0.750")
    check(out(page, "mse")).to_have_text("0.188")
    assert correct(page) == ["false", "true", "true", "false"]
    answer = page.locator(f"{ROOT} details.ffn-first-wrong")
    assert not out(page, "first-wrong").is_visible()  # tip 3's answer waits behind 「看答案」
    answer.locator("summary").click()
    check(out(page, "first-wrong")).to_be_visible()
    assert "先错的是「好吃」、「不难吃」" in out(page, "first-wrong").inner_text()

    # A real mouse drag to the right end: b2 = 0.
    slider.scroll_into_view_if_needed()
    box = slider.bounding_box()
    page.mouse.move(box["x"] + 3, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] + 40, box["y"] + box["height"] / 2, steps=8)
    page.mouse.up()
    check(out(page, "b2")).to_have_text("0")
    check(out(page, "mse")).to_have_text("3.000")
    assert yhats(page) == ["−1", "−2", "0", "−1"]

    # Click a review: its arithmetic, term by term.
    page.click(f'{ROOT} [data-row="好吃"] [data-out="yhat"]')
    steps = out(page, "steps")
    check(steps).to_contain_text("「好吃」：p = 1，n = 0")
    text = steps.inner_text()
    assert "z₂ = 1 × 1 + 0 × 1 + 0 = 1 → ReLU → 1 → × (−2) = −2" in text
    assert "合计：ŷ = 1 + (−2) = −1" in text and "✗ 错" in text
    assert page.get_attribute(f'{ROOT} [data-row="好吃"]', "data-selected") == "true"
    assert page.get_attribute(f'{ROOT} [data-row="好吃"] button', "aria-pressed") == "true"

    # Back to the designed bias and the seed's worked example: 不好吃, then neuron 2's 「看它怎么算」.
    slider.focus()
    page.keyboard.press("Home")
    check(out(page, "b2")).to_have_text("−1")
    page.click(f'{ROOT} [data-row="不好吃"] button')
    page.click(f'{ROOT} [data-action="explain"][data-neuron="1"]')
    check(page.locator(f'{ROOT} [data-action="explain"][data-neuron="1"]')).to_have_attribute("aria-pressed", "true")
    page.click(f'{ROOT} [data-action="explain"][data-neuron="2"]')
    check(page.locator(f"{ROOT} .cw-sr")).to_contain_text(
        "神经元 2：z₂ = 1 × 1 + 1 × 1 + (−1) = 1 → ReLU → 1 → × (−2) = −2")
    assert "神经元 1" not in page.locator(f"{ROOT} .cw-sr").inner_text()
    steps_text = out(page, "steps").inner_text()
    assert "z₁ = 1 × 1 + 1 × 1 + 0 = 2 → ReLU → 2 → × 1 = 2" in steps_text
    assert "合计：ŷ = 2 + (−2) = 0" in steps_text
    assert page.get_attribute(f"{ROOT} .ffn", "data-focus") == "2"


def test_keyboard_alone_reaches_every_control(page):
    check = expect()
    go_live(page)
    page.focus(f'{ROOT} input[name="activation"][value="relu"]')
    page.keyboard.press("ArrowRight")  # radio group: next option
    check(out(page, "yhat", "难吃")).to_have_text("0.318")
    page.focus(f'{ROOT} [data-row="难吃"] button')
    page.keyboard.press("Enter")
    check(out(page, "steps")).to_contain_text("「难吃」：p = 0，n = 0")
    assert "→ GELU → −0.159 → × (−2) = 0.318" in out(page, "steps").inner_text()


def test_without_javascript_the_first_state_is_complete(browser, served_site):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(served_site[1] + "c4/l1-ffn/")
    scroll_to_read(page.locator(ROOT))
    assert page.get_attribute(ROOT, "data-ready") == "false"
    assert yhats(page) == ["1", "0", "0", "1"]
    assert correct(page) == ["true"] * 4
    assert page.locator(f'{ROOT} input[name="activation"]:checked').get_attribute("value") == "relu"
    assert page.locator(f'{ROOT} input[name="b2"]').input_value() in ("-1", "-1.0")
    assert out(page, "collapse").inner_text() == "ŷ = −p − n + 2"
    steps = out(page, "steps").inner_text()
    assert "「不好吃」" in steps and "z₂ = 1 × 1 + 1 × 1 + (−1) = 1 → ReLU → 1 → × (−2) = −2" in steps
    # Tip 3's answer is there without JavaScript too, but closed until the reader opens it.
    assert not out(page, "first-wrong").is_visible()
    page.click(f"{ROOT} details.ffn-first-wrong summary")
    assert out(page, "first-wrong").is_visible() and "先错的是" in out(page, "first-wrong").inner_text()
    context.close()
