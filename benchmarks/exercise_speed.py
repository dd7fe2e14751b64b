"""Speed figures for the exercises, in Chromium on 127.0.0.1 (the site built into a scratch folder).

    python benchmarks/exercise_speed.py [--tries 10]

Prints:
  weight   lesson 1 as a reader opens it (top of the page, until the network is idle):
           its transfer without Pyodide, raw and gzip, and whether the editor came with it
  editor   the editor bundle (CodeMirror), raw and gzip: fetched when an exercise nears
  stop     停止 on a runaway loop -> the next 运行's first output, median of --tries,
           with the spare Python and without it (navigator.deviceMemory = 2 turns it off)
  check    运行 -> the check's verdict for lesson 1's first exercise, Python warm, median
Goals from the issue: weight <= 250 KB gzip; stop -> output < 300 ms with the spare.
"""
import argparse
import gzip
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support import BROWSER_ARGS, chromium_path  # noqa: E402
from sitectl import SiteServer  # noqa: E402

FFN = '[data-exercise="c4/l1/ffn-two-neurons"]'
LOOP = "print('x')\nwhile True:\n    pass\n"
RIGHT = (ROOT / "exercises" / "c4" / "l1" / "ffn-two-neurons.py").read_text(encoding="utf-8") \
    .split("# %% answer\n")[1].split("# %%")[0]

# Resolves with ms from a click on `first` to `done()` being true (watched on every DOM change).
TIMED = """async ([selector, first, then, done]) => {
  const ex = document.querySelector(selector);
  const out = ex.querySelector('.cw-exercise__output');
  const verdict = ex.querySelector('.cw-exercise__verdict');
  const run = ex.querySelector('[data-action=run]');
  const test = new Function('out', 'verdict', 'run', 'return ' + done);
  const waitFor = (check) => new Promise((resolve) => {
    if (check()) return resolve();
    const watch = new MutationObserver(() => { if (check()) { watch.disconnect(); resolve(); } });
    watch.observe(ex, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  const t0 = performance.now();
  ex.querySelector(`[data-action=${first}]`).click();
  if (then) {
    await waitFor(() => !run.disabled);
    run.click();
  }
  await waitFor(() => test(out, verdict, run));
  return performance.now() - t0;
}"""


def open_exercise(browser, url, spare=True):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    if not spare:
        context.add_init_script("Object.defineProperty(navigator, 'deviceMemory', { get: () => 2 })")
    page = context.new_page()
    page.goto(url + "c4/l1-ffn/")
    page.locator(FFN).scroll_into_view_if_needed()
    page.wait_for_selector(f'{FFN}[data-ready="true"]', timeout=120_000)
    return context, page


def type_code(page, code):
    page.locator(f"{FFN} .cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)


def stop_to_output(browser, url, tries, spare):
    context, page = open_exercise(browser, url, spare)
    type_code(page, LOOP)
    page.locator(f"{FFN} [data-action=run]").click()
    page.wait_for_function(f"document.querySelector('{FFN} .cw-exercise__output').textContent.includes('x')",
                           timeout=120_000)
    times = []
    for _ in range(tries):
        time.sleep(10 if spare else 0.5)  # the spare boots beside the running Python
        times.append(page.evaluate(TIMED, [FFN, "stop", True, "out.textContent.startsWith('x')"]))
    context.close()
    return times


def run_to_verdict(browser, url, tries):
    context, page = open_exercise(browser, url)
    type_code(page, RIGHT)
    done = "verdict.dataset.kind === 'passed' && !run.disabled"
    page.evaluate(TIMED, [FFN, "run", False, done])  # Python boots and the check's files are fetched
    times = [page.evaluate(TIMED, [FFN, "run", False, done]) for _ in range(tries)]
    context.close()
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tries", type=int, default=10)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(site)], check=True, cwd=ROOT,
                       capture_output=True)
        with SiteServer(site) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=BROWSER_ARGS)
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            responses = []
            page.on("response", lambda r: responses.append(r))
            page.goto(url + "c4/l1-ffn/")
            page.wait_for_load_state("networkidle")
            time.sleep(2)
            raw = packed = python = ours = 0
            editor = False
            for r in responses:
                if "/assets/vendor/pyodide/" in r.url or r.request.method != "GET":
                    continue
                editor |= r.url.endswith("/codemirror/editor.js")
                body = r.body()
                size = len(gzip.compress(body, 6))
                raw += len(body)
                packed += size
                python += size if r.url.endswith(".py") else 0  # read by Pyodide when it warms up
                ours += size if "/widgets/runtime/exercise" in r.url else 0
            context.close()
            print(f"weight   lesson 1 at the top, without Pyodide: {raw / 1024:.0f} KB raw, {packed / 1024:.0f} KB gzip, "
                  f"of which {python / 1024:.0f} KB are the Python files Pyodide's warm-up reads and "
                  f"{ours / 1024:.1f} KB the exercises' script and style; editor fetched: {'yes' if editor else 'no'} "
                  f"(goal <= 250 KB)")
            bundle = (site / "assets" / "vendor" / "codemirror" / "editor.js").read_bytes()
            print(f"editor   {len(bundle) / 1024:.0f} KB raw, {len(gzip.compress(bundle, 6)) / 1024:.0f} KB gzip "
                  f"(fetched when an exercise comes within 600 px of the viewport)")
            for spare in (True, False):
                times = stop_to_output(browser, url, args.tries, spare)
                print(f"stop     停止 -> next run's first output, {'with' if spare else 'without'} the spare: "
                      f"{statistics.median(times):.0f} ms median, {min(times):.0f}-{max(times):.0f} ms "
                      f"over {len(times)} (goal < 300 ms with it)")
            times = run_to_verdict(browser, url, args.tries)
            print(f"check    运行 -> verdict (ffn-two-neurons, Python warm): {statistics.median(times):.0f} ms median, "
                  f"{min(times):.0f}-{max(times):.0f} ms over {len(times)}")
            browser.close()


if __name__ == "__main__":
    main()
