"""The lessons on a simulated phone: Chromium with its CPU slowed 4x and a mobile network.

    python benchmarks/phone.py [--site DIR [--site DIR2]] [--runs 3] [--pages l1,l2] [--profiles 4g,slow4g]
                               [--json out.json] [--compare before.json]

Builds the site into a scratch folder (or takes --site, a built one; two or more --site are
measured in turn, run by run, so that all see the same machine load), serves it under /course/
with gzip as GitHub Pages does (tests/sitectl.py: text types and WebAssembly, level 6), and
opens each page in a fresh 375x812 touch context (device scale 2, cold cache) with the CPU
slowed 4x (CDP Emulation.setCPUThrottlingRate) and the network shaped (CDP
Network.emulateNetworkConditions, which shapes the widgets' worker too):

  4g      9 Mbit/s down, 1.5 up, 85 ms round trip
  slow4g  1.6 Mbit/s down, 0.75 up, 150 ms (Lighthouse's slow 4G)

Three visits per page, profile and run:
  idle     load and touch nothing: DOMContentLoaded, load and first contentful paint (ms from
           navigation), then everything the page downloads in 7 s after load and until the
           network has been quiet for 3 s (cap 90 s; the runtime warms up within 5 s of load): bytes as sent (gzip bodies, counted by the server), whether any
           Pyodide file was requested, which runtime's files came; `page KB` leaves the Python runtimes'
           own files out (assets/vendor/pyodide/ and micropython/: the page, its scripts, styles,
           fonts and the widgets' models and views)
  at once  scroll to the first widget at DOMContentLoaded: ms from navigation until it is live
           (data-ready="true")
  reading  read for 6 s after load, then scroll to it: ms from the scroll until it is live
The first widget is the first [data-widget] with a box (one inside a ①②③ step not shown yet
has none) outside a step that the stepper hides once it runs (data-from-step 2 or 3); the runtime is the widget's data-runtime where the page sets it, else what its
requests show. Medians of --runs; --json writes every run, --compare prints a JSON of an
earlier run beside this one.
"""
import argparse
import contextlib
import json
import os
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

PAGES = {"home": "", "l1": "c4/l1-ffn/", "l2": "c4/l2-residual/", "l3": "c4/l3-norm/", "l4": "c4/l4-gating/",
         "c3l1": "c3/l1-attention/", "c3l2": "c3/l2-heads-rope/", "c3l4": "c3/l4-kv-cache/",
         "c1l1": "c1/l1-tokenizer/", "c14l1": "c14/l1-noise/", "train": "train/l1-tiny-gpt/"}
# What "the page" weighs leaves out the Python runtimes' own files (Pyodide's, MicroPython's):
# `page KB` in the table; `KB before input` counts everything.
RUNTIME_FILES = ("/assets/vendor/pyodide/", "/assets/vendor/micropython/")
PROFILES = {  # bits per second, ms
    "4g": {"down": 9e6, "up": 1.5e6, "rtt": 85},
    "slow4g": {"down": 1.6e6, "up": 0.75e6, "rtt": 150},
}
CPU_SLOWDOWN = 4
READING_S = 6
LIVE_TIMEOUT_S = 120
QUIET_S = 3
IDLE_CAP_S = 90
PHONE = {"viewport": {"width": 375, "height": 812}, "device_scale_factor": 2, "is_mobile": True,
         "has_touch": True,
         "user_agent": "Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 "
                       "(KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36"}

# Runs in every page before its own scripts: finds the first widget with a box at
# DOMContentLoaded, scrolls to it there when asked (`at once`), and notes when it turns live.
PROBE = """
(() => {
  const bench = window.__bench = { widget: null, live: null, failed: null, scrolled: null };
  document.addEventListener("DOMContentLoaded", () => {
    const widgets = [...document.querySelectorAll("[data-widget]")];
    // Not one in a later ①②③ step: it has a box at DCL, but the stepper hides it once it runs
    // (course.css, data-from-step), and a hidden widget never goes live (C4 第 3 课, C14 第 1 课).
    const root = widgets.find((w) => w.getClientRects().length && w.offsetHeight > 0 &&
      !w.closest('[data-from-step]:not([data-from-step="1"])'));
    if (!root) return;
    bench.widget = root.dataset.widget;
    bench.root = root;
    const seen = () => {
      if (root.dataset.ready === "true" && bench.live === null) { bench.live = performance.now(); bench.runtime = root.dataset.runtime || null; }
      if (root.dataset.failed === "true" && bench.failed === null) bench.failed = performance.now();
    };
    new MutationObserver(seen).observe(root, { attributes: true });
    if (SCROLL_AT_ONCE) { root.scrollIntoView({ block: "center" }); bench.scrolled = performance.now(); }
  });
})();
"""

NAVIGATION = """(() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const fcp = performance.getEntriesByName("first-contentful-paint")[0];
  return { dcl: nav.domContentLoadedEventEnd, load: nav.loadEventEnd, fcp: fcp ? fcp.startTime : null,
           elements: document.getElementsByTagName("*").length, widget: window.__bench.widget };
})()"""

SCROLL_NOW = """() => {
  const bench = window.__bench;
  if (!bench.root) return null;
  bench.root.scrollIntoView({ block: "center" });
  bench.scrolled = performance.now();
  return bench.scrolled;
}"""


def build(out):
    result = subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(out)], capture_output=True,
                            text=True, cwd=ROOT)
    if result.returncode:
        sys.exit(f"build failed: {result.stderr.strip()}")


class Phone:
    def __init__(self, browser, server, profile):
        self.browser, self.server, self.profile = browser, server, PROFILES[profile]

    def open(self, scroll_at_once):
        context = self.browser.new_context(**PHONE)
        context.add_init_script(PROBE.replace("SCROLL_AT_ONCE", "true" if scroll_at_once else "false"))
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": False})
        cdp.send("Network.emulateNetworkConditions", {
            "offline": False, "latency": self.profile["rtt"],
            "downloadThroughput": self.profile["down"] / 8, "uploadThroughput": self.profile["up"] / 8})
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
        self.server.reset()
        self.sizes = []  # (path, bytes sent) of this visit
        if not getattr(self.server, "sized", False):  # every body the server sends, by path
            counted = self.server.count
            def count(path, size, counted=counted, server=self.server):
                server.sizes.append((path, size))
                counted(path, size)
            self.server.count, self.server.sized = count, True
        self.server.sizes = self.sizes
        return context, page

    def wait_live(self, page):
        """ms (page clock) when the first widget turned live, or None when it failed or timed out."""
        deadline = time.monotonic() + LIVE_TIMEOUT_S
        while time.monotonic() < deadline:
            state = page.evaluate("({live: window.__bench.live, failed: window.__bench.failed, runtime: window.__bench.runtime})")
            if state["live"] is not None or state["failed"] is not None:
                return state
            page.wait_for_timeout(100)
        return {"live": None, "failed": None, "runtime": None}

    def idle(self, url):
        context, page = self.open(False)
        page.goto(url, wait_until="load", timeout=120_000)
        started = time.monotonic()
        page.wait_for_timeout((READING_S + 1) * 1000)  # the runtime's warm-up starts within 5 s of load
        while self.server.quiet_for() < QUIET_S and time.monotonic() - started < IDLE_CAP_S:
            page.wait_for_timeout(250)
        nav = page.evaluate(NAVIGATION)
        paths = list(self.server.paths)
        page_bytes = sum(size for path, size in self.sizes if not any(part in path for part in RUNTIME_FILES))
        result = {**nav, "bytes": self.server.bytes_sent, "page_bytes": page_bytes, "requests": len(paths),
                  "pyodide": any("/assets/vendor/pyodide/" in p for p in paths),
                  "micropython": any("/assets/vendor/micropython/" in p for p in paths),
                  "capped": time.monotonic() - started >= IDLE_CAP_S}
        context.close()
        return result

    def at_once(self, url):
        context, page = self.open(True)
        page.goto(url, wait_until="domcontentloaded", timeout=120_000)
        if page.evaluate("window.__bench.widget") is None:
            context.close()
            return None
        state = self.wait_live(page)
        paths = list(self.server.paths)
        context.close()
        return {"live": state["live"], "failed": state["failed"] is not None, "runtime": runtime_of(state, paths)}

    def reading(self, url):
        context, page = self.open(False)
        page.goto(url, wait_until="load", timeout=120_000)
        if page.evaluate("window.__bench.widget") is None:
            context.close()
            return None
        page.wait_for_timeout(READING_S * 1000)
        before = self.server.bytes_sent
        scrolled = page.evaluate(SCROLL_NOW)
        state = self.wait_live(page)
        paths = list(self.server.paths)
        context.close()
        live = None if state["live"] is None else max(0.0, state["live"] - scrolled)
        return {"live": live, "failed": state["failed"] is not None, "runtime": runtime_of(state, paths),
                "bytes_while_reading": before}


def runtime_of(state, paths):
    if state.get("runtime"):
        return state["runtime"]
    if any("micropython" in p for p in paths):
        return "micropython"
    if any("/assets/vendor/pyodide/" in p for p in paths):
        return "pyodide"
    return "none"


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summary(runs):
    """{metric: median} of one page and profile's runs."""
    out = {}
    for key in ("dcl", "load", "fcp", "bytes", "page_bytes", "requests", "elements"):
        out[key] = median([r["idle"][key] for r in runs])
    out["pyodide"] = any(r["idle"]["pyodide"] for r in runs)
    out["widget"] = runs[0]["idle"]["widget"]
    for mode in ("at_once", "reading"):
        got = [r[mode] for r in runs if r[mode]]
        out[mode] = median([g["live"] for g in got]) if got else None
        out[mode + "_failed"] = sum(1 for g in got if g["failed"] or g["live"] is None)
    runtimes = sorted({g["runtime"] for r in runs for g in (r["at_once"], r["reading"]) if g})
    out["runtime"] = "/".join(runtimes) if runtimes else "-"
    return out


def seconds(ms):
    return "-" if ms is None else f"{ms / 1000:.2f}"


def table(results, label):
    print(f"\n{label}")
    print(f"{'page':5} {'profile':7} {'DCL s':>6} {'load s':>6} {'FCP s':>6} {'live at once s':>14} "
          f"{'live after 6 s':>14} {'KB before input':>15} {'page KB':>8} {'pyodide':>7} {'runtime':>12} {'DOM':>6}  widget")
    for page, profiles in results.items():
        for profile, s in profiles.items():
            kb = "-" if s["bytes"] is None else f"{s['bytes'] / 1024:,.0f}"
            page_kb = "-" if s.get("page_bytes") is None else f"{s['page_bytes'] / 1024:,.0f}"
            fails = lambda mode: f" ({s[mode + '_failed']} failed)" if s[mode + "_failed"] else ""
            print(f"{page:5} {profile:7} {seconds(s['dcl']):>6} {seconds(s['load']):>6} {seconds(s['fcp']):>6} "
                  f"{seconds(s['at_once']) + fails('at_once'):>14} {seconds(s['reading']) + fails('reading'):>14} "
                  f"{kb:>15} {page_kb:>8} {'yes' if s['pyodide'] else 'no':>7} {s['runtime']:>12} {s['elements'] or 0:>6.0f}  "
                  f"{s['widget'] or '-'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", action="append",
                        help="a built site (default: build this checkout into a scratch folder); two or more "
                             "are measured in turn, run by run, so that all see the same machine load")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pages", default=",".join(PAGES), help=f"comma-separated, of {', '.join(PAGES)}")
    parser.add_argument("--profiles", default=",".join(PROFILES), help=f"comma-separated, of {', '.join(PROFILES)}")
    parser.add_argument("--modes", default="idle,at_once,reading", help="which visits (idle is always made)")
    parser.add_argument("--json", help="write the runs and medians here (with several --site, a list of them)")
    parser.add_argument("--compare", help="a JSON written by an earlier run, printed above this one")
    parser.add_argument("--label", default=None, help="a name for this run in the JSON (default: the commit)")
    args = parser.parse_args()
    pages = [p for p in args.pages.split(",") if p]
    profiles = [p for p in args.profiles.split(",") if p]
    modes = set(args.modes.split(",")) | {"idle"}
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        sites = [Path(site) for site in args.site] if args.site else [Path(tmp) / "site"]
        if not args.site:
            build(sites[0])
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True).stdout.strip()
        labels = [str(site) for site in sites] if args.site else [f"{commit} + working tree"]
        if args.label and len(sites) == 1:
            labels = [args.label]
        servers = [SiteServer(site, gzip=True) for site in sites]
        runs = [{page: {profile: [] for profile in profiles} for page in pages} for _ in sites]
        load_avg = os.getloadavg()[0]
        with contextlib.ExitStack() as stack, sync_playwright() as p:
            urls = [stack.enter_context(server) for server in servers]
            browser = p.chromium.launch(executable_path=chromium_path(), args=BROWSER_ARGS)
            for run in range(args.runs):
                for page in pages:
                    for profile in profiles:
                        for s, (server, url) in enumerate(zip(servers, urls)):
                            phone = Phone(browser, server, profile)
                            address = url + PAGES[page]
                            got = {"idle": phone.idle(address)}
                            got["at_once"] = phone.at_once(address) if "at_once" in modes else None
                            got["reading"] = phone.reading(address) if "reading" in modes else None
                            runs[s][page][profile].append(got)
                            i, a, r = got["idle"], got["at_once"], got["reading"]
                            which = f" [{s + 1}]" if len(sites) > 1 else ""
                            print(f"run {run + 1}{which} {page:4} {profile:6}: DCL {seconds(i['dcl'])} s, load "
                                  f"{seconds(i['load'])} s, {i['bytes'] / 1024:,.0f} KB before input "
                                  f"({i['page_bytes'] / 1024:,.0f} KB without the Python runtimes' files)"
                                  f"{' (pyodide)' if i['pyodide'] else ''}; live at once "
                                  f"{seconds(a and a['live'])} s, after reading {seconds(r and r['live'])} s "
                                  f"({(a or r or {}).get('runtime', '-')})", flush=True)
            browser.close()
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        written = []
        if args.compare:
            earlier = json.loads(Path(args.compare).read_text(encoding="utf-8"))
            for one in earlier if isinstance(earlier, list) else [earlier]:
                table(one["medians"], f"earlier: {one['meta']['label']} ({one['meta']['when']}, "
                                      f"load average {one['meta']['load_average_at_start']})")
        for s, label in enumerate(labels):
            results = {page: {profile: summary(rs) for profile, rs in by.items()} for page, by in runs[s].items()}
            meta = {"label": label, "commit": commit, "runs": args.runs, "cpu_slowdown": CPU_SLOWDOWN,
                    "profiles": {k: PROFILES[k] for k in profiles}, "viewport": PHONE["viewport"],
                    "load_average_at_start": round(load_avg, 2), "when": when}
            table(results, f"this: {label} ({when}, median of {args.runs}, load average {load_avg:.1f} at the start)")
            written.append({"meta": meta, "medians": results, "runs": runs[s]})
        print("times: DCL/load/FCP from navigation; live at once from navigation; live after 6 s from the scroll")
        if args.json:
            Path(args.json).write_text(json.dumps(written[0] if len(written) == 1 else written, indent=1),
                                       encoding="utf-8")


if __name__ == "__main__":
    main()
