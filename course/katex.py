"""Typeset the formulas of a rendered page with KaTeX (Node), so math reads without JavaScript.

pymdownx.arithmatex (generic mode) leaves `<span class="arithmatex">\\(...\\)</span>`
and `<div class="arithmatex">\\[...\\]</div>`; this fills each with KaTeX's HTML.
Only KaTeX's CSS and fonts ship to the site.
"""
import html
import json
import re
import shutil
import subprocess

from . import ROOT
from .errors import CourseError

SCRIPT = ROOT / "course" / "katex_render.mjs"
MATH = re.compile(r'<(span|div) class="arithmatex">(?:\\\((.*?)\\\)|\\\[(.*?)\\\])</\1>', re.S)


def typeset(page_html, markdown, rel):
    """Return page_html with every formula rendered; a TeX error names the lesson line."""
    found = list(MATH.finditer(page_html))
    if not found:
        return page_html
    items = [{"tex": html.unescape(m.group(2) if m.group(2) is not None else m.group(3)),
              "display": m.group(1) == "div"} for m in found]
    node = shutil.which("node")
    if node is None:
        raise CourseError(rel, "Node.js is needed to typeset formulas with KaTeX (install Node 20)")
    proc = subprocess.run([node, str(SCRIPT)], input=json.dumps(items), capture_output=True,
                          text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise CourseError("course/katex_render.mjs", proc.stderr.strip().splitlines()[-1])
    results = json.loads(proc.stdout)
    for item, result in zip(items, results):
        if "error" in result:
            raise CourseError(rel, f"KaTeX cannot typeset `{item['tex']}`: {result['error']}",
                              _line_of(item["tex"], markdown))
    rendered = iter(r["html"] for r in results)
    # Keep the arithmatex wrapper: Material lets a wide display formula scroll inside it.
    return MATH.sub(lambda m: f'<{m.group(1)} class="arithmatex">{next(rendered)}</{m.group(1)}>', page_html)


def _line_of(tex, markdown):
    """The first source line holding the formula's start (None if not found verbatim)."""
    head = tex.strip().splitlines()[0] if tex.strip() else tex
    pos = markdown.find(head)
    return None if pos < 0 else markdown.count("\n", 0, pos) + 1
