"""A student's session in Chromium against the built site served under /course/."""
import pytest

from support import scroll_to_read, start_material

pytestmark = pytest.mark.e2e
LIVE = '[data-widget="linear-fit"][data-ready="true"]'


@pytest.fixture
def page(browser, served_site):
    context = browser.new_context()
    page = context.new_page()
    page.requests = []
    page.on("request", lambda request: page.requests.append(request))
    yield page
    context.close()


def lesson_url(served_site):
    return served_site[1] + "c4/l1-ffn/"


def out(page, name, row=None):
    scope = '[data-widget="linear-fit"] ' + (f'[data-row="{row}"] ' if row else "")
    return page.locator(f'{scope}[data-out="{name}"]').first.inner_text()


def test_widget_goes_live_then_sliders_and_least_squares_work(page, served_site):
    page.goto(lesson_url(served_site))
    scroll_to_read(page.locator('[data-widget="linear-fit"]'))
    assert out(page, "mse") == "0.500"  # readable at once: the build's first state
    page.wait_for_selector(LIVE, timeout=60_000)

    page.focus('[data-widget="linear-fit"] input[name="b"]')
    page.keyboard.press("End")  # b = 2
    page.wait_for_function(
        "document.querySelector('[data-widget=\"linear-fit\"] [data-out=\"mse\"]').textContent === '2.500'")
    assert out(page, "yhat", row="不难吃") == "2.00"
    assert out(page, "b") == "2.00"
    assert out(page, "identity-left") == out(page, "identity-right") == "3.00"

    page.click('[data-action="least-squares"]')
    page.wait_for_function(
        "document.querySelector('[data-widget=\"linear-fit\"] [data-out=\"mse\"]').textContent === '0.250'")
    values = {name: page.input_value(f'[data-widget="linear-fit"] input[name="{name}"]') for name in "abc"}
    assert {k: float(v) for k, v in values.items()} == {"a": 0.0, "b": 0.0, "c": 0.5}
    assert {out(page, "yhat", row=r) for r in ("好吃", "不好吃", "难吃", "不难吃")} == {"0.50"}
    assert "c = 0.50" in page.locator('[data-widget="linear-fit"] .cw-sr').inner_text()

    host = served_site[1].split("/course/")[0]
    offsite = [r.url for r in page.requests if not r.url.startswith((host, "data:", "blob:"))]
    assert offsite == []


def test_without_javascript_the_first_state_is_there(browser, served_site):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(lesson_url(served_site))
    scroll_to_read(page.locator('[data-widget="linear-fit"]'))
    assert page.locator('[data-widget="linear-fit"] [data-out="mse"]').inner_text() == "0.500"
    assert page.locator('[data-widget="linear-fit"] [data-row="好吃"] [data-out="yhat"]').inner_text() == "1.00"
    assert page.get_attribute('[data-widget="linear-fit"]', "data-ready") == "false"
    assert "构建时算好的初始状态" in page.locator('[data-widget="linear-fit"] .cw-status').inner_text()
    context.close()


def test_missing_python_says_so_and_keeps_the_static_state(page, served_site):
    # Both runtimes gone: a desktop whose Pyodide fails falls back to MicroPython (test_runtime_choice_browser.py).
    for wasm in ("**/pyodide.asm.wasm", "**/micropython.wasm"):
        page.route(wasm, lambda route: route.abort())
    page.goto(lesson_url(served_site))
    page.locator('[data-widget="linear-fit"]').scroll_into_view_if_needed()
    page.wait_for_selector('[data-widget="linear-fit"] .cw-status[data-status="error"]', timeout=60_000)
    assert "无法加载 Python 运行时" in page.locator('[data-widget="linear-fit"] .cw-status').inner_text()
    assert out(page, "mse") == "0.500"
    assert page.get_attribute('[data-widget="linear-fit"]', "data-ready") == "false"


def test_python_boots_once_across_instant_navigation(page, served_site):
    home = served_site[1]
    page.goto(home)
    page.wait_for_load_state("networkidle")
    assert not [r for r in page.requests if "/widgets/runtime/worker.js" in r.url or "/pyodide/" in r.url], \
        "a page without widgets started Python"
    start_material(page)  # the reader moves the mouse: Material's instant navigation starts
    page.evaluate("window.sameDocument = true")
    # The home page's course map links the lesson (its footer's next page is the first chapter's, C3).
    page.click('article a[href$="c4/l1-ffn/"]')
    page.locator('[data-widget="linear-fit"]').scroll_into_view_if_needed()  # boots near the viewport
    page.wait_for_selector(LIVE, timeout=60_000)
    page.go_back()
    page.wait_for_url(home)
    page.click('article a[href$="c4/l1-ffn/"]')
    page.locator('[data-widget="linear-fit"]').scroll_into_view_if_needed()
    page.wait_for_selector(LIVE, timeout=60_000)
    assert page.evaluate("window.sameDocument") is True, "instant navigation fell back to full loads"
    downloads = [r for r in page.requests if r.method == "GET" and r.url.endswith("pyodide.asm.wasm")]
    assert len(downloads) == 1
