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
import itertools
import json
import math
import os
import re
import sys
import traceback
import warnings

import _cw_checker as checker
from _cw_bridge import TimeUp

FILENAME = "你的代码"  # what a traceback calls the student's code
RECURSION_LIMIT = 500  # deep enough for any exercise, shallow enough for the browser's stack
# The most a run's own sys.setrecursionlimit() may ask for: endless recursion under a limit of 5,000
# overflowed the browser's stack in Chromium (a crash of Python itself, not a RecursionError); 3,000 held.
MAX_RECURSION_LIMIT = 1000

FULL_WIDTH = {"（": "(", "）": ")", "：": ":", "，": ",", "“": '"', "”": '"', "‘": "'", "’": "'",
              "；": ";", "。": ".", "【": "[", "】": "]", "！": "!", "？": "?", "＝": "=", "＋": "+",
              "－": "-", "＊": "*", "／": "/", "＜": "<", "＞": ">", "、": ",", "　": " ", "［": "[",
              "］": "]", "｛": "{", "｝": "}", "《": "<", "》": ">"}


class Output:
    """sys.stdout and sys.stderr during a run: text goes to `emit(stream, text)` as it is
    written. The cap on how much is shown lives in worker.js, out of the student's reach."""

    def __init__(self, emit, stream):
        self.emit, self.stream = emit, stream

    def write(self, text):
        if text:  # an empty write shows nothing, and a loop of them must not flood the page
            self.emit(self.stream, str(text))
        return len(text)

    def flush(self):
        pass


class Discard:
    def write(self, text):
        return len(text)

    def flush(self):
        pass


# The most numbers one range() may hold in a run. A built-in fed a huge range (sum(range(10**11)))
# is one long C call: no Python bytecode runs, so the time limit inside Python cannot end it, and
# WebKit (Safari, every iOS browser) cannot terminate a worker busy in WebAssembly: the core stayed
# busy after the limit, after 停止, after leaving the page. 10**8 numbers take seconds, not hours.
MAX_RANGE = 10 ** 8
_range = range


class _RangeType(type):
    def __instancecheck__(cls, value):
        return isinstance(value, _range)

    def __subclasscheck__(cls, other):
        return issubclass(other, _range)


class GuardedRange(metaclass=_RangeType):
    """range as a run's code sees it: the same range objects, but one of more than MAX_RANGE numbers
    is refused with a Chinese explanation (isinstance(x, range) still works)."""

    def __new__(cls, *args):
        numbers = _range(*args)
        try:
            size = len(numbers)
        except OverflowError:  # more than sys.maxsize
            size = None
        if size is None or size > MAX_RANGE:
            count = f"{size:,}" if size is not None else "多得数不过来"
            raise ValueError(f"range 里有 {count} 个数，太多了：网页里的 Python 一次最多数 {MAX_RANGE:,} 个"
                             f"（再多，一次 sum() 或 list() 要算几分钟，而且在 Safari 里按「停止」也停不下来）。"
                             f"把范围缩小，或者用公式直接算出结果。")
        return numbers


GuardedRange.__name__ = GuardedRange.__qualname__ = "range"


# Other long C calls, guarded the same way (WebKit cannot end them either). An integer too big to
# work with at once is refused before it is computed: run() sends the code's `**` and `<<` (and
# pow(), math.factorial, comb and perm) through the checks below. A 2^21-bit integer (about
# 630,000 digits) takes a fraction of a second. CPython's power checks for the time limit between
# its multiplications, not inside one: `10**10**7` was ended by the limit and told as an endless
# loop, and each of its last squarings is one C call of seconds (a 3.3-million-bit squaring took
# 1.2 s natively here; the last of 10**10**7 squares 16.6 million bits, some 15 s by Karatsuba),
# which no limit and, in WebKit, no 停止 can cut short. Endless C iterators (itertools.count,
# cycle, repeat without a count, iter(f, sentinel)) and math.prod become Python loops, which the
# time limit and 停止 end in every engine. `*` is left alone: checking every
# product made loops of numbers 2.5 times slower, a huge repeated sequence fails at once for want
# of memory (a 32-bit WebAssembly address space), and a product of two huge integers needs them
# made first.
MAX_INT_BITS = 2 ** 21
_LOG10_2 = 0.30103


def _too_big(bits):
    most = int(MAX_INT_BITS * _LOG10_2)
    digits = f"约 {int(bits * _LOG10_2) + 1:,} 位" if bits < 10 ** 300 else "位数多得数不过来"
    return OverflowError(f"结果是一个{digits}的整数，太大了：网页里的 Python 一次最多算约 {most:,} 位的整数"
                         f"（再大，一次乘方就要算几分钟，而且在 Safari 里按「停止」也停不下来）。"
                         f"换小一点的数；只要最后几位的话，用 pow(a, b, m) 直接算余数。")


def _check_pow(base, exp):
    """Refuse base ** exp when it would be an integer over MAX_INT_BITS (it has at least the bits counted)."""
    if (isinstance(base, int) and isinstance(exp, int) and exp > 1
            and (abs(base).bit_length() - 1) * exp > MAX_INT_BITS):
        raise _too_big((abs(base).bit_length() - 1) * exp)


def _check_lshift(a, b):
    if isinstance(a, int) and isinstance(b, int) and a and b > 0 and a.bit_length() + b > MAX_INT_BITS:
        raise _too_big(a.bit_length() + b)


def guarded_pow(base, exp, mod=None):
    """pow() and `**` as a run sees them (a power modulo m stays small and is never refused)."""
    if mod is not None:
        return pow(base, exp, mod)
    _check_pow(base, exp)
    return base ** exp


def guarded_lshift(a, b):
    _check_lshift(a, b)
    return a << b


def checked(check, current, value):
    """The value of `x **= value` (or `<<=`) once check(x, value) has not refused it."""
    check(current, value)
    return value


def _log2_factorial(n):
    try:
        return math.lgamma(n + 1) / math.log(2)
    except OverflowError:  # n past a float's range
        return math.inf


def _guarded_factorial(n):
    if isinstance(n, int) and n > 1 and _log2_factorial(n) > MAX_INT_BITS:
        raise _too_big(_log2_factorial(n))
    return _factorial(n)


def _guarded_perm(n, k=None):
    if isinstance(n, int) and isinstance(k, (int, type(None))) and 0 < n and (k is None or 0 <= k <= n):
        bits = _log2_factorial(n) - _log2_factorial(n - (n if k is None else k))
        if bits > MAX_INT_BITS:
            raise _too_big(bits)
    return _perm(n, k)


def _guarded_comb(n, k):
    # comb works through numbers as big as perm(n, min(k, n - k)) on the way: that is what takes the time.
    if isinstance(n, int) and isinstance(k, int) and 0 <= k <= n:
        bits = _log2_factorial(n) - _log2_factorial(n - min(k, n - k))
        if bits > MAX_INT_BITS:
            raise _too_big(bits)
    return _comb(n, k)


def _guarded_prod(iterable, /, *, start=1):
    result = start
    for item in iterable:  # a Python loop: the time limit ends it between two products
        result = result * item
    return result


def _interruptible(iterator):
    """The items of a C iterator, handed out by a Python loop: the time limit can end a built-in
    (sum, max, list) that consumes it, even in WebKit."""
    for item in iterator:
        yield item


def _count(*args, **kwargs):
    return _interruptible(_itertools_count(*args, **kwargs))


def _cycle(iterable):
    return _interruptible(_itertools_cycle(iterable))


def _repeat(*args, **kwargs):
    made = _itertools_repeat(*args, **kwargs)
    return _interruptible(made) if len(args) < 2 and "times" not in kwargs else made


def guarded_iter(*args):
    """iter(), with iter(f, sentinel) handed out by a Python loop (f = int never gives 1)."""
    made = iter(*args)
    return _interruptible(made) if len(args) == 2 else made


_factorial, _perm, _comb = math.factorial, math.perm, math.comb
_itertools_count, _itertools_cycle, _itertools_repeat = itertools.count, itertools.cycle, itertools.repeat
# Put into math and itertools while a run's code and its check run (run() puts the originals back).
GUARDED_MODULES = ((math, {"factorial": _guarded_factorial, "perm": _guarded_perm, "comb": _guarded_comb,
                           "prod": _guarded_prod}),
                   (itertools, {"count": _count, "cycle": _cycle, "repeat": _repeat}))
ORIGINALS = [(module, name, getattr(module, name)) for module, names in GUARDED_MODULES for name in names]
for _fn, _name in [(fn, name) for _, names in GUARDED_MODULES for name, fn in names.items()] + [
        (guarded_pow, "pow"), (guarded_iter, "iter")]:
    _fn.__name__ = _fn.__qualname__ = _name
# The names the rewritten code calls, in its namespace (dunders: never mangled in a class body,
# never one of the student's names to the checker).
GUARD_NAMES = {"__cw_pow__": guarded_pow, "__cw_lshift__": guarded_lshift, "__cw_check_pow__": _check_pow,
               "__cw_check_lshift__": _check_lshift, "__cw_checked__": checked}
_GUARDED_OPS = {ast.Pow: ("__cw_pow__", "__cw_check_pow__"), ast.LShift: ("__cw_lshift__", "__cw_check_lshift__")}


def _guard(node):
    """`node`, or the call that guards it: `a ** b` and `a << b` become calls to the guards, and in
    `x **= b` and `x <<= b` (x a plain name) the value is checked first. The new nodes stand at
    the old one's place, so a traceback names the same line."""
    guard = _GUARDED_OPS.get(type(getattr(node, "op", None)))
    if guard is None:
        return node
    if isinstance(node, ast.BinOp):
        new = ast.Call(ast.Name(guard[0], ast.Load()), [node.left, node.right], [])
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        node.value = new = ast.Call(ast.Name("__cw_checked__", ast.Load()), [
            ast.Name(guard[1], ast.Load()), ast.Name(node.target.id, ast.Load()), node.value], [])
    else:
        return node
    for made in ast.walk(new):
        if not hasattr(made, "lineno"):
            ast.copy_location(made, node)
    return node if isinstance(node, ast.AugAssign) else new


def guarded_code(code):
    """The code compiled with its `**` and `<<` going through the guards. Code without them (most)
    is compiled as it is: rewriting costs a walk over every node (a 200,000-character program:
    0.2 s to compile, 1.3 s with the walk). A loop, not a recursive NodeTransformer: `2 ** 2 ** ...`
    nests as deep as it is long."""
    if "**" not in code and "<<" not in code:
        return compile(code, FILENAME, "exec")
    tree = ast.parse(code, FILENAME)
    todo = [tree]
    while todo:
        node = todo.pop()
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        value[i] = _guard(item)
                        todo.append(value[i])
            elif isinstance(value, ast.AST):
                new = _guard(value)
                setattr(node, field, new)
                todo.append(new)
    return compile(tree, FILENAME, "exec")


class _OsExit(SystemExit):
    """os._exit() called by the student's code: it ends their code, not the browser's Python."""


def _os_exit(status=0):
    raise _OsExit(status)


def _no_input(prompt=""):
    raise RuntimeError("练习里不能用 input()：把要用的值直接写在代码里。")


def imported_modules(code):
    """The top-level modules the code imports by name (none when it is not valid Python), and
    pydoc where it calls help().

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
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "help":
            names.add("pydoc")  # help() imports it when called
    return names


# The taint rule. clean_state.py puts back what a run changes through names (a module's or a
# class's attributes, sys's lists, files, filters, handlers); it cannot put back an object changed
# in place (a function's __code__), JavaScript run inside the worker (a replaced onmessage or
# postMessage, a nested Worker) or C state (decimal's context, an asyncio loop that ignores
# signals). Every way to those goes through a module outside SAFE_MODULES or a name in TAINTING
# (a frame, a dunder of introspection, exec, getattr with any name, the runtime's _cw_ modules),
# so a run whose code holds one is "tainted": its worker runs nothing more after it (worker.js
# tells the page before the code starts, so the code cannot take it back). Generous on purpose: a
# false alarm only costs the next run a fresh Python (the spare, where there is one).
SAFE_MODULES = {"__future__", "math", "cmath", "random", "statistics", "fractions", "itertools", "functools",
                "collections", "string", "re", "time", "json", "heapq", "bisect", "typing", "dataclasses",
                "copy", "operator", "numbers", "array", "textwrap", "datetime", "pprint", "enum", "abc"}
SAFE_DUNDERS = {"__init__", "__name__", "__main__", "__repr__", "__str__", "__format__", "__len__", "__iter__",
                "__next__", "__getitem__", "__setitem__", "__contains__", "__eq__", "__ne__", "__lt__", "__le__",
                "__gt__", "__ge__", "__hash__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                "__truediv__", "__rtruediv__", "__floordiv__", "__mod__", "__pow__", "__neg__", "__pos__",
                "__abs__", "__bool__", "__call__", "__enter__", "__exit__", "__doc__", "__float__", "__int__",
                "__index__", "__matmul__", "__slots__", "__post_init__", "__class__", "__qualname__", "__all__"}
TAINTING = {"exec", "eval", "compile", "getattr", "setattr", "delattr", "vars", "locals", "globals", "breakpoint",
            "open", "memoryview"}


def _tainting(name):
    """Whether an identifier (or a string that could be one) reaches what clean_state cannot put back."""
    return (name in TAINTING or name.startswith("_cw_") or "frame" in name
            or (len(name) > 4 and name.startswith("__") and name.endswith("__") and name not in SAFE_DUNDERS))


def taint(code):
    """Why the code may change this Python beyond what clean_state puts back ('' if it cannot).

    >>> taint("import math\\ndef relu(z):\\n    return max(0.0, z)\\n"), taint("import js\\n")
    ('', '导入了 js')
    >>> taint("f.__code__ = g.__code__"), taint("getattr(f, name)")
    ('用到了 __code__', '用到了 getattr')
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ""  # it does not compile, so it does not run
    for node in ast.walk(tree):
        modules = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                   [node.module or "."] if isinstance(node, ast.ImportFrom) else [])
        for module in modules:
            if node.__class__ is ast.ImportFrom and node.level or module.split(".")[0] not in SAFE_MODULES:
                return f"导入了 {module}"
        if isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.keyword):
            name = node.arg or ""
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value if node.value.isidentifier() else ""
        elif isinstance(node, ast.alias):
            name = node.asname or ""
        else:
            continue
        if name and _tainting(name):
            return f"用到了 {name}"
    return ""


def missing_modules(code):
    """Standard modules the code imports that this Python cannot find yet (the site's trimmed
    archive lacks them): the worker then adds the full archive before the run."""
    return sorted(name for name in imported_modules(code)
                  if name in sys.stdlib_module_names and importlib.util.find_spec(name) is None)


def unavailable(code, names, size=""):
    """The result of a run whose standard modules `names` (comma-separated) could not be
    downloaded (offline): the run's own error, at the line that imports the first of them. Python
    itself is fine, and the same code runs once the download works."""
    wanted = names.split(",")
    line = None
    try:
        tree = ast.parse(code)
    except SyntaxError:
        tree = None
    for node in ast.walk(tree) if tree else ():
        imported = ([alias.name for alias in node.names] if isinstance(node, ast.Import) else
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        if any(name.split(".")[0] in wanted for name in imported) and (line is None or node.lineno < line):
            line = node.lineno
    listed = "、".join(wanted)
    hint = (f"{listed} 属于 Python 的标准库，但网页里的 Python 为了下载快只带了常用的模块，其余的要在第一次用到时"
            f"下载完整的标准库{f'（{size}）' if size else ''}：这次没能下载（网络断了？）。连上网后再运行一次即可。")
    error = {"type": "ModuleNotFoundError", "line": line, "hint": hint,
             "text": f"ModuleNotFoundError: {listed} 要联网下载（完整的标准库没能下载）\n"}
    return json.dumps({"ran": False, "error": error, "verdict": None, "timeout": False, "checking": None},
                      ensure_ascii=False)


def add_archive(path):
    """Put a standard-library archive on the path (after the trimmed one). A new path entry
    needs no cache invalidation (importlib.invalidate_caches() would import importlib.metadata,
    which the trimmed archive lacks)."""
    if path not in sys.path:
        sys.path.append(path)


# Characters that look like Python's own but are not, as they come from a web page (this site's
# widgets print U+2212 for minus): the character -> (how it is named, what to type instead).
LOOKALIKE = {"\u2212": ("减号的数学写法「−」", "-"), "\u00d7": ("乘号「×」", "*"), "\u00f7": ("除号「÷」", "/"),
             "\u00a0": ("一个不换行空格（从网页复制时常带进来，看起来和空格一样）", " "),
             "\u200b": ("一个看不见的零宽空格", ""), "\ufeff": ("一个看不见的字节顺序标记", "")}
_INVALID = re.compile(r"invalid (?:non-printable )?character.*?U\+([0-9A-Fa-f]{4,6})")
_TRIPLE = ("'" * 3, '"' * 3)


def _ascii_for(char):
    """(how the character is named, what to type instead) when it is a known slip, else None."""
    if char in FULL_WIDTH:
        shown = "全角空格" if char == "　" else f"「{char}」"
        return f"中文输入法打出的全角符号 {shown}", FULL_WIDTH[char]
    if char in LOOKALIKE:
        return LOOKALIKE[char]
    if 0xFF01 <= ord(char) <= 0xFF5E:  # full-width digits and letters: U+FF01.. maps onto ASCII !..~
        return f"全角字符「{char}」", chr(ord(char) - 0xFEE0)
    return None


def _split(line, quote=None):
    """([(column, character)] of a line outside its strings and its comment, the triple quote
    still open at its end or None). `quote`: the triple-quoted string the line starts inside."""
    code = []
    i = 0
    while i < len(line):
        char = line[i]
        if quote:
            if char == "\\":
                i += 1
            elif line.startswith(quote, i):
                i += len(quote) - 1
                quote = None
        elif char == "#":
            break
        elif char in "'\"":
            quote = line[i:i + 3] if line[i:i + 3] in _TRIPLE else char
            i += len(quote) - 1
        else:
            code.append((i + 1, char))
        i += 1
    return code, quote if quote in _TRIPLE else None


def _code_part(line, quote=None):
    """(column, character) of a line outside its strings and its comment: a full-width comma in
    `# 负数变成 0，其余原样返回` or in "好吃，不好吃" is no error; nor one in a triple-quoted string
    begun on an earlier line (`quote`)."""
    return _split(line, quote)[0]


def _quote_at(source_lines, line):
    """The triple-quoted string that line `line` (from 1) of the code starts inside, or None."""
    quote = None
    for text in source_lines[:max(line - 1, 0)]:
        quote = _split(text, quote)[1]
    return quote


def _slip(error, source_lines=()):
    """(column, character, name, replacement) of the character a SyntaxError is about, or None."""
    text = error.text or ""
    match = _INVALID.search(error.msg or "")
    if match:  # Python names the character: that one, where it says
        char = chr(int(match.group(1), 16))
        found = _ascii_for(char)
        if not found:
            return None
        offset = error.offset or 0
        column = offset if 0 < offset <= len(text) and text[offset - 1] == char else None
        return column or next((c for c, ch in _code_part(text) if ch == char), offset), char, *found
    if "invalid" in (error.msg or ""):  # "invalid syntax": a slip in the code, not in a string or comment
        line = error.lineno or 0
        if 0 < line <= len(source_lines):  # the line as written, and whether a string begun above runs on in it
            text, quote = source_lines[line - 1], _quote_at(source_lines, line)
        else:
            quote = None
        for column, char in _code_part(text, quote):
            found = _ascii_for(char)
            if found:
                return column, char, *found
    return None


def explain_syntax(error, source_lines=()):
    """One line of Chinese for a SyntaxError (IndentationError and TabError included)."""
    line = error.lineno or _nul_line(source_lines)
    if "null bytes" in (error.msg or ""):
        where = f"第 {line} 行" if line else "代码里"
        return f"{where}有一个看不见的空字符（NUL，U+0000），Python 不认它：删掉它（从别处复制来的文字有时带着它）。"
    found = _slip(error, source_lines)
    if found:
        column, char, name, ascii_char = found
        if char in FULL_WIDTH:
            return (f"第 {line} 行第 {column} 列是{name}：代码里的括号、冒号、逗号和引号都要用半角（英文）"
                    f"符号，把它换成「{ascii_char}」。")
        fix = f"把它换成「{ascii_char}」" if ascii_char.strip() else ("删掉它，重新敲一个空格" if ascii_char else "删掉它")
        return (f"第 {line} 行第 {column} 列是{name}（U+{ord(char):04X}）：Python 不认它，{fix}。"
                f"从网页复制来的代码常带着这样的字符。")
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
    return f"{f'第 {line} 行' if line else '这段代码'}不是合法的 Python（{error.msg}）。"


def _nul_line(source_lines):
    """The first line (from 1) that holds a NUL character, or None."""
    return next((i for i, text in enumerate(source_lines, 1) if "\0" in text), None)


def _name(name):
    """A name as a hint quotes it: a name of a million characters is cut."""
    return name if len(name) <= 40 else name[:39] + "…"


def explain(error):
    """One line of Chinese for an error raised while the code ran, or '' when there is none to add."""
    if isinstance(error, RecursionError):
        return "递归太深：函数一直在调用自己。检查停下来的条件（比如 n == 0 时直接返回）。"
    if isinstance(error, ModuleNotFoundError):
        name = str(error.name or "")
        if name.split(".")[0] in sys.stdlib_module_names:  # imported by a module or by help(), not by the code
            return (f"{_name(name)} 属于 Python 的标准库，但网页里的 Python 为了下载快只带了常用的模块："
                    f"在代码里直接写 `import {_name(name.split('.')[0])}`，运行时会自动下载完整的标准库。")
        return f"浏览器里的 Python 只有标准库，没有 {_name(name)}（它要另外安装）。"
    if isinstance(error, RuntimeError) and "running event loop" in str(error):
        return ("网页里的 Python 已经有一个事件循环在运行，所以 asyncio.run() 在这里用不了。"
                "练习用不到协程；想试 async，请在自己电脑上的 Python 里试。")
    if isinstance(error, NameError):
        return (f"名字 {_name(error.name)} 还没有定义：检查拼写（大小写不同就是不同的名字），以及它是否在使用之前就赋值了。"
                if getattr(error, "name", None) else "")
    if isinstance(error, ZeroDivisionError):
        return "除数是 0。"
    if isinstance(error, MemoryError):
        return "内存不够：浏览器给网页里的 Python 的内存有限（最多几 GB），放不下这么大的列表、字符串或数。把数量减小。"
    if isinstance(error, OverflowError) and "index-sized" in str(error):  # 'x' * 10**10: past the 32-bit address space
        return "数太大了：网页里的 Python 是 32 位的，一个列表或字符串最多约 21 亿个元素，内存还远放不下这么多。把数量减小。"
    if isinstance(error, TypeError) and ("NoneType" in str(error) or "ellipsis" in str(error)):
        return "有个值是 None 或 ...：常见的原因是函数还没有 return（起始代码里的 ... 还没换成你的代码）。"
    if isinstance(error, IndexError):
        return "下标超出了列表的长度：长度为 n 的列表，下标只能是 0 到 n-1。"
    return ""


def _own_frames(tb):
    """The traceback's frames in the student's code (the runtime's own frames left out)."""
    return [frame for frame in traceback.extract_tb(tb) if frame.filename == FILENAME]


# What an error may show, like the output (worker.js) and the verdict (MAX_VERDICT): a message of
# ten million characters (`raise ValueError(big)`) once froze the page for seconds.
MAX_ERROR_LINE = 300  # characters of one line of the student's code in a traceback
MAX_ERROR_MESSAGE = 2_000  # characters of the exception's own text (its type and message)
MAX_HINT = 600  # characters of the Chinese line under it


def _cut(text, limit):
    """`text` cut to about `limit` characters, saying so; a final newline is kept.

    >>> _cut("x" * 10 + "\n", 4)
    'xxx…（共 11 个字符，后面省略）\n'
    """
    if len(text) <= limit:
        return text
    end = "\n" if text.endswith("\n") else ""
    return f"{text[:limit - 1]}…（共 {len(text):,} 个字符，后面省略）{end}"


def _exception_text(error):
    try:
        return "".join(traceback.format_exception_only(type(error), error))
    except Exception:  # a message whose __str__ raises is handled by traceback; anything else too
        return f"{type(error).__name__}\n"


def describe_error(error, source_lines):
    """{"type", "line", "text" (the traceback as Python prints it, the student's frames only),
    "hint" (Chinese, maybe '')}, each cut to a size the page can draw at once."""
    if isinstance(error, SyntaxError):
        line = error.lineno or _nul_line(source_lines)
        return {"type": type(error).__name__, "line": line, "text": _cut(_exception_text(error), MAX_ERROR_MESSAGE),
                "hint": _cut(explain_syntax(error, source_lines), MAX_HINT)}
    frames = _own_frames(error.__traceback__)
    lines = ["Traceback (most recent call last):\n"]
    for frame in frames[-20:]:  # a runaway recursion repeats one frame; the last ones say enough
        where = f", in {frame.name}" if frame.name != "<module>" else ""
        lines.append(f'  File "{FILENAME}", line {frame.lineno}{where}\n')
        if frame.lineno and 0 < frame.lineno <= len(source_lines):
            lines.append(f"    {_cut(source_lines[frame.lineno - 1].strip(), MAX_ERROR_LINE)}\n")
    if len(frames) > 20:
        lines.insert(1, f"  （前面还有 {len(frames) - 20} 层调用，省略）\n")
    lines.append(_cut(_exception_text(error), MAX_ERROR_MESSAGE))
    return {"type": type(error).__name__, "line": frames[-1].lineno if frames else None,
            "text": "".join(lines), "hint": _cut(explain(error), MAX_HINT)}


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """warnings.showwarning during a run: the student's line, never a file of the runtime's
    (`/home/pyodide/_cw_run.py:286` once appeared under asyncio.run's warning)."""
    where = f"（第 {lineno} 行）" if filename == FILENAME else ""
    (file or sys.stderr).write(f"{category.__name__}: {message}{where}\n")


def _capped_recursion_limit(set_limit, emit):
    """sys.setrecursionlimit as a run sees it: a limit above MAX_RECURSION_LIMIT is lowered to it,
    and the output says so (a deeper recursion would crash the browser's Python, not raise)."""
    def setrecursionlimit(limit):
        if isinstance(limit, int) and limit > MAX_RECURSION_LIMIT:
            emit("note", f"（浏览器给 Python 的栈有限：sys.setrecursionlimit({limit}) 按 {MAX_RECURSION_LIMIT} 算。）\n")
            limit = MAX_RECURSION_LIMIT
        set_limit(limit)
    return setrecursionlimit


def _exit_note(error):
    what = "os._exit()" if isinstance(error, _OsExit) else "exit()"
    return f"（代码调用了 {what}，运行到这里结束。）\n"


def _own_interrupt(error, source_lines):
    """The student's own KeyboardInterrupt (or another BaseException): about their code."""
    described = describe_error(error, source_lines)
    described["hint"] = ("代码自己抛出了 KeyboardInterrupt：在浏览器里没有人按 Ctrl+C，去掉这一行即可。"
                         if isinstance(error, KeyboardInterrupt) else
                         f"代码抛出了 {type(error).__name__}，它不是 Exception 的子类，平常的 except 接不住它。")
    return described


def run(code, given_json, check_json, emit, settle=lambda: None):
    """Run the student's `code`, then check it. `given_json`: the names defined for it;
    `check_json`: {"source", "file", "line", "cases"}; `emit(stream, text)` receives output as it
    is printed ("stdout", "stderr" or "note"); `settle()` puts back whatever the code changed in
    this Python (clean_state.py), called after the code and after the check has called it, so
    the checker and json always run as shipped. Returns JSON text: {"ran": bool (to the end),
    "error": describe_error() or None, "verdict": checker.verdict() or None, "timeout": bool
    (TimeUp: the worker's time limit ended it), and with a timeout "checking": None while the
    code itself ran, else [the case being checked (from 1), the number of cases]: the code ran
    to its end and the checks, which call it once a case, ran out of time}."""
    source_lines = code.splitlines()
    try:
        compiled = guarded_code(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        compiled = None  # compiled as written below: its error said as Python says it, with the line's text
    try:
        compiled = compiled or compile(code, FILENAME, "exec")
    except SyntaxError as e:
        return json.dumps({"ran": False, "error": describe_error(e, source_lines), "verdict": None},
                          ensure_ascii=False)
    except (ValueError, MemoryError, RecursionError) as e:  # a NUL byte; nesting too deep to compile
        return json.dumps({"ran": False, "error": describe_error(e, source_lines), "verdict": None},
                          ensure_ascii=False)
    ns = {"__name__": "__main__", "input": _no_input, "range": GuardedRange, "pow": guarded_pow, "iter": guarded_iter,
          **GUARD_NAMES, **json.loads(given_json)}
    set_limit = sys.setrecursionlimit
    saved = sys.stdout, sys.stderr, sys.getrecursionlimit(), os._exit
    error = None
    timeout = False
    verdict = None
    checking = None  # [case being checked, cases] once the check has begun

    def guarded():  # what the student's code may call; settle() puts Python's own back, so again after it
        sys.setrecursionlimit = _capped_recursion_limit(set_limit, emit)
        warnings.showwarning = _show_warning
        for module, names in GUARDED_MODULES:
            for name, fn in names.items():
                setattr(module, name, fn)

    def settled():
        settle()
        guarded()

    try:
        sys.stdout, sys.stderr = Output(emit, "stdout"), Output(emit, "stderr")
        set_limit(RECURSION_LIMIT)
        os._exit = _os_exit
        guarded()
        try:
            exec(compiled, ns)
        except SystemExit as e:  # exit() ends a program normally: the check still runs
            emit("note", _exit_note(e))
        except TimeUp:
            raise
        except Exception as e:  # the student's code failed: told below, with its own lines
            error = describe_error(e, source_lines)
        except BaseException as e:  # KeyboardInterrupt and the like, raised by the code itself
            error = _own_interrupt(e, source_lines)
        settled()
        if error is None:
            spec = json.loads(check_json)
            sys.stdout = sys.stderr = Discard()  # what the code prints while checked is not the student's run
            set_limit(RECURSION_LIMIT)
            check = checker.load_check(spec["source"], spec["file"], spec["line"])
            checking = [0, len(spec["cases"])]
            result = check["result"]

            def counted(you, case):  # how far the check got, should the time run out in it
                checking[0] += 1
                return result(you, case)
            check["result"] = counted
            verdict = checker.verdict(ns, check, spec["cases"], FILENAME, settle=settled)
    except TimeUp:
        timeout = True
    finally:
        sys.stdout, sys.stderr, os._exit = saved[0], saved[1], saved[3]
        sys.setrecursionlimit = set_limit
        for module, name, original in ORIGINALS:
            setattr(module, name, original)
        set_limit(saved[2])
    settle()
    if verdict is not None:
        verdict["message"] = _short(verdict["message"])
    return json.dumps({"ran": error is None and not timeout, "error": error, "verdict": verdict, "timeout": timeout,
                       "checking": checking if timeout else None}, ensure_ascii=False)


MAX_VERDICT = 600  # characters of a verdict: a wrong result of a million numbers is cut


def _short(text):
    return text if len(text) <= MAX_VERDICT else text[: MAX_VERDICT - 1] + "…"
