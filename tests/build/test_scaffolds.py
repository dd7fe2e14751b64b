"""The authors' scaffolds, run as an author would in a scratch copy: a new lesson, a new widget and
a new exercise build, the widget and the exercise embed, the outline marks the lesson written, the
new widget's own test passes, and the new exercise's answer stays out of the page and of search."""
import html
import json
import re
import subprocess
import sys

from support import build_copy
from test_build_errors import edit

from course.checks import contract


def course(project, *args):
    return subprocess.run([sys.executable, "-m", "course", *args], cwd=project, capture_output=True, text=True)


def test_new_lesson_widget_and_exercise(unwritten_l4):
    scratch_project = unwritten_l4
    made = course(scratch_project, "new", "lesson", "c4/l4-gating", "--our-model", "--question", "FFN 为什么要三个矩阵？")
    assert made.returncode == 0, made.stderr
    made = course(scratch_project, "new", "widget", "demo-dial")
    assert made.returncode == 0, made.stderr
    assert "widgets/demo_dial/model.py" in made.stdout
    made = course(scratch_project, "new", "exercise", "c4/l4/demo-double", "--title", "加倍")
    assert made.returncode == 0, made.stderr
    assert "exercises/c4/l4/demo-double.py" in made.stdout and '{{ exercise("demo-double") }}' in made.stdout

    lesson = scratch_project / "lessons" / "c4" / "l4-gating.md"
    edit(lesson, "## ⑥", '{{ widget("demo-dial") }}\n\n{{ exercise("demo-double") }}\n\n## ⑥')
    result = build_copy(scratch_project)
    assert result.returncode == 0, result.stderr

    outline = json.loads((scratch_project / "data" / "course.json").read_text(encoding="utf-8"))
    entry = next(l for c in outline["chapters"] for l in c.get("lessons", []) if l["id"] == "c4/l4")
    assert (entry["status"], entry["file"]) == ("written", "c4/l4-gating.md")
    assert entry["question"] == "FFN 为什么要三个矩阵？"

    page = (scratch_project / "site" / "c4" / "l4-gating" / "index.html").read_text(encoding="utf-8")
    assert "第 4 课 · 门控与 SwiGLU" in page and 'data-widget="demo-dial"' in page and "x² = <strong" in page
    # Valid HTML from the start (the Nu checker: a label holds one control, so no <output> in it).
    dial = page[page.find('data-widget="demo-dial"'):]
    labels = re.findall(r"<label\b.*?</label>", dial[:dial.find("x² = <strong")], re.S)
    assert labels and not [label for label in labels if "<output" in label], labels
    positions = [page.find(f">{mark}") for mark in contract({"sections": ["真模型"]})]
    assert -1 not in positions and positions == sorted(positions)
    first = (scratch_project / "site" / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    assert '<a href="../l4-gating/">第 4 课</a>' in first, "the planned label became a link"
    home = (scratch_project / "site" / "index.html").read_text(encoding="utf-8")
    assert '<a href="c4/l4-gating/">第 4 课 · 门控与 SwiGLU</a>' in home

    # The exercise: task and starter in the page, the answer only in its own file, not in search.
    assert 'data-exercise="c4/l4/demo-double"' in page and 'data-files="../../exercises/c4/l4/demo-double/"' in page
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "练习 · 加倍" in text and "def double(x):\n    ..." in text and "return 2 * x" not in text
    files = scratch_project / "site" / "exercises" / "c4" / "l4" / "demo-double"
    assert "return 2 * x" in json.loads((files / "answer.json").read_text(encoding="utf-8"))["code"]
    index = json.loads((scratch_project / "site" / "search" / "search_index.json").read_text(encoding="utf-8"))
    searchable = html.unescape(re.sub(r"<[^>]+>", "", " ".join(d["text"] for d in index["docs"]))).replace("\u200b", "")
    assert "def double(x):" in searchable and "return 2 * x" not in searchable

    tested = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "tests/widgets/test_demo_dial.py"], cwd=scratch_project, capture_output=True, text=True)
    assert tested.returncode == 0 and "2 passed" in tested.stdout, tested.stdout + tested.stderr


def test_scaffolds_refuse_to_overwrite(scratch_project):
    again = course(scratch_project, "new", "lesson", "c4/l1-ffn")
    assert again.returncode != 0 and "exists already" in again.stderr
    bad = course(scratch_project, "new", "widget", "Bad_Name")
    assert bad.returncode != 0 and "lowercase words" in bad.stderr
    again = course(scratch_project, "new", "exercise", "c4/l1/gelu-tanh")
    assert again.returncode != 0 and "exists already" in again.stderr
    bad = course(scratch_project, "new", "exercise", "c4/l9/demo")
    assert bad.returncode != 0 and "no lesson 'c4/l9'" in bad.stderr
