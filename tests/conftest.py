"""Shared fixtures: the project root, a site built once per session, and Chromium."""
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "widgets" / "common"))

from sitectl import SiteServer  # noqa: E402
from support import BROWSER_ARGS, PROJECT_PARTS, build_site, chromium_path  # noqa: E402


@pytest.fixture
def scratch_project(tmp_path):
    """A scratch copy of the project (node_modules linked) that a test may break,
    with a previous build in site/ that a failed build must leave alone."""
    copy = tmp_path / "project"
    copy.mkdir()
    for part in PROJECT_PARTS:
        src = ROOT / part
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, copy / part)
    (copy / "node_modules").symlink_to(ROOT / "node_modules")
    old_site = copy / "site"
    old_site.mkdir()
    (old_site / "index.html").write_text("the previous build")
    return copy


@pytest.fixture
def unwritten_l4(scratch_project):
    """The scratch copy with lesson c4/l4 back to `planned` and its files gone: the authors' tests
    start a lesson there as an author starts one that does not exist yet."""
    import json
    outline = scratch_project / "data" / "course.json"
    data = json.loads(outline.read_text(encoding="utf-8"))
    entry = next(l for c in data["chapters"] for l in c.get("lessons", []) if l["id"] == "c4/l4")
    entry["status"] = "planned"
    outline.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    (scratch_project / "lessons" / "c4" / "l4-gating.md").unlink(missing_ok=True)
    shutil.rmtree(scratch_project / "exercises" / "c4" / "l4", ignore_errors=True)
    return scratch_project


@pytest.fixture(scope="session")
def served_site(tmp_path_factory):
    """The site built for and served at http://127.0.0.1:PORT/course/ (a Pages-like sub-path)."""
    out = tmp_path_factory.mktemp("site") / "site"
    server = SiteServer(out)
    result = build_site(out, {"SITE_URL": server.url})
    assert result.returncode == 0, result.stderr
    with server as url:
        yield out, url


@pytest.fixture(scope="session")
def site_dir(served_site):
    return served_site[0]


@pytest.fixture(scope="session")
def browser():
    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as p:
        path = chromium_path()
        try:
            browser = p.chromium.launch(executable_path=path, args=BROWSER_ARGS)
        except Exception as e:  # no browser at all: CI must fail, a laptop may skip
            if os.environ.get("CI"):
                raise
            pytest.skip(f"no Chromium available ({e}); run `make test` to install one")
        yield browser
        browser.close()


def pytest_sessionfinish(session, exitstatus):
    """In CI nothing may be skipped: a skipped browser or lab test there hides a broken install."""
    if not os.environ.get("CI"):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if skipped:
        reporter.write_line(f"CI: {len(skipped)} test(s) skipped; in CI every test must run", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
