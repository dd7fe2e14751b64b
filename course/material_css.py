"""Material's palette stylesheet without its rule that turns transitions off while the palette
switches (issue 20).

Material's palette component sets `data-md-color-switching` on <body> when it mounts, and takes
it away again: with `[data-md-color-switching] *` in the stylesheet, each of the two changes
restyles every element of the page. On a long lesson with the CPU slowed 4x that was about a
third of the page's style time at load (benchmarks/main_thread.py). Without the rule, switching
the palette by hand lets the few colour transitions run: nothing else changes.
"""
import re

from .errors import CourseError

SITE_PATTERN = re.compile(r"assets/stylesheets/palette\.[0-9a-f]+\.min\.css")
SWITCHING_RULE = ("[data-md-color-switching] *,[data-md-color-switching] :after,"
                  "[data-md-color-switching] :before{transition-duration:0s!important}")


def is_palette_css(dest):
    return SITE_PATTERN.fullmatch(dest) is not None


def without_switching_rule(css, path):
    """The stylesheet without the rule; a Material whose stylesheet lacks it fails the build."""
    if css.count(SWITCHING_RULE) != 1:
        raise CourseError(path, "Material's palette stylesheet no longer holds the rule "
                          "course/material_css.py drops: check what this Material version does")
    return css.replace(SWITCHING_RULE, "")
