"""The exercise check runner (widgets/runtime/checker.py), which gives the student's verdict in
the browser and the build's proof in CPython: what it calls right, what it calls wrong, and
what the student reads."""
import math

import pytest
from support import ROOT

from course.widgets import load_module

checker = load_module(ROOT / "widgets" / "runtime" / "checker.py", "cw_checker_test")

CHECK = '''
defines = ["double"]


def result(you, case):
    return you.double(*case)


def show(case):
    return f"double({case[0]})"
'''
CASES = [{"input": [3], "expected": 6, "seen": True},
         {"input": [0.5], "expected": 1.0, "seen": True},
         {"input": [-4.25], "expected": -8.5, "seen": False}]


def student(source):
    ns = {"__name__": "__main__"}
    exec(compile(source, "<练习>", "exec"), ns)
    return ns


@pytest.fixture
def check():
    return checker.load_check(CHECK, "exercises/c4/l1/x.py", 40)


def test_a_right_answer_passes_every_case_and_says_how_many_were_unseen(check):
    v = checker.verdict(student("def double(x):\n    return x + x\n"), check, CASES, "<练习>")
    assert v["passed"] and v["checked"] == v["total"] == 3 and v["failure"] is None
    assert v["message"] == "全部 3 个检查都通过了（其中 1 个是任务里没有给出的输入）。"


def test_a_wrong_answer_names_what_was_right_and_the_first_input_that_is_wrong(check):
    v = checker.verdict(student("def double(x):\n    return 6 if x == 3 else 1.0\n"), check, CASES, "<练习>")
    assert not v["passed"] and v["checked"] == 2
    assert v["failure"] == {"kind": "wrong", "index": 2, "seen": False, "input": "double(-4.25)",
                            "expected": "-8.5", "got": "1"}
    assert v["message"] == "前 2 个检查都对了。第 3 个检查不对（这是任务里没有给出的输入）：double(-4.25) 应为 -8.5，你的代码给出 1。"


def test_an_error_in_the_students_code_gives_its_line(check):
    v = checker.verdict(student("def double(x):\n    y = 2 * x\n    return y / 0\n"), check, CASES, "<练习>")
    assert v["failure"]["kind"] == "error" and v["failure"]["line"] == 3
    assert v["message"] == ("第 1 个检查出错：算 double(3) 时，你的代码抛出 ZeroDivisionError: division by zero"
                            "（第 3 行）。")


def test_a_missing_name_is_said_plainly(check):
    v = checker.verdict(student("def twice(x):\n    return 2 * x\n"), check, CASES)
    assert v["failure"] == {"kind": "missing", "names": ["double"]}
    assert v["message"] == "还没有找到 `double`：任务要求你的代码定义它。"


def test_the_check_keeps_the_exercise_files_line_numbers():
    with pytest.raises(ZeroDivisionError) as e:
        check = checker.load_check("def result(you, case):\n    return 1 / 0\n", "exercises/c4/l1/x.py", 40)
        check["result"](None, None)
    assert checker._line(e.value.__traceback__, "exercises/c4/l1/x.py") == 41
    with pytest.raises(ValueError, match="result"):
        checker.load_check("defines = []\n")


@pytest.mark.parametrize("got, expected, same", [
    (0.1 + 0.2, 0.3, True),          # within the tolerance
    (0.3001, 0.3, False),
    ((1, 2.0), [1, 2], True),        # JSON has no tuples
    ([1, 2], [1, 2, 3], False),
    (True, 1, False),                # a bool is not a number here
    (1, True, False),
    (math.nan, math.nan, False),     # NaN matches nothing
    ({"a": [1.0]}, {"a": [1]}, True),
    ({"a": 1}, {"a": 1, "b": 2}, False),
    ("好吃", "好吃", True),
    (None, 0, False),
])
def test_close(got, expected, same):
    assert checker.close(got, expected) is same


def test_messages_show_values_at_a_precision_where_they_differ():
    assert checker._pair(0.3176160187834465, 0.31731) == ("0.317616", "0.31731")
    assert checker._pair(1.0000000001, 1.0) == ("1.0000000001", "1.0")
    assert checker.describe((1,)) == "(1,)" and checker.describe("x" * 200).endswith("...")
