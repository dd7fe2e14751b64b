"""Which Python runs the widgets, in Chromium (widgets/runtime/early.js, chooseRuntime): a
phone-sized touch screen gets MicroPython, its worker made before the page has arrived, and
downloads no Pyodide until the student runs an exercise; a desktop gets Pyodide; a desktop
whose Pyodide cannot be fetched falls back to MicroPython. On the MicroPython path every ported widget goes live and a control change shows
what the same model gives in CPython; on a metered connection an exercise says what Pyodide's
download costs (computed by the build from the files it ships) before it fetches it."""
import gzip
import json
import math
import time

import pytest
from support import ROOT

from course import vendor, widgets
from course.data import load_data
from course.facts import build_facts

pytestmark = pytest.mark.e2e
NORM = "c4/l3-norm/"
GALLERY = "authors/gallery/"
EXERCISE = '[data-exercise="c4/l3/rms-norm"]'
NT = '[data-widget="norm-token"]'
PHONE = {"viewport": {"width": 375, "height": 812}, "has_touch": True, "is_mobile": True, "device_scale_factor": 2}
DESKTOP = {"viewport": {"width": 1280, "height": 900}}
PYODIDE = ("/assets/vendor/pyodide/", "/widgets/runtime/worker.js")
MICROPYTHON = ("/assets/vendor/micropython/", "/widgets/runtime/mp_worker.js")

# Records each call the page sends to a Python worker and what came back (for comparing with CPython),
# and each Python worker the page makes: its script, and whether runtime.js (a module that runs
# once the page is parsed) made it, or the page's own <head> (widgets/runtime/early.js).
RECORD_CALLS = """
window.cwCalls = [];
window.cwWorkers = [];
const PageWorker = window.Worker;
window.Worker = class extends PageWorker {
  constructor(url, ...args) {
    super(url, ...args);
    if (String(url).includes("widgets/runtime/")) {  // not Material's search worker
      window.cwWorkers.push({ url: String(url), byRuntime: new Error().stack.includes("runtime.js") });
    }
    this.addEventListener("message", ({ data }) => {
      const call = window.cwCalls.find((c) => c.id === data.id);
      if (call && "ok" in data) Object.assign(call, { ok: data.ok, result: data.result, error: data.error });
    });
  }
  postMessage(message, ...rest) {
    if (message && message.type === "call") window.cwCalls.push({ id: message.id, folder: message.folder, fn: message.fn,
                                                                params: message.params });
    return super.postMessage(message, ...rest);
  }
};
"""

CELLULAR = """Object.defineProperty(Navigator.prototype, "connection", { configurable: true,
  get: () => ({ type: "cellular", effectiveType: "4g", saveData: false, downlink: 5, rtt: 100,
                addEventListener() {}, removeEventListener() {} }) });"""


@pytest.fixture
def open_page(browser):
    contexts = []

    def open_page(options, *init_scripts):
        context = browser.new_context(**options)
        context.set_default_timeout(120_000)  # the gallery page is heavy on a busy machine
        contexts.append(context)
        for script in (RECORD_CALLS, *init_scripts):
            context.add_init_script(script)
        page = context.new_page()
        page.requests = []
        page.responses = []  # (url, body size) of every response the page and its workers received
        page.console_errors = []
        page.on("request", lambda request: page.requests.append(request.url))
        page.on("requestfinished", lambda request: page.responses.append(
            (request.url, request.sizes()["responseBodySize"])))
        page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
        return page

    yield open_page
    for context in contexts:
        context.close()


def fetched(page, parts):
    return [url for url in page.requests if any(part in url for part in parts)]


def go_live(page, widget, timeout=90_000):
    selector = f'[data-widget="{widget}"]'
    page.locator(selector).scroll_into_view_if_needed()
    page.wait_for_selector(f'{selector}[data-ready="true"]', timeout=timeout)
    return page.get_attribute(selector, "data-runtime")


def runtime_info(page):
    return page.evaluate("""async () => (await import(
      document.querySelector('script[src*="widgets/runtime/runtime.js"]').src)).runtimeInfo()""")


def close(browser_value, cpython_value, where):
    """The same JSON, floats equal to 1e-9 (another libm may differ in the last bits)."""
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


def test_the_rule():
    """The rule itself, run in Node on the runtime's own function (no browser needed)."""
    cases = {
        "desktop": ({"coarse": False, "screenMin": 900}, "pyodide"),
        "phone": ({"coarse": True, "screenMin": 375}, "micropython"),
        "tablet": ({"coarse": True, "screenMin": 820}, "pyodide"),
        "save-data": ({"coarse": False, "screenMin": 900, "connection": {"saveData": True}}, "micropython"),
        "cellular": ({"coarse": False, "screenMin": 900, "connection": {"type": "cellular"}}, "micropython"),
        "slow-connection": ({"coarse": False, "screenMin": 900, "connection": {"effectiveType": "3g"}}, "micropython"),
        "low-memory": ({"coarse": False, "screenMin": 900, "memory": 2}, "micropython"),
        "override": ({"coarse": True, "screenMin": 375, "override": "pyodide"}, "pyodide"),
    }
    import subprocess
    script = ("const src = require('fs').readFileSync(process.argv[1], 'utf8');"
              "const body = src.slice(src.indexOf('function chooseRuntime'), src.indexOf('/** What chooseRuntime'));"
              "const chooseRuntime = new Function(body + '; return chooseRuntime;')();"
              "const cases = JSON.parse(process.argv[2]);"
              "console.log(JSON.stringify(Object.fromEntries(Object.entries(cases).map(([k, [env]]) => [k, chooseRuntime(env)]))));")
    out = subprocess.run(["node", "-e", script, str(ROOT / "widgets/runtime/early.js"), json.dumps(cases)],
                         capture_output=True, text=True, check=True).stdout
    got = json.loads(out)
    for why, (_, name) in cases.items():
        assert got[why] == {"name": name, "why": "desktop" if why == "tablet" else why}, why


def test_a_phone_gets_micropython_and_no_pyodide_until_an_exercise_runs(open_page, served_site):
    page = open_page(PHONE)
    start = time.monotonic()
    page.goto(served_site[1] + NORM)
    assert go_live(page, "norm-token") == "micropython"
    live = time.monotonic() - start
    assert runtime_info(page) == {"name": "micropython", "why": "phone", "fellBack": False}
    page.locator(EXERCISE).scroll_into_view_if_needed()
    page.wait_for_selector(f'{EXERCISE}[data-ready="true"]', timeout=90_000)  # the editor, not Python
    page.wait_for_timeout(2000)  # loaded, idle, the reader reading
    assert not fetched(page, PYODIDE), "Pyodide is not fetched on the phone path before an exercise runs"
    assert fetched(page, MICROPYTHON)
    raw = sum(size for _, size in page.responses)
    print(f"\nphone: first widget live after {live:.1f} s; {raw:,} bytes received before any run")

    page.locator(f"{EXERCISE} .cm-content").press("Control+Enter")  # the starter, unchanged
    page.wait_for_function(f"""() => {{
        const v = document.querySelector('{EXERCISE} .cw-exercise__verdict');
        return v.dataset.kind && v.dataset.kind !== 'running'; }}""", timeout=180_000)
    assert fetched(page, PYODIDE), "the run starts Pyodide"
    said = page.locator(f"{EXERCISE} .cw-exercise__verdict").inner_text()
    assert page.get_attribute(f"{EXERCISE} .cw-exercise__verdict", "data-kind") == "failed", said
    # The widgets stay on MicroPython, and still answer.
    assert page.get_attribute(NT, "data-runtime") == "micropython"
    before = page.locator(f'{NT} [data-out]').all_inner_texts()
    page.focus(f'{NT} input[name="w"]')
    page.keyboard.press("End")
    page.wait_for_function(f"""(before) => JSON.stringify([...document.querySelectorAll('{NT} [data-out]')]
        .map((e) => e.innerText)) !== JSON.stringify(before)""", arg=before, timeout=90_000)
    assert not page.console_errors, page.console_errors


def test_on_a_phone_python_starts_before_the_page_has_arrived(open_page, served_site):
    """early.js makes MicroPython's worker from <head>, which downloads the runtime and the page's
    models while the page arrives, and runtime.js takes that worker over: one MicroPython, not
    two, each model fetched once, and the widget answers from it as CPython does."""
    page = open_page(PHONE)
    page.goto(served_site[1] + NORM)
    assert go_live(page, "norm-token") == "micropython"
    workers = page.evaluate("window.cwWorkers")
    assert [w["url"].split("/widgets/")[-1] for w in workers] == ["runtime/mp_worker.js"], workers
    assert not workers[0]["byRuntime"], "early.js starts the worker from <head>; runtime.js takes it over"
    names = page.get_attribute('meta[name="cw-python"]', "content").split()
    assert "norm-token" in names and "norm-placement" in names
    models = [url for url in page.requests if url.endswith("/model.py")]
    assert {url.split("/widgets/")[-1] for url in models} >= {f"{n.replace('-', '_')}/model.py" for n in names}
    assert len(models) == len(set(models)), "each model is fetched once: the early fetch is the one imported"
    answers_as_in_cpython(page, "norm-token", 'input[name="w"]', "End")
    assert not page.console_errors, page.console_errors


def test_a_desktop_starts_no_python_early(open_page, served_site):
    page = open_page(DESKTOP)
    page.goto(served_site[1] + NORM, wait_until="domcontentloaded")
    assert page.evaluate("window.cwRuntime.choice") == {"name": "pyodide", "why": "desktop"}
    page.wait_for_timeout(1000)
    workers = page.evaluate("window.cwWorkers")  # Pyodide's, from runtime.js once loaded and idle; none from <head>
    assert all(w["byRuntime"] and w["url"].endswith("/widgets/runtime/worker.js") for w in workers), workers


def test_on_a_cellular_connection_the_exercise_says_what_pyodide_costs_first(open_page, served_site):
    site, url = served_site
    sizes = json.loads((site / "widgets/runtime/runtimes.json").read_text())
    shipped = {path: (site / path).read_bytes() for paths in vendor.STARTUP.values() for path in paths}
    assert sizes == vendor.startup_sizes(shipped), "runtimes.json is computed from the files the site ships"
    assert sizes["pyodide"]["gzip"] == sum(len(gzip.compress(shipped[p], 6)) for p in vendor.STARTUP["pyodide"])
    # the whole standard library is shipped too but fetched only by an import outside the trimmed one
    assert "assets/vendor/pyodide/python_stdlib.zip" not in vendor.STARTUP["pyodide"]
    assert sizes["micropython"]["gzip"] < sizes["pyodide"]["gzip"] / 10

    page = open_page(PHONE, CELLULAR)
    page.goto(url + NORM)
    page.locator(EXERCISE).scroll_into_view_if_needed()
    page.wait_for_selector(f'{EXERCISE}[data-ready="true"]', timeout=90_000)
    page.locator(f"{EXERCISE} button[data-action=run]").click()
    notice = page.locator(f"{EXERCISE} .cw-exercise__download")
    notice.wait_for(state="visible")
    megabytes = f"约 {sizes['pyodide']['gzip'] / 1e6:.1f} MB"
    assert megabytes in notice.inner_text() and "移动网络" in notice.inner_text()
    page.wait_for_timeout(1000)
    assert not fetched(page, PYODIDE), "nothing is downloaded before the reader says yes"
    page.locator(f"{EXERCISE} button[data-action=download]").click()
    page.wait_for_function(f"""() => {{
        const v = document.querySelector('{EXERCISE} .cw-exercise__verdict');
        return v.dataset.kind && v.dataset.kind !== 'running'; }}""", timeout=180_000)
    assert fetched(page, PYODIDE)
    assert notice.is_hidden()
    assert page.get_attribute(f"{EXERCISE} .cw-exercise__verdict", "data-kind") == "failed"
    page.locator(f"{EXERCISE} .cm-content").press("Control+Enter")  # Pyodide is here now: no second question
    page.wait_for_function(f"document.querySelector('{EXERCISE} .cw-exercise__verdict').dataset.kind === 'failed'")
    assert notice.is_hidden()


def test_a_desktop_gets_pyodide(open_page, served_site):
    page = open_page(DESKTOP)
    start = time.monotonic()
    page.goto(served_site[1] + NORM)
    assert go_live(page, "norm-token", timeout=180_000) == "pyodide"
    print(f"\ndesktop: first widget live after {time.monotonic() - start:.1f} s")
    assert runtime_info(page) == {"name": "pyodide", "why": "desktop", "fellBack": False}
    assert not fetched(page, MICROPYTHON)


def test_a_desktop_without_pyodide_falls_back_to_micropython(open_page, served_site):
    page = open_page(DESKTOP)
    page.route("**/assets/vendor/pyodide/**", lambda route: route.abort())
    page.goto(served_site[1] + NORM)
    assert go_live(page, "norm-token") == "micropython"
    assert runtime_info(page) == {"name": "micropython", "why": "pyodide-failed", "fellBack": True}
    answers_as_in_cpython(page, "norm-token", 'input[name="w"]', "End")


def test_an_author_forces_a_runtime_with_a_query_parameter(open_page, served_site):
    page = open_page(PHONE)
    page.goto(served_site[1] + NORM + "?runtime=pyodide")
    assert go_live(page, "norm-token", timeout=180_000) == "pyodide"
    assert runtime_info(page)["why"] == "override"
    page.goto(served_site[1] + NORM)  # kept for the next visit...
    assert runtime_info(page)["name"] == "pyodide"
    page.goto(served_site[1] + NORM + "?runtime=auto")  # ...until the author says auto
    assert runtime_info(page) == {"name": "micropython", "why": "phone", "fellBack": False}


def answers_as_in_cpython(page, widget, control, key):
    """A key pressed on one of the widget's controls: the call it makes gives what the model gives
    in CPython for the same params, and the widget shows the model's texts."""
    root = f'[data-widget="{widget}"]'
    folder = widgets.folder_of(widget).name
    calls = page.evaluate("(folder) => window.cwCalls.filter((c) => c.folder === folder).length", folder)
    page.focus(f"{root} {control}")
    page.keyboard.press(key)
    page.wait_for_function("""([folder, n]) => window.cwCalls.filter((c) => c.folder === folder && 'ok' in c)
        .length > n""", arg=[folder, calls], timeout=90_000)
    call = page.evaluate("(folder) => window.cwCalls.filter((c) => c.folder === folder && 'ok' in c).at(-1)", folder)
    assert call["ok"], call.get("error")
    model = widgets.load_model(widget)
    want = json.loads(json.dumps(getattr(model, call["fn"])(json.loads(call["params"]))))
    got = json.loads(call["result"])
    close(got, want, f"{widget}.{call['fn']}()")
    shown = {k: v for k, v in (want.get("out") or {}).items() if not k.startswith("data-") and isinstance(v, str)}
    # As fill() does: `out` goes to the [data-out] elements outside every [data-row].
    outside = """([root, key]) => [...document.querySelectorAll(`${root} [data-out="${key}"]`)]
        .filter((el) => !el.closest('[data-row]'))"""
    shown = {k: v for k, v in shown.items() if page.evaluate(f"(a) => ({outside})(a).length", [root, k])}
    assert shown
    page.wait_for_function(f"""([root, shown]) => Object.entries(shown).every(([key, text]) =>
        ({outside})([root, key]).every((el) => el.textContent === text))""", arg=[root, shown])
    assert page.get_attribute(f"{root} .cw-status", "data-status") == "ready"


# Each widget ported to MicroPython, in the authors' gallery, with a control that changes what it shows.
PORTED = [
    ("batch-trap", 'input[name="bt-batch"]:checked', "ArrowRight"),
    ("norm-token", 'input[name="w"]', "End"),
    ("norm-placement", 'input[name="depth"]', "End"),
    ("depth-signal", 'input[name="depth"]', "End"),
    ("token-identity", 'input[name="layers"]', "End"),
]


@pytest.mark.parametrize("widget, control, key", PORTED, ids=[p[0] for p in PORTED])
def test_a_ported_widget_answers_on_micropython_as_in_cpython(open_page, served_site, widget, control, key):
    page = open_page(PHONE)
    page.goto(served_site[1] + GALLERY)
    assert go_live(page, widget) == "micropython"
    answers_as_in_cpython(page, widget, control, key)
    assert not fetched(page, PYODIDE)


def test_every_model_runs_on_micropython(open_page, served_site):
    """The authors' gallery, on a phone: each widget model's view(params) runs on MicroPython
    and gives what the same model gives in CPython."""
    page = open_page(PHONE)
    page.goto(served_site[1] + GALLERY)
    results = page.evaluate("""async () => {
      const runtime = await import(document.querySelector('script[src*="widgets/runtime/runtime.js"]').src);
      const out = [];
      for (const root of document.querySelectorAll('[data-widget]')) {
        const name = root.dataset.widget, params = JSON.parse(root.dataset.params);
        try {
          out.push({name, params, state: await runtime.call(name, 'view', params, 60000)});
        } catch (error) {
          out.push({name, params, error: String(error.detail || error)});
        }
      }
      return {out, info: runtime.runtimeInfo()};
    }""")
    assert results["info"]["name"] == "micropython"
    facts = build_facts(load_data(ROOT / "data", ROOT))
    shown = [n for n in widgets.names()
             if not (hasattr(widgets.load_model(n), "example") and widgets.load_model(n).example(facts) is None)]
    assert sorted(r["name"] for r in results["out"]) == shown
    failed = [(r["name"], r["error"]) for r in results["out"] if "error" in r]
    assert not failed, failed
    for result in results["out"]:
        expected = json.loads(json.dumps(widgets.load_model(result["name"]).view(result["params"])))
        close(result["state"], expected, f"{result['name']}.view()")
    assert not fetched(page, PYODIDE)
