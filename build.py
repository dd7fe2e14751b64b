"""The course build.

    python build.py [--out DIR]     write the site to DIR (default: site/)

The same file is mkdocs' hook module (mkdocs.yml: hooks: [build.py]), so
`mkdocs serve` and this command go through the same steps:

    on_pre_build      load + check data/, derive facts, set up Jinja, prove the exercises
                      (answer passes its check, starter fails it)
    on_files          add vendored Pyodide/KaTeX (KaTeX's CSS with font-display: swap), the trimmed
                      standard library, the widgets' files, the exercises' editor (CodeMirror, bundled by esbuild)
                      and the exercises' check/hints/answer files to the site; drop a rule from
                      Material's palette CSS (course/material_css.py)
    on_page_markdown  render the lesson's Jinja, then check the result
    on_page_content   typeset formulas with KaTeX (headings' formulas as plain text in the contents list);
                      list the stylesheets the page needs (its widgets', KaTeX's where it has math)
                      and its widgets (MicroPython's early start on a phone, widgets/runtime/early.js)
    on_env            the runtime's early script and the one that starts Material's bundle at the
                      reader's first interaction (course/material_js.py), inlined in every page's <head>
    on_post_page      fail on TeX source left in a built page
    on_template_context  (404.html) without SITE_URL, link relative to the site's root folder
    on_post_build     split long Chinese words in Material's search index

The site is built into a temporary folder and swapped in only on success, so a
failed build leaves the previous site as it was. Errors are one line: file:line.
Under `mkdocs serve` the error is shown in the page instead (course/preview.py).
"""
import argparse
import functools
import logging
import os
import shutil
import sys
from pathlib import Path

from markdown import markdown as markdown_to_html
from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from course import (checks, editor_bundle, exercise_page, exercises, katex, material_css, material_js, search, stdlib,  # noqa: E402
                    vendor, widgets)
from course.data import load_data  # noqa: E402
from course import preview  # noqa: E402
from course.errors import CourseError  # noqa: E402
from course.facts import build_facts  # noqa: E402
from course.outline import load_outline  # noqa: E402
from course.render import make_env, render_lesson  # noqa: E402

# State of the build in progress. Filled in on_pre_build (not at import:
# `mkdocs serve` keeps this module loaded across rebuilds).
_build = {}


def _reported(hook):
    """Turn a CourseError into mkdocs' PluginError: one error line, build aborted
    (under `mkdocs serve`, preview.guard shows it in the page instead)."""
    guarded = preview.guard(hook)

    @functools.wraps(hook)
    def wrapper(*args, **kwargs):
        try:
            return guarded(*args, **kwargs)
        except CourseError as e:
            from mkdocs.exceptions import PluginError
            raise PluginError(str(e)) from None
    return wrapper


def on_startup(command, dirty):
    preview.start(command)  # `mkdocs serve` shows build errors in the page


@_reported
def on_config(config):
    logging.getLogger("jieba").setLevel(logging.WARNING)  # Material's search imports it
    # The nav comes from the course outline (data/course.json), checked against lessons/.
    outline = load_outline(ROOT)
    outline.check(ROOT / "lessons")
    config.nav = outline.nav()
    # Pages for authors and draft lessons are built but stay out of the students' nav.
    from pathspec.gitignore import GitIgnoreSpec  # what mkdocs' not_in_nav option holds
    config.not_in_nav = GitIgnoreSpec.from_lines(["authors/*", *(f"/{f}" for f in outline.drafts())])
    return config


@_reported
def on_pre_build(config):
    data = load_data(ROOT / "data", ROOT)
    numfmt = widgets.common_module("numfmt")
    filters = {"num": numfmt.num, "pct": numfmt.pct, "signed": numfmt.signed, "sci": numfmt.sci}
    render_widget = widgets.Renderer(filters)
    _build.clear()
    facts = build_facts(data)
    outline = load_outline(ROOT)
    env = make_env(facts, filters, render_widget, widgets.load_model, outline)
    env.globals["widget_gallery"] = lambda: widgets.gallery(facts)  # lessons/authors/gallery.md
    # Every exercise under exercises/, proved in CPython: its answer passes its check, its starter fails it.
    blocks = exercise_page.Blocks(exercises.load_all(facts, widgets.load_model, outline), env)
    env.globals["exercise_gallery"] = blocks.gallery
    _build.update(data=data, facts=facts, widgets=render_widget, outline=outline, env=env, exercises=blocks)


@_reported
def on_files(files, config):
    from mkdocs.structure.files import File
    # Material's palette stylesheet, less a rule that restyles the whole page twice at load.
    for file in [f for f in files if material_css.is_palette_css(f.dest_uri)]:
        files.remove(file)
        css = material_css.without_switching_rule(file.content_string, file.src_uri)
        files.append(File.generated(config, file.dest_uri, content=css))
    vendored = list(vendor.vendored_files())
    for src, dest in [*vendored, *widgets.shipped_files()]:
        if dest == katex.SITE_CSS:  # KaTeX's fonts swap in, woff2 only (course/katex.py)
            files.append(File.generated(config, dest, content=katex.site_css(src.read_text(encoding="utf-8"))))
            continue
        files.append(File.generated(config, dest, abs_src_path=str(src)))
    # The standard library cut down to what the widgets' Python imports (course/stdlib.py).
    trimmed = stdlib.site_file(vendored)
    files.append(File.generated(config, stdlib.SITE_PATH, content=trimmed))
    files.append(File.generated(config, "widgets/runtime/shared-modules.json", content=widgets.shared_modules_json()))
    # What starting each runtime downloads, for the page to say before a download on a metered connection.
    files.append(File.generated(config, "widgets/runtime/runtimes.json",
                                content=vendor.startup_sizes_json(vendored, {stdlib.SITE_PATH: trimmed})))
    # The exercises' editor, bundled from the pinned CodeMirror packages (course/editor_bundle.py).
    files.append(File.generated(config, editor_bundle.SITE_PATH, content=editor_bundle.bundle()))
    # What the browser fetches for an exercise: kept out of the pages (and so out of search).
    to_html = functools.partial(markdown_to_html, extensions=config.markdown_extensions,
                                extension_configs=config.mdx_configs)
    for dest, content in exercise_page.site_files(_build["exercises"].found, _build["env"], to_html):
        files.append(File.generated(config, dest, content=content))
    return files


@_reported
def on_page_markdown(markdown, page, config, files):
    rel = f"lessons/{page.file.src_uri}"
    source = Path(page.file.abs_src_path).read_text(encoding="utf-8")
    # mkdocs hands over the Markdown without its front matter: count those lines back in.
    offset = source[: len(source) - len(markdown)].count("\n") if source.endswith(markdown) else 0
    _build["widgets"].embedded.clear()
    _build["exercises"].embedded.clear()
    outline, src = _build["outline"], page.file.src_uri
    lesson_id = outline.by_file[src]["id"] if src in outline.by_file else None
    context = {"lesson": lambda ref, text=None, planned_mark=True, linked=True:
               outline.link(ref, page.url, text, planned_mark, linked),
               "this": outline.header(src) if src in outline.by_file else None}
    context["exercise"] = lambda ref, level=3: _build["exercises"](ref, lesson_id, page.url, context, level)
    rendered = render_lesson(_build["env"], markdown, rel, offset, context)
    checks.check_lesson(rendered, rel, page.meta, source)
    if context["this"]:
        page.meta["header"] = context["this"]  # the lesson header's chapter line, title and question
        if context["this"]["draft"]:
            page.meta["search"] = {"exclude": True}  # a draft is for review, not for students' searches
    page.meta["experiments"] = len(_build["widgets"].embedded)  # shown in the lesson header
    return rendered


@_reported
def on_page_content(html, page, config, files):
    html = katex.typeset(html, page.markdown, f"lessons/{page.file.src_uri}")
    katex.plain_toc(page.toc)  # the contents list shows text: a heading's formula as plain text there
    # Only the CSS this page uses (theme/main.html): KaTeX's linked where there is math, the
    # runtime's and each embedded widget's inlined where there are widgets or exercises.
    page.meta["stylesheets"], page.meta["inline_css"] = widgets.split_stylesheets(widgets.page_stylesheets(
        _build["widgets"].embedded, _build["exercises"].embedded, katex.has_math(html)))
    page.meta["python_widgets"] = widgets.python_widgets(_build["widgets"].embedded)  # for early.js
    page.meta["micropython_build"] = widgets.micropython_build(page.meta["python_widgets"])  # "ulab" or None
    return html


@_reported
def on_env(env, config, files):
    env.globals["cw_early_js"] = widgets.early_script()  # theme/main.html inlines it in <head>
    env.globals["cw_material_js"] = material_js.start_script()  # Material's bundle at the first interaction
    env.globals["cw_material_bundle"] = material_js.bundle_path()
    return env


@_reported
def on_post_page(output, page, config):
    katex.check_no_raw_tex(output, f"lessons/{page.file.src_uri}")  # no TeX source reaches a reader
    return output


def on_template_context(context, template_name, config):
    """Built without SITE_URL (for any static server), the 404 page links relative to the
    site's root folder, where 404.html lies, instead of mkdocs' root-absolute URLs, which
    break under a sub-path. With SITE_URL they stay absolute under its path (right at any depth)."""
    if template_name == "404.html" and not config.site_url:
        from mkdocs.utils import normalize_url
        context["base_url"] = "."  # what Material's `url` filter joins every path to
        context["extra_css"] = [normalize_url(path, None, ".") for path in config.extra_css]
        context["extra_javascript"] = [normalize_url(str(script), None, ".") for script in config.extra_javascript]
    return context


@event_priority(-50)  # late: after Material's search plugin has written its index
@_reported
def on_post_build(config):
    search.refine_index(config.site_dir)


def build(out):
    """Build into a sibling temporary folder; replace `out` only if the build succeeds."""
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    out = Path(out).resolve()
    tmp = out.parent / f".{out.name}.building-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        mkdocs_build(load_config(str(ROOT / "mkdocs.yml"), site_dir=str(tmp)))
    except (Abort, Exception) as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if not isinstance(e, Abort):
            raise
        return False
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if out.exists():
        out.rename(old)
    tmp.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    return True


class _Errors(logging.Handler):
    """Collects mkdocs' error records so the CLI can report them as one line."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def main(argv=None):
    parser = argparse.ArgumentParser(description="Build the course site.")
    parser.add_argument("--out", default=str(ROOT / "site"), help="output folder (default: site/)")
    args = parser.parse_args(argv)
    warnings = logging.StreamHandler()
    warnings.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    warnings.addFilter(lambda record: record.levelno < logging.ERROR)
    errors = _Errors()
    log = logging.getLogger("mkdocs")
    log.setLevel(logging.WARNING)
    log.addHandler(warnings)
    log.addHandler(errors)
    if not build(args.out):
        reason = errors.messages[-1] if errors.messages else "mkdocs aborted (see the warnings above)"
        print(f"error: {reason} [build failed; {args.out} left as it was]", file=sys.stderr)
        return 1
    print(f"built {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
