"""Lighthouse 12.2.3 on each page, mobile and desktop presets, median of 3.

    python benchmarks/lighthouse.py [--site DIR [--site DIR2]] [--runs 3] [--pages home,l1,l2,l3,l4,c3l1]
                                    [--presets mobile,desktop] [--json out.json] [--keep DIR]

Lighthouse is pinned apart from the site's own package.json, in benchmarks/lighthouse/
(12.2.3: Lighthouse 13 needs Node 22); this script installs it when it is missing, with
`npm ci --prefix benchmarks/lighthouse`. It builds the site into a scratch folder (or takes
--site; two or more --site are measured in turn, run by run, so that both see the same machine
load), serves it under /course/ with gzip as GitHub Pages does (tests/sitectl.py), and runs
Lighthouse's CLI with Debian's Chromium (CHROME_PATH, headless, the tests' browser flags)
once per page, preset and run. Mobile is Lighthouse's default (a Moto G Power: simulated slow
4G, CPU 4x slower); desktop is `--preset=desktop`. Prints the medians of the performance
score, FCP, LCP, TBT, CLS, Speed Index and DOM size (elements); --keep saves every report.

The issue's goals for lessons 1 and 2 on mobile: score >= 90, TBT <= 200 ms, LCP <= 2.5 s, CLS 0.
Lighthouse 12.2.3 on Chromium 156 fails a few diagnostics (render-blocking-resources,
layout-shifts, ...: "frame_sequence"); the scores and metrics are computed.
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
HERE = Path(__file__).resolve().parent / "lighthouse"
CLI = HERE / "node_modules" / "lighthouse" / "cli" / "index.js"
sys.path.insert(0, str(ROOT / "tests"))

from support import BROWSER_ARGS, chromium_path  # noqa: E402
from sitectl import SiteServer  # noqa: E402

PAGES = {"home": "", "l1": "c4/l1-ffn/", "l2": "c4/l2-residual/", "l3": "c4/l3-norm/", "l4": "c4/l4-gating/",
         "c3l1": "c3/l1-attention/"}
METRICS = {  # column: (audit id, scale, format)
    "FCP s": ("first-contentful-paint", 1e-3, "{:.2f}"),
    "LCP s": ("largest-contentful-paint", 1e-3, "{:.2f}"),
    "TBT ms": ("total-blocking-time", 1, "{:.0f}"),
    "CLS": ("cumulative-layout-shift", 1, "{:.3f}"),
    "SI s": ("speed-index", 1e-3, "{:.2f}"),
    "DOM": ("dom-size", 1, "{:.0f}"),
    "KB": ("total-byte-weight", 1 / 1024, "{:,.0f}"),
}


def ensure_lighthouse():
    if CLI.exists():
        return
    print(f"installing Lighthouse into {HERE.relative_to(ROOT)} (npm ci --prefix ...)", flush=True)
    subprocess.run(["npm", "ci", "--prefix", str(HERE), "--no-audit", "--no-fund"], check=True)


def build(out):
    result = subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(out)], capture_output=True,
                            text=True, cwd=ROOT)
    if result.returncode:
        sys.exit(f"build failed: {result.stderr.strip()}")


def lighthouse(url, preset, report):
    flags = " ".join(["--headless=new", *BROWSER_ARGS])
    command = ["node", str(CLI), url, "--output=json", f"--output-path={report}", "--quiet",
               "--only-categories=performance", f"--chrome-flags={flags}"]
    if preset == "desktop":
        command.append("--preset=desktop")
    env = {**os.environ, "CHROME_PATH": chromium_path() or "/usr/bin/chromium"}
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    if result.returncode or not Path(report).exists():
        raise RuntimeError(f"lighthouse failed on {url} ({preset}): {result.stderr.strip()[-800:]}")
    data = json.loads(Path(report).read_text(encoding="utf-8"))
    if data.get("runtimeError"):
        raise RuntimeError(f"lighthouse: {data['runtimeError']}")
    row = {"score": round(data["categories"]["performance"]["score"] * 100)}
    for column, (audit, scale, _) in METRICS.items():
        value = data["audits"].get(audit, {}).get("numericValue")
        row[column] = None if value is None else value * scale
    return row


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", action="append", help="a built site (default: build this checkout into a "
                        "scratch folder); give it twice to compare two builds run by run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pages", default=",".join(PAGES), help=f"comma-separated, of {', '.join(PAGES)}")
    parser.add_argument("--presets", default="mobile,desktop")
    parser.add_argument("--json", help="write every run and the medians here")
    parser.add_argument("--keep", help="a folder to keep each Lighthouse report in")
    args = parser.parse_args()
    ensure_lighthouse()
    pages = [p for p in args.pages.split(",") if p]
    presets = [p for p in args.presets.split(",") if p]

    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        sites = [Path(s) for s in args.site] if args.site else [Path(tmp) / "site"]
        if not args.site:
            build(sites[0])
        reports = Path(args.keep) if args.keep else Path(tmp) / "reports"
        reports.mkdir(parents=True, exist_ok=True)
        labels = [str(site) for site in sites]
        urls = [stack.enter_context(SiteServer(site, gzip=True)) for site in sites]
        runs = {label: {page: {preset: [] for preset in presets} for page in pages} for label in labels}
        load_avg = os.getloadavg()[0]
        for run in range(args.runs):  # runs outermost: a burst of machine load touches every page alike
            for page in pages:
                for preset in presets:
                    for n, (label, url) in enumerate(zip(labels, urls)):
                        row = lighthouse(url + PAGES[page], preset, reports / f"{n}-{page}-{preset}-{run + 1}.json")
                        runs[label][page][preset].append(row)
                        print(f"run {run + 1} {page:4} {preset:7} {label}: score {row['score']}, TBT "
                              f"{row['TBT ms']:.0f} ms, LCP {row['LCP s']:.2f} s (load {os.getloadavg()[0]:.1f})",
                              flush=True)
    medians = {label: {page: {preset: {key: median([r[key] for r in rows]) for key in rows[0]}
                              for preset, rows in by.items()} for page, by in bypage.items()}
               for label, bypage in runs.items()}
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for label, bypage in medians.items():
        print(f"\n{label}: Lighthouse 12.2.3, median of {args.runs} ({when}, load average {load_avg:.1f} at the "
              f"start; served with gzip under /course/)")
        print(f"{'page':5} {'preset':8} {'score':>5} " + " ".join(f"{c:>7}" for c in METRICS))
        for page, by in bypage.items():
            for preset, m in by.items():
                cells = " ".join(f"{'-' if m[c] is None else fmt.format(m[c]):>7}" for c, (_, _, fmt) in METRICS.items())
                print(f"{page:5} {preset:8} {m['score']:>5.0f} {cells}")
    if args.json:
        Path(args.json).write_text(json.dumps({"when": when, "load_average_at_start": load_avg, "runs": runs,
                                               "medians": medians}, indent=1), encoding="utf-8")

if __name__ == "__main__":
    main()
