"""Python before the reader gets there: this checkout against a previous commit, side by side.

    python benchmarks/warm_up.py --baseline REF [--after REF] [--runs 5]

Builds the baseline commit and the working tree (or --after, a commit), each commit in a
temporary git worktree sharing node_modules and data/, serves both on 127.0.0.1 and
measures each in Chromium, the two alternating run by run in fresh contexts (cold HTTP
cache), so that both see the same machine load:

  reader     load the lesson, wait 6 s (a reader reading), scroll to the first widget:
             ms until it is live (goal: under 300 ms median)
  cold       load the lesson and scroll at once: ms until live, against a bare page that only
             boots Pyodide from the same files (ratio; goal: no worse than 1.15)
  main       the longest main-thread task in the 6 s of reading (PerformanceObserver
             'longtask'), which the warm-up happens in, and the longest that the runtime's
             own scripts ran within a long animation frame then ('long-animation-frame')
  bytes      the runtime files a page with widgets downloads (Pyodide, the standard library),
             each raw and gzip-compressed as GitHub Pages sends it (goal: at most 4.5 MB)
"""
import argparse
import gzip
import os
import shutil
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

from site_speed import BARE_PAGE  # noqa: E402  (benchmarks/ is on sys.path as the script's folder)

READING_S = 6
FIRST_WIDGET = "[data-widget]"

# Long tasks on the main thread, recorded from the very start of the page, and the scripts
# that ran in long animation frames (which say whose code took the time).
LONG_TASKS = """
window.longTasks = [];
window.runtimeScripts = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) window.longTasks.push([entry.startTime, entry.duration]);
}).observe({ type: "longtask", buffered: true });
new PerformanceObserver((list) => {
  for (const frame of list.getEntries())
    for (const script of frame.scripts || [])
      if (/\\/widgets\\//.test(script.sourceURL || "") || /Worker/.test(script.invoker || ""))
        window.runtimeScripts.push([script.startTime, script.duration, script.invoker, script.sourceURL]);
}).observe({ type: "long-animation-frame", buffered: true });
"""

# ms from the scroll that brings the first widget into view to its data-ready="true".
SCROLL_TO_FIRST = """async () => {
  const root = document.querySelector('[data-widget]');
  if (root.dataset.ready === 'true') return 0;
  const live = new Promise((resolve) => new MutationObserver(() => {
    if (root.dataset.ready === 'true') resolve(performance.now());
  }).observe(root, { attributes: true }));
  const t0 = performance.now();
  root.scrollIntoView();
  return (await live) - t0;
}"""


def build(tree, out):
    result = subprocess.run([sys.executable, str(tree / "build.py"), "--out", str(out)], capture_output=True,
                            text=True, cwd=tree)
    if result.returncode:
        sys.exit(f"build of {tree} failed: {result.stderr}")


def worktree(ref, where):
    """The commit's files, with this checkout's node_modules and data/ (the same lesson data on
    both sides; the committed data/real-model may wait for the lab's next export)."""
    subprocess.run(["git", "worktree", "add", "--detach", str(where), ref], cwd=ROOT, check=True,
                   capture_output=True)
    (where / "node_modules").symlink_to(ROOT / "node_modules")
    shutil.rmtree(where / "data")
    shutil.copytree(ROOT / "data", where / "data")


def reader(browser, url):
    """(ms until the first widget is live after 6 s of reading, the longest main-thread task in
    those 6 s, the longest run of the runtime's own scripts (widgets/, worker messages) in a
    long animation frame then, s from the load event until the page's last model was fetched)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.add_init_script(LONG_TASKS)
    page = context.new_page()
    models = []
    page.on("response", lambda r: r.url.endswith("/model.py") and models.append(time.monotonic()))
    page.goto(url + "c4/l1-ffn/")
    at_load = time.monotonic()
    loaded = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
    page.wait_for_timeout(READING_S * 1000)
    tasks = page.evaluate("window.longTasks")
    scripts = page.evaluate("window.runtimeScripts")
    warm = max(models) - at_load if models else None
    ms = page.evaluate(SCROLL_TO_FIRST)
    context.close()
    reading = lambda start: loaded <= start <= loaded + READING_S * 1000
    longest = max((d for start, d in tasks if reading(start)), default=0)
    runtime = max((d for start, d, *_ in scripts if reading(start)), default=0)
    return ms, longest, runtime, warm


def cold(browser, url):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(url + "c4/l1-ffn/")
    ms = page.evaluate(SCROLL_TO_FIRST)
    context.close()
    return ms


def bare(browser, url):
    context = browser.new_context()
    page = context.new_page()
    page.goto(url + "bench-bare.html")
    ms = page.evaluate("startBoot()")
    context.close()
    return ms


def runtime_bytes(browser, url):
    """{file: (raw, gzip)} of what the worker downloads on the lesson (Pyodide and the standard library)."""
    context = browser.new_context()
    page = context.new_page()
    responses = []
    page.on("response", lambda response: responses.append(response))
    page.goto(url + "c4/l1-ffn/")
    page.locator(FIRST_WIDGET).first.scroll_into_view_if_needed()
    page.wait_for_selector('[data-widget][data-ready="true"]', timeout=120_000)
    page.wait_for_load_state("networkidle")
    files = {}
    for response in responses:
        if "/assets/vendor/pyodide/" in response.url and response.request.method == "GET":
            body = response.body()
            files[response.url.rsplit("/", 1)[1]] = (len(body), len(gzip.compress(body, 6)))
    context.close()
    return files


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", required=True, help="the commit to compare with (e.g. the one before the change)")
    parser.add_argument("--after", help="a commit to measure instead of the working tree")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        trees = {"before": tmp / "before"}
        worktree(args.baseline, trees["before"])
        if args.after:
            trees["after"] = tmp / "after"
            worktree(args.after, trees["after"])
        try:
            sites = {"before": tmp / "before-site", "after": tmp / "after-site"}
            build(trees["before"], sites["before"])
            build(trees.get("after", ROOT), sites["after"])
            short = lambda ref: subprocess.run(["git", "rev-parse", "--short", ref], cwd=ROOT, capture_output=True,
                                               text=True).stdout.strip()
            after_label = short(args.after) if args.after else "the working tree"
            print(f"before = {short(args.baseline)}, after = {after_label}; {args.runs} runs each, alternating; "
                  f"load average {os.getloadavg()[0]:.1f} at the start")
            for site in sites.values():
                (site / "bench-bare.html").write_text(BARE_PAGE, encoding="utf-8")
            servers = {kind: SiteServer(site) for kind, site in sites.items()}
            with servers["before"] as before, servers["after"] as after, sync_playwright() as p:
                urls = {"before": before, "after": after}
                browser = p.chromium.launch(executable_path=chromium_path(), args=BROWSER_ARGS)
                results = {kind: {"reader": [], "main": [], "runtime": [], "warm": [], "cold": [], "bare": []}
                           for kind in urls}
                for run in range(args.runs):
                    for kind, url in urls.items():
                        ms, longest, runtime, warm = reader(browser, url)
                        results[kind]["reader"].append(ms)
                        results[kind]["main"].append(longest)
                        results[kind]["runtime"].append(runtime)
                        if warm is not None:
                            results[kind]["warm"].append(warm)
                        results[kind]["cold"].append(cold(browser, url))
                        results[kind]["bare"].append(bare(browser, url))
                    print(f"  run {run + 1}: " + "; ".join(
                        f"{kind} reader {r['reader'][-1]:.0f} ms, cold {r['cold'][-1]:.0f} ms, bare "
                        f"{r['bare'][-1]:.0f} ms, longest task {r['main'][-1]:.0f} ms (runtime's scripts "
                        f"{r['runtime'][-1]:.0f} ms)" for kind, r in results.items()))
                med = statistics.median
                for kind, r in results.items():
                    print(f"{kind:7} reader {med(r['reader']):.0f} ms median (min {min(r['reader']):.0f}, max "
                          f"{max(r['reader']):.0f}); cold {med(r['cold']):.0f} ms vs bare Pyodide "
                          f"{med(r['bare']):.0f} ms: ratio {med(r['cold']) / med(r['bare']):.2f}; longest main-thread "
                          f"task while reading {max(r['main']):.0f} ms (0: none over 50 ms), of which the runtime's "
                          f"own scripts {max(r['runtime']):.0f} ms at most; " + (
                              f"models imported {med(r['warm']):.1f} s after the load event (median)"
                              if r["warm"] else "no model imported while reading"))
                for kind, url in urls.items():
                    files = runtime_bytes(browser, url)
                    total = sum(g for _, g in files.values())
                    print(f"{kind:7} runtime download {total / 1e6:.2f} MB gzip "
                          f"({sum(r for r, _ in files.values()) / 1e6:.2f} MB raw):")
                    for name, (raw, packed) in sorted(files.items(), key=lambda item: -item[1][1]):
                        print(f"          {name:28} {raw:>10,} raw {packed:>10,} gzip")
                browser.close()
        finally:
            for tree in trees.values():
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end; goals: reader < 300 ms median, cold ratio <= 1.15, "
          f"runtime <= 4.5 MB gzip, no main-thread task over 50 ms from the runtime")


if __name__ == "__main__":
    started = time.monotonic()
    main()
    print(f"({time.monotonic() - started:.0f} s)")
