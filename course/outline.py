"""The course outline (data/course.json): the nav, the home page's course map, each lesson's
header and every cross-lesson link come from it.

A lesson page names its outline entry in its front matter (`lesson: c4/l1`); the outline
holds its chapter, label, title and question, and whether it is written, a draft (built and
reachable by its URL for review, but out of the nav, the map, search and links) or planned.
lesson("c4/l2") in a page is a real link to a written lesson and a plain 「（编写中）」
label for a planned one, so a link can never be dead and a label never stale.
"""
import html
import json
import posixpath
import re
from pathlib import Path

from .data import load_json, validate
from .errors import CourseError

OUTLINE = "data/course.json"
SCHEMA = "data/schemas/course.schema.json"
HOME = "index.md"
AUTHORS = "authors/"  # pages for authors (the widget gallery): outside the outline and the students' nav
PLANNED = "（编写中）"
FRONT_MATTER_ID = re.compile(r"\A---\s*\n(?:.*\n)*?lesson:\s*(\S+)\s*\n(?:.*\n)*?---\s*\n", re.M)


class Outline:
    def __init__(self, data):
        self.title = data["title"]
        self.chapters = data["chapters"]
        self.chapter_of = {c["id"]: c for c in self.chapters}
        self.lessons = {l["id"]: {**l, "chapter": c} for c in self.chapters for l in c.get("lessons", [])}
        self.by_file = {l["file"]: l for l in self.lessons.values()}

    # --- checks -------------------------------------------------------------------------

    def check(self, lessons_dir):
        """Every lesson file is in the outline, every written entry has its file, ids are unique."""
        ids = [c["id"] for c in self.chapters] + [l["id"] for c in self.chapters for l in c.get("lessons", [])]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise CourseError(OUTLINE, f"ids used twice: {', '.join(dupes)}")
        for lesson in self.lessons.values():
            chapter = lesson["id"].split("/")[0]
            if chapter != lesson["chapter"]["id"]:
                raise CourseError(OUTLINE, f"lesson {lesson['id']} sits in chapter {lesson['chapter']['id']}")
            path = Path(lessons_dir) / lesson["file"]
            if lesson["status"] in ("written", "draft") and not path.exists():
                raise CourseError(OUTLINE, f"lesson {lesson['id']} is marked {lesson['status']} but "
                                           f"lessons/{lesson['file']} does not exist (write it: python -m course "
                                           f"new lesson {lesson['file'][:-3]}, or mark it planned)")
            if lesson["status"] == "planned" and path.exists():
                raise CourseError(f"lessons/{lesson['file']}", f"exists, but {OUTLINE} marks lesson {lesson['id']} "
                                                               "planned: mark it draft or written")
        for path in sorted(Path(lessons_dir).rglob("*.md")):
            rel = path.relative_to(lessons_dir).as_posix()
            if rel == HOME or rel.startswith(AUTHORS):
                continue
            if rel not in self.by_file:
                raise CourseError(f"lessons/{rel}", f"is not in the course outline: add it to {OUTLINE} "
                                                    "(python -m course new lesson does both)")
            named = FRONT_MATTER_ID.match(path.read_text(encoding="utf-8"))
            want = self.by_file[rel]["id"]
            if not named or named.group(1) != want:
                raise CourseError(f"lessons/{rel}", f"front matter must say `lesson: {want}` (its {OUTLINE} entry)", 2)

    # --- what pages show ----------------------------------------------------------------

    def drafts(self):
        """Files of draft lessons: built, but kept out of the nav (mkdocs' not_in_nav)."""
        return [l["file"] for l in self.lessons.values() if l["status"] == "draft"]

    def nav(self):
        """mkdocs' nav: the home page, then each chapter with written lessons."""
        nav = [{"课程首页": HOME}]
        for c in self.chapters:
            written = [{self.full_title(l): l["file"]} for l in c.get("lessons", []) if l["status"] == "written"]
            if written:
                nav.append({self.chapter_title(c): written})
        return nav

    def chapter_title(self, chapter):
        return f"{chapter['label']} {chapter['title']}" if chapter.get("title") else chapter["label"]

    def full_title(self, lesson):
        return f"{lesson['label']} · {lesson['title']}"

    def header(self, file):
        """What the lesson header shows for the page at lessons/`file`."""
        lesson = self.by_file[file]
        return {"course": self.title, "chapter": self.chapter_title(lesson["chapter"]), "lesson": lesson["label"],
                "title": self.full_title(lesson), "question": lesson.get("question", ""),
                "draft": lesson["status"] == "draft"}

    def link(self, ref, from_url, text=None, planned_mark=True, linked=True):
        """HTML for a reference to a lesson ("c4/l2") or a chapter ("c11") from the page at `from_url`
        (mkdocs' page.url, e.g. "c4/l1-ffn/"). HTML, not Markdown, so it works inside raw HTML blocks too.

        Written: a link (to a chapter's first written lesson). Planned: the text, then 「（编写中）」
        unless planned_mark is False (a tag such as 「C1 已学」 names a chapter, it does not send the reader).
        linked=False: the text alone, written or not (inside a <summary>, a link would be a control
        nested in a control: axe-core's nested-interactive).
        """
        if ref in self.lessons:
            lesson = self.lessons[ref]
            target = lesson if lesson["status"] == "written" else None
            text = text or f"{lesson['label']}《{lesson['title']}》"
        elif ref in self.chapter_of:
            chapter = self.chapter_of[ref]
            target = next((l for l in chapter.get("lessons", []) if l["status"] == "written"), None)
            text = text or chapter["label"]
        else:
            known = ", ".join(sorted([*self.chapter_of, *self.lessons]))
            raise ValueError(f"lesson({ref!r}): no such lesson or chapter in {OUTLINE}; known: {known}")
        if target is None or not linked:
            return text + (PLANNED if planned_mark and target is None else "")
        return f'<a href="{relative_url(page_url(target["file"]), from_url)}">{html.escape(text)}</a>'

    def course_map(self):
        """The home page's map: every chapter that has lessons, each lesson written or planned."""
        return [{"title": self.chapter_title(c),
                 "lessons": [{"id": l["id"], "title": self.full_title(l), "question": l.get("question", ""),
                              "written": l["status"] == "written", "file": l["file"]}
                             for l in c.get("lessons", [])]}
                for c in self.chapters if c.get("lessons")]


def page_url(file):
    """The site URL of a lesson file, as mkdocs writes it (directory URLs).

    page_url("c4/l2-residual.md") -> 'c4/l2-residual/'; page_url("index.md") -> ''
    """
    stem = file[:-3]
    return "" if stem == "index" else (stem[:-len("/index")] if stem.endswith("/index") else stem) + "/"


def relative_url(target, from_url):
    """relative_url("c4/l2-residual/", "c4/l1-ffn/") -> '../l2-residual/'; relative_url("c4/l1-ffn/", "") -> 'c4/l1-ffn/'"""
    rel = posixpath.relpath(target or ".", from_url.rstrip("/") or ".")
    return "./" if rel == "." else rel + "/"


def load_outline(root):
    """Read and check data/course.json against its schema."""
    data = load_json(Path(root) / OUTLINE, root)
    validate(data, load_json(Path(root) / SCHEMA, root), OUTLINE)
    return Outline(data)


def save_outline(root, data):
    """Write data/course.json in its one canonical format (what the scaffold edits)."""
    text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    (Path(root) / OUTLINE).write_text(text, encoding="utf-8")
