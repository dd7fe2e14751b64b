"""The widget runtime when things go wrong, in Chromium: every call settles with a message
that names the widget, a runaway model is stopped without failing other widgets' calls,
and a failed start is retried on the next touch.

The site is the real build, copied, with linear-fit's model wrapped so that chosen slider
values make it misbehave the ways a real model can: loop forever, return NaN, raise.
"""
import shutil

import pytest

from support import scroll_to_read
from sitectl import SiteServer

pytestmark = pytest.mark.e2e
LF = '[data-widget="linear-fit"]'
XOR = '[data-widget="ffn-xor"]'

MISBEHAVING = '''

_real_view = view


def view(params):
    """Test-only wrapper: c at its maximum never returns, a at its maximum gives NaN, a at its minimum raises."""
    if params["c"] == 2.0:
        while True:
            pass
    if params["a"] == 2.0:
        return {**_real_view(params), "out": {"mse": float("nan")}}
    if params["a"] == -2.0:
        raise RuntimeError("a model bug")
    return _real_view(params)
'''


@pytest.fixture(scope="module")
def broken_site(served_site, tmp_path_factory):
    copy = tmp_path_factory.mktemp("broken") / "site"
    shutil.copytree(served_site[0], copy)
    model = copy / "widgets" / "linear_fit" / "model.py"
    model.write_text(model.read_text(encoding="utf-8") + MISBEHAVING, encoding="utf-8")
    with SiteServer(copy) as url:
        yield url + "c4/l1-ffn/"


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
    yield page
    context.close()


def status(page, widget):
    return page.locator(f"{widget} .cw-status").inner_text()


def wait_status(page, widget, kind, timeout=60_000):
    page.wait_for_selector(f'{widget} .cw-status[data-status="{kind}"]', timeout=timeout)
    return status(page, widget)


def wait_message(page, widget, kind, text, timeout=60_000):
    """Wait for this message, not just this kind: a second error replaces the first without
    the status kind changing, so waiting on the kind alone can read the old message."""
    page.wait_for_function(
        "([sel, kind, text]) => { const s = document.querySelector(sel + ' .cw-status');"
        " return s.dataset.status === kind && s.textContent.includes(text); }",
        arg=[widget, kind, text], timeout=timeout)
    return status(page, widget)


def go_live(page, url, *widgets):
    page.goto(url)
    page.click('button[data-step-to="3"]')  # shows the FFN widget too
    for widget in widgets:
        page.locator(widget).scroll_into_view_if_needed()
        page.wait_for_selector(f'{widget}[data-ready="true"]', timeout=90_000)


def press(page, widget, slider, key):
    page.focus(f'{widget} input[name="{slider}"]')
    page.keyboard.press(key)


def test_a_model_that_never_returns_is_stopped_and_the_next_move_works(page, broken_site):
    go_live(page, broken_site, LF, XOR)
    before = page.locator(f'{XOR} [data-out="mse"]').first.inner_text()
    press(page, LF, "c", "End")  # c = 2: the model loops forever
    page.wait_for_timeout(300)
    page.check(f'{XOR} input[value="gelu"]')  # queued behind the runaway call
    text = wait_status(page, LF, "error", timeout=30_000)
    assert "「朴素方案」的计算超过 5 秒仍未结束，已停止并重启 Python" in text
    # The other widget's call was only waiting: it is replayed on the new Python, not failed.
    page.wait_for_function(
        f"document.querySelector('{XOR} [data-out=\"mse\"]').textContent !== {before!r}", timeout=60_000)
    assert page.get_attribute(f"{XOR} .cw-status", "data-status") == "ready"

    press(page, LF, "c", "Home")  # c = -1: an ordinary call, on a fresh Python
    page.wait_for_function(f"document.querySelector('{LF} [data-out=\"c\"]').textContent === '\u22121.00'",
                           timeout=60_000)
    assert wait_status(page, LF, "ready") == "Python 已在浏览器里运行：动手试试。"


def test_nan_and_a_raising_model_each_say_what_happened(page, broken_site):
    go_live(page, broken_site, LF)
    press(page, LF, "a", "End")  # NaN is not JSON: the call must settle all the same
    assert "「朴素方案」的模型算出了无法显示的结果" in wait_status(page, LF, "error")
    press(page, LF, "a", "Home")
    wait_message(page, LF, "error", "「朴素方案」的 Python 模型出错了")
    assert any("a model bug" in e for e in page.console_errors), "the technical detail goes to the console"
    page.keyboard.press("ArrowRight")  # a = -1.95: works again
    wait_status(page, LF, "ready")


def test_a_missing_view_and_a_failing_mount_have_their_own_messages(page, broken_site):
    page.route("**/widgets/position_wise/view.js", lambda route: route.abort())
    page.route("**/widgets/linear_fit/view.js", lambda route: route.fulfill(
        content_type="text/javascript", body="export function mount() { throw new Error('mount bug'); }"))
    page.goto(broken_site)
    page.locator(LF).scroll_into_view_if_needed()
    assert "「朴素方案」的界面启动时出错" in wait_status(page, LF, "error")
    page.locator('[data-widget="position-wise"]').scroll_into_view_if_needed()
    assert "「逐位置」的界面脚本没能载入" in wait_status(page, '[data-widget="position-wise"]', "error")
    assert scroll_to_read(page.locator(f'{LF} [data-out="mse"]')).inner_text() == "0.500", "the static first state stays"


def test_a_failed_start_is_retried_on_the_next_touch(page, broken_site):
    # Both runtimes: a desktop whose Pyodide fails falls back to MicroPython (test_runtime_choice_browser.py).
    for wasm in ("**/pyodide.asm.wasm", "**/micropython.wasm"):
        page.route(wasm, lambda route: route.abort())
    page.goto(broken_site)
    page.locator(LF).scroll_into_view_if_needed()
    assert "无法加载 Python 运行时" in wait_status(page, LF, "error")
    assert "点一下组件会重试" in status(page, LF)
    for wasm in ("**/pyodide.asm.wasm", "**/micropython.wasm"):
        page.unroute(wasm)
    page.click(f'{LF} input[name="b"]')  # the next touch tries again
    page.wait_for_selector(f'{LF}[data-ready="true"]', timeout=90_000)
    assert status(page, LF) == "Python 已在浏览器里运行：动手试试。"
    assert page.get_attribute(LF, "data-runtime") == "pyodide", "the retry starts with the desktop's runtime"


def test_a_widget_that_never_calls_python_does_not_need_it(page, broken_site):
    page.route("**/pyodide.asm.wasm", lambda route: route.abort())
    page.goto(broken_site)
    shape = '[data-widget="ffn-shape"]'
    page.locator(shape).scroll_into_view_if_needed()
    page.wait_for_selector(f'{shape}[data-ready="true"]', timeout=30_000)
    assert status(page, shape) == "组件已可以操作。"
