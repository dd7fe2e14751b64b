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


SITE_CSS = "assets/vendor/katex/dist/katex.min.css"
_FALLBACK_SRC = re.compile(r',url\([^)]*\.woff\) format\("woff"\),url\([^)]*\.ttf\) format\("truetype"\)')


def site_css(css):
    """KaTeX's stylesheet as the site serves it (the vendored file stays as npm ships it, checked by
    sha256): its fonts use `font-display: swap`, so on a slow first load a formula shows in a
    fallback font at once instead of staying invisible for up to 3 s (KaTeX's `block`), and each
    @font-face names its woff2 file only, the one format vendored (every browser that runs the
    site reads woff2; the woff/ttf names were dead links)."""
    faces = css.count("@font-face")
    css, swapped = re.subn(r"font-display:\s*block", "font-display:swap", css)
    css, trimmed = _FALLBACK_SRC.subn("", css)
    if not faces or swapped != faces or trimmed != faces:
        raise CourseError("node_modules/katex/dist/katex.min.css", f"unexpected @font-face rules ({faces} faces, "
                          f"{swapped} font-display:block, {trimmed} woff/ttf fallbacks): update course/katex.py site_css")
    return css


def has_math(page_html):
    """Whether a typeset page holds a formula (and so needs KaTeX's stylesheet)."""
    return 'class="katex' in page_html


def _line_of(tex, markdown):
    """The first source line holding the formula's start (None if not found verbatim)."""
    head = tex.strip().splitlines()[0] if tex.strip() else tex
    pos = markdown.find(head)
    return None if pos < 0 else markdown.count("\n", 0, pos) + 1


# TeX commands a heading's formula may hold, as the plain text the contents list shows.
PLAIN = {r"\leftarrow": "←", r"\rightarrow": "→", r"\times": "×", r"\cdot": "·", r"\sqrt": "√",
         r"\odot": "⊙", r"\approx": "≈", r"\le": "≤", r"\ge": "≥", r"\ne": "≠", r"\quad": " ", r"\,": " "}
INLINE_TEX = re.compile(r"\\\((.*?)\\\)", re.S)


def plain_math(title):
    """A heading's formula as plain text for the contents list, which shows text, not KaTeX.

    plain_math("为什么 \\(x + F(x)\\) 管用") -> '为什么 x + F(x) 管用'
    """
    def plain(m):
        tex = re.sub(r"\\sqrt\{([^{}]*)\}", r"√(\1)", m.group(1))
        for cmd, text in sorted(PLAIN.items(), key=lambda kv: -len(kv[0])):
            tex = tex.replace(cmd, text)
        tex = re.sub(r"\\(mathrm|mathbf|text|operatorname)\{([^{}]*)\}", r"\2", tex)
        return tex.replace("{", "").replace("}", "").strip()
    return INLINE_TEX.sub(plain, title)


def plain_toc(toc):
    """Every contents-list title with its formulas as plain text (in place)."""
    for item in toc:
        item.title = plain_math(item.title)
        plain_toc(item.children)


# Raw TeX that survived typesetting: a formula KaTeX never saw (outside code, scripts and styles).
SKIP_BLOCKS = re.compile(r"<(pre|code|script|style|textarea)\b.*?</\1>", re.S | re.I)
RAW_TEX = re.compile(r"\\\(|\\\[|\$\$")


def check_no_raw_tex(page_html, rel):
    """Fail the build when a built page still shows TeX source (\\( … \\), \\[ … \\] or $$)."""
    text = SKIP_BLOCKS.sub("", page_html)
    m = RAW_TEX.search(text)
    if m:
        context = html.unescape(re.sub(r"<[^>]+>", "", text[max(0, m.start() - 60):m.end() + 60]))
        raise CourseError(rel, f"raw TeX left in the built page: …{' '.join(context.split())}…")
