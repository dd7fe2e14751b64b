"""WebKit's first run (issue 55): in WebKitGTK (Safari's engines), the seconds from the first press of 运行 on
C4 第 1 课's first exercise to its output, on a fresh page scrolled to the exercise (Python boots on that press
or just before), and the next run's; and how long the exercise takes to be ready once scrolled to. The browser is driven as tests/e2e/test_webkit_browser.py drives it (Selenium's WebKitGTK driver,
MiniBrowser under Xvfb); the site is served as GitHub Pages serves it (tests/sitectl.py, gzip).

    python build.py --out /tmp/site
    python benchmarks/webkit_first_run.py --site /tmp/site [--rounds 3] [--read 6]

--read: seconds the page is left open before the press (a reader reading), 0 = press as soon as the editor is
there. Pause other heavy work on the machine while it runs: the figures are wall-clock seconds.
"""
import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "e2e")]

from sitectl import SiteServer  # noqa: E402
from test_webkit_browser import FFN, js_text, start_webkit, type_and_run, wait  # noqa: E402

PAGE = "c4/l1-ffn/"


def one_round(session, url, read):
    session.get(url + PAGE)
    time.sleep(read)
    t0 = time.monotonic()
    session.execute_script(f"document.querySelector('{FFN}').scrollIntoView()")  # the reader reaches it
    wait(session, f"return document.querySelector('{FFN}').dataset.ready === 'true'", 300)
    ready = time.monotonic() - t0
    t0 = time.monotonic()
    type_and_run(session, ["print(6 * 7)"])
    wait(session, js_text(f"{FFN} .cw-exercise__output") + ".includes('42')", 300)
    first = time.monotonic() - t0
    t0 = time.monotonic()
    type_and_run(session, ["print(7 * 8)"])
    wait(session, js_text(f"{FFN} .cw-exercise__output") + ".includes('56')", 120)
    return ready, first, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", required=True, help="a built site (python build.py --out DIR)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--read", type=float, default=0.0, help="seconds on the page before pressing 运行")
    args = ap.parse_args()
    session, screen = start_webkit()
    try:
        with SiteServer(Path(args.site), gzip=True) as url:
            rows = [one_round(session, url, args.read) for _ in range(args.rounds)]
    finally:
        session.quit()
        screen.terminate()
    for i, (ready, first, second) in enumerate(rows, 1):
        print(f"round {i}: exercise ready {ready:.1f} s after it is scrolled to, first run {first:.1f} s, next run"
              f" {second:.2f} s")
    readies, firsts, seconds = ([r[k] for r in rows] for k in range(3))
    print(f"WebKit ({PAGE}, read {args.read:g} s first): exercise ready median {statistics.median(readies):.1f} s,"
          f" first run median {statistics.median(firsts):.1f} s ({min(firsts):.1f}-{max(firsts):.1f}),"
          f" next run median {statistics.median(seconds):.2f} s;"
          f" load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
