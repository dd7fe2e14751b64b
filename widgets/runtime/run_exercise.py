"""A student's exercise code, run in the browser's Python: worker.js imports it as `_cw_run`.

run() executes the code in a namespace of its own (the exercise's given names defined), sends
what it prints to `emit` as it is printed, and, when the code ran to the end, checks it with
checker.py (the same check the build proved the answer passes). An error comes back as a
traceback of the student's own lines only, with one line of Chinese that says what usually
causes it: a full-width character typed by a Chinese input method, a missing colon, an
indentation slip, a name not defined, a function that still returns None.

Standard library only: the build reads this file's imports to choose what the site's
trimmed standard library holds (course/stdlib.py). Modules outside it are the worker's
business: missing_modules() names those a run needs, and the worker adds the full archive.
"""
import ast
import importlib.util
import json
import sys
import traceback

import _cw_checker as checker

FILENAME = "你的代码"  # what a traceback calls the student's code
MAX_OUTPUT = 50_000  # characters of output shown; the rest is counted, not sent
RECURSION_LIMIT = 500  # deep enough for any exercise, shallow enough for the browser's stack

FULL_WIDTH = {"（": "(", "）": ")", "：": ":", "，": ",", "“": '"', "”": '"', "‘": "'", "’": "'",
              "；": ";", "。": ".", "【": "[", "】": "]", "！": "!", "？": "?", "＝": "=", "＋": "+",
              "－": "-", "＊": "*", "／": "/", "＜": "<", "＞": ">", "、": ",", "　": " ", "［": "[",
              "］": "]", "｛": "{", "｝": "}", "《": "<", "》": ">"}


class Output:
    """sys.stdout and sys.stderr during a run: text goes to `emit(stream, text)` as it is
    written, until MAX_OUTPUT characters have gone."""

    def __init__(self, emit, stream, budget):
        self.emit, self.stream, self.budget = emit, stream, budget

    def write(self, text):
        if self.budget["left"] > 0:
            piece = text[: self.budget["left"]]
            self.budget["left"] -= len(piece)
            self.emit(self.stream, piece)
            if self.budget["left"] <= 0:
                self.emit("note", f"（输出超过 {MAX_OUTPUT:,} 个字符，后面的不再显示；代码还在继续运行。）\n")
        return len(text)

    def flush(self):
        pass


class Discard:
    def write(self, text):
        return len(text)

    def flush(self):
        pass


def _no_input(prompt=""):
    raise RuntimeError("练习里不能用 input()：把要用的值直接写在代码里。")


def imported_modules(code):
    """The top-level modules the code imports by name (none when it is not valid Python).

    >>> sorted(imported_modules("import fractions, os.path\\nfrom statistics import mean"))
    ['fractions', 'os', 'statistics']
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def missing_modules(code):
    """Standard modules the code imports that this Python cannot find yet (the site's trimmed
    archive lacks them): the worker then adds the full archive before the run."""
    return sorted(name for name in imported_modules(code)
                  if name in sys.stdlib_module_names and importlib.util.find_spec(name) is None)


def add_archive(path):
    """Put a standard-library archive on the path (after the trimmed one). A new path entry
    needs no cache invalidation (importlib.invalidate_caches() would import importlib.metadata,
    which the trimmed archive lacks)."""
    if path not in sys.path:
        sys.path.append(path)


def _full_width(error):
    """(character, ASCII replacement) when a SyntaxError is a full-width character, else None."""
    for char in error.text or "":
        if char in FULL_WIDTH:
            return char, FULL_WIDTH[char]
    return None


def _column(error, char):
    """The 1-based column of `char` on the error's line."""
    text = error.text or ""
    return text.index(char) + 1 if char in text else error.offset


def explain_syntax(error):
    """One line of Chinese for a SyntaxError (IndentationError and TabError included)."""
    line = error.lineno
    found = _full_width(error) if "character" in (error.msg or "") or "invalid" in (error.msg or "") else None
    if found:
        char, ascii_char = found
        shown = "全角空格" if char == "　" else f"「{char}」"
        return (f"第 {line} 行第 {_column(error, char)} 列是中文输入法打出的全角符号 {shown}：代码里的括号、"
                f"冒号、逗号和引号都要用半角（英文）符号，把它换成「{ascii_char}」。")
    if isinstance(error, TabError):
        return f"第 {line} 行的缩进混用了 Tab 和空格：统一用空格（每层 4 个）。"
    if isinstance(error, IndentationError):
        if "expected an indented block" in error.msg:
            return f"第 {line} 行应该缩进：以冒号结尾的那一行下面，代码要往里缩 4 个空格。"
        if "unexpected indent" in error.msg:
            return f"第 {line} 行多缩进了：它和上一行属于同一块代码，应该对齐。"
        return f"第 {line} 行的缩进和前面对不上：同一块代码要对齐，每层缩进 4 个空格。"
    if "expected ':'" in error.msg:
        return f"第 {line} 行末尾少了冒号「:」：def、if、for、while、else 这样的行要以半角冒号结尾。"
    if "was never closed" in error.msg or "unmatched" in error.msg or "does not match" in error.msg:
        return f"第 {line} 行附近的括号没有配对：数一数左括号和右括号。"
    return f"第 {line} 行不是合法的 Python（{error.msg}）。"


def explain(error):
    """One line of Chinese for an error raised while the code ran, or '' when there is none to add."""
    if isinstance(error, RecursionError):
        return "递归太深：函数一直在调用自己。检查停下来的条件（比如 n == 0 时直接返回）。"
    if isinstance(error, ModuleNotFoundError):
        return f"浏览器里的 Python 只有标准库，没有 {error.name}。"
    if isinstance(error, NameError):
        return (f"名字 {error.name} 还没有定义：检查拼写（大小写不同就是不同的名字），以及它是否在使用之前就赋值了。"
                if getattr(error, "name", None) else "")
    if isinstance(error, ZeroDivisionError):
        return "除数是 0。"
    if isinstance(error, TypeError) and ("NoneType" in str(error) or "ellipsis" in str(error)):
        return "有个值是 None 或 ...：常见的原因是函数还没有 return（起始代码里的 ... 还没换成你的代码）。"
    if isinstance(error, IndexError):
        return "下标超出了列表的长度：长度为 n 的列表，下标只能是 0 到 n-1。"
    return ""


def _own_frames(tb):
    """The traceback's frames in the student's code (the runtime's own frames left out)."""
    return [frame for frame in traceback.extract_tb(tb) if frame.filename == FILENAME]


def describe_error(error, source_lines):
    """{"type", "line", "text" (the traceback as Python prints it, the student's frames only),
    "hint" (Chinese, maybe '')}."""
    if isinstance(error, SyntaxError):
        line = error.lineno
        text = "".join(traceback.format_exception_only(type(error), error))
        return {"type": type(error).__name__, "line": line, "text": text, "hint": explain_syntax(error)}
    frames = _own_frames(error.__traceback__)
    lines = ["Traceback (most recent call last):\n"]
    for frame in frames[-20:]:  # a runaway recursion repeats one frame; the last ones say enough
        where = f", in {frame.name}" if frame.name != "<module>" else ""
        lines.append(f'  File "{FILENAME}", line {frame.lineno}{where}\n')
        if frame.lineno and 0 < frame.lineno <= len(source_lines):
            lines.append(f"    {source_lines[frame.lineno - 1].strip()}\n")
    if len(frames) > 20:
        lines.insert(1, f"  （前面还有 {len(frames) - 20} 层调用，省略）\n")
    lines += traceback.format_exception_only(type(error), error)
    return {"type": type(error).__name__, "line": frames[-1].lineno if frames else None,
            "text": "".join(lines), "hint": explain(error)}


def run(code, given_json, check_json, emit):
    """Run the student's `code`, then check it. `given_json`: the names defined for it;
    `check_json`: {"source", "file", "line", "cases"}; `emit(stream, text)` receives output as it
    is printed ("stdout", "stderr" or "note"). Returns JSON text:
    {"ran": bool (to the end), "error": describe_error() or None, "verdict": checker.verdict() or None}."""
    source_lines = code.splitlines()
    try:
        compiled = compile(code, FILENAME, "exec")
    except SyntaxError as e:
        return json.dumps({"ran": False, "error": describe_error(e, source_lines), "verdict": None},
                          ensure_ascii=False)
    ns = {"__name__": "__main__", "input": _no_input, **json.loads(given_json)}
    budget = {"left": MAX_OUTPUT}
    saved = sys.stdout, sys.stderr, sys.getrecursionlimit()
    sys.stdout, sys.stderr = Output(emit, "stdout", budget), Output(emit, "stderr", budget)
    sys.setrecursionlimit(RECURSION_LIMIT)
    error = None
    try:
        exec(compiled, ns)
    except SystemExit:  # exit() ends a program normally: the check still runs
        emit("note", "（代码调用了 exit()，运行到这里结束。）\n")
    except Exception as e:  # the student's code failed: told below, with its own lines
        error = describe_error(e, source_lines)
    finally:
        sys.stdout, sys.stderr = saved[0], saved[1]
    verdict = None
    if error is None:
        spec = json.loads(check_json)
        sys.stdout = sys.stderr = Discard()  # what the code prints while checked is not the student's run
        try:
            check = checker.load_check(spec["source"], spec["file"], spec["line"])
            verdict = checker.verdict(ns, check, spec["cases"], FILENAME)
        finally:
            sys.stdout, sys.stderr = saved[0], saved[1]
    sys.setrecursionlimit(saved[2])
    return json.dumps({"ran": error is None, "error": error, "verdict": verdict}, ensure_ascii=False)
