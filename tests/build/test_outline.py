"""The course outline (data/course.json) drives the nav, the home map, lesson headers and links,
and a lesson, the outline and the lesson contract that disagree fail the build naming the file."""
import json
import re
import subprocess
import sys

from support import ROOT, build_copy
from test_build_errors import assert_failed_with, edit, line_of

from course.checks import contract
from course.outline import load_outline

LESSON = "lessons/c4/l1-ffn.md"


def outline_json(project):
    return json.loads((project / "data" / "course.json").read_text(encoding="utf-8"))


def test_a_lesson_file_missing_from_the_outline_fails(scratch_project):
    extra = scratch_project / "lessons" / "c4" / "l9-extra.md"
    extra.write_text("---\nlesson: c4/l9\nminutes: 5\n---\n# extra\n", encoding="utf-8")
    assert_failed_with(build_copy(scratch_project), scratch_project,
                       "lessons/c4/l9-extra.md: is not in the course outline")


def test_a_written_entry_without_its_file_fails(unwritten_l4):
    scratch_project = unwritten_l4
    data = outline_json(scratch_project)
    data["chapters"][2]["lessons"][3]["status"] = "written"  # c4/l4, whose file does not exist yet
    (scratch_project / "data" / "course.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert_failed_with(build_copy(scratch_project), scratch_project,
                       "data/course.json: lesson c4/l4 is marked written but lessons/c4/l4-gating.md does not exist")


def test_front_matter_must_name_its_outline_entry(scratch_project):
    edit(scratch_project / LESSON, "lesson: c4/l1", "lesson: c4/l2")
    assert_failed_with(build_copy(scratch_project), scratch_project, f"{LESSON}:2:", "`lesson: c4/l1`")


def test_an_unknown_lesson_id_fails_with_file_and_line(scratch_project):
    lesson = scratch_project / LESSON
    edit(lesson, '{{ lesson("b1") }}', '{{ lesson("c9/l1") }}')
    line = line_of(lesson, "c9/l1")
    assert_failed_with(build_copy(scratch_project), scratch_project, f"{LESSON}:{line}:",
                       "lesson('c9/l1'): no such lesson or chapter in data/course.json")


def test_a_section_the_contract_asks_for_is_named_when_missing(scratch_project):
    edit(scratch_project / LESSON, "## 真模型 ·", "## 我们的模型 ·")
    assert_failed_with(build_copy(scratch_project), scratch_project, LESSON, "lacks the section(s) 真模型",
                       "`sections: [真模型]`")


def test_a_lesson_without_our_model_needs_no_such_section(scratch_project):
    lesson = scratch_project / LESSON
    edit(lesson, "sections: [真模型]\n", "")
    edit(lesson, "## 真模型 ·", "### 真模型 ·")
    assert build_copy(scratch_project).returncode == 0


def test_contract_places_optional_sections():
    assert contract({}) == ["①", "②", "③", "④", "⑤", "⑥", "⑦", "⑧", "⑨", "⑩"]
    assert contract({"sections": ["真模型"]})[5] == "真模型"


def test_links_follow_the_outline(site_dir):
    html = (site_dir / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    outline = load_outline(ROOT)
    for lesson in outline.lessons.values():
        label = f"{lesson['label']}《{lesson['title']}》"
        if lesson["status"] == "planned" and label in html:
            assert f"{label}（编写中）" in html
    assert "C11（编写中）" in html and "岔路 B1（编写中）" in html and "C14（编写中）" not in html
    home = (site_dir / "index.html").read_text(encoding="utf-8")
    written = [l for l in outline.lessons.values() if l["status"] == "written"]
    for lesson in written:
        assert re.search(rf'<a href="{lesson["file"][:-3]}/">[^<]*{re.escape(lesson["title"])}', home)
    planned = [l for l in outline.lessons.values() if l["status"] == "planned"]
    assert all(f"{outline.full_title(l)}（编写中）" in home for l in planned)
    nav = re.findall(r'class="md-nav__link[^"]*"[^>]*href="([^"]+)"', html)
    assert not [h for h in nav if "authors" in h], "the authors' pages stay out of the students' nav"


def test_a_draft_builds_for_review_but_stays_out_of_the_course(unwritten_l4):
    scratch_project = unwritten_l4
    made = subprocess.run([sys.executable, "-m", "course", "new", "lesson", "c4/l4-gating", "--draft"],
                          cwd=scratch_project, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    assert build_copy(scratch_project).returncode == 0
    site = scratch_project / "site"
    draft = (site / "c4" / "l4-gating" / "index.html").read_text(encoding="utf-8")
    assert "草稿：这一课还没有发布" in draft
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "第 4 课 · 门控与 SwiGLU（编写中）" in home and "l4-gating/" not in home
    lesson = (site / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    assert "l4-gating" not in lesson, "no link, no nav entry to a draft"
    index = (site / "search" / "search_index.json").read_text(encoding="utf-8")
    assert "l4-gating" not in index


def test_a_chapter_tag_inside_a_summary_is_text_not_a_link(site_dir):
    """第 1 课's data-flow rows name C1 and C3 inside <summary>: a link there would be a control inside
    a control (axe-core's serious nested-interactive), so the tag is text even now that C3 is written."""
    outline = load_outline(ROOT)
    assert outline.link("c3", "c4/l1-ffn/").startswith("<a href=")
    assert outline.link("c3", "c4/l1-ffn/", planned_mark=False, linked=False) == "C3"
    page = (site_dir / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    for summary in re.findall(r"<summary>(.*?)</summary>", page, flags=re.S):
        assert "<a " not in summary, summary
