"""Helpers shared by the tests, the browser check and the benchmark (import as `support`).

Kept out of conftest.py: pytest loads every conftest.py as a module named
`conftest`, so `from support import ...` would pick whichever loaded last.
"""
import json
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


def scroll_to_read(locator):
    """Scroll `locator` into view and wait until it is laid out, as a reader sees it: a lesson's
    blocks far from the screen skip layout (course.css, content-visibility), and their innerText
    reads empty until they come near it."""
    block = locator.locator("xpath=ancestor-or-self::*[parent::*[contains(@class, 'md-content__inner')]]")
    block.scroll_into_view_if_needed()  # the lesson's block: what it holds has no size until then
    locator.scroll_into_view_if_needed()
    locator.element_handle().wait_for_element_state("stable")
    return locator


def start_material(page):
    """The reader moves the mouse, and Material's bundle runs: it starts at the first interaction
    (theme/assets/javascripts/material_start.js), and its instant navigation with it."""
    page.mouse.move(5, 5)
    page.wait_for_function("window.cwMaterial.state === 'started'")


def open_live_widget(browser, url, widget):
    """A desktop page at `url` with `widget` scrolled into view and its Python running: (context, page)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url)
    page.locator(f'[data-widget="{widget}"]').scroll_into_view_if_needed()
    page.wait_for_selector(f'[data-widget="{widget}"][data-ready="true"]', timeout=90_000)
    return context, page


AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"


def open_phone_widget(browser, url, selector, scheme, js=True):
    """A 375 px phone page at `url` in `scheme`, with the widget `selector` scrolled into view and,
    with JavaScript, live: (context, page)."""
    context = browser.new_context(viewport={"width": 375, "height": 800}, java_script_enabled=js, color_scheme=scheme)
    page = context.new_page()
    page.goto(url)
    scroll_to_read(page.locator(selector))
    if js:
        page.wait_for_selector(f'{selector}[data-ready="true"]', timeout=90_000)
    return context, page


def overflows(page, selector, parts):
    """How far the widget and each of its `parts` (a CSS list, e.g. "div, table") scroll sideways, in px."""
    inner = ", ".join(f"{selector} {p.strip()}" for p in parts.split(","))
    return page.evaluate(f"""() => [...document.querySelectorAll('{selector}, {inner}')]
        .map(el => el.scrollWidth - el.clientWidth)""")


def serious_axe(page, selector):
    """axe-core's serious and critical violations inside the widget: [(rule, [targets])]."""
    page.add_script_tag(path=str(AXE))
    found = json.loads(page.evaluate(f"""async () => JSON.stringify((await axe.run(
        document.querySelector('{selector}'), {{resultTypes: ['violations']}})).violations)"""))
    return [(v["id"], [n["target"] for n in v["nodes"]]) for v in found if v["impact"] in ("serious", "critical")]
