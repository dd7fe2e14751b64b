"""Build errors shown in the page under `mkdocs serve` (the author's live preview).

`python build.py` and `mkdocs build` stop at the first CourseError. Under
`mkdocs serve` an aborted rebuild leaves the browser waiting, so there the
hooks keep going instead and the error reaches the page being looked at:

- an error in a site-wide step (on_config, on_pre_build, on_files: data,
  widgets, vendoring) is remembered, the remaining site-wide steps are
  skipped, and every page shows it;
- an error in one page's step (on_page_markdown, on_page_content) replaces
  that page's content.

The error box is `preview.html` (Jinja, autoescaped). The build then succeeds,
live reload shows the box, and the next good save shows the page again.
"""
import functools
import inspect
import logging
from pathlib import Path

import jinja2

from .errors import CourseError

TEMPLATE = Path(__file__).with_name("preview.html")
SITE_STEPS = {"on_config": "config", "on_pre_build": None, "on_files": "files"}  # -> what a skipped step returns
PAGE_STEPS = ("on_page_markdown", "on_page_content")

# mkdocs prints the records of its own loggers. INFO, not WARNING: `strict: true`
# turns any warning into an aborted build, the very thing this module avoids.
log = logging.getLogger("mkdocs.course.preview")

# Module state survives rebuilds (mkdocs serve keeps hook modules loaded):
# `serving` is set once at start-up, the errors are reset when a build starts.
_state = {"serving": False, "site_error": None, "pages": {}}


def start(command):
    """on_startup: only `mkdocs serve` previews (its `--clean` variant reports 'build')."""
    _state["serving"] = command == "serve"


def guard(hook):
    """Wrap a hook: outside `mkdocs serve` it runs as it is; under serve a CourseError
    becomes what the page shows, as described above."""
    name = hook.__name__
    signature = inspect.signature(hook)

    @functools.wraps(hook)
    def guarded(*args, **kwargs):
        if not _state["serving"] or name not in (*SITE_STEPS, *PAGE_STEPS):
            return hook(*args, **kwargs)
        arguments = signature.bind(*args, **kwargs).arguments
        if name == "on_config":  # the first event of every build
            _state.update(site_error=None, pages={})
        page = arguments.get("page")
        error = _state["site_error"] or (page is not None and _state["pages"].get(page.file.src_uri))
        if not error:
            try:
                return hook(*args, **kwargs)
            except CourseError as e:
                error = e
                log.info("构建出错 (shown in the browser): %s", e)
                if page is None:
                    _state["site_error"] = e
                else:
                    _state["pages"][page.file.src_uri] = e
        if name in PAGE_STEPS:
            return error_box(error)
        passed_on = SITE_STEPS[name]
        return arguments[passed_on] if passed_on else None
    return guarded


def error_box(error):
    """The HTML that stands in for a page's content (raw HTML passes through Markdown as it is)."""
    env = jinja2.Environment(autoescape=True, keep_trailing_newline=True)
    template = env.from_string(TEMPLATE.read_text(encoding="utf-8"))
    where = error.path if error.line is None else f"{error.path}:{error.line}"
    return template.render(where=where, message=error.message)
