"""The build proves every exercise in CPython: the answer's results become the expected values,
the answer passes its check and the starter fails it; any fault names the exercise file and
line. Most cases run the proof directly on a scratch file (milliseconds); two run the real
build on a scratch copy of the project, as an author would meet them."""
import textwrap

import pytest
from support import build_copy
from test_build_errors import assert_failed_with, edit, line_of

from course import exercises, widgets
from course.errors import CourseError

DEMO = '''\
# %% exercise
# title: 加倍
# time_limit: 2

# %% task
# 写 `double(x)`，返回 $2x$：`double(3)` 得 {{ 2 * 3 }}。

# %% starter
def double(x):
    ...

# %% answer
def double(x):
    return 2 * x

# %% cases
cases = [[3], [-1.5]]
expected = [6, -3.0]


def unseen(rng):
    return [[round(rng.uniform(-10, 10), 2)] for _ in range(5)]

# %% check
defines = ["double"]


def result(you, case):
    return you.double(*case)

# %% hint
# 一行：`return 2 * x`。

# %% hint
# 第二条提示。
'''


def write(root, text=DEMO, rel="c4/l1/demo.py"):
    path = root / "exercises" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def prove(root, text=DEMO):
    path = write(root, text)
    return exercises.prove(exercises.parse(path, root), facts={}, model=widgets.load_model)


def fails(root, text, *expected):
    """The proof fails with `exercises/c4/l1/demo.py:LINE: ...`; returns (line, message)."""
    with pytest.raises(CourseError) as e:
        prove(root, text)
    assert e.value.path == "exercises/c4/l1/demo.py"
    for part in expected:
        assert part in e.value.message, e.value.message
    return e.value.line, e.value.message


def line(text, needle):
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_the_answers_results_become_the_expected_values_and_the_starter_fails(tmp_path):
    ex = prove(tmp_path)
    assert (ex.id, ex.lesson, ex.name, ex.title, ex.time_limit) == ("c4/l1/demo", "c4/l1", "demo", "加倍", 2.0)
    assert ex.cases[:2] == [{"input": [3], "expected": 6, "seen": True},
                            {"input": [-1.5], "expected": -3.0, "seen": True}]
    unseen = ex.cases[2:]
    assert len(unseen) == 5 and all(not c["seen"] and c["expected"] == 2 * c["input"][0] for c in unseen)
    assert ex.answer_verdict["passed"] and not ex.starter_verdict["passed"]
    assert ex.starter_verdict["message"] == "第 1 个检查不对：[3] 应为 6，你的代码给出 None。"
    assert [h.line for h in ex.hints] == [line(DEMO, "一行"), line(DEMO, "第二条")]
    assert prove(tmp_path).cases == ex.cases, "the unseen inputs are the same in every build"


def test_a_starter_that_already_passes_fails_at_the_starter(tmp_path):
    text = DEMO.replace("def double(x):\n    ...", "def double(x):\n    return x + x")
    where, _ = fails(tmp_path, text, "the starter code already passes the check")
    assert where == line(text, "# %% starter")


def test_a_broken_check_fails_at_its_line(tmp_path):
    text = DEMO.replace("return you.double(*case)", "return you.doubel(*case)")
    where, _ = fails(tmp_path, text, "the answer fails on [3]", "AttributeError", "doubel")
    assert where == line(text, "you.doubel")


def test_an_answer_that_disagrees_with_expected_fails_at_expected(tmp_path):
    text = DEMO.replace("return 2 * x", "return 2 * x + 1")
    where, _ = fails(tmp_path, text, "for [3] the answer gives 7, but `expected` says 6")
    assert where == line(text, "expected = ")


def test_an_answer_that_raises_fails_at_its_line(tmp_path):
    text = DEMO.replace("return 2 * x", "return 2 * x / 0")
    where, _ = fails(tmp_path, text, "ZeroDivisionError")
    assert where == line(text, "2 * x / 0")


def test_an_endless_answer_is_stopped_at_the_time_limit(tmp_path):
    text = DEMO.replace("# time_limit: 2", "# time_limit: 0.3").replace(
        "def double(x):\n    return 2 * x", "def double(x):\n    while True:\n        pass")
    where, _ = fails(tmp_path, text, "ran past its time limit")
    assert where in (line(text, "while True"), line(text, "        pass"))


def test_inputs_that_are_not_json_fail_at_the_cases(tmp_path):
    text = DEMO.replace("cases = [[3], [-1.5]]", "cases = [[3], [{1, 2}]]")
    where, _ = fails(tmp_path, text, "case 2 is not plain JSON")
    assert where == line(text, "# %% cases")


@pytest.mark.parametrize("old, new, message, at", [
    ("# %% hint\n# 第二条提示。", "# %% hints\n# 第二条提示。", "unknown section `# %% hints`", "# %% hints"),
    ("# %% check", "# %% starter", "a second `# %% starter` section (the first is at line", "# %% starter"),
    ("# 写 `double(x)`", "写 `double(x)`", "start it with '# '", "写 `double(x)`"),
    ("# time_limit: 2", "# time_limit: forever", "time_limit is a number of seconds", "time_limit"),
    ("# title: 加倍", "# titel: 加倍", "the keys are title", "titel"),
    ("    return 2 * x", "    return 2 * x)", "the answer is not valid Python", "2 * x)"),
])
def test_a_malformed_file_names_its_line(tmp_path, old, new, message, at):
    text = DEMO.replace(old, new)
    with pytest.raises(CourseError) as e:
        exercises.prove(exercises.parse(write(tmp_path, text), tmp_path), {}, widgets.load_model)
    assert message in e.value.message, e.value.message
    assert e.value.line == max(i for i, line in enumerate(text.splitlines(), 1) if at in line)


def test_a_file_without_hints_lacks_a_section(tmp_path):
    text = DEMO[:DEMO.index("# %% hint")]
    with pytest.raises(CourseError, match="lacks the section"):
        exercises.parse(write(tmp_path, text), tmp_path)


# --- the real build, as an author meets it -------------------------------------------------------

GELU = "exercises/c4/l1/gelu-tanh.py"


def test_a_broken_check_fails_the_build_with_file_and_line(scratch_project):
    path = scratch_project / GELU
    edit(path, "        return you.gelu(case[1])", "        return you.gelu(case[1]) + undefined_name")
    assert_failed_with(build_copy(scratch_project), scratch_project, f"{GELU}:{line_of(path, 'undefined_name')}:",
                       "the answer fails on gelu(", "NameError")


def test_a_starter_that_already_passes_fails_the_build(scratch_project):
    path = scratch_project / GELU
    answer = "    return 0.5 * z * (1 + math.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))"
    edit(path, "    ...  # GPT-2 的 tanh 近似", answer)
    assert_failed_with(build_copy(scratch_project), scratch_project, f"{GELU}:{line_of(path, '# %% starter')}:",
                       "the starter code already passes the check")
