"""Round 2 of the attacks on the exercises (../shared/reviews/exercise-attacks-2.md), replayed in
Chromium on the built site: each test names the rank and the row it replays, and failed before
the fix it covers (except the last, a guard for a press that was never lost)."""
import time

import pytest

from test_exercise_attacks_browser import COUNT_WORKERS, workers
from test_exercise_browser import FFN, open_exercise, run, type_code, verdict

pytestmark = pytest.mark.e2e

# The longest main-thread task from now on (a PerformanceObserver on long tasks).
WATCH_LONG_TASKS = """() => {
  window.__longest = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__longest = Math.max(window.__longest, entry.duration);
  }).observe({ type: "longtask" });
}"""


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    context.add_init_script(COUNT_WORKERS)
    yield context
    context.close()


def shown(page, ex=FFN):
    """The output block's text, read without moving megabytes into the test."""
    return page.evaluate(f"document.querySelector('{ex} .cw-exercise__output').textContent.slice(0, 200000)")


def test_a_huge_range_fed_to_a_builtin_is_refused_at_once(context, served_site):
    """Rank 1 (N37), as Chromium sees it: `sum(range(10**11))` is one C call that no Python
    bytecode interrupts; in WebKit it kept a core busy after the limit and after 停止
    (test_webkit_browser.py checks that). A range of more than 10**8 numbers is refused at once."""
    page = open_exercise(context, served_site[1])
    type_code(page, "print(sum(range(10**6)))\n")
    run(page)  # Python booted, and an ordinary range works
    assert shown(page).startswith("499999500000")
    type_code(page, "print(sum(range(10**11)))\n")
    started = time.monotonic()
    said = run(page)
    assert "代码运行出错（第 1 行）" in said and "太多了" in shown(page), said + shown(page)
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize("code, kind", [
    ("raise ValueError('x' * 10**7)\n", "ValueError"),
    ("exec('a' * 10**6)\n", "NameError"),
])
def test_a_huge_error_message_is_cut_and_the_page_stays_responsive(context, served_site, code, kind):
    """Rank 2 (N12): output and the verdict were capped, error text was not: a 10 MB message was
    drawn whole, in one 5.9 s main-thread task; a 1 MB name in a NameError took 1.1 s."""
    page = open_exercise(context, served_site[1])
    type_code(page, "print(1)\n")
    run(page)  # Python booted: what is measured below is the error's drawing
    page.evaluate(WATCH_LONG_TASKS)
    type_code(page, code)
    said = run(page)
    assert "代码运行出错" in said, said
    text = shown(page)
    assert kind in text and len(text) < 10_000, len(text)
    assert "…" in text  # the cut is shown, not silent
    assert page.evaluate("window.__longest") < 1000
    assert "Python 本身出了故障" not in text  # the student's error, told as such


DEEP_RESULT = ("def relu(z):\n    return max(0.0, z)\n\ndef ffn(x, W_up, b_up, W_down):\n    r = []\n"
               "    for _ in range(10000):\n        r = [r]\n    return r\n")
DEEP_INSIDE = ("import sys\n\ndef relu(z):\n    sys.setrecursionlimit(10**6)\n    def down(n):\n"
               "        return down(n + 1)\n    return down(0)\n\ndef ffn(x, W_up, b_up, W_down):\n    return [0]\n")


@pytest.mark.parametrize("code", [
    "x = " + "[" * 5000 + "]" * 5000 + "\n",  # O45
    "eval('(' * 100000 + ')' * 100000)\n",  # O46
    DEEP_RESULT,  # O47: the checker's describe() recursed into it
    DEEP_INSIDE,  # N40
], ids=["nested-literal", "nested-eval", "nested-result", "recursion-limit-raised"])
def test_a_stack_overflow_from_the_students_code_is_theirs(context, served_site, code):
    """Rank 5 (O45–O47, N40): each said "Python 本身出了故障…再运行一次即可", though the same code
    fails the same way again. The cause is the student's nesting or recursion, and is told so."""
    page = open_exercise(context, served_site[1])
    type_code(page, code)
    said = run(page)
    text = said + shown(page)
    assert "Python 本身出了故障" not in text and "再运行一次即可" not in text, text
    assert "太深" in text or "RecursionError" in text, text  # the nesting, or Python's own RecursionError


SLOW_RIGHT = """import time

def relu(z):
    start = time.time()
    while time.time() - start < 0.15:  # right, only slow
        pass
    return max(0.0, z)

def ffn(x, W_up, b_up, W_down):
    z = [sum(x[i] * W_up[i][j] for i in range(len(x))) + b_up[j] for j in range(len(b_up))]
    h = [relu(v) for v in z]
    return [sum(h[j] * W_down[j][c] for j in range(len(h))) for c in range(len(W_down[0]))]
"""


def test_slow_but_right_code_is_told_it_is_slow_not_endless(context, served_site):
    """Rank 9 (N49): a right `ffn` whose `relu` takes 0.15 s a call ran out of time in its 23
    checks and was asked "是不是有一个停不下来的循环？", with no word that the code was right and
    had run to its end, or that the checks count toward the limit."""
    page = open_exercise(context, served_site[1])
    type_code(page, SLOW_RIGHT)
    said = run(page)
    assert "停不下来的循环" not in said, said
    assert "检查进行到第" in said and "太慢" in said, said


def test_an_offline_import_outside_the_trimmed_library_says_so_and_works_once_online(context, served_site):
    """Rank 10 (O66): offline, `import fractions` (not in the site's trimmed standard library)
    said "Python 本身出了故障（Failed to fetch），已重新启动". It is the run's own error, in words:
    the module needs the full library's download; once online the same code runs."""
    page = open_exercise(context, served_site[1])
    context.route("**/python_stdlib.zip", lambda route: route.abort("internetdisconnected"))
    type_code(page, "x = 1\nimport fractions\nprint(fractions.Fraction(1, 3) + fractions.Fraction(1, 6))\n")
    said = run(page)
    text = said + shown(page)
    assert "Python 本身出了故障" not in text, text
    assert "fractions" in text and "联网" in text and "第 2 行" in said, text
    assert workers(page)["ended"] == 0  # no restart: nothing was wrong with Python
    context.unroute("**/python_stdlib.zip")
    run(page)
    assert "1/2" in shown(page)


GELU = '[data-exercise="c4/l1/gelu-tanh"]'
WRONG_GELU = "def gelu(z):\n    return 0.0\n"


@pytest.mark.parametrize("code, words, wrong", [
    ("help(len)\n", "Help on built-in function len", "没有 pydoc"),  # O67
    ("import asyncio\n\nasync def main():\n    print('hi')\n\nasyncio.run(main())\n", "事件循环", "_cw_run"),  # N51
    ("x = 1\x00\nprint(x)\n", "第 1 行有一个看不见的空字符", "None"),  # N47
    ('s = """好吃，\n不好吃，"""  1\n', "第 2 行", "「，」"),  # N54: the comma is inside the string
    ("def r\u0435lu(z):\n    return max(0.0, z)\n", "U+0435", None),  # N55: a Cyrillic е
    ("def re\u200dlu(z):\n    return max(0.0, z)\n", "U+200D", None),  # N55: a zero-width joiner
], ids=["help", "asyncio-run", "nul-byte", "triple-quoted-comma", "cyrillic-e", "zero-width-joiner"])
def test_minor_messages_say_what_happened(context, served_site, code, words, wrong):
    """Rank 11: help() said the standard library has no pydoc; asyncio.run() gave a bare error and a
    warning naming the runtime's file; a NUL byte was on "第 None 行"; a comma inside a triple-quoted
    string was blamed; a lookalike letter in `relu` got only "还没有找到 `relu`"."""
    page = open_exercise(context, served_site[1])
    type_code(page, code)
    said = run(page)
    text = said + shown(page)
    assert words in text, text
    assert wrong is None or wrong not in text, text


def test_warning_filters_and_files_in_site_packages_do_not_outlive_their_run(context, served_site):
    """Rank 11 (N27, N31): `warnings.simplefilter('error')` made the next exercise's '\\d' a
    SyntaxError; a fractions.py written to site-packages shadowed the module in another exercise."""
    page = open_exercise(context, served_site[1])
    type_code(page, "import os, sys, warnings\nwarnings.simplefilter('error')\n"
                    "site = [p for p in sys.path if p.endswith('site-packages')][0]\n"
                    "with open(os.path.join(site, 'fractions.py'), 'w') as f:\n    f.write('print(\"SHADOW\")')\n")
    run(page)
    page.locator(GELU).scroll_into_view_if_needed()
    page.wait_for_selector(f'{GELU}[data-ready="true"]', timeout=90_000)
    type_code(page, "x = '\\d'\nimport fractions\nprint(fractions.Fraction(1, 3) + fractions.Fraction(1, 6))\n"
              + WRONG_GELU, ex=GELU)
    said = run(page, ex=GELU)
    text = shown(page, GELU)
    assert "检查不对" in said, said + text
    assert "1/2" in text and "SHADOW" not in text, text


def test_run_pressed_before_python_is_ready_waits_with_its_progress_and_runs(browser, served_site):
    """Beside the report's swallowed 开始训练: an exercise's 运行 pressed while Pyodide still
    downloads is not lost either. The verdict line shows Python's start-up, then the run's result
    (a guard: exercise runs were already queued behind the boot)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        def slow(route):
            time.sleep(3)
            route.continue_()
        context.route("**/pyodide.asm.wasm", slow)
        page = open_exercise(context, served_site[1])
        type_code(page, "print(6 * 7)\n")
        page.locator(f"{FFN} button[data-action=run]").click()
        page.wait_for_function(f"document.querySelector('{FFN} .cw-exercise__verdict').textContent.includes('Python')")
        assert verdict(page).get_attribute("data-kind") == "running"
        page.wait_for_function(f"document.querySelector('{FFN} .cw-exercise__verdict').dataset.kind !== 'running'",
                               timeout=90_000)
        assert shown(page).startswith("42")
    finally:
        context.close()


def test_a_run_that_leaves_python_bloated_retires_its_worker(context, served_site):
    """Rank 4 (N45): `bytearray(1_500_000_000)` raised the browser's memory by 1.44 GB for the rest
    of the visit (WebAssembly memory never shrinks; only 停止 gave it back). A worker that one run
    left over 512 MB is replaced after the run, and the next run starts in a small one."""
    page = open_exercise(context, served_site[1])
    type_code(page, "big = bytearray(700_000_000)\nprint(len(big))\n")
    run(page)
    assert shown(page).startswith("700000000")
    page.wait_for_function("window.__workers.ended >= 1", timeout=10_000)
    type_code(page, "import pyodide_js\nprint(pyodide_js._module.HEAP8.length < 512 * 2**20)\n")
    run(page)
    assert shown(page).startswith("True"), shown(page)


# Tampering that clean_state.py cannot put back (ranks 6–8): each once outlived its run, making
# wrong code pass every exercise, hanging later runs or holding a core. Now the worker that ran it
# is retired after the run (run_exercise.taint, told to the page before the code starts).
FORGED_DUMPS = ("lambda *a, **k: '{\"ran\": true, \"error\": null, \"verdict\": {\"passed\": true, "
                "\"message\": \"ok (forged)\"}, \"timeout\": false}'")
TAMPERING = {
    "N21-checker-code": "import _cw_checker\n_cw_checker.close.__code__ = (lambda *a, **k: True).__code__\n",
    "N22-json-dumps-code": f"import json\njson.dumps.__code__ = ({FORGED_DUMPS}).__code__\n",
    "N23-clean-up-off": "import _cw_state, math\n_cw_state._put_back.__code__ = (lambda *a, **k: None).__code__\n"
                        "math.isclose = lambda *a, **k: True\n",
    "N19-post-message": "import js\njs.eval('''const real = self.postMessage.bind(self); self.postMessage = (m) => "
                        "real(m && typeof m.result === \"string\" ? Object.assign({}, m, {result: m.result.split("
                        "'\"passed\": false').join('\"passed\": true')}) : m);''')\n",
    "N17-on-message": "import js\njs.eval('self.onmessage = (e) => { if (e.data.type === \"ping\") postMessage({type: \"pong\"}) }')\n",
    "N18-nested-worker": "import js\njs.eval(\"new Worker(URL.createObjectURL(new Blob(['while (true) {}'])))\")\n",
    "N20-signals-ignored": "import asyncio, signal\n\ndef spin():\n    signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                           "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    while True:\n        pass\n\n"
                           "asyncio.get_event_loop().call_later(0.2, spin)\n",
}


@pytest.mark.parametrize("name", TAMPERING)
def test_tampering_beyond_the_clean_up_does_not_outlive_its_run(context, served_site, name):
    """Ranks 6–8 (N17–N23): a __code__ swapped in place, JavaScript run in the worker (a wrapped
    postMessage, a replaced onmessage, a nested Worker) or a loop that ignores the signals outlived
    the run: wrong code passed every exercise, later runs hung with no limit, the widgets died with
    a "running" status, a core stayed busy. Afterwards a wrong answer fails, at once, and the
    widget answers."""
    page = open_exercise(context, served_site[1])
    type_code(page, TAMPERING[name])
    run(page)
    page.locator(GELU).scroll_into_view_if_needed()
    page.wait_for_selector(f'{GELU}[data-ready="true"]', timeout=90_000)
    type_code(page, WRONG_GELU, ex=GELU)
    said = run(page, ex=GELU, timeout=60_000)
    assert "检查不对" in said and not said.startswith("✓"), said
    assert page.get_attribute(GELU, "data-solved") == "false"
    widget = '[data-widget="linear-fit"]'
    page.locator(widget).scroll_into_view_if_needed()
    page.wait_for_selector(f'{widget}[data-ready="true"]', timeout=90_000)
    page.focus(f'{widget} input[name="b"]')
    page.keyboard.press("End")
    page.wait_for_function(
        f"document.querySelector('{widget} [data-out=\"mse\"]').textContent === '2.500'", timeout=30_000)
    assert workers(page)["ended"] >= 1  # the worker that ran it was retired


def test_forged_results_never_reach_a_waiting_widget(context, served_site):
    """Rank 13 (N60): results posted by the student's code for ids 1–399 while a widget's call
    waited were taken as the call's: the widget's root got data-widget="zzz" and data-onclick, and
    the exercise's verdict read "Cannot read properties of undefined"."""
    page = open_exercise(context, served_site[1])
    widget = '[data-widget="linear-fit"]'
    forged = ("import js, time\nfrom pyodide.ffi import to_js\n"
              "state = {'out': {'mse': 'FORGED', 'data-widget': 'zzz', 'data-onclick': 'alert(1)'}}\n"
              "text = js.JSON.stringify(to_js(state, dict_converter=js.Object.fromEntries))\n"
              "start = time.time()\nwhile time.time() - start < 2.5:  # while the widget's calls wait\n"
              "    for i in range(1, 400):\n"
              "        js.postMessage(to_js({'id': i, 'ok': True, 'result': text}, dict_converter=js.Object.fromEntries))\n"
              "    time.sleep(0.1)\n")
    type_code(page, forged)
    page.locator(f"{FFN} .cm-content").press("Control+Enter")
    time.sleep(0.5)
    page.locator(widget).scroll_into_view_if_needed()  # its calls queue behind the run
    page.wait_for_function(f"document.querySelector('{FFN} .cw-exercise__verdict').dataset.kind !== 'running'",
                           timeout=30_000)
    page.wait_for_selector(f'{widget}[data-ready="true"]', timeout=90_000)
    assert page.locator('[data-widget="zzz"]').count() == 0
    assert page.get_attribute(widget, "data-onclick") is None
    assert "FORGED" not in page.locator(f'{widget} [data-out="mse"]').text_content()
    said = verdict(page).text_content()  # off the screen now: innerText would read empty
    assert "Cannot read" not in said and "结果读不出来" in said, said  # its own forged result: said plainly


# Beyond rank 1: other single C calls that WebKit cannot end (tests/e2e/test_webkit_browser.py
# checks the CPU there). In Chromium the page's backstop ended them by terminating the worker;
# now they end inside Python, so no worker is terminated.
@pytest.mark.parametrize("code, line", [
    ("x = 1\nprint(10 ** 10 ** 7)\n", 2),
    ("import math\nprint(math.factorial(10 ** 6))\n", 2),
], ids=["power", "factorial"])
def test_an_integer_too_big_for_one_call_is_refused_at_once(context, served_site, code, line):
    """`10**10**7` is one C call that ran for minutes: past the limit, and in WebKit past 停止.
    It is refused before it is computed, in words, at its line."""
    page = open_exercise(context, served_site[1])
    type_code(page, "print(2 ** 100 > 10 ** 30)\n")
    run(page)  # Python booted, and an ordinary power works
    assert shown(page).startswith("True")
    type_code(page, code)
    said = run(page)
    assert f"代码运行出错（第 {line} 行）" in said and "太大了" in shown(page), said + shown(page)
    assert workers(page)["ended"] == 0  # refused inside Python: no worker ended


@pytest.mark.parametrize("code", [
    "import itertools\nprint(sum(itertools.count()))\n",
    "from itertools import repeat\nprint(max(repeat(1)))\n",
    "print(sum(iter(int, 1)))\n",
], ids=["count", "repeat", "iter-sentinel"])
def test_an_endless_builtin_loop_is_ended_by_the_limit_inside_python(context, served_site, code):
    """`sum(itertools.count())` never ends and runs no bytecode, so the limit inside Python never
    fired: the page terminated the worker (in WebKit that leaves the core busy). During a run the
    endless iterators are Python loops, which the limit ends itself."""
    page = open_exercise(context, served_site[1])
    type_code(page, "print(1)\n")
    run(page)
    type_code(page, code)
    said = run(page)
    assert "运行超过了" in said, said
    assert workers(page)["ended"] == 0, workers(page)
