"""Checks on a lesson after its Jinja is rendered (markdown-it-py parses the Markdown)."""
import re

from markdown_it import MarkdownIt

from .errors import CourseError

# Opening delimiters only: TeX legitimately closes braces in pairs ("}}").
LEFTOVER_JINJA = re.compile(r"\{\{|\{%|\{#")

# Every lesson page walks the same path; its level-2 headings start with these marks.
LESSON_SECTIONS = ["①", "②", "③", "④", "⑤", "真模型", "⑥", "⑦", "⑧", "⑨", "⑩"]
LESSON_META = ["lesson", "title", "chapter", "minutes", "question"]


def check_lesson(markdown, rel, meta=None):
    """No raw Jinja may survive; a lesson page (front matter `lesson:`) has its meta and sections in order."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    for token in tokens:
        if token.type in ("inline", "fence", "code_block") and LEFTOVER_JINJA.search(token.content):
            line = token.map[0] + 1 if token.map else None
            raise CourseError(rel, f"raw Jinja left after rendering: {token.content.strip()[:80]}", line)
    if meta and "lesson" in meta:
        missing = [key for key in LESSON_META if key not in meta]
        if missing:
            raise CourseError(rel, f"front matter lacks {', '.join(missing)}", 1)
        headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2"]
        found = [next((h for h in headings if h.startswith(mark)), None) for mark in LESSON_SECTIONS]
        absent = [mark for mark, h in zip(LESSON_SECTIONS, found) if h is None]
        if absent:
            raise CourseError(rel, f"lesson lacks the section(s) {' '.join(absent)} (level-2 headings)")
        order = [headings.index(h) for h in found]
        if order != sorted(order):
            raise CourseError(rel, f"lesson sections out of order; expected {' '.join(LESSON_SECTIONS)}")
    return tokens
