"""Under `mkdocs serve` a build error shows in the page the author is looking at,
and the next good save brings the page back, both through the real live reload."""
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

expect = pytest.importorskip("playwright.sync_api").expect

pytestmark = pytest.mark.e2e

# One live-reload rebuild is the whole site (every lesson, every exercise proved): about a minute on
# two loaded cores, which CI exceeded once at 60 s. A wait, not a speed check (benchmarks/ time builds).
WAIT_MS = 180_000
BOX = ".md-content .build-error"


def edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def line_of(path, needle):
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def preview(scratch_project, tmp_path):
    """`mkdocs serve` (live reload on) in a scratch copy; yields (project, url). Always stopped."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "--dev-addr", f"127.0.0.1:{port}"],
                              cwd=scratch_project, stdout=log, stderr=subprocess.STDOUT,
                              env={**os.environ, "SITE_URL": url, "NO_MKDOCS_2_WARNING": "1"})
    try:
        deadline = time.monotonic() + WAIT_MS / 1000  # the first build, as long as a rebuild
        while True:
            assert server.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                urllib.request.urlopen(url + "c4/l1-ffn/", timeout=5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "mkdocs serve did not come up:\n" + (tmp_path / "serve.log").read_text()
                time.sleep(0.5)
        yield scratch_project, url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    yield context.new_page()
    context.close()


def expect_error(page, where, message):
    """The open page turns into the error box by itself (live reload; no page.reload() here)."""
    box = page.locator(BOX)
    expect(box).to_contain_text(f"{where}: ", timeout=WAIT_MS)
    expect(box).to_contain_text(message)
    expect(box).to_contain_text("构建出错")
    expect(box).to_be_visible()


def expect_lesson(page):
    expect(page.locator('[data-widget="linear-fit"]')).to_be_visible(timeout=WAIT_MS)
    expect(page.locator(BOX)).to_have_count(0)


def test_an_undefined_name_in_the_lesson_shows_in_its_page(preview, page):
    project, url = preview
    lesson = project / "lessons" / "c4" / "l1-ffn.md"
    page.goto(url + "c4/l1-ffn/")
    expect_lesson(page)

    edit(lesson, '{{ widget("linear-fit") }}', '{{ no_such_name }}\n\n{{ widget("linear-fit") }}')
    line = line_of(lesson, "no_such_name")
    expect_error(page, f"lessons/c4/l1-ffn.md:{line}", "'no_such_name' is undefined")

    edit(lesson, '{{ no_such_name }}\n\n', "")
    expect_lesson(page)


# papers.json is read in on_pre_build, the outline (course.json) in on_config.
@pytest.mark.parametrize("rel, good", [("data/papers.json", '"vaswani2017": {'), ("data/course.json", '"id": "c4/l1",')])
def test_a_broken_data_file_shows_in_every_page(preview, page, rel, good):
    project, url = preview
    path, bad = project / rel, good + ","
    page.goto(url + "c4/l1-ffn/")
    expect_lesson(page)

    edit(path, good, bad)
    line = line_of(path, bad)
    expect_error(page, f"{rel}:{line}", "malformed JSON")
    home = page.context.new_page()
    home.goto(url)
    expect_error(home, f"{rel}:{line}", "malformed JSON")

    edit(path, bad, good)
    expect_lesson(page)
    expect(home.locator(BOX)).to_have_count(0, timeout=WAIT_MS)


def test_a_broken_exercise_shows_in_every_page(preview, page):
    """Exercises are proved in on_pre_build: an answer that no longer gives what the cases
    expect shows in the page at the exercise file's line, and the fix brings the page back."""
    project, url = preview
    path = project / "exercises" / "c4" / "l1" / "gelu-tanh.py"
    good, bad = "    return 0.5 * z * (1 + math.tanh(", "    return 0.5 * z * (1 - math.tanh("
    page.goto(url + "c4/l1-ffn/")
    expect_lesson(page)

    edit(path, good, bad)
    expect_error(page, f"exercises/c4/l1/gelu-tanh.py:{line_of(path, 'expected = [xor.gelu')}", "but `expected` says")

    edit(path, bad, good)
    expect_lesson(page)
