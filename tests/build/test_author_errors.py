"""The mistakes a new author makes first (found in a walk-through of AUTHORING.md) fail the
build with the file, the line and what to write instead."""
from support import build_copy
from test_build_errors import assert_failed_with, edit, line_of

LESSON = "lessons/c4/l1-ffn.md"


def test_a_misspelt_fact_through_a_filter_names_it_and_the_names_there(scratch_project):
    lesson = scratch_project / LESSON
    edit(lesson, "{{ a.d_ff | num }} 维", "{{ a.d_fff | num }} 维")
    line = line_of(lesson, "a.d_fff")
    assert_failed_with(build_copy(scratch_project), scratch_project, f"{LESSON}:{line}:",
                       "no 'd_fff' here; the names are:", "d_ff")


def test_a_missing_section_points_at_the_heading_it_belongs_after(scratch_project):
    lesson = scratch_project / LESSON
    edit(lesson, "## ⑦ 证据三问", "## 证据三问")
    line = line_of(lesson, "## ⑥")
    assert_failed_with(build_copy(scratch_project), scratch_project, f"{LESSON}:{line}:",
                       "lacks the section(s) ⑦", "after ## ⑥")


def test_sections_out_of_order_name_the_one_to_move(scratch_project):
    lesson = scratch_project / LESSON
    edit(lesson, "## ⑧ 一句话", "## ⑨ 一句话 (swapped)")
    edit(lesson, "## ⑨ 下一个缺口", "## ⑧ 下一个缺口")
    line = line_of(lesson, "## ⑧ 下一个缺口")
    assert_failed_with(build_copy(scratch_project), scratch_project, f"{LESSON}:{line}:", "section ⑧ comes after")


def test_a_widget_parameter_it_does_not_have_fails(scratch_project):
    lesson = scratch_project / LESSON
    edit(lesson, '{{ widget("position-wise") }}', '{{ widget("position-wise", scal=2) }}')
    assert_failed_with(build_copy(scratch_project), scratch_project, "has no parameter(s) scal")


def test_a_widget_named_like_its_folder_is_told_the_right_name(scratch_project):
    lesson = scratch_project / LESSON
    edit(lesson, '{{ widget("position-wise") }}', '{{ widget("position_wise") }}')
    assert_failed_with(build_copy(scratch_project), scratch_project, "widget('position-wise')")
