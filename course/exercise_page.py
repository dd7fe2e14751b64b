"""Exercises on the site: the block a lesson embeds, and the files the browser fetches.

`{{ exercise("ffn-two-neurons") }}` in lesson c4/l1 (or `exercise("c4/l1/ffn-two-neurons")`
anywhere) renders widgets/runtime/exercise.html: the task, the names given to the student's
code and the starter code, readable without JavaScript. The rest is fetched by the browser
from exercises/<id>/ under the site, so the answer and the hints are in no page and in no
search index:

    check.json    what a run needs: the check's source, the cases with their expected values,
                  the given names, the starter, the time limit
    hints.json    the hints, as HTML (formulas typeset by KaTeX at build time)
    answer.json   the reference answer's code, fetched only when the student reveals it
"""
import hashlib
import json

import jinja2
from markupsafe import Markup

from . import katex
from .errors import CourseError
from .outline import relative_url
from .render import render_lesson
from .widgets import WIDGETS

SITE_FOLDER = "exercises"
SPLIT = "<!-- cw-hint -->"


def folder(ex):
    """exercises/c4/l1/ffn-two-neurons/: where the site serves an exercise's files."""
    return f"{SITE_FOLDER}/{ex.id}/"


def _dumps(value):
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def check_json(ex):
    check = ex.sections["check"]
    return _dumps({"id": ex.id, "lesson": ex.lesson, "title": ex.title, "time_limit": ex.time_limit,
                   "starter": ex.starter, "starter_sha": ex.starter_sha, "given": ex.given,
                   "check": {"source": check.text, "file": ex.rel, "line": check.line},
                   "cases": ex.cases, "hints": len(ex.hints)})


def answer_json(ex):
    answer = ex.sections["answer"]
    return _dumps({"id": ex.id, "code": answer.text})


def hints_json(ex, env, markdown):
    """The hints as HTML: Jinja (facts, model()), then Markdown (`markdown(text) -> html`, the
    site's own extensions), then KaTeX, in one typesetting call for all of them."""
    sources = [render_lesson(env, hint.text, ex.rel, hint.line - 1) for hint in ex.hints]
    pages = [markdown(text) for text in sources]
    try:
        html = katex.typeset(SPLIT.join(pages), "\n".join(sources), ex.rel).split(SPLIT)
    except CourseError:  # one hint's formula: find which, for its line
        for hint, text, page in zip(ex.hints, sources, pages):
            try:
                katex.typeset(page, text, ex.rel)
            except CourseError as e:
                raise CourseError(ex.rel, e.message, hint.line - 1 + (e.line or 1)) from None
        raise
    return _dumps({"id": ex.id, "hints": html})


def version(ex):
    """Changes whenever what a run checks against changes (the runtime can refetch)."""
    return hashlib.sha256(check_json(ex).encode("utf-8")).hexdigest()[:12]


def site_files(found, env, markdown):
    """(site path, content) of every exercise's three files."""
    for ex in found.values():
        yield folder(ex) + "check.json", check_json(ex)
        yield folder(ex) + "hints.json", hints_json(ex, env, markdown)
        yield folder(ex) + "answer.json", answer_json(ex)


def fence(code):
    """A Markdown code fence longer than any run of backticks in `code`."""
    longest = max((len(run) for run in code.replace("`", "\0`").split("\0") if run.startswith("`")), default=0)
    return "`" * max(3, longest + 1)


class Blocks:
    """Renders `exercise(ref)` for the page being built; each exercise at most once a page."""

    def __init__(self, found, env):
        self.found, self.env = found, env
        self.templates = jinja2.Environment(loader=jinja2.FileSystemLoader(WIDGETS / "runtime"),
                                            undefined=jinja2.StrictUndefined, autoescape=True)
        self.embedded = []

    def resolve(self, ref, lesson):
        exercise_id = ref if "/" in ref else f"{lesson}/{ref}" if lesson else ref
        if exercise_id not in self.found:
            here = [e for e in self.found if lesson and e.startswith(lesson + "/")]
            known = ", ".join(e.rsplit("/", 1)[1] for e in here) if here else ", ".join(self.found) or "none"
            where = f" exercises/{exercise_id}.py" if "/" in exercise_id else \
                " (outside a lesson, name it in full: exercise(\"c4/l1/NAME\"))"
            raise ValueError(f"no exercise {ref!r}{where}; known here: {known}")
        return self.found[exercise_id]

    def __call__(self, ref, lesson, page_url, context, level=3):
        ex = self.resolve(ref, lesson)
        if ex.id in self.embedded:
            raise ValueError(f"exercise {ex.id!r} is embedded twice on this page")
        if level not in (2, 3, 4):
            raise ValueError("exercise(..., level=N): its heading is level 2, 3 (the default) or 4")
        self.embedded.append(ex.id)
        task = render_lesson(self.env, ex.sections["task"].text, ex.rel, ex.sections["task"].line - 1, context)
        given = "\n".join(f"{name} = {value!r}" for name, value in ex.given.items())
        code = ex.starter + "\n" + given
        html = self.templates.get_template("exercise.html").render(
            ex=ex, anchor="exercise-" + ex.id.replace("/", "-"), level=level, task=Markup(task),
            given=Markup(given), starter=Markup(ex.starter), fence=Markup(fence(code)),
            files=relative_url(folder(ex), page_url), version=version(ex),
            seconds=f"{ex.time_limit:g}")
        return Markup(html)

    def gallery(self):
        """Every exercise for the authors' gallery: where it lives and what the build found."""
        return [{"id": ex.id, "file": ex.rel, "title": ex.title, "time_limit": f"{ex.time_limit:g}",
                 "seen": sum(c["seen"] for c in ex.cases), "unseen": sum(not c["seen"] for c in ex.cases),
                 "hints": len(ex.hints), "given": list(ex.given),
                 "starter_says": ex.starter_verdict["message"], "answer_says": ex.answer_verdict["message"]}
                for ex in self.found.values()]

