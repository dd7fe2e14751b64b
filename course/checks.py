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


def heading_line(source, mark):
    """The source line of the level-2 heading starting with `mark` (None if absent).

    heading_line("---\n---\n## ② 从已有出发\n", "②") -> 3
    """
    for number, line in enumerate((source or "").splitlines(), 1):
        if line.startswith(f"## {mark}"):
            return number
    return None


def check_lesson(markdown, rel, meta=None, source=None):
    """No raw Jinja may survive; a lesson page (front matter `lesson:`) has its meta and its contract's
    sections in order. `source` (the file's text) lets an error point at the neighbouring heading's line."""
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
            first = sections.index(absent[0])
            before = next((s for s in reversed(sections[:first]) if s not in absent), None)
            line = heading_line(source, before) if before else None
            where = f"; it belongs after ## {before}" if before else ""
            raise CourseError(rel, f"lesson lacks the section(s) {' '.join(absent)} (level-2 headings){where}{why}",
                              line)
        order = [headings.index(h) for h in found]
        if order != sorted(order):
            moved = next(mark for mark, (a, b) in zip(sections, zip(order, order[1:])) if a > b)
            raise CourseError(rel, f"section {moved} comes after the next one; expected the order "
                                   f"{' '.join(sections)}", heading_line(source, moved))
    return tokens
