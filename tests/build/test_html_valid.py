"""Every built page is valid HTML: the Nu Html Checker (vnu.jar, npm `vnu-jar`, pinned in
package.json; Java is Debian's default-jre-headless, installed by .ci/run) finds no error in
our markup.

Only Material's own errors are let through, each matched by its message and by the
theme's element it is reported on, so the same mistake in our templates still fails:

* `autocomplete="off"` on Material's checkbox toggles (`<input class="md-toggle" ...>`, base.html);
* `tabindex=""` on a section's `<label class="md-nav__link">` (partials/nav-item.html, navigation.sections);
* the contents title `<label class="md-nav__title" for="__toc">` on a page kept out of the nav
  (authors/*), where Material renders no `#__toc` input (partials/toc.html).

The widgets' CSS is inlined in the page, so the checker's CSS validator reads it too; it does
not know `paint-order` (CSS Fill and Stroke 3, SVG 2; every browser the site runs on has it),
which is let through by its property name only.

Rerun by hand: java -jar node_modules/vnu-jar/build/dist/vnu.jar --skip-non-html --errors-only site/
"""
import json
import os
import shutil
import subprocess

import pytest

from support import ROOT

VNU = ROOT / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"

THEME_ERRORS = [  # (start of the message, what the reported element's markup holds)
    ("Attribute “autocomplete” is only allowed when the input type is", '<input class="md-toggle"'),
    ("Bad value “” for attribute “tabindex” on element “label”", '<label class="md-nav__link"'),
    ("The value of the “for” attribute of the “label” element must be the ID of a non-hidden form control",
     '<label class="md-nav__title" for="__toc">'),
]


CSS_UNKNOWN_TO_THE_CHECKER = ["paint-order"]


def theirs(message):
    if any(message["message"].startswith(f"CSS: “{prop}”: Property “{prop}” doesn't exist")
           for prop in CSS_UNKNOWN_TO_THE_CHECKER):
        return True
    return any(message["message"].startswith(text) and element in message.get("extract", "")
               for text, element in THEME_ERRORS)


def nu_errors(pages):
    java = shutil.which("java")
    if not java or not VNU.exists():
        missing = "java (Debian: default-jre-headless)" if not java else f"{VNU} (npm ci)"
        if os.environ.get("CI"):
            pytest.fail(f"the Nu Html Checker cannot run: {missing} is missing")
        pytest.skip(f"the Nu Html Checker cannot run: {missing} is missing")
    result = subprocess.run([java, "-jar", str(VNU), "--errors-only", "--format", "json", *map(str, pages)],
                            capture_output=True, text=True)
    report = json.loads(result.stderr or result.stdout)
    return [m for m in report["messages"] if m["type"] in ("error", "non-document-error")]


def test_every_built_page_is_valid_html(site_dir):
    pages = sorted(site_dir.rglob("*.html"))
    assert {"index.html", "404.html", "c4/l1-ffn/index.html"} <= {p.relative_to(site_dir).as_posix() for p in pages}
    ours = [m for m in nu_errors(pages) if not theirs(m)]
    assert not ours, "\n".join(
        f"{m.get('url', '?').split(str(site_dir), 1)[-1]}:{m.get('lastLine', '?')}: {m['message']}  "
        f"[{m.get('extract', '').strip()}]" for m in ours)


def test_the_checker_reports_a_label_with_two_controls(tmp_path):
    """The check is live: the widgets' old mistake, a <label> around an <input> and its <output>, is an error."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!doctype html><html lang="zh"><head><meta charset="utf-8"><title>t</title></head><body>'
                   '<label>a <input type="range"> <output>1</output></label></body></html>', encoding="utf-8")
    errors = nu_errors([bad])
    assert len(errors) == 1 and "may contain at most one" in errors[0]["message"] and not theirs(errors[0])
