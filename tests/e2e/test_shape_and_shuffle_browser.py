"""A student in Chromium: switch ffn-shape's scale, shuffle position-wise's tokens."""
import pytest

from support import scroll_to_read

pytestmark = pytest.mark.e2e
SHAPE = '[data-widget="ffn-shape"]'
SHUFFLE = '[data-widget="position-wise"]'


@pytest.fixture
def page(browser, served_site):
    context = browser.new_context()
    page = context.new_page()
    yield page
    context.close()


def lesson_url(served_site):
    return served_site[1] + "c4/l1-ffn/"


def visible_numbers(page):
    """The numbers on the edges of the figure that is showing."""
    return set(page.locator(f"{SHAPE} .fshape-fig:visible .fshape-num").all_text_contents())


def table(page):
    """[(position, token, output)] in the order the rows stand on the page."""
    rows = page.locator(f"{SHUFFLE} [data-row]")
    return [(rows.nth(i).locator('[data-out="position"]').inner_text(), rows.nth(i).get_attribute("data-row"),
             rows.nth(i).locator('[data-out="output"]').inner_text()) for i in range(rows.count())]


def test_scale_switch_works_at_once_and_goes_live(page, served_site):
    page.goto(lesson_url(served_site))
    assert visible_numbers(page) == {"5", "768", "3,072"}
    assert page.locator(f"{SHAPE} .fshape-fig:visible").count() == 1
    # Before Python has booted: the switch is plain CSS.
    page.locator(f'{SHAPE} input[name="scale"][value="small"]').check()
    assert visible_numbers(page) == {"5", "2", "1"}  # the toy writes one number: d_out = 1

    page.locator(SHAPE).scroll_into_view_if_needed()
    page.wait_for_selector(f'{SHAPE}[data-ready="true"]', timeout=60_000)
    page.locator(f'{SHAPE} input[name="scale"][value="real"]').check()
    assert visible_numbers(page) == {"5", "768", "3,072"}
    page.wait_for_function(f"document.querySelector('{SHAPE} .cw-sr').textContent.includes('d_ff = 3,072')")
    page.keyboard.press("ArrowRight")  # radios are keyboard-operable
    assert page.locator(f'{SHAPE} input[name="scale"][value="small"]').is_checked()
    assert visible_numbers(page) == {"5", "2", "1"}  # the toy writes one number: d_out = 1


def test_scale_switch_needs_no_javascript(browser, served_site):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(lesson_url(served_site))
    assert visible_numbers(page) == {"5", "768", "3,072"}
    page.locator(f'{SHAPE} label:has(input[value="small"])').click()
    assert visible_numbers(page) == {"5", "2", "1"}  # the toy writes one number: d_out = 1
    assert page.get_attribute(SHAPE, "data-ready") == "false"
    context.close()


def test_shuffle_moves_rows_and_keeps_every_output(page, served_site):
    page.goto(lesson_url(served_site))
    scroll_to_read(page.locator(SHUFFLE))
    before = table(page)  # the build's first state, readable at once
    assert [token for _, token, _ in before] == ["小明", "把", "苹果", "给了", "小王"]
    assert [pos for pos, _, _ in before] == ["1", "2", "3", "4", "5"]
    outputs = {token: out for _, token, out in before}

    page.locator(SHUFFLE).scroll_into_view_if_needed()
    page.wait_for_selector(f'{SHUFFLE}[data-ready="true"]', timeout=60_000)
    seen = []
    for _ in range(3):
        previous = [token for _, token, _ in table(page)]
        page.click(f'{SHUFFLE} [data-action="shuffle"]')
        page.wait_for_function(
            """([sel, prev]) => [...document.querySelectorAll(sel + ' [data-row]')]
                 .map(r => r.dataset.row).join() !== prev.join()""", arg=[SHUFFLE, previous])
        after = table(page)
        order = [token for _, token, _ in after]
        assert sorted(order) == sorted(outputs) and order != previous
        assert [pos for pos, _, _ in after] == ["1", "2", "3", "4", "5"]
        assert {token: out for _, token, out in after} == outputs
        assert page.locator(f'{SHUFFLE} [data-out="check"]').inner_text() == "是"
        assert page.locator(f'{SHUFFLE} [data-out="sequence"]').inner_text() == " ".join(order)
        seen.append(order)
    assert "每个 token 的输出与打乱前相同：是" in page.locator(f"{SHUFFLE} .cw-sr").inner_text()

    page.click(f'{SHUFFLE} [data-action="reset"]')
    page.wait_for_function(f"document.querySelector('{SHUFFLE}').dataset.shuffled === 'false'")
    assert table(page) == before
