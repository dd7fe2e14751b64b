"""Exercises in the built site: the block reads whole without JavaScript (task, given names,
starter code, what the checks are for), carries the stable id and the data the runtime reads,
and the answer and the hints are in no page and in no search index: they are separate files
that the browser fetches."""
import html
import json
import posixpath
import re

import pytest
from support import ROOT

from course import exercises
from course.data import load_data
from course.facts import build_facts
from course.outline import load_outline
from course.widgets import load_model

GALLERY = "authors/gallery/index.html"


@pytest.fixture(scope="module")
def found():
    facts = build_facts(load_data(ROOT / "data", ROOT))
    return exercises.load_all(facts, load_model, load_outline(ROOT))


def text_of(markup):
    """What a reader sees: tags dropped (Pygments' spans too), entities decoded, KaTeX's MathML left out."""
    markup = re.sub(r'<span class="katex-mathml">.*?</math></span>', "", markup, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", markup)).replace("\u200b", "")


@pytest.fixture(scope="module")
def pages(site_dir):
    """Every built page's visible text, and the search index's, by name."""
    out = {p.relative_to(site_dir).as_posix(): text_of(p.read_text(encoding="utf-8"))
           for p in site_dir.rglob("*.html")}
    index = json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))
    out["search/search_index.json"] = " ".join(text_of(doc.get("title", "") + " " + doc.get("text", ""))
                                               for doc in index["docs"])
    return out


def block(site_dir, ex, rel=GALLERY):
    page = (site_dir / rel).read_text(encoding="utf-8")
    m = re.search(rf'<section [^>]*data-exercise="{re.escape(ex.id)}"[^>]*>(.*?)</section>', page, re.S)
    assert m, f"{ex.id} is not on {rel}"
    return m.group(0), m.group(1)


def answer_only_lines(ex):
    """The answer's lines that the starter does not have (what revealing it would show)."""
    return [line.strip() for line in ex.sections["answer"].text.splitlines()
            if len(line.strip()) > 8 and line.strip() not in ex.starter]


def prose_of(hint_html):
    """A hint's runs of prose (formulas and code left out) long enough to tell it apart on a page."""
    text = text_of(re.sub(r'<span class="katex">.*?</span>\s*</span>\s*</span>|<code>.*?</code>', "\0",
                          hint_html, flags=re.S))
    return [part.strip() for part in text.split("\0") if len(part.strip()) >= 8]


def test_every_exercise_is_in_the_gallery_as_the_lessons_show_it(site_dir, found):
    assert {"c4/l1/ffn-two-neurons", "c4/l1/linear-identity", "c4/l1/gelu-tanh", "c4/l2/residual-paths"} <= set(found)
    for ex in found.values():
        tag, inner = block(site_dir, ex)
        anchor = "exercise-" + ex.id.replace("/", "-")
        assert f'id="{anchor}"' in tag and f'aria-labelledby="{anchor}-title"' in tag
        assert f'data-lesson="{ex.lesson}"' in tag and 'data-ready="false"' in tag
        assert f'data-time-limit="{ex.time_limit:g}"' in tag and f'data-hints="{len(ex.hints)}"' in tag
        assert f'data-starter-sha="{ex.starter_sha}"' in tag
        assert "aria-label=" not in inner.replace("aria-labelledby=", "")
        assert re.search(rf'<h3 [^>]*id="{anchor}-title"[^>]*>练习 · {re.escape(ex.title)}', inner)
        seen = text_of(inner)
        assert ex.starter in seen, "the starter reads as an ordinary code block"
        assert re.search(r'<pre><span></span><code>', inner)
        for name, value in ex.given.items():
            assert f"{name} = {value!r}" in seen
        assert "检查只是帮你练习，不是考试" in seen and f"每次运行最多 {ex.time_limit:g} 秒" in seen


def test_the_task_quotes_the_models_numbers(site_dir, found):
    ffn = text_of(block(site_dir, found["c4/l1/ffn-two-neurons"])[1])
    assert "四句评价依次得到「好吃」1、「不好吃」0、「难吃」0、「不难吃」1。" in ffn
    gelu = text_of(block(site_dir, found["c4/l1/gelu-tanh"])[1])
    assert "「好吃」0.841、「不好吃」0.272、「难吃」0.318、「不难吃」0.841" in gelu  # GPT-2's tanh form
    paths = text_of(block(site_dir, found["c4/l2/residual-paths"])[1])
    assert "8 条路径的和是 3.375" in paths
    identity = text_of(block(site_dir, found["c4/l1/linear-identity"])[1])
    assert "左边是 2，右边是 0" in identity


def test_the_files_the_runtime_fetches_sit_where_the_block_points(site_dir, found):
    """From every page that embeds an exercise (the gallery embeds them all), data-files leads to its files."""
    def attribute(tag, name):
        return re.search(rf'{name}="([^"]+)"', tag).group(1)
    embedded = [(p.relative_to(site_dir).as_posix(), attribute(tag, "data-exercise"), attribute(tag, "data-files"))
                for p in sorted(site_dir.rglob("*.html"))
                for tag in re.findall(r'<section [^>]*data-exercise=[^>]*>', p.read_text(encoding="utf-8"))]
    assert {e for rel, e, _ in embedded if rel == GALLERY} == set(found)
    for rel, exercise_id, files in embedded:
        ex = found[exercise_id]
        folder = site_dir / posixpath.normpath(posixpath.join(posixpath.dirname(rel), files))
        check = json.loads((folder / "check.json").read_text(encoding="utf-8"))
        assert check["id"] == ex.id and check["cases"] == ex.cases and check["given"] == ex.given
        assert check["starter"] == ex.starter and check["starter_sha"] == ex.starter_sha
        assert check["check"]["source"] == ex.sections["check"].text and check["time_limit"] == ex.time_limit
        assert any(not c["seen"] for c in check["cases"]), "inputs the task never shows"
        assert json.loads((folder / "answer.json").read_text(encoding="utf-8"))["code"] == ex.sections["answer"].text
        hints = json.loads((folder / "hints.json").read_text(encoding="utf-8"))["hints"]
        assert len(hints) == len(ex.hints) and all(h.startswith("<p>") for h in hints)
        assert 'class="katex"' in "".join(hints) or "$" not in "".join(h.text for h in ex.hints)
        for line in answer_only_lines(ex):
            assert line not in json.dumps(check, ensure_ascii=False), f"{ex.id}: check.json holds the answer"


def test_the_answer_and_the_hints_are_in_no_page_and_not_in_search(site_dir, found, pages):
    for ex in found.values():
        folder = site_dir / "exercises" / ex.id
        hints = json.loads((folder / "hints.json").read_text(encoding="utf-8"))["hints"]
        secrets = answer_only_lines(ex) + [part for h in hints for part in prose_of(h)]
        assert answer_only_lines(ex) and len(secrets) > len(answer_only_lines(ex)), secrets
        for name, text in pages.items():
            for secret in secrets:
                assert secret not in text, f"{name} shows {ex.id}'s answer or hint: {secret}"


def test_the_lessons_hold_their_exercises(site_dir):
    for rel, ids in {"c4/l1-ffn/index.html": ["c4/l1/linear-identity", "c4/l1/ffn-two-neurons", "c4/l1/gelu-tanh"],
                     "c4/l2-residual/index.html": ["c4/l2/residual-paths"]}.items():
        page = (site_dir / rel).read_text(encoding="utf-8")
        assert re.findall(r'<section [^>]*data-exercise="([^"]+)"', page) == ids, rel


def test_the_editor_is_one_bundled_file_that_no_page_loads_up_front(site_dir):
    bundle = (site_dir / "assets" / "vendor" / "codemirror" / "editor.js").read_text(encoding="utf-8")
    assert "export{" in bundle.replace(" ", "") and "cm-editor" in bundle and "import " not in bundle[:200]
    for page in site_dir.rglob("*.html"):
        assert "codemirror" not in page.read_text(encoding="utf-8"), page
    script = (site_dir / "widgets" / "runtime" / "exercise.js").read_text(encoding="utf-8")
    assert '"../../assets/vendor/codemirror/editor.js"' in script  # imported by the block when it nears
