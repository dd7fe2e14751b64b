"""Checks on a lesson after its Jinja is rendered (markdown-it-py parses the Markdown)."""
import re

from markdown_it import MarkdownIt

from .errors import CourseError

# Opening delimiters only: TeX legitimately closes braces in pairs ("}}").
LEFTOVER_JINJA = re.compile(r"\{\{|\{%|\{#")


def check_lesson(markdown, rel):
    """No raw Jinja may survive rendering in the text a reader sees."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    for token in tokens:
        if token.type in ("inline", "fence", "code_block") and LEFTOVER_JINJA.search(token.content):
            line = token.map[0] + 1 if token.map else None
            raise CourseError(rel, f"raw Jinja left after rendering: {token.content.strip()[:80]}", line)
    return tokens
