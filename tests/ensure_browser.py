"""Make sure the browser tests have a Chromium, and say which one they will use.

Uses an installed Chrome/Chromium (Debian's /usr/bin/chromium first). Where
there is none, installs Playwright's own Chromium the usual way, except in CI,
where a missing browser is a failure (CI installs Debian's chromium).

Also makes sure Java is there for the Nu Html Checker (tests/build/test_html_valid.py):
installs Debian's default-jre-headless where it can (as root with apt-get); CI's .ci/run
installs it, so there a missing Java is a failure.
"""
import os
import shutil
import subprocess
import sys

from support import chromium_path


JAVA_PACKAGE = "default-jre-headless"


def ensure_java():
    if shutil.which("java"):
        return 0
    if os.environ.get("CI"):
        print(f"HTML check: no java and CI must not skip it (install Debian's {JAVA_PACKAGE})", file=sys.stderr)
        return 1
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        print(f"HTML check: no java; install Debian's {JAVA_PACKAGE} or the Nu Html Checker test is skipped")
        return 0
    print(f"HTML check: no java; running `apt-get install -y {JAVA_PACKAGE}`")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.call(["apt-get", "update", "-qq"], env=env)
    return subprocess.call(["apt-get", "install", "-y", "-qq", JAVA_PACKAGE], env=env)


def main():
    if ensure_java():
        return 1
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
