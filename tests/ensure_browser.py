"""Make sure the browser tests have a Chromium, and say which one they will use.

Uses an installed Chrome/Chromium (Debian's /usr/bin/chromium first). Where
there is none, installs Playwright's own Chromium the usual way, except in CI,
where a missing browser is a failure (CI installs Debian's chromium).
"""
import os
import subprocess
import sys

from support import chromium_path


def main():
    path = chromium_path()
    if path:
        print(f"browser tests: using {path}")
        return 0
    if os.environ.get("CI"):
        print("browser tests: no Chromium found and CI must not skip them (install Debian's chromium)",
              file=sys.stderr)
        return 1
    print("browser tests: no Chrome/Chromium installed; running `python -m playwright install chromium`")
    return subprocess.call([sys.executable, "-m", "playwright", "install", "chromium"])


if __name__ == "__main__":
    sys.exit(main())
