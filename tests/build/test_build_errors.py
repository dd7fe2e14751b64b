"""Bad input fails the build with one line naming the file (and line or key path), and keeps the old site."""
import json
import shutil

import pytest
from conftest import ROOT

PROJECT_PARTS = ["build.py", "mkdocs.yml", "package.json", "course", "data", "lessons", "theme", "widgets"]


@pytest.fixture
def project(tmp_path):
    """A scratch copy of the project (node_modules linked) that a test may break."""
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


def build_copy(project):
    import subprocess
    import sys
    return subprocess.run([sys.executable, str(project / "build.py"), "--out", str(project / "site")],
                          capture_output=True, text=True, cwd=project)


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


def test_undefined_jinja_name(project):
    lesson = project / "lessons" / "c4" / "l1-ffn.md"
    edit(lesson, '{{ widget("linear-fit") }}', '{{ facts.anchor.no_such_fact }}\n\n{{ widget("linear-fit") }}')
    line = line_of(lesson, "no_such_fact")
    assert_failed_with(build_copy(project), project, f"lessons/c4/l1-ffn.md:{line}:", "no_such_fact")


def test_unknown_widget(project):
    lesson = project / "lessons" / "c4" / "l1-ffn.md"
    edit(lesson, 'widget("linear-fit")', 'widget("no-such-widget")')
    line = line_of(lesson, "no-such-widget")
    assert_failed_with(build_copy(project), project, f"lessons/c4/l1-ffn.md:{line}:", "unknown widget 'no-such-widget'")


def test_malformed_json(project):
    path = project / "data" / "anchor-model.json"
    edit(path, '"hidden_size": 5120,', '"hidden_size": 5120,,')
    line = line_of(path, '"hidden_size": 5120,,')
    assert_failed_with(build_copy(project), project, f"data/anchor-model.json:{line}:", "malformed JSON")


def test_schema_violation_names_the_key_path(project):
    path = project / "data" / "anchor-model.json"
    edit(path, '"intermediate_size": 17408', '"intermediate_size": "17408"')
    assert_failed_with(build_copy(project), project, "data/anchor-model.json:",
                       "config.text_config.intermediate_size", "not of type 'integer'")


def test_missing_key(project):
    path = project / "data" / "anchor-model.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    del value["config"]["text_config"]["num_hidden_layers"]
    path.write_text(json.dumps(value), encoding="utf-8")
    assert_failed_with(build_copy(project), project, "data/anchor-model.json:", "config.text_config",
                       "'num_hidden_layers' is a required property")


def test_missing_node_modules(project):
    (project / "node_modules").unlink()
    assert_failed_with(build_copy(project), project, "node_modules/", "npm ci")


def test_corrupted_pyodide_file(project, tmp_path):
    (project / "node_modules").unlink()
    shutil.copytree(ROOT / "node_modules", project / "node_modules", symlinks=True)
    wasm = project / "node_modules" / "pyodide" / "pyodide.asm.wasm"
    wasm.write_bytes(wasm.read_bytes()[:-1] + b"\0")
    assert_failed_with(build_copy(project), project, "node_modules/pyodide/pyodide.asm.wasm:", "sha256")


def test_wrong_pyodide_version(project):
    path = project / "package.json"
    edit(path, '"pyodide": "314.0.7"', '"pyodide": "314.0.6"')
    assert_failed_with(build_copy(project), project, "node_modules/pyodide/package.json:", "pins 314.0.6")


def test_good_build_replaces_the_old_site(project):
    result = build_copy(project)
    assert result.returncode == 0, result.stderr
    assert (project / "site" / "c4" / "l1-ffn" / "index.html").exists()
    assert (project / "site" / "index.html").read_text() != "the previous build"
