"""Speed figures for the site, measured side by side in Chromium on 127.0.0.1.

    python benchmarks/site_speed.py [--runs 3]

Prints:
  build      wall time of `python build.py` (a full build into a scratch folder)
  boot       boot trigger (scrolling the first widget into view) -> widget live,
             against a bare page that only boots Pyodide from the same files
  input      slider input -> MSE text updated, median over 60 inputs
  weight     the lesson page's transfer without Pyodide (raw and gzip, as Pages serves it)
Goals from the issue: boot ratio <= 1.15, input <= 16 ms, weight <= 400 KB.
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

BARE_PAGE = """<!doctype html><meta charset="utf-8"><title>bare Pyodide boot</title>
<script type="module">
const indexURL = new URL("assets/vendor/pyodide/", location.href).href;
window.startBoot = async () => {
  const t0 = performance.now();
  const { loadPyodide } = await import(indexURL + "pyodide.mjs");
  await loadPyodide({ indexURL, enableRunUntilComplete: false });
  return performance.now() - t0;
};
</script>"""

# Resolves with ms from the scroll (the boot trigger) to data-ready="true".
WIDGET_BOOT = """async () => {
  const root = document.querySelector('[data-widget="linear-fit"]');
  const live = new Promise((resolve) => new MutationObserver(() => {
    if (root.dataset.ready === 'true') resolve(performance.now());
  }).observe(root, { attributes: true }));
  const t0 = performance.now();
  root.scrollIntoView();
  return (await live) - t0;
}"""

# Resolves with the ms of each slider input until the MSE text changes.
SLIDER_LATENCY = """async (n) => {
  const slider = document.querySelector('[data-widget="linear-fit"] input[name="a"]');
  const mse = document.querySelector('[data-widget="linear-fit"] [data-out="mse"]');
  const times = [];
  for (let i = 0; i < n; i++) {
    const changed = new Promise((resolve) => {
      const obs = new MutationObserver(() => { obs.disconnect(); resolve(performance.now()); });
      obs.observe(mse, { childList: true, characterData: true, subtree: true });
    });
    slider.value = String(i % 2 ? 1 : 0.5 + (i % 7) * 0.05);
    const t0 = performance.now();
    slider.dispatchEvent(new Event('input', { bubbles: true }));
    times.push((await changed) - t0);
    await new Promise((r) => requestAnimationFrame(r));
  }
  return times;
}"""


def build_time(out):
    t0 = time.perf_counter()
    subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(out)], check=True, capture_output=True)
    return time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3, help="cold boots of each page (median reported)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        server = SiteServer(site)
        seconds = build_time(site)
        print(f"build      {seconds:.2f} s (python build.py, full build)")
        (site / "bench-bare.html").write_text(BARE_PAGE, encoding="utf-8")
        with server as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=BROWSER_ARGS)
            lesson = url + "c4/l1-ffn/"
            # The first widget sits far below the fold, so nothing boots until the scroll.
            viewport = {"width": 1280, "height": 800}

            widget_ms, bare_ms = [], []
            for _ in range(args.runs):
                for kind in ("bare", "widget"):  # fresh context = cold HTTP cache
                    context = browser.new_context(viewport=viewport)
                    page = context.new_page()
                    if kind == "bare":
                        page.goto(url + "bench-bare.html")
                        bare_ms.append(page.evaluate("startBoot()"))
                    else:
                        page.goto(lesson)
                        assert page.get_attribute('[data-widget="linear-fit"]', "data-ready") == "false"
                        widget_ms.append(page.evaluate(WIDGET_BOOT))
                    context.close()
            w, b = statistics.median(widget_ms), statistics.median(bare_ms)
            print(f"boot       widget live {w:.0f} ms vs bare Pyodide {b:.0f} ms: ratio {w / b:.2f} "
                  f"(median of {args.runs}; goal <= 1.15)")

            context = browser.new_context()
            page = context.new_page()
            responses = []
            page.on("response", lambda r: responses.append(r))
            page.goto(lesson)
            page.locator('[data-widget="linear-fit"]').scroll_into_view_if_needed()
            page.wait_for_selector('[data-widget="linear-fit"][data-ready="true"]', timeout=120_000)
            times = page.evaluate(SLIDER_LATENCY, 60)
            print(f"input      slider -> MSE text {statistics.median(times):.1f} ms median, "
                  f"{max(times):.1f} ms max over {len(times)} inputs (goal <= 16 ms)")
            page.wait_for_load_state("networkidle")
            raw = packed = 0
            for r in responses:
                if "/assets/vendor/pyodide/" in r.url or r.request.method != "GET":
                    continue
                body = r.body()
                raw += len(body)
                packed += len(gzip.compress(body, 6))
            print(f"weight     lesson page without Pyodide: {raw / 1024:.0f} KB raw, {packed / 1024:.0f} KB gzip "
                  f"({len(responses)} responses; goal <= 400 KB)")
            context.close()
            browser.close()


if __name__ == "__main__":
    main()
