"""Scaffolds for authors: a new lesson (file + outline entry), a new widget (model, template,
view and a passing test) or a new exercise (a file that the build proves). They write files
only; nothing is embedded anywhere.

    python -m course new lesson c4/l2-residual [--title 残差] [--question ...] [--our-model]
    python -m course new widget NAME
    python -m course new exercise c4/l1/NAME [--title 标题]
"""
import json
import re
from pathlib import Path

from . import ROOT
from .outline import OUTLINE, load_outline, save_outline

TEMPLATES = Path(__file__).resolve().parent / "templates"
LESSON_PATH = re.compile(r"^(?P<chapter>[a-z][a-z0-9]*)/l(?P<n>[0-9]+)(-[a-z0-9-]+)?$")
WIDGET_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
EXERCISE_PATH = re.compile(r"^(?P<lesson>[a-z][a-z0-9]*/l[0-9]+)/(?P<name>[a-z][a-z0-9]*(-[a-z0-9]+)*)$")


def fill(template, **values):
    """Replace @@KEY@@ markers (the templates hold Jinja and TeX, so no other syntax is safe).

    fill("# @@NAME@@", NAME="dial") -> '# dial'
    """
    for key, value in values.items():
        template = template.replace(f"@@{key}@@", value)
    return template


def new_lesson(path, title=None, question=None, our_model=False, draft=False, root=ROOT):
    """Write lessons/<path>.md with every section of the contract and mark it written (or draft) in the outline."""
    m = LESSON_PATH.match(path)
    if not m:
        raise SystemExit(f"lesson path {path!r}: expected CHAPTER/lN-slug, e.g. c4/l2-residual")
    lesson_id, file = f"{m['chapter']}/l{m['n']}", f"{path}.md"
    target = Path(root) / "lessons" / file
    if target.exists():
        raise SystemExit(f"lessons/{file} exists already")
    data = json.loads((Path(root) / OUTLINE).read_text(encoding="utf-8"))
    chapter = next((c for c in data["chapters"] if c["id"] == m["chapter"]), None)
    if chapter is None:
        raise SystemExit(f"no chapter {m['chapter']!r} in {OUTLINE}: add it there first")
    entry = next((l for l in chapter.setdefault("lessons", []) if l["id"] == lesson_id), None)
    if entry is None:
        if not title:
            raise SystemExit(f"{lesson_id} is not in {OUTLINE}: give it a --title")
        entry = {"id": lesson_id, "label": f"第 {int(m['n'])} 课", "title": title, "file": file, "status": "planned"}
        chapter["lessons"].append(entry)
        chapter["lessons"].sort(key=lambda l: int(l["id"].split("/l")[1]))
    if entry["status"] == "written":
        raise SystemExit(f"{lesson_id} is already written ({entry['file']})")
    entry.update({"file": file, "status": "draft" if draft else "written", **({"title": title} if title else {}),
                  **({"question": question} if question else {})})
    entry.setdefault("question", f"{entry['title']}：这一课要回答的一个问题（在 {OUTLINE} 里改写）")
    text = fill((TEMPLATES / "lesson.md").read_text(encoding="utf-8"), ID=lesson_id,
                SECTIONS="sections: [真模型]\n" if our_model else "",
                OUR_MODEL=(TEMPLATES / "our-model.md").read_text(encoding="utf-8") if our_model else "")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    save_outline(root, data)
    load_outline(root).check(Path(root) / "lessons")  # the scaffold leaves a consistent course
    return target


def new_widget(name, root=ROOT):
    """Write widgets/<folder>/{model.py, widget.html, view.js} and tests/widgets/test_<folder>.py."""
    if not WIDGET_NAME.match(name):
        raise SystemExit(f"widget name {name!r}: lowercase words joined by '-', e.g. depth-signal")
    folder = name.replace("-", "_")
    target = Path(root) / "widgets" / folder
    test = Path(root) / "tests" / "widgets" / f"test_{folder}.py"
    if target.exists() or test.exists():
        raise SystemExit(f"widgets/{folder} or its test exists already")
    target.mkdir(parents=True)
    values = {"NAME": name, "CLASS": name}
    for part in ("model.py", "widget.html", "view.js"):
        (target / part).write_text(fill((TEMPLATES / "widget" / part).read_text(encoding="utf-8"), **values),
                                   encoding="utf-8")
    test.parent.mkdir(parents=True, exist_ok=True)
    test.write_text(fill((TEMPLATES / "widget" / "test.py").read_text(encoding="utf-8"), **values), encoding="utf-8")
    return [target / p for p in ("model.py", "widget.html", "view.js")] + [test]


def new_exercise(path, title=None, root=ROOT):
    """Write exercises/<lesson>/<name>.py: a small exercise that passes the build's proof, to rewrite."""
    m = EXERCISE_PATH.match(path)
    if not m:
        raise SystemExit(f"exercise {path!r}: expected LESSON/NAME, e.g. c4/l1/ffn-two-neurons "
                         "(the name lowercase words joined by '-')")
    if m["lesson"] not in load_outline(root).lessons:
        raise SystemExit(f"no lesson {m['lesson']!r} in {OUTLINE}")
    target = Path(root) / "exercises" / f"{path}.py"
    if target.exists():
        raise SystemExit(f"exercises/{path}.py exists already")
    target.parent.mkdir(parents=True, exist_ok=True)
    text = fill((TEMPLATES / "exercise.py").read_text(encoding="utf-8"), TITLE=title or f"{m['name']}（改成这道练习的标题）")
    target.write_text(text, encoding="utf-8")
    return target
