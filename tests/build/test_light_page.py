"""What keeps a page light (issue 20): it links only the stylesheets it uses, and KaTeX's fonts
swap in (content-visibility, and landing on anchors with it, is checked in Chromium:
tests/e2e/test_light_page_browser.py)."""
import re

import pytest

from course import katex, widgets

LESSONS = ["c4/l1-ffn/index.html", "c4/l2-residual/index.html", "c4/l3-norm/index.html"]


def stylesheets(site_dir, rel):
    html = (site_dir / rel).read_text(encoding="utf-8")
    return html, [re.sub(r"^(\.\./)+", "", href) for href in re.findall(r'<link rel="stylesheet" href="([^"]+)"', html)]


def test_the_home_page_links_no_widget_runtime_or_katex_css(site_dir):
    _, links = stylesheets(site_dir, "index.html")
    assert not [link for link in links if link.startswith(("widgets/", "assets/vendor/"))], links
    assert "assets/stylesheets/course.css" in links


@pytest.mark.parametrize("rel", LESSONS)
def test_a_lesson_links_the_css_of_the_widgets_it_holds_and_no_other(site_dir, rel):
    html, links = stylesheets(site_dir, rel)
    held = set(re.findall(r'data-widget="([a-z0-9-]+)"', html))
    with_css = {name for name in held if (widgets.folder_of(name) / "style.css").exists()}
    linked = {link.split("/")[1].replace("_", "-") for link in links
              if link.startswith("widgets/") and link.endswith("/style.css") and "/runtime/" not in link}
    assert linked == with_css
    assert katex.SITE_CSS in links and "widgets/runtime/runtime.css" in links
    assert len(links) == len(set(links))
    for link in links:
        assert (site_dir / link).is_file(), link


def test_katex_fonts_swap_in_and_name_only_shipped_files(site_dir):
    css = (site_dir / katex.SITE_CSS).read_text(encoding="utf-8")
    faces = re.findall(r"@font-face\{[^}]*\}", css)
    assert len(faces) == 20
    for face in faces:
        assert "font-display:swap" in face, face
        for url in re.findall(r"url\(([^)]+)\)", face):
            assert (site_dir / katex.SITE_CSS).parent.joinpath(url).is_file(), url
