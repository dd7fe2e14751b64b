"""A student doing the exercises in Chromium, on the built site served under /course/: typing
by keyboard, running, being checked, stopping, reloading, moving work to another machine."""
import json
import re

import pytest
from playwright.sync_api import expect

from support import scroll_to_read

pytestmark = pytest.mark.e2e
FFN = '[data-exercise="c4/l1/ffn-two-neurons"]'
LESSON = "c4/l1-ffn/"

RIGHT = """def relu(z):
    return max(0.0, z)

def ffn(x, W_up, b_up, W_down):
    z = [sum(x[i] * W_up[i][j] for i in range(len(x))) + b_up[j] for j in range(len(b_up))]
    h = [relu(v) for v in z]
    return [sum(h[j] * W_down[j][c] for j in range(len(h))) for c in range(len(W_down[0]))]

for name, x in reviews.items():
    print(name, ffn(x, W_up, b_up, W_down))
"""
NO_BIAS = RIGHT.replace(" + b_up[j]", "")


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    yield context
    context.close()


def open_exercise(context, url, ex=FFN, path=LESSON):
    page = context.new_page()
    page.requests = []
    page.on("request", lambda request: page.requests.append(request.url))
    page.goto(url + path)
    page.locator(ex).scroll_into_view_if_needed()
    page.wait_for_selector(f'{ex}[data-ready="true"]', timeout=90_000)
    return page


def type_code(page, code, ex=FFN):
    """Replace the editor's text from the keyboard, as a student (or an input method) would."""
    page.locator(f"{ex} .cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)


def wait_saved(page, text, ex=FFN):
    """Wait until this browser's stored record of the exercise holds `text` (the save line reads
    "saved" before the first save too, so it cannot tell that typing has reached storage)."""
    key = "cw-exercise:" + ex.split('"')[1]
    page.wait_for_function("([key, text]) => (localStorage.getItem(key) || '').includes(text)", arg=[key, json.dumps(text)[1:-1]])


def verdict(page, ex=FFN):
    return page.locator(f"{ex} .cw-exercise__verdict")


def output(page, ex=FFN):
    return page.locator(f"{ex} .cw-exercise__output").inner_text()


def run(page, ex=FFN, timeout=90_000):
    """Press Ctrl+Enter in the editor and wait for the verdict line."""
    page.locator(f"{ex} .cm-content").press("Control+Enter")
    page.wait_for_function(f"""() => {{
        const v = document.querySelector('{ex} .cw-exercise__verdict');
        return v.dataset.kind && v.dataset.kind !== 'running'; }}""", timeout=timeout)
    return verdict(page, ex).inner_text()


def test_a_wrong_answer_names_the_input_and_a_right_one_stays_solved(context, served_site):
    url = served_site[1]
    page = open_exercise(context, url)
    answer = page.locator(f"{FFN} div.cw-exercise__answer")
    assert page.locator(f"{FFN} button[data-action=answer]").is_disabled()  # not before a first run
    type_code(page, NO_BIAS)
    said = run(page)
    assert "第 4 个检查不对" in said and "「好吃」的 ffn([1, 0], W_up, b_up, W_down) 应为 [1]" in said, said
    assert "好吃 [-1]" in output(page)  # what the student's code printed, as it printed it
    type_code(page, RIGHT)
    said = run(page)
    assert said.startswith("✓ 全部") and "个检查都通过了" in said
    assert page.get_attribute(FFN, "data-solved") == "true"
    assert not any(u.endswith("answer.json") for u in page.requests)  # fetched only when revealed
    page.locator(f"{FFN} button[data-action=answer]").click()
    expect(answer).to_contain_text("def ffn(x, W_up, b_up, W_down):")  # answer.json arrives after the click
    assert any(u.endswith("answer.json") for u in page.requests)
    page.reload()
    page.locator(FFN).scroll_into_view_if_needed()
    page.wait_for_selector(f'{FFN}[data-ready="true"]', timeout=90_000)
    assert page.get_attribute(FFN, "data-solved") == "true"
    assert "上次你已经通过" in verdict(page).inner_text()
    assert "+ b_up[j] for j in range(len(b_up))]" in page.locator(f"{FFN} .cm-content").inner_text()
    expect(answer).to_contain_text("def ffn(x, W_up, b_up, W_down):")  # the revealed answer stays revealed


def test_hints_open_one_at_a_time_and_are_kept(context, served_site):
    page = open_exercise(context, served_site[1])
    button = page.locator(f"{FFN} button[data-action=hint]")
    assert button.inner_text() == "提示（0/3）"
    assert page.locator(f"{FFN} div.cw-exercise__hint").count() == 0
    button.click()
    page.wait_for_selector(f"{FFN} div.cw-exercise__hint")
    assert button.inner_text() == "提示（1/3）"
    button.click()
    page.wait_for_function(f"document.querySelectorAll('{FFN} div.cw-exercise__hint').length === 2")
    assert "不好吃" in page.locator(f"{FFN} div.cw-exercise__hint").nth(1).inner_text()
    page.reload()
    page.locator(FFN).scroll_into_view_if_needed()
    page.wait_for_function(f"document.querySelectorAll('{FFN} div.cw-exercise__hint').length === 2", timeout=90_000)


def test_stop_ends_a_runaway_loop_and_the_next_run_and_the_widgets_carry_on(context, served_site):
    page = open_exercise(context, served_site[1])
    type_code(page, "print('start')\nwhile True:\n    pass\n")
    page.locator(f"{FFN} button[data-action=run]").click()
    page.wait_for_function(f"document.querySelector('{FFN} .cw-exercise__output').textContent.includes('start')",
                           timeout=90_000)
    stop = page.locator(f"{FFN} button[data-action=stop]")
    assert stop.is_enabled()
    stop.click()
    page.wait_for_function(f"document.querySelector('{FFN} .cw-exercise__verdict').dataset.kind === 'stopped'")
    assert stop.is_disabled()
    type_code(page, "print('again')\n")
    said = run(page)
    assert "again" in output(page) and "检查不对" in said or "还没有找到" in said
    # A widget on the same page works in the Python that took over.
    widget = '[data-widget="linear-fit"]'
    page.locator(widget).scroll_into_view_if_needed()
    page.wait_for_selector(f'{widget}[data-ready="true"]', timeout=90_000)
    page.focus(f'{widget} input[name="b"]')
    page.keyboard.press("End")
    page.wait_for_function(
        f"document.querySelector('{widget} [data-out=\"mse\"]').textContent === '2.500'", timeout=90_000)


def test_the_time_limit_stops_a_forgotten_loop(context, served_site):
    page = open_exercise(context, served_site[1])
    type_code(page, "while True:\n    pass\n")
    said = run(page)
    seconds = page.get_attribute(FFN, "data-time-limit")
    assert f"运行超过了 {seconds} 秒，已经停止" in said
    type_code(page, "print(1 + 1)\n")
    run(page)
    assert output(page).strip().startswith("2")


def test_errors_read_in_chinese_with_the_students_line(context, served_site):
    page = open_exercise(context, served_site[1])
    type_code(page, "def relu(z)：\n    return z\n")
    said = run(page)
    assert "第 1 行" in said
    assert "第 1 行第 12 列是中文输入法打出的全角符号 「：」" in output(page)
    type_code(page, "def relu(z):\n    return z\n\nprint(relu(undefined_name))\n")
    run(page)
    text = output(page)
    assert 'File "你的代码", line 4' in text and "NameError" in text and "名字 undefined_name 还没有定义" in text
    assert "_cw_" not in text and "pyodide" not in text.lower()
    type_code(page, "def f(n):\n    return f(n + 1)\n\nf(0)\n")
    run(page)
    assert "RecursionError" in output(page) and "递归太深" in output(page)
    type_code(page, "print('<b>bold</b>')\n")
    run(page)
    assert "<b>bold</b>" in output(page)  # shown as text, never as HTML
    assert page.locator(f"{FFN} .cw-exercise__output b").count() == 0


def test_a_standard_module_outside_the_trimmed_library_imports(context, served_site):
    page = open_exercise(context, served_site[1])
    type_code(page, "import fractions\nprint(fractions.Fraction(1, 3) + fractions.Fraction(1, 6))\n")
    run(page)
    text = output(page)
    assert "正在载入标准库模块 fractions" in text and "1/2" in text, text


def test_work_survives_a_reload_and_moves_to_another_browser(browser, context, served_site, tmp_path):
    url = served_site[1]
    page = open_exercise(context, url)
    type_code(page, "# mine\n" + NO_BIAS)
    wait_saved(page, "# mine\n")
    page.reload()
    page.locator(FFN).scroll_into_view_if_needed()
    page.wait_for_selector(f'{FFN}[data-ready="true"]', timeout=90_000)
    assert "# mine" in page.locator(f"{FFN} .cm-content").inner_text()
    with page.expect_download() as download:
        page.locator(f"{FFN} .cw-exercise__save button", has_text="下载全部练习").click()
    saved = tmp_path / "work.json"
    download.value.save_as(saved)
    data = json.loads(saved.read_text(encoding="utf-8"))
    assert data["format"] == "llm-from-scratch-exercises" and "# mine" in data["exercises"]["c4/l1/ffn-two-neurons"]["code"]
    elsewhere = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        other = open_exercise(elsewhere, url)
        assert "# mine" not in other.locator(f"{FFN} .cm-content").inner_text()
        asked = []
        other.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
        other.locator(f"{FFN} input[type=file]").set_input_files(str(saved))
        other.wait_for_function(f"document.querySelector('{FFN} .cm-content').textContent.includes('# mine')")
        assert "已载入" in verdict(other).inner_text()
        assert "亲手写出两个神经元的 FFN" in asked[0] and "¶" not in asked[0]  # asked first, naming the exercise
    finally:
        elsewhere.close()


def test_blocked_storage_is_said_and_the_exercise_still_runs(browser, served_site):
    context = browser.new_context()
    context.add_init_script("Object.defineProperty(window, 'localStorage', "
                            "{get() { throw new DOMException('blocked', 'SecurityError'); }})")
    try:
        page = open_exercise(context, served_site[1])
        line = page.locator(f"{FFN} .cw-exercise__save")
        assert line.get_attribute("data-saved") == "false" and "不会被保存" in line.inner_text()
        type_code(page, RIGHT)
        assert run(page).startswith("✓")
    finally:
        context.close()


def test_a_changed_starter_is_said_and_the_students_code_kept(browser, served_site):
    context = browser.new_context()
    record = {"code": "# written against an older starter\n", "starterSha": "0" * 12, "ran": True}
    context.add_init_script(f"localStorage.setItem('cw-exercise:c4/l1/ffn-two-neurons', {json.dumps(json.dumps(record))})")
    try:
        page = open_exercise(context, served_site[1])
        notice = page.locator(f"{FFN} .cw-exercise__notice")
        assert notice.is_visible() and "改过这道题的起始代码" in notice.inner_text()
        assert "older starter" in page.locator(f"{FFN} .cm-content").inner_text()
        page.once("dialog", lambda dialog: dialog.accept())
        page.locator(f"{FFN} button[data-action=reset]").click()
        assert "def relu(z):" in page.locator(f"{FFN} .cm-content").inner_text()
        assert notice.is_hidden()
    finally:
        context.close()


def test_the_keyboard_indents_with_tab_and_leaves_with_escape_then_tab(context, served_site):
    page = open_exercise(context, served_site[1])
    type_code(page, "x = 1")
    page.keyboard.press("Home")
    page.keyboard.press("Tab")
    assert page.locator(f"{FFN} .cm-line").first.inner_text() == "    x = 1"
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "运行"
    page.keyboard.press("Enter")  # the focused 运行 button runs the code
    page.wait_for_function(f"document.querySelector('{FFN} .cw-exercise__verdict').dataset.kind === 'error'",
                           timeout=90_000)
    assert "多缩进了" in output(page)


def test_a_375px_phone_can_type_and_run(browser, served_site):
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True,
                                  device_scale_factor=2)
    try:
        page = open_exercise(context, served_site[1])
        page.locator(f"{FFN} .cm-content").tap()
        page.keyboard.press("Control+A")
        page.keyboard.insert_text(RIGHT)
        page.locator(f"{FFN} button[data-action=run]").tap()
        page.wait_for_function(f"document.querySelector('{FFN} .cw-exercise__verdict').dataset.kind === 'passed'",
                               timeout=90_000)
        sizes = page.evaluate(f"""() => {{
            const box = document.querySelector('{FFN}').getBoundingClientRect();
            const run = document.querySelector('{FFN} button[data-action=run]').getBoundingClientRect();
            return [box.right, run.height, document.documentElement.scrollWidth];
        }}""")
        assert sizes[0] <= 375 and sizes[1] >= 24 and sizes[2] <= 375, sizes
        attrs = page.locator(f"{FFN} .cm-content")
        assert attrs.get_attribute("autocapitalize") == "off" and attrs.get_attribute("autocorrect") == "off"
    finally:
        context.close()


def test_without_javascript_the_exercise_reads_as_a_task_and_code(browser, served_site):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(served_site[1] + LESSON)
        block = page.locator(FFN)
        scroll_to_read(block)
        assert "亲手写出两个神经元的 FFN" in block.inner_text()
        assert re.search(r"def ffn\(x, W_up, b_up, W_down\):", block.locator(".cw-exercise__starter").inner_text())
        assert block.locator(".cm-editor").count() == 0
    finally:
        context.close()
