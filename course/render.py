"""The Jinja environment lessons are rendered with, and error reporting by line."""
import functools

import jinja2

from .errors import CourseError


class ExplainedUndefined(jinja2.StrictUndefined):
    """A misspelt name fails at once and says which names exist there:
    `facts.anchor.d_fff` -> "no 'd_fff' here; the names are: d, d_ff, ..." """

    @property
    def _undefined_message(self):
        obj, name = self._undefined_obj, self._undefined_name
        if isinstance(obj, dict) and name is not None:
            return f"no {name!r} here; the names are: {', '.join(sorted(map(str, obj)))}"
        return super()._undefined_message


def strict(fn):
    """A filter handed an undefined value raises the undefined name's own error (not a format error)."""
    @functools.wraps(fn)
    def wrapper(value, *args, **kwargs):
        if isinstance(value, jinja2.Undefined):
            value._fail_with_undefined_error()
        return fn(value, *args, **kwargs)
    return wrapper


def make_env(facts, filters, widget, model, outline):
    """Lesson Markdown sees `facts`, the number filters, `widget(name)` to embed a widget,
    `model(name)` to quote a widget model's own results in prose, the course `outline`,
    and per page (render_lesson's context) `this` (its outline entry) and `lesson(id)`."""
    env = jinja2.Environment(undefined=ExplainedUndefined, autoescape=False, keep_trailing_newline=True)
    env.filters.update({name: strict(fn) for name, fn in filters.items()})
    env.globals.update(facts=facts, widget=widget, model=model, outline=outline)
    return env


def render_lesson(env, source, rel, line_offset=0, context=None):
    """Render one lesson's Markdown; any fault becomes CourseError('lessons/x.md', msg, line).

    `line_offset` is the number of file lines before `source` (the front matter);
    `context` holds the page's own names (`this`, `lesson`).
    """
    try:
        code = env.compile(source, name=rel, filename=rel)
        return env.template_class.from_code(env, code, env.make_globals(None)).render(**(context or {}))
    except jinja2.TemplateSyntaxError as e:
        raise CourseError(rel, f"Jinja syntax error: {e.message}", e.lineno + line_offset) from None
    except Exception as e:  # undefined names, unknown widgets, model failures
        message = e.message if isinstance(e, CourseError) else f"{type(e).__name__}: {e}"
        if isinstance(e, CourseError) and e.path != rel:
            message = str(e)  # a fault in another file (a widget model): keep its own location
        line = _template_line(e.__traceback__, rel)
        raise CourseError(rel, message, None if line is None else line + line_offset) from None


def _template_line(tb, rel):
    """Jinja rewrites tracebacks so template frames carry the template's own line numbers."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == rel:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
