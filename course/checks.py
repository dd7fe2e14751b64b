"""Checks on a lesson after its Jinja is rendered (markdown-it-py parses the Markdown)."""
import re

from markdown_it import MarkdownIt

from .errors import CourseError

# Opening delimiters only: TeX legitimately closes braces in pairs ("}}").
LEFTOVER_JINJA = re.compile(r"\{\{|\{%|\{#")

# The lesson contract. Every lesson walks the same path; its level-2 headings start with these marks.
PATH = ["①", "②", "③", "④", "⑤", "⑥", "⑦", "⑧", "⑨", "⑩"]
# Sections a lesson adds by listing them in its front matter (`sections: [真模型]`), and where they go.
OPTIONAL = {"真模型": "⑤"}  # 真模型: what our own model shows (lab/), right after ⑤
LESSON_META = ["lesson", "minutes"]


def contract(meta):
    """The level-2 sections a lesson must have, in order. contract({"sections": ["真模型"]}) -> [①..⑤, 真模型, ⑥..⑩]"""
    extra = meta.get("sections") or []
    unknown = [s for s in extra if s not in OPTIONAL]
    if unknown:
        raise ValueError(f"unknown section(s) {unknown} in front matter `sections:`; known: {sorted(OPTIONAL)}")
    out = list(PATH)
    for section in extra:
        out.insert(out.index(OPTIONAL[section]) + 1, section)
    return out


def check_lesson(markdown, rel, meta=None):
    """No raw Jinja may survive; a lesson page (front matter `lesson:`) has its meta and its contract's sections in order."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    for token in tokens:
        if token.type in ("inline", "fence", "code_block") and LEFTOVER_JINJA.search(token.content):
            line = token.map[0] + 1 if token.map else None
            raise CourseError(rel, f"raw Jinja left after rendering: {token.content.strip()[:80]}", line)
    if meta and "lesson" in meta:
        missing = [key for key in LESSON_META if key not in meta]
        if missing:
            raise CourseError(rel, f"front matter lacks {', '.join(missing)}", 1)
        try:
            sections = contract(meta)
        except ValueError as e:
            raise CourseError(rel, str(e), 1) from None
        headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2"]
        found = [next((h for h in headings if h.startswith(mark)), None) for mark in sections]
        absent = [mark for mark, h in zip(sections, found) if h is None]
        if absent:
            why = " (its front matter lists `sections: [" + ", ".join(meta.get("sections") or []) + "]`)" \
                if set(absent) & set(OPTIONAL) else ""
            raise CourseError(rel, f"lesson lacks the section(s) {' '.join(absent)} (level-2 headings){why}")
        order = [headings.index(h) for h in found]
        if order != sorted(order):
            raise CourseError(rel, f"lesson sections out of order; expected {' '.join(sections)}")
    return tokens
