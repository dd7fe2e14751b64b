"""widgets/runtime/run_exercise.py in CPython: what a student reads after a run (the browser
runs the same file in Pyodide; tests/e2e/test_exercise_browser.py checks it there)."""
import json
import sys

import pytest
from support import ROOT

from course.widgets import load_module

RUNTIME = ROOT / "widgets" / "runtime"


@pytest.fixture(scope="module")
def run_exercise():
    load_module(RUNTIME / "checker.py", "_cw_checker")  # the names worker.js gives them in Pyodide
    load_module(RUNTIME / "bridge.py", "_cw_bridge")
    return load_module(RUNTIME / "run_exercise.py", "_cw_run")


CHECK = json.dumps({"source": "defines = ['double']\n\ndef result(you, case):\n    return you.double(case)\n",
                    "file": "exercises/x.py", "line": 1,
                    "cases": [{"input": 2, "expected": 4, "seen": True}, {"input": -3, "expected": -6, "seen": False}]})


def run(module, code, given=None):
    out = []
    result = json.loads(module.run(code, json.dumps(given or {}), CHECK, lambda s, t: out.append((s, t))))
    return result, "".join(t for s, t in out if s == "stdout"), out


def test_output_streams_while_the_code_runs_and_the_check_passes(run_exercise):
    result, stdout, pieces = run(run_exercise, "def double(x):\n    return 2 * x\nprint('a')\nprint('b', k)\n", {"k": 7})
    assert stdout == "a\nb 7\n"
    assert len(pieces) >= 2  # each write is sent as it happens, not all at the end
    assert result["ran"] and result["verdict"]["passed"]


def test_the_check_names_the_unseen_input_that_fails(run_exercise):
    result, _, _ = run(run_exercise, "def double(x):\n    return abs(2 * x)\n")
    assert not result["verdict"]["passed"]
    assert "第 2 个检查不对（这是任务里没有给出的输入）：-3 应为 -6，你的代码给出 6" in result["verdict"]["message"]


@pytest.mark.parametrize("code, line, column, char, fix", [
    ("def double(x)：\n    return 2 * x\n", 1, 14, "：", ":"),
    ("def double(x):\n    return max（0, x)\n", 2, 15, "（", "("),
    ("print(“hi”)\n", 1, 7, "“", '"'),
])
def test_full_width_punctuation_is_named_with_its_line_and_column(run_exercise, code, line, column, char, fix):
    result, _, _ = run(run_exercise, code)
    error = result["error"]
    assert not result["ran"] and error["type"] == "SyntaxError" and error["line"] == line
    assert f"第 {line} 行第 {column} 列是中文输入法打出的全角符号 「{char}」" in error["hint"]
    assert f"换成「{fix}」" in error["hint"]


@pytest.mark.parametrize("code, words", [
    ("def double(x)\n    return 2 * x\n", "少了冒号"),
    ("def double(x):\nreturn 2 * x\n", "应该缩进"),
    ("def double(x):\n    y = 1\n      return 2 * x\n", "多缩进了"),
])
def test_syntax_slips_get_one_chinese_line(run_exercise, code, words):
    result, _, _ = run(run_exercise, code)
    assert words in result["error"]["hint"]


def test_a_traceback_shows_the_students_lines_only(run_exercise):
    result, _, _ = run(run_exercise, "def double(x):\n    return 2 * y\n\ndouble(1)\n")
    error = result["error"]
    assert error["type"] == "NameError" and error["line"] == 2
    assert 'File "你的代码", line 4' in error["text"] and 'File "你的代码", line 2, in double' in error["text"]
    assert "return 2 * y" in error["text"] and "run_exercise" not in error["text"]
    assert "名字 y 还没有定义" in error["hint"]
    assert result["verdict"] is None  # no check after an error


def test_deep_recursion_raises_recursion_error_with_a_short_traceback(run_exercise):
    result, _, _ = run(run_exercise, "def f(n):\n    return f(n + 1)\n\nf(0)\n")
    error = result["error"]
    assert error["type"] == "RecursionError" and "递归太深" in error["hint"]
    assert error["text"].count("\n") < 50
    assert sys.getrecursionlimit() != run_exercise.RECURSION_LIMIT  # restored after the run


def test_empty_writes_send_nothing(run_exercise):
    """A loop of print(end='') once sent one message per write and froze the page (the cap on
    output lives in worker.js, where student code cannot raise it)."""
    _, _, pieces = run(run_exercise, "for i in range(1000):\n    print(end='')\nprint('x')\n")
    assert pieces == [("stdout", "x"), ("stdout", "\n")]


def test_input_and_exit(run_exercise):
    result, _, _ = run(run_exercise, "x = input()\n")
    assert "不能用 input()" in result["error"]["text"]
    result, _, pieces = run(run_exercise, "def double(x):\n    return 2 * x\nexit()\nprint('never')\n")
    assert result["ran"] and result["verdict"]["passed"] and any("exit()" in t for s, t in pieces)


def test_missing_modules_names_standard_modules_only(run_exercise):
    code = "import fractions\nfrom statistics import mean\nimport numpy\nimport json\n"
    assert run_exercise.imported_modules(code) == {"fractions", "statistics", "numpy", "json"}
    assert run_exercise.missing_modules(code) == []  # CPython has them all; numpy is not standard


@pytest.mark.parametrize("code, column, words", [
    ("def double(x):\n    return max(0.0 x)  # 负数变成 0，其余原样返回\n", None, None),  # the comment's comma is no slip
    ('print("好吃，不好吃" 1)\n', None, None),
    ("b = [0.0, \u22121.0]\n", 11, "减号的数学写法「−」（U+2212）"),
    ("y = 1 \u00d7 2\n", 7, "乘号「×」（U+00D7）"),
    ("def double(x):\n\u00a0\u00a0\u00a0\u00a0return 2 * x\n", 1, "不换行空格"),
    ("x = 1\u200b\n", 6, "零宽空格"),
    ("x = \uff11\uff12\n", 5, "全角字符「１」"),
])
def test_the_hint_names_the_character_at_fault_only(run_exercise, code, column, words):
    result, _, _ = run(run_exercise, code)
    hint = result["error"]["hint"]
    if words is None:
        assert "全角" not in hint, hint
    else:
        assert f"第 {column} 列是" in hint and words in hint, hint


@pytest.mark.parametrize("code, words", [
    ("def double(x):\n    exit()\n", "调用了 exit()"),
    ("def double(x):\n    raise KeyboardInterrupt\n", "KeyboardInterrupt"),
    ("def double(x):\n    import sys\n    sys.exit(0)\n", "调用了 exit()"),
])
def test_an_exit_inside_the_checked_function_is_the_students(run_exercise, code, words):
    result, _, _ = run(run_exercise, code)
    assert result["ran"] and not result["verdict"]["passed"] and words in result["verdict"]["message"]


def test_the_students_own_interrupts_and_exits_are_told_as_theirs(run_exercise):
    result, _, _ = run(run_exercise, "raise KeyboardInterrupt\n")
    assert result["error"]["type"] == "KeyboardInterrupt" and "没有人按 Ctrl+C" in result["error"]["hint"]
    result, _, _ = run(run_exercise, "raise BaseException('bye')\n")
    assert result["error"]["type"] == "BaseException" and "except 接不住" in result["error"]["hint"]
    result, _, pieces = run(run_exercise, "import os\ndef double(x):\n    return 2 * x\nos._exit(0)\nprint('never')\n")
    assert result["verdict"]["passed"] and any("os._exit()" in t for s, t in pieces)


def test_the_time_limit_raised_inside_python_ends_the_run_as_a_timeout(run_exercise):
    """worker.js's interrupt buffer raises bridge.TimeUp: not the student's error, and not
    caught by their `except Exception` or by the checker."""
    code = "from _cw_bridge import TimeUp\ntry:\n    raise TimeUp()\nexcept Exception:\n    print('caught')\n"
    result, stdout, _ = run(run_exercise, code)
    assert result["timeout"] and not result["ran"] and result["error"] is None and stdout == ""


def test_a_verdict_on_a_huge_wrong_result_is_short(run_exercise):
    result, _, _ = run(run_exercise, "def double(x):\n    return [0.0] * 10**6\n")
    assert "共 1000000 项" in result["verdict"]["message"] and len(result["verdict"]["message"]) < 400


@pytest.mark.parametrize("code", ["raise ValueError('x' * 10**7)\n", "exec('a' * 10**6)\n",
                                  "x = 1\n" + "y = (" * 1 + "'" + "z" * 10**6 + "'\n"])
def test_a_huge_error_is_cut_to_what_the_page_can_draw(run_exercise, code):
    """exercise-attacks-2.md rank 2: error text was not capped like output and the verdict."""
    result, _, _ = run(run_exercise, code)
    error = result["error"]
    assert len(error["text"]) < 5_000 and len(error["hint"]) <= run_exercise.MAX_HINT
    assert error["text"].endswith("\n") and "…" in error["text"] + error["hint"]


def test_the_recursion_limit_a_run_asks_for_is_capped_and_said(run_exercise):
    """exercise-attacks-2.md rank 5 (N40): a limit of 10**6 let endless recursion overflow the
    browser's stack, a crash blamed on Python; capped, it is the student's RecursionError."""
    result, stdout, pieces = run(run_exercise, "import sys\nsys.setrecursionlimit(10**6)\nprint(sys.getrecursionlimit())\n")
    assert stdout == f"{run_exercise.MAX_RECURSION_LIMIT}\n"
    assert any(s == "note" and "按 1000 算" in t for s, t in pieces)
    assert sys.setrecursionlimit.__module__ == "sys"  # Python's own is back after the run


def test_a_result_nested_deep_is_described_without_recursing_into_all_of_it(run_exercise):
    code = "def double(x):\n    r = []\n    for _ in range(10000):\n        r = [r]\n    return r\n"
    result, _, _ = run(run_exercise, code)
    assert "嵌套太深" in result["verdict"]["message"]


def test_an_import_that_could_not_be_downloaded_is_the_runs_own_error(run_exercise):
    """exercise-attacks-2.md rank 10: offline, the full standard library's download failed and
    the page said Python itself had broken."""
    result = json.loads(run_exercise.unavailable("x = 1\nfrom fractions import Fraction\nimport statistics\n",
                                                 "fractions,statistics", "约 2.5 MB"))
    error = result["error"]
    assert not result["ran"] and error["line"] == 2 and error["type"] == "ModuleNotFoundError"
    assert "fractions、statistics" in error["hint"] and "约 2.5 MB" in error["hint"] and "连上网" in error["hint"]


def test_a_nul_byte_is_named_with_its_line(run_exercise):
    """exercise-attacks-2.md rank 11 (N47): it was "第 None 行不是合法的 Python"."""
    result, _, _ = run(run_exercise, "x = 1\nprint(x)\x00\n")
    assert result["error"]["line"] == 2 and "第 2 行有一个看不见的空字符" in result["error"]["hint"]


def test_a_lookalike_letter_in_a_name_is_named(run_exercise):
    """exercise-attacks-2.md rank 11 (N55): a Cyrillic е made `double` another name, silently."""
    result, _, _ = run(run_exercise, "def doubl\u0435(x):\n    return 2 * x\n")
    assert "U+0435" in result["verdict"]["message"] and "长得像英文字母 e" in result["verdict"]["message"]


@pytest.mark.parametrize("code, reason", [
    ("import js\n", "导入了 js"),
    ("import _cw_checker\n_cw_checker.close.__code__ = (lambda *a: True).__code__\n", "导入了 _cw_checker"),
    ("import asyncio, signal\n", "导入了 asyncio"),
    ("import json\njson.dumps.__code__ = f.__code__\n", "用到了 __code__"),
    ("setattr(f, '__co' + 'de__', g)\n", "用到了 setattr"),
    ("object.__setattr__(f, '__code__', g)\n", "用到了"),
    ("x = ().__class__.__base__.__subclasses__()\n", "用到了 __subclasses__"),
    ("def f():\n    return sys._getframe(1).f_locals\n", "用到了"),
    ("exec('import js')\n", "用到了 exec"),
    ("import decimal\ndecimal.getcontext().prec = 2\n", "导入了 decimal"),
])
def test_code_that_can_change_python_for_good_is_tainted(run_exercise, code, reason):
    """exercise-attacks-2.md ranks 6–8: what clean_state.py cannot put back retires the worker."""
    assert reason in run_exercise.taint(code)


def test_no_exercises_starter_or_answer_is_tainted(run_exercise):
    """The taint rule must not retire the worker after ordinary code: every exercise's starter and
    reference answer runs without it."""
    from course import exercises
    for path in exercises.paths():
        ex = exercises.parse(path)
        for kind in ("starter", "answer"):
            assert run_exercise.taint(ex.sections[kind].text) == "", (ex.id, kind)


def test_a_range_too_long_for_one_call_is_refused_in_words(run_exercise):
    """exercise-attacks-2.md rank 1 (N37): sum(range(10**11)) is one C call that WebKit cannot
    stop; a range of more than 10**8 numbers is refused at once, others behave as range."""
    result, stdout, _ = run(run_exercise, "print(sum(range(10**6)), isinstance(range(3), range), list(range(2, 8, 3)))\n"
                                          "print(sum(range(10**11)))\n")
    assert stdout == "499999500000 True [2, 5]\n"
    assert result["error"]["line"] == 2 and "太多了" in result["error"]["text"]
    result, _, _ = run(run_exercise, "x = range(10**30)\n")
    assert "多得数不过来" in result["error"]["text"]


@pytest.mark.parametrize("code, line", [
    ("print(10 ** 10 ** 7)\n", 1),
    ("print(pow(10, 10 ** 7))\n", 1),
    ("x = 3\nfor _ in range(40):\n    x **= 2\n", 3),
    ("print(1 << 10 ** 8)\n", 1),
    ("import math\nprint(math.factorial(10 ** 6))\n", 2),
    ("from math import comb\nprint(comb(10 ** 6, 5 * 10 ** 5))\n", 2),
])
def test_an_integer_too_big_to_compute_at_once_is_refused_in_words(run_exercise, code, line):
    """The brief's other long C calls (issue 55, after rank 1): `10**10**7` is one C call that ran
    for minutes, past the time limit and, in WebKit, past 停止. Such an integer is refused before it
    is computed, at the line that asks for it."""
    result, _, _ = run(run_exercise, code)
    assert result["error"]["line"] == line and result["error"]["type"] == "OverflowError", result
    assert "太大了" in result["error"]["text"] and "pow(a, b, m)" in result["error"]["text"]


def test_ordinary_powers_and_the_math_functions_still_work(run_exercise):
    code = ("import math\nclass C:\n    __k = 3\n    def f(self):\n        return self.__k ** 2\n"
            "a = 2\na **= 10\nb = [1]\nc = b\nb *= 2\n"
            "print(2 ** 10, pow(3, 4), pow(3, 4, 5), 2.0 ** 0.5, 1 << 3, (-2) ** 3, 2 ** -1, C().f(), a, b is c,\n"
            "      math.factorial(20), math.comb(5, 2), math.perm(5), math.perm(5, 2), math.prod([1, 2, 3]),\n"
            "      math.prod(range(1, 4), start=2), len(str(10 ** 4000)), 7 ** 5 % 11)\n")
    result, stdout, _ = run(run_exercise, code)
    assert result["error"] is None, result
    assert stdout == "1024 81 1 1.4142135623730951 8 -8 0.5 9 1024 True 2432902008176640000 10 120 20 6 12 4001 10\n"


def test_endless_iterators_of_c_are_python_loops_during_a_run_only(run_exercise):
    """sum(itertools.count()) is one C call that never ends: no bytecode runs, so neither the time
    limit nor (in WebKit) 停止 could end it. During a run the endless ones are Python generators,
    which the limit ends (tests/e2e/test_exercise_attacks_2_browser.py); afterwards they are
    Python's own again."""
    import itertools
    import math
    code = ("import itertools\nfrom itertools import count, cycle, repeat\n"
            "print([type(x).__name__ for x in (count(), cycle('ab'), repeat(1), iter(int, 1), repeat(1, 2), iter([1]))])\n"
            "print(next(count(5, 2)), list(zip('abc', cycle([0, 1]))), list(repeat('z', 2)), next(iter(int, 1)))\n")
    result, stdout, _ = run(run_exercise, code)
    assert result["error"] is None, result
    assert stdout == ("['generator', 'generator', 'generator', 'generator', 'repeat', 'list_iterator']\n"
                      "5 [('a', 0), ('b', 1), ('c', 0)] ['z', 'z'] 0\n")
    assert type(itertools.count()) is itertools.count and math.factorial.__module__ == "math"
