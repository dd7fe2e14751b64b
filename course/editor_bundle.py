"""The exercises' editor as one file: CodeMirror 6 bundled by esbuild from the pinned npm packages.

course/editor_entry.js imports what the editor needs from node_modules (pinned in
package.json, installed by `npm ci`); esbuild turns it into one minified ES module that the
site serves at SITE_PATH and that widgets/runtime/exercise.js imports only when an exercise
comes near the viewport, so a page's first load never carries it.

The bundle is cached under node_modules/.cache/course-editor/, keyed by the entry file and
package-lock.json, so a rebuild under `mkdocs serve` does not run esbuild again.

    python -m course.editor_bundle     writes the bundle's size, minified and gzipped
"""
import gzip
import hashlib
import subprocess
import sys

from markupsafe import Markup

from . import ROOT
from .errors import CourseError

ENTRY = ROOT / "course" / "editor_entry.js"
LOCK = ROOT / "package-lock.json"
ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"
CACHE = ROOT / "node_modules" / ".cache" / "course-editor"
SITE_PATH = "assets/vendor/codemirror/editor.js"


def _key():
    digest = hashlib.sha256(ENTRY.read_bytes() + b"\0" + LOCK.read_bytes())
    return digest.hexdigest()[:16]


def esbuild(rel, *args, stdin=None):
    """esbuild's output, minified for es2020, for the file `rel` (relative to ROOT; a failure
    names it), or for the text `stdin` that came from it."""
    if not ESBUILD.exists():
        raise CourseError("node_modules/.bin/esbuild", "missing: run `npm ci` to install the pinned front-end packages")
    done = subprocess.run([str(ESBUILD), *([] if stdin is not None else [rel]), *args, "--minify", "--target=es2020",
                           "--log-level=error"], input=stdin, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise CourseError(rel, f"esbuild failed: {done.stderr.strip()}")
    return done.stdout


def inline_script(source, root):
    """The classic script at the path `source` (a failure names it relative to `root`), minified
    by esbuild, for a template to inline in a <script> (its comments stay in the source). esbuild
    writes "</script" in a string as "<\\/script", so the page's <script> cannot end early."""
    text = esbuild(source.relative_to(root).as_posix(), stdin=source.read_text(encoding="utf-8"))
    return Markup(text.strip())


def bundle():
    """The editor module's text (from the cache when the entry and the lock are unchanged)."""
    cached = CACHE / f"editor-{_key()}.js"
    if cached.exists():
        return cached.read_text(encoding="utf-8")
    text = esbuild(ENTRY.relative_to(ROOT).as_posix(), "--bundle", "--format=esm")
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(".part")
    partial.write_text(text, encoding="utf-8")
    partial.replace(cached)
    return text


if __name__ == "__main__":
    text = bundle().encode("utf-8")
    sys.stdout.write(f"{SITE_PATH}: {len(text):,} bytes, {len(gzip.compress(text, 9)):,} gzipped\n")
