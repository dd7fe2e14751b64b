"""Material's JavaScript, started at the reader's first interaction (issue 20).

theme/main.html leaves Material's own <script> out of every page and inlines start_script()
(theme/assets/javascripts/material_start.js, minified) in <head>, with bundle_path(), the site
path of Material's bundle, for it to load when the reader first moves the mouse, taps, presses
a key, turns the wheel or moves focus. The comment at the top of material_start.js says why.
"""
from pathlib import Path

import material

from . import ROOT
from .editor_bundle import inline_script
from .errors import CourseError

BUNDLES = Path(material.__file__).resolve().parent / "templates" / "assets" / "javascripts"
START = ROOT / "theme" / "assets" / "javascripts" / "material_start.js"


def bundle_path():
    """Material's bundle in the site, e.g. assets/javascripts/bundle.a5f9d56c.min.js (its name
    carries a hash that changes with Material's version)."""
    found = sorted(BUNDLES.glob("bundle.*.min.js"))
    if len(found) != 1:
        raise CourseError("theme/main.html", f"expected one bundle.*.min.js in mkdocs-material's "
                          f"assets/javascripts, found {len(found)}: check what this Material version ships")
    return "assets/javascripts/" + found[0].name


def start_script():
    return inline_script(START, ROOT)
