"""The authors' scaffolds, run as an author would in a scratch copy: a new lesson and a new widget
build, the widget embeds, the outline marks the lesson written, and the new widget's own test passes."""
import json
import subprocess
import sys

from support import build_copy
from test_build_errors import edit

from course.checks import contract


def course(project, *args):
    return subprocess.run([sys.executable, "-m", "course", *args], cwd=project, capture_output=True, text=True)


def test_new_lesson_and_new_widget(scratch_project):
    made = course(scratch_project, "new", "lesson", "c4/l3-norm", "--our-model", "--question", "每层的输入尺度不一样，怎么办？")
    assert made.returncode == 0, made.stderr
    made = course(scratch_project, "new", "widget", "demo-dial")
    assert made.returncode == 0, made.stderr
    assert "widgets/demo_dial/model.py" in made.stdout

    lesson = scratch_project / "lessons" / "c4" / "l3-norm.md"
    edit(lesson, "## ⑥", '{{ widget("demo-dial") }}\n\n## ⑥')
    result = build_copy(scratch_project)
    assert result.returncode == 0, result.stderr

    outline = json.loads((scratch_project / "data" / "course.json").read_text(encoding="utf-8"))
    entry = next(l for c in outline["chapters"] for l in c.get("lessons", []) if l["id"] == "c4/l3")
    assert (entry["status"], entry["file"]) == ("written", "c4/l3-norm.md")
    assert entry["question"] == "每层的输入尺度不一样，怎么办？"

    page = (scratch_project / "site" / "c4" / "l3-norm" / "index.html").read_text(encoding="utf-8")
    assert "第 3 课 · 归一化" in page and 'data-widget="demo-dial"' in page and "x² = <strong" in page
    positions = [page.find(f">{mark}") for mark in contract({"sections": ["真模型"]})]
    assert -1 not in positions and positions == sorted(positions)
    first = (scratch_project / "site" / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    assert '<a href="../l3-norm/">第 3 课</a>' in first, "the planned label became a link"
    home = (scratch_project / "site" / "index.html").read_text(encoding="utf-8")
    assert '<a href="c4/l3-norm/">第 3 课 · 归一化</a>' in home

    tested = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "tests/widgets/test_demo_dial.py"], cwd=scratch_project, capture_output=True, text=True)
    assert tested.returncode == 0 and "2 passed" in tested.stdout, tested.stdout + tested.stderr


def test_scaffolds_refuse_to_overwrite(scratch_project):
    again = course(scratch_project, "new", "lesson", "c4/l1-ffn")
    assert again.returncode != 0 and "exists already" in again.stderr
    bad = course(scratch_project, "new", "widget", "Bad_Name")
    assert bad.returncode != 0 and "lowercase words" in bad.stderr
