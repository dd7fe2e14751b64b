"""What the built site holds: the lesson's computed first state, its own copies of every asset."""
import json
import re

from support import ROOT

from course import katex, vendor


def page(site_dir, rel="c4/l1-ffn/index.html"):
    return (site_dir / rel).read_text(encoding="utf-8")


def test_lesson_ships_the_widgets_first_state(site_dir):
    html = page(site_dir)
    tag = re.search(r'<div class="cw-widget"[^>]*data-widget="linear-fit"[^>]*>', html).group(0)
    assert 'data-ready="false"' in tag and "data-params=" in tag
    assert re.search(r'data-out="mse">0\.500<', html)
    assert re.search(r'data-row="不难吃">.*?data-out="yhat">0\.00<', html, re.S)
    assert "用最小二乘求最优" in html


def test_formulas_are_typeset_at_build_time(site_dir):
    html = page(site_dir)
    assert 'class="katex"' in html
    assert 'class="arithmatex">\\(' not in html and 'class="arithmatex">\\[' not in html


def test_every_asset_is_served_by_the_site_itself(site_dir):
    for rel in ("index.html", "c4/l1-ffn/index.html"):
        html = page(site_dir, rel)
        assert "fonts.googleapis" not in html and "fonts.gstatic" not in html
        for url in re.findall(r'(?:src|href)="([^"]+)"', html):
            if url.startswith(("http:", "https:", "//")):
                assert 'rel="canonical"' in html and url in re.findall(r'rel="canonical" href="([^"]+)"', html) \
                    or url.startswith("https://squidfunk"), f"{rel} references {url}"


def test_vendored_files_are_byte_identical_to_the_recorded_sums(site_dir):
    files = list(vendor.vendored_files())
    assert any(dest.endswith("pyodide.asm.wasm") for _, dest in files)
    for src, dest in files:
        if dest == katex.SITE_CSS:  # served transformed (fonts swap in), from the checked file
            assert (site_dir / dest).read_text(encoding="utf-8") == katex.site_css(src.read_text(encoding="utf-8"))
            continue
        assert vendor.sha256(site_dir / dest) == vendor.sha256(src)


def test_widget_sources_ship_for_pyodide(site_dir):
    for rel in ("widgets/linear_fit/model.py", "widgets/linear_fit/view.js", "widgets/common/numfmt.py",
                "widgets/runtime/runtime.js", "widgets/runtime/worker.js"):
        assert (site_dir / rel).read_bytes() == (ROOT / rel).read_bytes()


def test_search_index_has_chinese_words(site_dir):
    index = json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))
    text = " ".join(doc["text"] for doc in index["docs"])
    # jieba's segments are joined by zero-width spaces, which Material's search splits on.
    for word in ("训练", "模型", "线性", "方案"):
        assert f"\u200b{word}\u200b" in text, word


def test_mkdocs_own_build_makes_the_same_page(site_dir, tmp_path):
    """`mkdocs serve` goes through mkdocs' build with our hooks: the page must match build.py's."""
    import os
    import subprocess
    import sys
    site_url = re.search(r'rel="canonical" href="([^"]+?)c4/l1-ffn/"', page(site_dir)).group(1)
    out = tmp_path / "mkdocs-site"
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "-d", str(out)], cwd=ROOT,
                            capture_output=True, text=True, env={**os.environ, "SITE_URL": site_url})
    assert result.returncode == 0, result.stderr
    assert page(out) == page(site_dir)
