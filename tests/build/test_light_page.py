"""What keeps a page light (issue 20): it uses only the stylesheets it needs, inlines the small
ones (Material's instant navigation swapping them is checked in Chromium:
tests/e2e/test_light_page_browser.py), KaTeX's fonts swap in, Material's palette CSS drops the
rule that restyled the whole page twice at load, the widgets' runtime is chosen in <head>,
where a phone starts MicroPython before the lesson has arrived, and Material's bundle is left to
the reader's first interaction (tests/e2e/test_material_start_browser.py)."""
import re

import pytest

from course import katex, material_js, widgets

LESSONS = ["c4/l1-ffn/index.html", "c4/l2-residual/index.html", "c4/l3-norm/index.html"]


def stylesheets(site_dir, rel):
    """(html, the site paths of the CSS the page uses): linked, then inlined as <style data-css>."""
    html = (site_dir / rel).read_text(encoding="utf-8")
    linked = [re.sub(r"^(\.\./)+", "", href) for href in re.findall(r'<link rel="stylesheet" href="([^"]+)"', html)]
    return html, linked + re.findall(r'<style data-css="([^"]+)">', html)


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


@pytest.mark.parametrize("rel", LESSONS)
def test_a_lesson_inlines_its_widgets_css_and_links_katex(site_dir, rel):
    """One render-blocking request per shared stylesheet, none per widget: the widgets' and the
    runtime's CSS is in the page, byte for byte what widgets/ holds."""
    html, _ = stylesheets(site_dir, rel)
    linked = [re.sub(r"^(\.\./)+", "", h) for h in re.findall(r'<link rel="stylesheet" href="([^"]+)"', html)]
    assert not [link for link in linked if link.startswith("widgets/")], linked
    assert katex.SITE_CSS in linked
    inlined = re.findall(r'<style data-css="([^"]+)">(.*?)</style>', html, re.S)
    assert inlined
    for path, css in inlined:
        assert css == (widgets.WIDGETS / path.removeprefix("widgets/")).read_text(encoding="utf-8"), path


def test_a_widget_stylesheet_that_cannot_be_inlined_fails_with_its_file(tmp_path, monkeypatch):
    folder = tmp_path / "widgets"
    (folder / "broken").mkdir(parents=True)
    (folder / "broken" / "style.css").write_text(".x { background: url(dot.png); }", encoding="utf-8")
    monkeypatch.setattr(widgets, "WIDGETS", folder)
    monkeypatch.setattr(widgets, "ROOT", tmp_path)
    with pytest.raises(widgets.CourseError) as caught:
        widgets.split_stylesheets(["assets/vendor/katex/dist/katex.min.css", "widgets/broken/style.css"])
    assert "widgets/broken/style.css" in str(caught.value) and "url(" in str(caught.value)


def test_katex_fonts_swap_in_and_name_only_shipped_files(site_dir):
    css = (site_dir / katex.SITE_CSS).read_text(encoding="utf-8")
    faces = re.findall(r"@font-face\{[^}]*\}", css)
    assert len(faces) == 20
    for face in faces:
        assert "font-display:swap" in face, face
        for url in re.findall(r"url\(([^)]+)\)", face):
            assert (site_dir / katex.SITE_CSS).parent.joinpath(url).is_file(), url


def test_materials_palette_css_ships_without_its_whole_page_restyle(site_dir):
    [palette] = sorted((site_dir / "assets" / "stylesheets").glob("palette.*.min.css"))
    css = palette.read_text(encoding="utf-8")
    assert "data-md-color-switching" not in css
    assert "[data-md-color-scheme=slate]" in css  # the rest of the palette is there


def test_a_material_whose_palette_css_changed_fails_the_build_by_name():
    from course import material_css
    from course.errors import CourseError
    with pytest.raises(CourseError, match="palette.abc.min.css: Material's palette stylesheet"):
        material_css.without_switching_rule("body{color:red}", "assets/stylesheets/palette.abc.min.css")


@pytest.mark.parametrize("rel", ["index.html", "404.html", *LESSONS])
def test_every_page_runs_the_runtimes_choice_in_its_head(site_dir, rel):
    """widgets/runtime/early.js, minified, in <head> before the body: on a phone it starts
    MicroPython while the lesson is still arriving, and runtime.js reads its choice on every page
    (Material's instant navigation runs no new page's head scripts)."""
    html = (site_dir / rel).read_text(encoding="utf-8")
    head = html[:html.index("<body")]
    script = widgets.early_script()
    assert f"<script>{script}</script>" in head
    assert "function" in script and "Before the body arrives" not in script  # minified: its comments stay in the source


@pytest.mark.parametrize("rel", LESSONS)
def test_a_lesson_names_its_python_widgets_for_the_early_start(site_dir, rel):
    html = (site_dir / rel).read_text(encoding="utf-8")
    head = html[:html.index("<body")]
    meta = re.search(r'<meta name="cw-python" content="([^"]+)" data-worker="([^"]+)">', head)
    assert meta, "a lesson with widgets says so before its body"
    held = set(re.findall(r'data-widget="([a-z0-9-]+)"', html[html.index("<body"):]))
    no_python = {name for name in held if "export const python = false;" in
                 (widgets.folder_of(name) / "view.js").read_text(encoding="utf-8")}
    assert set(meta.group(1).split()) == held - no_python
    worker = (site_dir / rel).parent / meta.group(2)
    assert worker.resolve() == (site_dir / "widgets/runtime/mp_worker.js").resolve() and worker.is_file()


def test_the_home_page_starts_no_python(site_dir):
    html = (site_dir / "index.html").read_text(encoding="utf-8")
    assert '<meta name="cw-python" content=' not in html


def test_an_early_script_that_breaks_fails_with_its_file_and_one_that_says_script_stays_inline(tmp_path, monkeypatch):
    folder = tmp_path / "widgets"
    (folder / "runtime").mkdir(parents=True)
    early = folder / "runtime" / "early.js"
    monkeypatch.setattr(widgets, "WIDGETS", folder)
    monkeypatch.setattr(widgets, "ROOT", tmp_path)
    early.write_text("const s = '</script>';\nconsole.log(s);\n", encoding="utf-8")
    assert "</script" not in widgets.early_script()  # the page's <script> does not end there
    early.write_text("const s = (;\n", encoding="utf-8")
    with pytest.raises(widgets.CourseError) as caught:
        widgets.early_script()
    assert "widgets/runtime/early.js" in str(caught.value) and "esbuild" in str(caught.value)


@pytest.mark.parametrize("rel", ["index.html", "404.html", *LESSONS])
def test_every_page_starts_materials_bundle_only_on_demand(site_dir, rel):
    """No page loads Material's bundle with a <script src>: material_start.js, minified in <head>,
    loads it at the reader's first interaction, from the shipped file its data-bundle names; and
    the palette script that stands in for Material's until then is in the header."""
    html = (site_dir / rel).read_text(encoding="utf-8")
    head = html[:html.index("<body")]
    assert not re.search(r'<script src="[^"]*assets/javascripts/bundle\.[0-9a-f]+\.min\.js"', html)
    start = re.search(r'<script data-bundle="([^"]+)">(.*?)</script>', head, re.S)
    assert start and start.group(2) == material_js.start_script()
    assert "addEventListener" in start.group(2) and "first interaction" not in start.group(2)  # minified
    href = start.group(1)  # relative, or on the 404 page from the site's root path (/course/)
    bundle = site_dir / href.removeprefix("/course/") if href.startswith("/") else (site_dir / rel).parent / href
    assert bundle.resolve() == (site_dir / material_js.bundle_path()).resolve() and bundle.is_file()
    header = html[html.index('data-md-component="palette"'):html.index("</header>")]
    assert 'matchMedia(input.getAttribute("data-md-color-media"))' in header


def test_a_material_without_one_bundle_fails_the_build_by_name(tmp_path, monkeypatch):
    monkeypatch.setattr(material_js, "BUNDLES", tmp_path)
    with pytest.raises(material_js.CourseError, match="theme/main.html: expected one bundle"):
        material_js.bundle_path()
