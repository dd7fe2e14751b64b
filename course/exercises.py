"""Exercises: read each file under exercises/, and prove at build time that it can be done.

One file per exercise, `exercises/<lesson>/<name>.py` (exercises/c4/l1/ffn-two-neurons.py is
exercise "ffn-two-neurons" of lesson c4/l1, stable id "c4/l1/ffn-two-neurons"), cut into
sections by `# %% NAME` lines (the cell markers that VS Code, PyCharm and Jupytext know):

    # %% exercise   settings, `# key: value` lines: title (required), time_limit (seconds, default 3)
    # %% task       Markdown + Jinja, each line behind `# `: what the student is asked to do
    # %% starter    Python: what the editor holds at first
    # %% answer     Python: the reference answer, fetched by the page only when revealed
    # %% cases      Python, build time only (facts and model(name) are defined): `cases`, the author's
    #               inputs; optional `expected` (what the answer must give for them), `unseen(rng)`
    #               (inputs the student has not seen, drawn at build time) and `given` (names defined
    #               before the student's code runs)
    # %% check      Python, shipped: result(you, case), optional defines, show(case), tolerance
    #               (widgets/runtime/checker.py)
    # %% hint       Markdown + Jinja, one section per hint, in the order they open

At build time, in CPython, the reference answer runs on every case and its results become
the expected values (so its code never ships before it is revealed); the answer must then
pass the check, within a third of the time limit, and the starter must fail it. Any fault
fails the build as `exercises/…py:LINE: message`.
"""
import contextlib
import copy
import hashlib
import io
import json
import random
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass, field

from . import ROOT
from .errors import CourseError
from .widgets import WIDGETS, load_module

FOLDER = ROOT / "exercises"
CHECKER = WIDGETS / "runtime" / "checker.py"
MARKER = re.compile(r"^# %%(.*)$")
NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
LESSON = re.compile(r"^[a-z][a-z0-9]*/l[0-9]+$")
ONCE = ("exercise", "task", "starter", "answer", "cases", "check")
MARKDOWN = ("task", "hint")
SETTINGS = {"title": "the exercise's heading (Chinese)", "time_limit": "seconds a run may take (default 3)"}
DEFAULT_TIME_LIMIT = 3.0
BUILD_SHARE = 3  # the answer and its check must run in CPython within 1/3 of the limit: Pyodide is slower


@dataclass
class Section:
    name: str
    line: int  # the file line of its first line of text (the marker's line when it is empty)
    text: str
    marker: int  # the line of its `# %%` marker


@dataclass
class Exercise:
    id: str            # "c4/l1/ffn-two-neurons": the lesson's id and the exercise's name
    lesson: str
    name: str
    rel: str           # "exercises/c4/l1/ffn-two-neurons.py"
    title: str
    time_limit: float
    sections: dict
    hints: list
    given: dict = field(default_factory=dict)
    cases: list = field(default_factory=list)  # {"input", "expected", "seen"} for the browser's check
    answer_verdict: dict = None
    starter_verdict: dict = None

    @property
    def starter(self):
        return self.sections["starter"].text

    @property
    def starter_sha(self):
        return hashlib.sha256(self.starter.encode("utf-8")).hexdigest()[:12]

    def seed(self):
        """The unseen inputs' random seed: the same exercise draws the same inputs in every build."""
        return int.from_bytes(hashlib.sha256(self.id.encode("utf-8")).digest()[:8], "big")


# ------------------------------------------------------------------------------ reading

def paths(folder=FOLDER):
    return sorted(folder.rglob("*.py")) if folder.is_dir() else []


def parse(path, root=ROOT):
    """Read one exercise file into its sections; a malformed file fails at its line."""
    rel = path.relative_to(root).as_posix()
    parts = path.relative_to(root / "exercises").with_suffix("").parts
    lesson, name = "/".join(parts[:-1]), parts[-1]
    if not LESSON.match(lesson) or not NAME.match(name):
        raise CourseError(rel, "an exercise lives in exercises/<chapter>/l<N>/<name>.py, its name lowercase "
                               "words joined by '-' (e.g. exercises/c4/l1/ffn-two-neurons.py)")
    lines = path.read_text(encoding="utf-8").splitlines()
    found, current = [], None
    for number, line in enumerate(lines, 1):
        m = MARKER.match(line)
        if m:
            current = (m.group(1).strip(), number, [])
            found.append(current)
        elif current is None:
            if line.strip():
                raise CourseError(rel, "an exercise file starts with its `# %% exercise` line", number)
        else:
            current[2].append(line)
    sections, hints = {}, []
    for kind, marker, body in found:
        if kind not in (*ONCE, "hint"):
            raise CourseError(rel, f"unknown section `# %% {kind}`; the sections are: "
                                   f"{', '.join(ONCE)}, hint (one or more)", marker)
        if kind in sections:
            raise CourseError(rel, f"a second `# %% {kind}` section (the first is at line "
                                   f"{sections[kind].marker})", marker)
        section = _section(kind, marker, body, rel)
        if kind == "hint":
            hints.append(section)
        else:
            sections[kind] = section
    if not found or found[0][0] != "exercise":
        raise CourseError(rel, "an exercise file starts with its `# %% exercise` line", found[0][1] if found else 1)
    missing = [kind for kind in ONCE if kind not in sections] + (["hint"] if not hints else [])
    if missing:
        raise CourseError(rel, f"the exercise lacks the section(s) {', '.join(missing)} "
                               f"(written as `# %% {missing[0]}` lines)", len(lines) or 1)
    for kind in ("task", "starter", "answer", "check"):
        if not sections[kind].text.strip():
            raise CourseError(rel, f"the `# %% {kind}` section is empty", sections[kind].marker)
    settings = _settings(sections["exercise"], rel)
    return Exercise(id=f"{lesson}/{name}", lesson=lesson, name=name, rel=rel, title=settings["title"],
                    time_limit=settings["time_limit"], sections=sections, hints=hints)


def _section(kind, marker, body, rel):
    """A section's text without its surrounding blank lines; Markdown lines lose their `# `."""
    if kind in (*MARKDOWN, "exercise"):
        text = []
        for offset, line in enumerate(body, marker + 1):
            if line.strip() and not (line == "#" or line.startswith("# ")):
                raise CourseError(rel, f"a `# %% {kind}` line is a comment: start it with '# '", offset)
            text.append(line[2:])
        body = text
    first = next((i for i, line in enumerate(body) if line.strip()), len(body))
    last = max((i for i, line in enumerate(body) if line.strip()), default=-1)
    return Section(kind, marker + 1 + first if first < len(body) else marker, "\n".join(body[first:last + 1]), marker)


def _settings(section, rel):
    settings = {"time_limit": DEFAULT_TIME_LIMIT}
    for offset, line in enumerate(section.text.splitlines(), section.line):
        if not line.strip():
            continue
        key, sep, value = (part.strip() for part in line.partition(":"))
        if not sep or key not in SETTINGS:
            known = "; ".join(f"{k}: {why}" for k, why in SETTINGS.items())
            raise CourseError(rel, f"a setting is written `# key: value`; the keys are {known}", offset)
        if key == "time_limit":
            try:
                value = float(value)
            except ValueError:
                value = 0.0
            if not 0 < value <= 60:
                raise CourseError(rel, "time_limit is a number of seconds, more than 0 and at most 60", offset)
        settings[key] = value
    if not settings.get("title"):
        raise CourseError(rel, "the exercise needs a `# title: ...` (its heading)", section.marker)
    return settings


# ------------------------------------------------------------------------------ proving

class OverTime(BaseException):
    """Raised into code that runs past its deadline (BaseException: an `except Exception` in
    the code under test cannot swallow it)."""


@contextlib.contextmanager
def deadline(seconds):
    """Stop the code inside after `seconds`: a timer signal in the main thread, else (mkdocs
    serve rebuilds in another thread) a trace function that looks at the clock."""
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        def stop(signum, frame):
            raise OverTime()
        previous = signal.signal(signal.SIGALRM, stop)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    else:
        end = time.perf_counter() + seconds

        def trace(frame, event, arg):
            if time.perf_counter() > end:
                raise OverTime()
            return trace
        previous = sys.gettrace()
        sys.settrace(trace)
        try:
            yield
        finally:
            sys.settrace(previous)


def checker():
    return load_module(CHECKER, "cw_checker")


def _fault(ex, what, e, fallback):
    """A CourseError at the innermost line of the exercise file where `e` happened."""
    line = checker()._line(e.__traceback__, ex.rel) or getattr(e, "lineno", None) or fallback
    text = ("ran past its time limit" if isinstance(e, OverTime) else e.message if isinstance(e, CourseError)
            else f"{type(e).__name__}: {e}")
    return CourseError(ex.rel, f"{what}: {text}", line)


def _compile(ex, kind):
    section = ex.sections[kind]
    try:
        return compile("\n" * (section.line - 1) + section.text, ex.rel, "exec")
    except SyntaxError as e:
        raise CourseError(ex.rel, f"the {kind} is not valid Python: {e.msg}", e.lineno) from None


def _json(value, ex, what, line):
    """The value as the browser will see it (tuples become lists); not JSON fails."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as e:
        raise CourseError(ex.rel, f"{what} is not plain JSON ({e}): use numbers, strings, lists and dicts",
                          line) from None


def run(ex, kind):
    """Run the starter or the answer as the browser will: the given names defined, __name__
    "__main__", print output discarded. Returns its names (those defined before an error, if any)."""
    ns = {"__name__": "__main__", **copy.deepcopy(ex.given)}
    code = _compile(ex, kind)
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            exec(code, ns)
        except Exception as e:
            if kind == "answer":
                raise _fault(ex, "the answer fails when it runs", e, ex.sections[kind].line) from None
    return ns


def draw_cases(ex, facts, model):
    """Run the cases section: the author's inputs (and what the answer must give for them),
    the unseen inputs drawn with the exercise's own seed, and the given names."""
    section = ex.sections["cases"]
    ns = {"__name__": "__cases__", "facts": facts, "model": model}
    try:
        exec(_compile(ex, "cases"), ns)
        seen = ns.get("cases", [])
        unseen = ns["unseen"](random.Random(ex.seed())) if "unseen" in ns else []
    except Exception as e:
        raise _fault(ex, "the cases section fails", e, section.line) from None
    if not isinstance(seen, list) or not isinstance(unseen, list) or not seen + unseen:
        raise CourseError(ex.rel, "the cases section defines `cases` (a list of inputs) and optionally "
                                  "unseen(rng) (returning a list): at least one input in all", section.marker)
    expected = ns.get("expected")
    if expected is not None and (not isinstance(expected, list) or len(expected) != len(seen)):
        raise CourseError(ex.rel, f"`expected` lists what the answer gives for each of the {len(seen)} cases",
                          _line_of(section, "expected"))
    given = ns.get("given", {})
    if not isinstance(given, dict) or not all(isinstance(k, str) and k.isidentifier() for k in given):
        raise CourseError(ex.rel, "`given` maps Python names to values", _line_of(section, "given"))
    ex.given = _json(given, ex, "`given`", _line_of(section, "given"))
    inputs = [(_json(c, ex, f"case {i + 1}", section.marker), True) for i, c in enumerate(seen)]
    inputs += [(_json(c, ex, f"unseen input {i + 1}", _line_of(section, "def unseen")), False)
               for i, c in enumerate(unseen)]
    return inputs, expected


def _line_of(section, start):
    """The file line of the first line in `section` that starts with `start` (else its marker)."""
    for offset, line in enumerate(section.text.splitlines()):
        if line.startswith(start):
            return section.line + offset
    return section.marker


def prove(ex, facts, model):
    """Compute the expected results from the reference answer, then check that the answer
    passes and the starter fails; fills ex.cases and both verdicts."""
    cw = checker()
    section = ex.sections["check"]
    try:
        check = cw.load_check(section.text, ex.rel, section.line)
    except SyntaxError as e:
        raise CourseError(ex.rel, f"the check is not valid Python: {e.msg}", e.lineno) from None
    except Exception as e:
        raise _fault(ex, "the check section fails", e, section.marker) from None
    inputs, expected = draw_cases(ex, facts, model)
    show = check.get("show") or cw.describe
    tolerance = check.get("tolerance", cw.DEFAULT_TOLERANCE)
    start = time.perf_counter()
    try:
        with deadline(ex.time_limit):
            answer = run(ex, "answer")
            you = cw.student(answer)
            ex.cases = []
            for i, (value, seen) in enumerate(inputs):
                try:
                    got = check["result"](you, value)
                except (Exception, OverTime) as e:
                    raise _fault(ex, f"the answer fails on {show(value)}", e, ex.sections["answer"].line) from None
                got = _json(got, ex, f"result() for {show(value)}", _line_of(section, "def result"))
                if seen and expected is not None and not cw.close(got, expected[i], tolerance):
                    raise CourseError(ex.rel, f"for {show(value)} the answer gives {cw.describe(got)}, but "
                                              f"`expected` says {cw.describe(expected[i])}",
                                      _line_of(ex.sections["cases"], "expected"))
                ex.cases.append({"input": value, "expected": got, "seen": seen})
            ex.answer_verdict = cw.verdict(answer, check, ex.cases, ex.rel)
    except OverTime as e:
        raise _fault(ex, f"the answer and its check ran past the time limit of {ex.time_limit:g} s",
                     e, ex.sections["answer"].line) from None
    took = time.perf_counter() - start
    if not ex.answer_verdict["passed"]:
        failure = ex.answer_verdict["failure"]
        raise CourseError(ex.rel, f"the answer fails its check: {ex.answer_verdict['message']}",
                          failure.get("line") or ex.sections["answer"].line)
    if took > ex.time_limit / BUILD_SHARE:
        raise CourseError(ex.rel, f"the answer and its check take {took:.2f} s in CPython; the browser's Python "
                                  f"is slower, so keep them under a third of the time limit "
                                  f"({ex.time_limit:g} s): raise `# time_limit:` or use fewer cases",
                          ex.sections["exercise"].marker)
    try:
        with deadline(ex.time_limit):
            ex.starter_verdict = cw.verdict(run(ex, "starter"), check, ex.cases, ex.rel)
    except OverTime as e:
        raise _fault(ex, "the starter ran past the time limit (a student's first run would be stopped)",
                     e, ex.sections["starter"].line) from None
    if ex.starter_verdict["passed"]:
        raise CourseError(ex.rel, "the starter code already passes the check: the student would be done "
                                  "before starting", ex.sections["starter"].marker)
    return ex


def load_all(facts, model, outline, folder=FOLDER, root=ROOT):
    """Every exercise, read and proved: {id: Exercise}. An exercise of a lesson that the
    outline does not know fails."""
    found = {}
    for path in paths(folder):
        ex = parse(path, root)
        if ex.lesson not in outline.lessons:
            raise CourseError(ex.rel, f"lesson {ex.lesson} is not in the course outline (data/course.json)", 1)
        found[ex.id] = prove(ex, facts, model)
    return found
