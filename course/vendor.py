"""Copy third-party runtime files (Pyodide, MicroPython, KaTeX's CSS and fonts) from node_modules into the site.

package.json holds the single version pin of each package and, beside it under
"vendor", where its files go in the site and the sha256 of each file shipped.
npm checks the tarball when it installs; this checks every file we ship, so a
stale or corrupted node_modules fails the build instead of reaching students.

After changing a pin: `npm install && python -m course.vendor --update`.
"""
import functools
import gzip
import hashlib
import json
import sys

from . import ROOT
from .errors import CourseError

PACKAGE_JSON = ROOT / "package.json"
# What each widget runtime's worker downloads to start (widgets/runtime/worker.js, mp_worker.js),
# as site paths: the page tells a reader on a metered connection what a start costs.
# "micropython-ulab" is MicroPython's build with ulab (a numpy subset), which mp_worker.js starts
# instead of the plain one for a page whose widgets' Python imports ulab (the tiny-gpt page).
# "pyodide-full-stdlib" is no start: Pyodide's whole standard library, which an exercise's first
# import outside the trimmed one downloads (worker.js); an offline run is told its size.
STARTUP = {
    "pyodide": ["assets/vendor/pyodide/pyodide.mjs", "assets/vendor/pyodide/pyodide.asm.mjs",
                "assets/vendor/pyodide/pyodide.asm.wasm", "assets/vendor/pyodide/pyodide-lock.json",
                "assets/vendor/pyodide/python_stdlib.trimmed.zip"],
    "micropython": ["assets/vendor/micropython/micropython.mjs", "assets/vendor/micropython/micropython.wasm"],
    "micropython-ulab": ["assets/vendor/micropython/micropython.mjs", "assets/vendor/micropython/micropython-ulab.wasm"],
    "pyodide-full-stdlib": ["assets/vendor/pyodide/python_stdlib.zip"],
}


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _manifest():
    return json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))


def _installed(package, node_modules, pin):
    pkg_dir = node_modules / package
    meta = pkg_dir / "package.json"
    if not meta.exists():
        raise CourseError(f"node_modules/{package}", "missing: run `npm ci` to install the pinned front-end packages")
    version = json.loads(meta.read_text(encoding="utf-8"))["version"]
    if version != pin:
        raise CourseError(f"node_modules/{package}/package.json",
                          f"version {version} installed but package.json pins {pin}: run `npm ci`")
    return pkg_dir


def vendored_files(node_modules=None):
    """Yield (source path, site path) for each checked file; raise CourseError on any mismatch."""
    node_modules = node_modules or ROOT / "node_modules"
    manifest = _manifest()
    for package, spec in manifest["vendor"].items():
        pkg_dir = _installed(package, node_modules, manifest["dependencies"][package])
        for rel, expected in spec["sha256"].items():
            src = pkg_dir / rel
            where = f"node_modules/{package}/{rel}"
            if not src.exists():
                raise CourseError(where, "missing from the installed package: run `npm ci`")
            if sha256(src) != expected:
                raise CourseError(where, f"sha256 differs from package.json's vendor record for "
                                         f"{package} {manifest['dependencies'][package]}: run `npm ci`")
            yield src, f"{spec['dest']}/{rel}"


@functools.lru_cache(maxsize=64)
def _gzipped_size(content):
    return len(gzip.compress(content, compresslevel=6))


def startup_sizes(site_files):
    """{runtime: {"bytes": sum, "gzip": sum}} over STARTUP's files, from `site_files` (site path ->
    bytes): what a reader downloads the first time (a static host sends them gzip-compressed)."""
    sizes = {}
    for runtime, paths in STARTUP.items():
        missing = [p for p in paths if p not in site_files]
        if missing:
            raise CourseError("course/vendor.py", f"STARTUP names {', '.join(missing)}, which the site does not ship")
        sizes[runtime] = {"bytes": sum(len(site_files[p]) for p in paths),
                          "gzip": sum(_gzipped_size(site_files[p]) for p in paths)}
    return sizes


def startup_sizes_json(vendored, generated):
    """widgets/runtime/runtimes.json: startup_sizes() of the vendored files plus the generated ones
    (site path -> bytes, e.g. the trimmed standard library)."""
    files = {dest: src.read_bytes() for src, dest in vendored if dest in {p for ps in STARTUP.values() for p in ps}}
    return json.dumps(startup_sizes({**files, **generated}), sort_keys=True)


def update(node_modules=None):
    """Re-record the sums after a deliberate pin change (same file list, new versions)."""
    node_modules = node_modules or ROOT / "node_modules"
    manifest = _manifest()
    for package, spec in manifest["vendor"].items():
        pkg_dir = _installed(package, node_modules, manifest["dependencies"][package])
        spec["sha256"] = {rel: sha256(pkg_dir / rel) for rel in spec["sha256"]}
    PACKAGE_JSON.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python -m course.vendor --update")
    update()
