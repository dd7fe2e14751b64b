"""Bad input fails the build with one line naming the file (and line or key path), and keeps the old site."""
import json
import os
import shutil
import subprocess
import sys

import pytest

from support import ROOT, build_copy


def assert_failed_with(result, project, *expected):
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for part in expected:
        assert part in lines[0], lines[0]
    assert (project / "site" / "index.html").read_text() == "the previous build"
    assert sorted(p.name for p in (project / "site").iterdir()) == ["index.html"]
    assert not list(project.glob(".site.building-*")), "temporary build folder left behind"


def edit(path, old, new):
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def line_of(path, needle):
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


def test_undefined_jinja_name(scratch_project):
    lesson = scratch_project / "lessons" / "c4" / "l1-ffn.md"
    edit(lesson, '{{ widget("linear-fit") }}', '{{ facts.anchor.no_such_fact }}\n\n{{ widget("linear-fit") }}')
    line = line_of(lesson, "no_such_fact")
    assert_failed_with(build_copy(scratch_project), scratch_project, f"lessons/c4/l1-ffn.md:{line}:", "no_such_fact")


def test_unknown_widget(scratch_project):
    lesson = scratch_project / "lessons" / "c4" / "l1-ffn.md"
    edit(lesson, 'widget("linear-fit")', 'widget("no-such-widget")')
    line = line_of(lesson, "no-such-widget")
    assert_failed_with(build_copy(scratch_project), scratch_project, f"lessons/c4/l1-ffn.md:{line}:", "unknown widget 'no-such-widget'")


def test_malformed_json(scratch_project):
    path = scratch_project / "data" / "anchor-model.json"
    edit(path, '"hidden_size": 5120,', '"hidden_size": 5120,,')
    line = line_of(path, '"hidden_size": 5120,,')
    assert_failed_with(build_copy(scratch_project), scratch_project, f"data/anchor-model.json:{line}:", "malformed JSON")


def test_schema_violation_names_the_key_path(scratch_project):
    path = scratch_project / "data" / "anchor-model.json"
    edit(path, '"intermediate_size": 17408', '"intermediate_size": "17408"')
    assert_failed_with(build_copy(scratch_project), scratch_project, "data/anchor-model.json:",
                       "config.text_config.intermediate_size", "not of type 'integer'")


def test_missing_key(scratch_project):
    path = scratch_project / "data" / "anchor-model.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    del value["config"]["text_config"]["num_hidden_layers"]
    path.write_text(json.dumps(value), encoding="utf-8")
    assert_failed_with(build_copy(scratch_project), scratch_project, "data/anchor-model.json:", "config.text_config",
                       "'num_hidden_layers' is a required property")


def test_missing_node_modules(scratch_project):
    (scratch_project / "node_modules").unlink()
    assert_failed_with(build_copy(scratch_project), scratch_project, "node_modules/", "npm ci")


def test_corrupted_pyodide_file(scratch_project, tmp_path):
    (scratch_project / "node_modules").unlink()
    shutil.copytree(ROOT / "node_modules", scratch_project / "node_modules", symlinks=True)
    wasm = scratch_project / "node_modules" / "pyodide" / "pyodide.asm.wasm"
    wasm.write_bytes(wasm.read_bytes()[:-1] + b"\0")
    assert_failed_with(build_copy(scratch_project), scratch_project, "node_modules/pyodide/pyodide.asm.wasm:", "sha256")


def test_wrong_pyodide_version(scratch_project):
    path = scratch_project / "package.json"
    edit(path, '"pyodide": "314.0.7"', '"pyodide": "314.0.6"')
    assert_failed_with(build_copy(scratch_project), scratch_project, "node_modules/pyodide/package.json:", "pins 314.0.6")


def test_good_build_replaces_the_old_site(scratch_project):
    result = build_copy(scratch_project)
    assert result.returncode == 0, result.stderr
    assert (scratch_project / "site" / "c4" / "l1-ffn" / "index.html").exists()
    assert (scratch_project / "site" / "index.html").read_text() != "the previous build"


# What `mkdocs serve` shows in the page (tests/e2e/test_preview_errors_browser.py) still
# fails `python build.py` and `mkdocs build`: exit status 1, one line, old site kept.
@pytest.mark.parametrize("rel, old, new, message", [
    ("lessons/c4/l1-ffn.md", '{{ widget("linear-fit") }}', '{{ no_such_name }}\n\n{{ widget("linear-fit") }}',
     "'no_such_name' is undefined"),
    ("data/papers.json", '"d_model": 512,', '"d_model": 512,,', "malformed JSON"),
    ("data/course.json", '"id": "c4/l1",', '"id": "c4/l1",,', "malformed JSON"),
], ids=["lesson", "data", "outline"])
def test_what_the_preview_shows_fails_the_build(scratch_project, rel, old, new, message):
    path = scratch_project / rel
    edit(path, old, new)
    where = f"{rel}:{line_of(path, new.splitlines()[0])}: "
    result = build_copy(scratch_project)
    assert result.returncode == 1
    assert_failed_with(result, scratch_project, where, message)
    mkdocs = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--site-dir", str(scratch_project / "other-site")],
                            capture_output=True, text=True, cwd=scratch_project,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert mkdocs.returncode == 1
    assert where in mkdocs.stderr and message in mkdocs.stderr, mkdocs.stderr


def test_raw_tex_left_in_a_page_fails_the_build(scratch_project):
    """A formula KaTeX never saw (here inside a raw HTML block) would show its TeX source to a reader."""
    lesson = scratch_project / "lessons" / "c4" / "l2-residual.md"
    edit(lesson, "## ⑤ 极小真数字算一次", '<div class="x">\\(x + F(x)\\)</div>\n\n## ⑤ 极小真数字算一次')
    assert_failed_with(build_copy(scratch_project), scratch_project, "lessons/c4/l2-residual.md:",
                       "raw TeX left in the built page", "x + F(x)")


def test_a_headings_formula_reads_as_text_in_the_contents_list(scratch_project):
    lesson = scratch_project / "lessons" / "c4" / "l2-residual.md"
    edit(lesson, "### 第 2 步：同一条路，梯度也走", "### 第 2 步：$x \\leftarrow x + F(x)$ 的梯度也走这条路")
    result = build_copy(scratch_project)
    assert result.returncode == 0, result.stderr
    page = (scratch_project / "site" / "c4" / "l2-residual" / "index.html").read_text(encoding="utf-8")
    toc = page[page.index('md-nav--secondary'):]
    assert "第 2 步：x ← x + F(x) 的梯度也走这条路" in toc and "\\(" not in toc
