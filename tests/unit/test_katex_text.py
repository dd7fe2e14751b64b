"""The contents list shows a heading's formula as text: course/katex.py's plain_math."""
from course.katex import plain_math


def test_a_headings_formula_as_plain_text():
    assert plain_math("为什么 \\(x + F(x)\\) 管用") == "为什么 x + F(x) 管用"
    assert plain_math("\\(x \\leftarrow x + F(\\mathrm{Norm}(x))\\)") == "x ← x + F(Norm(x))"
    assert plain_math("\\(\\sqrt{k + 1}\\) 与 \\(d \\times 4\\)") == "√(k + 1) 与 d × 4"
    assert plain_math("没有公式") == "没有公式"
