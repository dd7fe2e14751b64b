"""Run after run: how long a student waits from pressing 运行 to the verdict, in Chromium.

    python benchmarks/run_latency.py [--site DIR] [--runs 20] [--pause 1.0] [--readings 5]
                                     [--paths pyodide,micropython] [--json out.json]

Builds the site into a scratch folder (or takes --site, a built one) and serves it under /course/
with gzip, as GitHub Pages does (tests/sitectl.py). Lesson 1's first exercise (ffn-two-neurons)
gets its right answer; each time is from the click on 运行 to the verdict line's answer (any
verdict: passed, failed, error), read by a MutationObserver in the page. Exercises always run on
Pyodide; the two paths differ in what else runs and in the spare:

  pyodide       ?runtime=pyodide: the desktop path. Widgets and exercises share a Pyodide, and a
                spare Pyodide is booted beside it once an exercise has run (runtime.js, keepSpare).
  micropython   ?runtime=micropython: the phone path. Widgets run on MicroPython; the first run
                boots a Pyodide for the exercises, and there is no spare (memory).

Per path, on one page, after a first run that boots Python (not counted):
  clean         --runs runs of the right answer, --pause seconds apart (the student reads the
                verdict and presses again)
  tainted       the right answer with `import js` (run_exercise.taint: the worker is retired after
                the run), then, --pause later, the right answer: both timed, --runs pairs. `after
                taint` is the clean run that follows a retired worker: with a warm spare it takes
                over at once; without one it waits for a cold Pyodide
And the reader's wait (--readings fresh pages): the page is opened and read for 6 s after its load
event; then the first widget is scrolled to: ms until it is live (`reader's wait`, as
benchmarks/warm_up.py measures it; the issue's goal: under 300 ms); then the exercise: ms from the
scroll until its editor is ready, and, the answer put in, from the click on 运行 to the verdict
(`first run read`: the page's first run, while the spare Python starts booting beside it).

Prints p50 and p95 (nearest rank) of each, with the machine's load average: timings on a busy
machine read high (pause other work first).
"""
import argparse
import json
import math
import os
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
PAGE = "c4/l1-ffn/"
RIGHT = (ROOT / "exercises" / "c4" / "l1" / "ffn-two-neurons.py").read_text(encoding="utf-8") \
    .split("# %% answer\n")[1].split("# %%")[0]
TAINTED = "import js  # retires this run's worker\n" + RIGHT
READING_S = 6

# Resolves with {ms, kind}: ms from the click on 运行 to the verdict's answer.
TIMED_RUN = """async (selector) => {
  const ex = document.querySelector(selector);
  const verdict = ex.querySelector('.cw-exercise__verdict');
  const run = ex.querySelector('[data-action=run]');
  const done = () => verdict.dataset.kind && verdict.dataset.kind !== 'running' && !run.disabled;
  const t0 = performance.now();
  run.click();
  await new Promise((resolve) => {
    const watch = new MutationObserver(() => { if (done()) { watch.disconnect(); resolve(); } });
    watch.observe(ex, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  return { ms: performance.now() - t0, kind: verdict.dataset.kind };
}"""


def percentile(values, p):
    """Nearest rank: the smallest value with at least p % of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] if ordered else None


def put_code(page, code):
    page.locator(f"{FFN} .cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)


def timed_run(page, code):
    put_code(page, code)
    got = page.evaluate(TIMED_RUN, FFN)
    if got["kind"] != "passed":
        text = page.locator(f"{FFN} .cw-exercise__verdict").text_content()
        print(f"  (a run ended {got['kind']}: {text[:120]})", flush=True)
    return got["ms"]


def open_page(browser, url, path):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{url}{PAGE}?runtime={path}", wait_until="load")
    return context, page


def run_after_run(browser, url, path, runs, pause):
    context, page = open_page(browser, url, path)
    page.locator(FFN).scroll_into_view_if_needed()
    page.wait_for_selector(f'{FFN}[data-ready="true"]', timeout=120_000)
    first = timed_run(page, RIGHT)  # boots Pyodide where it has not warmed up
    if not runs:
        context.close()
        return {"first": first, "clean": [], "tainted": [], "after taint": []}
    time.sleep(max(pause, 8))  # the spare (desktop path) boots beside it: the student reads meanwhile
    clean, tainted, after = [], [], []
    for _ in range(runs):
        time.sleep(pause)
        clean.append(timed_run(page, RIGHT))
    for _ in range(runs):
        time.sleep(pause)
        tainted.append(timed_run(page, TAINTED))
        time.sleep(pause)
        after.append(timed_run(page, RIGHT))
    context.close()
    return {"first": first, "clean": clean, "tainted": tainted, "after taint": after}


# Scrolls the first widget with a box into view; resolves with ms until it is live.
WIDGET_LIVE = """async () => {
  const root = [...document.querySelectorAll('[data-widget]')].find((w) => w.getClientRects().length);
  const t0 = performance.now();
  root.scrollIntoView({ block: 'center' });
  await new Promise((resolve) => {
    if (root.dataset.ready === 'true') return resolve();
    new MutationObserver((_, watch) => { if (root.dataset.ready === 'true') { watch.disconnect(); resolve(); } })
      .observe(root, { attributes: true });
  });
  return performance.now() - t0;
}"""


def reader(browser, url, path):
    context, page = open_page(browser, url, path)
    time.sleep(READING_S)
    widget_ms = page.evaluate(WIDGET_LIVE)
    scrolled = time.monotonic()
    page.locator(FFN).scroll_into_view_if_needed()
    page.wait_for_selector(f'{FFN}[data-ready="true"]', timeout=120_000)
    editor_ms = (time.monotonic() - scrolled) * 1000
    first = timed_run(page, RIGHT)
    context.close()
    return widget_ms, editor_ms, first


def line(label, values):
    if not values:
        return f"  {label:22} -"
    return (f"  {label:22} p50 {percentile(values, 50):7.0f} ms   p95 {percentile(values, 95):7.0f} ms   "
            f"({min(values):.0f}-{max(values):.0f} ms over {len(values)})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", help="a built site (default: build this checkout into a scratch folder)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between one verdict and the next click")
    parser.add_argument("--readings", type=int, default=5, help="fresh pages for the reader's wait, per path")
    parser.add_argument("--paths", default="pyodide,micropython")
    parser.add_argument("--json", help="write every time measured here")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(args.site) if args.site else Path(tmp) / "site"
        if not args.site:
            subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(site)], check=True, cwd=ROOT,
                           capture_output=True)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
        load = os.getloadavg()[0]
        results = {}
        with SiteServer(site, gzip=True) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=BROWSER_ARGS)
            for path in args.paths.split(","):
                got = run_after_run(browser, url, path, args.runs, args.pause)
                readings = [reader(browser, url, path) for _ in range(args.readings)]
                got["reader's wait"] = [widget for widget, _, _ in readings]
                got["scroll to editor"] = [editor for _, editor, _ in readings]
                got["first run read"] = [first for _, _, first in readings]
                results[path] = got
                print(f"{path}: first run (boot) {got['first']:.0f} ms", flush=True)
                for label in ("clean", "tainted", "after taint", "reader's wait", "scroll to editor", "first run read"):
                    print(line(label, got[label]), flush=True)
            browser.close()
        print(f"(Chromium, {commit}, site {site if args.site else 'built from this checkout'}, pause "
              f"{args.pause} s, load average {load:.1f} at the start; goal: the reader's wait under 300 ms)")
        if args.json:
            Path(args.json).write_text(json.dumps({"commit": commit, "load_average": load, "pause_s": args.pause,
                                                   "results": results}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
