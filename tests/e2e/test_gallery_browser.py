"""The authors' gallery: every widget, live, with its parameters, then every exercise; out of the students' nav."""
import pytest
from support import ROOT

from course import exercises, widgets
from course.data import load_data
from course.facts import build_facts

pytestmark = pytest.mark.e2e


def test_every_widget_is_shown_live_with_its_parameters(browser, served_site):
    site_dir, url = served_site
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url + "authors/gallery/")
    names = widgets.names()
    headings = [h.rstrip("¶").strip() for h in page.locator("article h2").all_inner_texts()]
    listed = [h for h in headings if h.startswith("练习 · ")]
    assert [h for h in headings if h not in listed] == names
    assert listed == [f"练习 · {exercises.parse(p).id}" for p in exercises.paths()], "then every exercise"
    facts = build_facts(load_data(ROOT / "data", ROOT))
    waiting = [n for n in names if hasattr(widgets.load_model(n), "example")
               and widgets.load_model(n).example(facts) is None]
    assert page.locator("text=这个组件要用 `lab/` 导出的数据").count() + \
        page.locator("text=这个组件要用 lab/ 导出的数据").count() == len(waiting)
    for name in names:
        if name in waiting:  # its data is not exported yet: the gallery says so instead
            continue
        root = page.locator(f'[data-widget="{name}"]')
        root.scroll_into_view_if_needed()
        page.wait_for_selector(f'[data-widget="{name}"][data-ready="true"]', timeout=90_000)
        table = page.locator(f'h2:has-text("{name}") ~ div table, h2:has-text("{name}") ~ table').first
        for key in widgets.load_model(name).PARAMS:
            assert f"{key}" in table.inner_text()
    lesson = (site_dir / "c4" / "l1-ffn" / "index.html").read_text(encoding="utf-8")
    assert "authors/gallery" not in lesson, "the gallery is not in the students' nav"
    context.close()
