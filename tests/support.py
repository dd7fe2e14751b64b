"""Helpers shared by the tests, the browser check and the benchmark (import as `support`).

Kept out of conftest.py: pytest loads every conftest.py as a module named
`conftest`, so `from support import ...` would pick whichever loaded last.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
PROJECT_PARTS = ["build.py", "mkdocs.yml", "package.json", "package-lock.json", "course", "data", "exercises", "lessons", "theme", "widgets"]
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"]


def build_site(out, env=None):
    """Run `python build.py --out OUT` as a user would; returns the CompletedProcess."""
    return subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, **(env or {})})


def build_copy(project):
    """`python build.py` inside a scratch copy of the project."""
    return subprocess.run([sys.executable, str(project / "build.py"), "--out", str(project / "site")],
                          capture_output=True, text=True, cwd=project)


def chromium_path():
    """Debian's Chromium (or another installed Chrome); None means Playwright's own browser."""
    for candidate in (os.environ.get("CHROMIUM_PATH"), "/usr/bin/chromium", "/usr/bin/chromium-browser",
                      "/usr/bin/google-chrome", shutil.which("chromium"), shutil.which("google-chrome")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def open_live_widget(browser, url, widget):
    """A desktop page at `url` with `widget` scrolled into view and its Python running: (context, page)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url)
    page.locator(f'[data-widget="{widget}"]').scroll_into_view_if_needed()
    page.wait_for_selector(f'[data-widget="{widget}"][data-ready="true"]', timeout=90_000)
    return context, page
