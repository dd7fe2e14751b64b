"""Python before the reader gets there, in Chromium: on a page with widgets Python boots and
the page's models are imported while the reader reads (not where the reader saves data or
the connection is 2G), from the standard library that the build trimmed, on which every
widget's model runs and gives the answer it gives in CPython."""
import json
import math
import time

import pytest
from support import ROOT, start_material

from course import stdlib, widgets
from course.data import load_data
from course.facts import build_facts

pytestmark = pytest.mark.e2e
LF = '[data-widget="linear-fit"]'

# Counts the Python workers the page starts (Material's search has a worker of its own).
COUNT_WORKERS = """
window.workersStarted = 0;
const PageWorker = window.Worker;
window.Worker = class extends PageWorker {
  constructor(url, ...args) {
    super(url, ...args);
    if (String(url).includes("widgets/runtime/worker.js")) window.workersStarted += 1;
  }
};
"""


def connection(save_data, effective_type):
    """An init script standing in for the Network Information API of a reader's browser."""
    value = json.dumps({"saveData": save_data, "effectiveType": effective_type, "downlink": 0.2, "rtt": 900})
    return f"""Object.defineProperty(Navigator.prototype, "connection", {{
      configurable: true, get: () => ({{...{value}, addEventListener() {{}}, removeEventListener() {{}}}}) }});"""


@pytest.fixture
def open_page(browser):
    contexts = []

    def open_page(*init_scripts):
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        contexts.append(context)
        for script in init_scripts:
            context.add_init_script(script)
        page = context.new_page()
        page.requests = []
        page.on("request", lambda request: page.requests.append((request.method, request.url)))
        return page

    yield open_page
    for context in contexts:
        context.close()


def lesson(served_site):
    return served_site[1] + "c4/l1-ffn/"


def python_widgets(page):
    """The widgets on the page whose views call Python (a view with `python = false` does not)."""
    return page.evaluate("""async () => {
      const names = [...new Set([...document.querySelectorAll('[data-widget]')].map((r) => r.dataset.widget))];
      const base = new URL('widgets/', document.querySelector('script[src*="widgets/runtime/runtime.js"]').src
        .replace(/widgets\\/runtime\\/runtime\\.js.*$/, ''));
      const views = await Promise.all(names.map((n) => import(new URL(`${n.replaceAll('-', '_')}/view.js`, base))));
      return names.filter((n, i) => views[i].python !== false);
    }""")


def fetched(page, suffix):
    """URLs the page or its worker downloaded (GET) that end with `suffix`."""
    return [url for method, url in page.requests if method == "GET" and url.split("?")[0].endswith(suffix)]


def wait_until(page, condition, timeout=90):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        page.wait_for_timeout(200)


def test_python_boots_and_imports_the_models_while_the_reader_reads(open_page, served_site):
    page = open_page(COUNT_WORKERS)
    page.goto(lesson(served_site))
    names = python_widgets(page)
    assert "linear-fit" in names and "ffn-shape" not in names
    # Nothing touched, nothing scrolled: every model of the page is imported in the background...
    models = {f"widgets/{name.replace('-', '_')}/model.py" for name in names}
    wait_until(page, lambda: all(fetched(page, model) for model in models))
    page.wait_for_timeout(500)
    # ...but no widget is mounted before the reader comes near it.
    assert page.get_attribute(LF, "data-ready") == "false"
    assert page.locator(f"{LF} .cw-status").get_attribute("data-status") != "loading"
    assert fetched(page, stdlib.SITE_PATH.rsplit("/", 1)[1]) and not fetched(page, "/python_stdlib.zip"), \
        "the worker loads the trimmed standard library, not Pyodide's full one"

    start = time.monotonic()
    page.locator(LF).scroll_into_view_if_needed()
    page.wait_for_selector(f"{LF}[data-ready='true']", timeout=30_000)
    assert time.monotonic() - start < 2, "Python was warm: the widget goes live at once"
    page.focus(f'{LF} input[name="b"]')
    page.keyboard.press("End")
    page.wait_for_function(f"document.querySelector('{LF} [data-out=\"mse\"]').textContent === '2.500'")
    assert page.evaluate("window.workersStarted") == 1
    assert len(fetched(page, "pyodide.asm.wasm")) == 1


@pytest.mark.parametrize("save_data, effective_type", [(True, "4g"), (False, "2g"), (False, "slow-2g")],
                         ids=["save-data", "2g", "slow-2g"])
def test_no_warm_up_where_the_reader_saves_data_or_the_connection_is_slow(open_page, served_site, save_data,
                                                                          effective_type):
    page = open_page(connection(save_data, effective_type))
    page.goto(lesson(served_site))
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(3000)  # loaded, idle, and a reader reading
    assert not [url for _, url in page.requests if "/widgets/runtime/worker.js" in url or "/pyodide/" in url]
    if save_data:  # the widget still boots Python when the reader comes near, as it always did
        page.locator(LF).scroll_into_view_if_needed()
        page.wait_for_selector(f"{LF}[data-ready='true']", timeout=90_000)


def test_instant_navigation_during_the_warm_up_keeps_one_worker(open_page, served_site):
    page = open_page(COUNT_WORKERS)
    page.goto(lesson(served_site))
    page.evaluate("window.sameDocument = true")
    page.wait_for_function("window.workersStarted === 1", timeout=30_000)  # warming up
    start_material(page)  # the reader moves the mouse: Material's instant navigation starts
    page.click("a.md-header__button.md-logo")  # home (the lesson's previous page is C3's)
    page.wait_for_url(served_site[1])
    page.click('article a[href$="c4/l1-ffn/"]')
    page.locator(LF).scroll_into_view_if_needed()
    page.wait_for_selector(f"{LF}[data-ready='true']", timeout=90_000)
    assert page.evaluate("window.sameDocument") is True, "instant navigation fell back to full loads"
    assert page.evaluate("window.workersStarted") == 1
    assert len(fetched(page, "pyodide.asm.wasm")) == 1


def close(browser_value, cpython_value, where="view()"):
    """The same JSON, floats equal to 1e-9 (the browser's libm may differ in the last bit)."""
    if isinstance(cpython_value, float) and isinstance(browser_value, (int, float)):
        assert math.isclose(browser_value, cpython_value, rel_tol=1e-9, abs_tol=1e-12), where
    elif isinstance(cpython_value, dict):
        assert isinstance(browser_value, dict) and browser_value.keys() == cpython_value.keys(), where
        for key in cpython_value:
            close(browser_value[key], cpython_value[key], f"{where}[{key!r}]")
    elif isinstance(cpython_value, (list, tuple)):
        assert isinstance(browser_value, list) and len(browser_value) == len(cpython_value), where
        for i, (b, c) in enumerate(zip(browser_value, cpython_value)):
            close(b, c, f"{where}[{i}]")
    else:
        assert browser_value == cpython_value, where


def test_every_model_runs_on_the_trimmed_standard_library(open_page, served_site):
    """The authors' gallery holds every widget with its defaults (or the example it is shown
    with): each model's view(params) runs in the browser's Python and gives what the same
    model file gives in CPython."""
    page = open_page()
    console = []
    page.on("console", lambda message: message.type == "error" and console.append(message.text))
    page.goto(served_site[1] + "authors/gallery/")
    results = page.evaluate("""async () => {
      const src = document.querySelector('script[src*="widgets/runtime/runtime.js"]').src;
      const runtime = await import(src);
      const out = [];
      for (const root of document.querySelectorAll('[data-widget]')) {
        const name = root.dataset.widget, params = JSON.parse(root.dataset.params);
        try {
          out.push({name, params, state: await runtime.call(name, 'view', params, 60000)});
        } catch (error) {
          out.push({name, params, error: String(error.detail || error)});
        }
      }
      return out;
    }""")
    facts = build_facts(load_data(ROOT / "data", ROOT))
    shown = [n for n in widgets.names()  # a widget whose lab data is not exported yet is not on the page
             if not (hasattr(widgets.load_model(n), "example") and widgets.load_model(n).example(facts) is None)]
    assert sorted(r["name"] for r in results) == shown
    assert not [r for r in results if "error" in r], [(r["name"], r.get("error")) for r in results]
    for result in results:
        folder = widgets.folder_of(result["name"]).name
        built = widgets.load_module(served_site[0] / "widgets" / folder / "model.py", f"{folder}_built_model")
        expected = json.loads(json.dumps(built.view(result["params"])))
        close(result["state"], expected, f"{result['name']}.view()")
    assert fetched(page, "python_stdlib.trimmed.zip") and not fetched(page, "/python_stdlib.zip")
    assert not console, console
