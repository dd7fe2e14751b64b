"""A lesson's main-thread work on arrival, on a phone-sized screen with the CPU slowed 4x.

    python benchmarks/main_thread.py [--site DIR [--site DIR2]] [--runs 3] [--pages l1,l2]

What issue 20 found behind a late DOMContentLoaded: style and layout of the whole page, paid
again at every layout Material's start-up forces. This opens each page in a fresh 375x812
touch context (Chromium, CDP CPU throttling 4x, no network shaping: the network is
benchmarks/phone.py's), waits 4 s after load, and reads Chromium's own counters
(CDP Performance.getMetrics): style recalculations and layouts, their total time, script
time and the time of all tasks, with DOMContentLoaded, first contentful paint and load from
the Navigation Timing entry. Milliseconds; medians of --runs. It builds the site into a
scratch folder unless --site is given; two --site are measured in turn, run by run, so that
both see the same machine load.
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support import BROWSER_ARGS, chromium_path  # noqa: E402
from sitectl import SiteServer  # noqa: E402

PAGES = {"home": "", "l1": "c4/l1-ffn/", "l2": "c4/l2-residual/", "l3": "c4/l3-norm/", "l4": "c4/l4-gating/"}
COUNTERS = {"styles": "RecalcStyleCount", "style ms": "RecalcStyleDuration", "layouts": "LayoutCount",
            "layout ms": "LayoutDuration", "script ms": "ScriptDuration", "tasks ms": "TaskDuration"}
TIMING = """() => { const n = performance.getEntriesByType('navigation')[0];
    const f = performance.getEntriesByName('first-contentful-paint')[0];
    return {'DCL': n.domContentLoadedEventEnd, 'FCP': f ? f.startTime : -1, 'load': n.loadEventEnd}; }"""


def visit(browser, url):
    context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True, has_touch=True,
                                  device_scale_factor=2)
    try:
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
        page.goto(url, wait_until="load")
        page.wait_for_timeout(4000)
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        row = {column: metrics[name] * (1000 if name.endswith("Duration") else 1) for column, name in COUNTERS.items()}
        row.update(page.evaluate(TIMING))
        return row
    finally:
        context.close()


def main():
    from playwright.sync_api import sync_playwright
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", action="append", help="a built site (default: build this checkout)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pages", default="l1,l2")
    args = ap.parse_args()
    pages = args.pages.split(",")
    with tempfile.TemporaryDirectory() as scratch:
        sites = args.site or [str(Path(scratch) / "site")]
        if not args.site:
            subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", sites[0]], check=True, cwd=ROOT,
                           capture_output=True)
        servers = [SiteServer(site, gzip=True) for site in sites]
        urls = [server.__enter__() for server in servers]
        rows = {(s, p): [] for s in range(len(sites)) for p in pages}
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium_path(), args=BROWSER_ARGS)
                for _ in range(args.runs):
                    for page in pages:
                        for s, url in enumerate(urls):
                            rows[(s, page)].append(visit(browser, url + PAGES[page]))
                browser.close()
        finally:
            for server in servers:
                server.__exit__(None, None, None)
    columns = list(COUNTERS) + ["DCL", "FCP", "load"]
    for s, site in enumerate(sites):
        print(f"\n{site}: CPU 4x, 375x812, median of {args.runs}")
        print("page  " + " ".join(f"{c:>10}" for c in columns))
        for page in pages:
            med = {c: statistics.median(r[c] for r in rows[(s, page)]) for c in columns}
            print(f"{page:<5} " + " ".join(f"{med[c]:>10.0f}" for c in columns))


if __name__ == "__main__":
    main()
