"""An exercise's check: the student's code against the reference answer's results.

The same file runs at build time in CPython (course/exercises.py proves that the reference
answer passes and the starter code fails) and in the browser's Python (the runtime checks
the student's code with it), so a verdict reads the same in both. Standard library only.

An exercise's `check` section (Python, shipped to the browser) defines

    result(you, case)   what the student's code gives for one case; `you` holds the names
                        the student's code defined (you.ffn, you.W_up)
    defines             optional: the names the task asks for, reported plainly when missing
    show(case)          optional: how a case is named in messages (default: the input itself)
    tolerance           optional: numbers match within this, absolute or relative (default 1e-6)

The cases come from the build, each {"input": ..., "expected": ..., "seen": bool}: the
expected values were computed from the reference answer in CPython, so the answer itself
need not ship; `seen` is False for inputs drawn at build time that the task never shows.

    >>> check = load_check("def result(you, case):\\n    return you.double(case)")
    >>> verdict({"double": lambda x: 2 * x}, check, [{"input": 3, "expected": 6, "seen": True}])["passed"]
    True
"""
import math
import types

DEFAULT_TOLERANCE = 1e-6
MAX_ITEMS = 20  # items of a list a message shows; the rest are counted
MAX_DEPTH = 20  # levels of nesting a message shows: a result nested 10,000 deep once overflowed the browser's stack


def load_check(source, filename="<check>", first_line=1):
    """Run a check section and return its names. `first_line` keeps a traceback's line numbers
    those of the file the section came from."""
    check = {"__name__": "__check__"}
    exec(compile("\n" * (first_line - 1) + source, filename, "exec"), check)
    if not callable(check.get("result")):
        raise ValueError("the check defines no function result(you, case)")
    return check


def student(ns):
    """The names a run of the student's code defined, as attributes: student(ns).ffn."""
    return types.SimpleNamespace(**{k: v for k, v in ns.items() if isinstance(k, str) and not k.startswith("__")})


def close(got, expected, tolerance=DEFAULT_TOLERANCE):
    """Whether `got` matches `expected` (a JSON value): numbers within tolerance, sequences and
    mappings element by element (a tuple matches a list: JSON has only lists).

    >>> close((0.1 + 0.2, [1]), [0.3, [1.0]]), close(True, 1), close(float("nan"), 0.0)
    (True, False, False)
    """
    if isinstance(expected, bool) or expected is None or isinstance(expected, str):
        return type(got) is type(expected) and got == expected
    if isinstance(expected, (int, float)):
        return (isinstance(got, (int, float)) and not isinstance(got, bool)
                and math.isclose(got, expected, rel_tol=tolerance, abs_tol=tolerance))
    if isinstance(expected, list):
        return (isinstance(got, (list, tuple)) and len(got) == len(expected)
                and all(close(g, e, tolerance) for g, e in zip(got, expected)))
    if isinstance(expected, dict):
        return (isinstance(got, dict) and set(got) == set(expected)
                and all(close(got[k], expected[k], tolerance) for k in expected))
    return got == expected


def describe(value, digits=6, depth=0):
    """A value as a message shows it: floats to `digits` significant figures (None: every
    figure that tells it apart), long text cut, nesting deeper than MAX_DEPTH left out.

    >>> describe([0.1 + 0.2, -1.5, "a"]), describe(0.1 + 0.2, None)
    ("[0.3, -1.5, 'a']", '0.30000000000000004')
    """
    if isinstance(value, float) and math.isfinite(value) and digits is not None:
        return f"{value:.{digits}g}"
    if isinstance(value, (list, tuple, dict)) and depth >= MAX_DEPTH:
        return "…（嵌套太深，后面省略）"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe(v, digits, depth + 1) for v in value[:MAX_ITEMS])
        if len(value) > MAX_ITEMS:
            inner += f", …（共 {len(value)} 项）"
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{describe(k, digits, depth + 1)}: {describe(v, digits, depth + 1)}"
                               for k, v in value.items()) + "}"
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


# Characters that look like ASCII letters in an editor but make another name: the zero-width and
# other invisible format characters, and Cyrillic and Greek letters drawn like Latin ones.
INVISIBLE = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e"}
LOOKS_LATIN = dict(zip("аеорсхуіјѕԁһӏАВЕКМНОРСТХІЈЅαονρτυκιΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
                       "aeopcxyijsdhlABEKMHOPCTXIJSaovptukiABEZHIKMNOPTYX"))


def _lookalike(name, ns):
    """A sentence about a name of the student's that reads as `name` but is not (a Cyrillic «е»,
    a zero-width joiner inside it), or ''."""
    for other in ns:
        if not isinstance(other, str) or other.isascii():
            continue
        if "".join(LOOKS_LATIN.get(c, c) for c in other if c not in INVISIBLE) != name:
            continue
        odd = "、".join(f"「{c}」（U+{ord(c):04X}，看不见的字符）" if c in INVISIBLE else
                        f"「{c}」（U+{ord(c):04X}，长得像英文字母 {LOOKS_LATIN[c]}）" for c in other if not c.isascii())
        return (f"你的代码定义了一个看起来一样的名字，但里面有 {odd}：Python 把它当成另一个名字。"
                f"把这个名字删掉，用英文键盘重新敲一遍 `{name}`。")
    return ""


def _pair(got, expected):
    """Both values at a precision where they differ (six figures, or all of them)."""
    for digits in (6, None):
        a, b = describe(got, digits), describe(expected, digits)
        if a != b:
            return a, b
    return a, b


def _line(tb, filename):
    """The innermost line of `filename` in a traceback (None if it never ran there)."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _done(index):
    return f"前 {index} 个检查都对了。" if index else ""


def _raised(e, filename):
    """What the student's code raised on a case, for the message: (text, line or None)."""
    line = _line(e.__traceback__, filename) if filename else None
    if isinstance(e, SystemExit):
        return "SystemExit（函数里调用了 exit()，检查拿不到它的结果）", line
    return f"{type(e).__name__}: {e}", line


# What a student's function may raise and the verdict reports. Not BaseException as a whole:
# the browser's time limit (bridge.TimeUp) must go through.
STUDENT_ERRORS = (Exception, SystemExit, KeyboardInterrupt, GeneratorExit)


def verdict(ns, check, cases, filename=None, settle=lambda: None):
    """Check the student's code, whose run left the names `ns`, against `cases`.

    Every case is computed first; then `settle()` (the runtime puts back what the student's
    functions changed while they ran: a patched `math.isclose` or `close`) and only then are
    the results compared. Returns {"passed", "checked" (cases that passed), "total", "message"
    (Chinese, for the student), "failure"}. The failure is None, or the first thing that is
    wrong: its "kind" ("missing", "error" or "wrong"), the case's "index", "seen", "input" (as
    shown), and "expected" and "got" (for "wrong") or "error" and "line" (the innermost line of
    `filename` in the traceback, for "error").
    """
    total = len(cases)
    tolerance = check.get("tolerance", DEFAULT_TOLERANCE)
    show = check.get("show") or describe
    missing = [name for name in check.get("defines", ()) if name not in ns]
    if missing:
        names = "、".join(f"`{name}`" for name in missing)
        alike = [_lookalike(name, ns) for name in missing]
        return {"passed": False, "checked": 0, "total": total, "failure": {"kind": "missing", "names": missing},
                "message": f"还没有找到 {names}：任务要求你的代码定义它。" + "".join(a for a in alike if a)}
    you = student(ns)
    results = []  # (got, None) or (None, (error text, line)), up to the first error
    for case in cases:
        try:
            results.append((check["result"](you, case["input"]), None))
        except STUDENT_ERRORS as e:  # the student's code failed on this case: said below, with where
            results.append((None, _raised(e, filename)))
            break
    settle()
    for index, (case, (got, raised)) in enumerate(zip(cases, results)):
        shown = show(case["input"])
        unseen = "" if case["seen"] else "（这是任务里没有给出的输入）"
        failure = {"index": index, "seen": case["seen"], "input": shown}
        if raised is None:
            try:
                right = close(got, case["expected"], tolerance)
            except STUDENT_ERRORS as e:  # a result whose __len__ or __eq__ raises
                raised = _raised(e, filename)
        if raised is not None:
            error, line = raised
            where = f"（第 {line} 行）" if line else ""
            failure.update(kind="error", error=error, line=line)
            return {"passed": False, "checked": index, "total": total, "failure": failure,
                    "message": f"{_done(index)}第 {index + 1} 个检查出错{unseen}：算 {shown} 时，"
                               f"你的代码抛出 {error}{where}。"}
        if not right:
            try:
                got_text, expected_text = _pair(got, case["expected"])
            except STUDENT_ERRORS:  # a value nested too deep to print, or whose repr raises
                got_text, expected_text = "（一个无法显示的值）", describe(case["expected"])
            failure.update(kind="wrong", expected=expected_text, got=got_text)
            return {"passed": False, "checked": index, "total": total, "failure": failure,
                    "message": f"{_done(index)}第 {index + 1} 个检查不对{unseen}：{shown} 应为 {expected_text}，"
                               f"你的代码给出 {got_text}。"}
    unseen = sum(1 for case in cases if not case["seen"])
    among = f"（其中 {unseen} 个是任务里没有给出的输入）" if unseen else ""
    return {"passed": True, "checked": total, "total": total, "failure": None,
            "message": f"全部 {total} 个检查都通过了{among}。"}
