"""The Python runtimes the site sends: Pyodide's files plus the standard library trimmed by the
build, within the download budget, the same bytes from the same inputs, and a build that
stops when a model imports what the browser's Python lacks; MicroPython's files (its plain build,
and the build with ulab that the tiny-gpt page asks for), and what starting each one downloads
(runtimes.json, which the page quotes before a metered download)."""
import gzip
import json
import re

from support import build_copy

from course import stdlib, vendor

# What the worker downloads (widgets/runtime/worker.js and Pyodide's loader).
RUNTIME = [path.rsplit("/", 1)[1] for path in vendor.STARTUP["pyodide"]]
BUDGET = 4_500_000  # bytes, gzip-compressed as GitHub Pages sends them (the goal; 6.35 MB before)


def test_the_runtime_download_fits_the_budget(site_dir):
    folder = site_dir / "assets" / "vendor" / "pyodide"
    sizes = {name: len(gzip.compress((folder / name).read_bytes(), 6)) for name in RUNTIME}
    assert sum(sizes.values()) <= BUDGET, sizes
    assert stdlib.SITE_PATH == f"assets/vendor/pyodide/{RUNTIME[-1]}"


def test_micropython_ships_and_each_start_is_priced_from_the_files_shipped(site_dir):
    shipped = {path: (site_dir / path).read_bytes() for paths in vendor.STARTUP.values() for path in paths}
    sizes = json.loads((site_dir / "widgets" / "runtime" / "runtimes.json").read_text())
    assert sizes == vendor.startup_sizes(shipped)
    assert sizes["micropython"]["gzip"] < sizes["micropython-ulab"]["gzip"] < 300_000 < BUDGET / 10
    assert sizes["pyodide"]["gzip"] == sum(len(gzip.compress(shipped[p], 6)) for p in vendor.STARTUP["pyodide"])
    for path in ("widgets/runtime/mp_worker.js", "widgets/runtime/mp_bridge.py"):
        assert (site_dir / path).exists()


def test_the_trimmed_library_is_rebuilt_byte_for_byte(site_dir):
    built = (site_dir / stdlib.SITE_PATH).read_bytes()
    assert stdlib.site_file(list(vendor.vendored_files())) == built
    assert len(built) < (site_dir / stdlib.STDLIB_SITE_PATH).stat().st_size / 3


def test_a_model_importing_what_pyodide_lacks_fails_the_build(scratch_project):
    model = scratch_project / "widgets" / "linear_fit" / "model.py"
    text = model.read_text(encoding="utf-8")
    line = text[: text.index("from numfmt import")].count("\n") + 1
    model.write_text(text.replace("from numfmt import", "import venv\nfrom numfmt import", 1), encoding="utf-8")
    result = build_copy(scratch_project)
    assert result.returncode == 1
    lines = [text for text in result.stderr.splitlines() if text.strip()]
    assert len(lines) == 1, result.stderr
    assert f"widgets/linear_fit/model.py:{line}: imports 'venv', which the browser's Python does not have" \
        in lines[0]
    assert (scratch_project / "site" / "index.html").read_text() == "the previous build"


def test_a_common_module_few_widgets_need_travels_with_those_widgets_only(site_dir):
    """tinygpt.py and tinygpt_ulab.py (the engines of the tiny-gpt and kv-generate widgets) and
    stack.py (two C4 widgets') are not in the list every page's Python fetches when it boots; the
    widgets that need them name them for their own load, and no other page does."""
    shared = json.loads((site_dir / "widgets" / "runtime" / "shared-modules.json").read_text())
    assert not {"tinygpt", "tinygpt_ulab", "stack"} & set(shared) and {"numfmt", "rng", "vec"} <= set(shared)
    assert (site_dir / "widgets" / "common" / "tinygpt.py").exists()
    assert (site_dir / "widgets" / "common" / "tinygpt_ulab.py").exists()
    page = (site_dir / "train" / "l1-tiny-gpt" / "index.html").read_text(encoding="utf-8")
    assert 'data-widget="tiny-gpt" data-ready="false" data-modules="packed tinygpt tinygpt_ulab" data-micropython="ulab"' in page
    others = [p for p in site_dir.rglob("*.html") if re.search(r'data-modules="[^"]*tinygpt', p.read_text(encoding="utf-8"))]
    assert sorted(p.relative_to(site_dir).as_posix() for p in others) == \
        ["authors/gallery/index.html", "c3/l4-kv-cache/index.html", "train/l1-tiny-gpt/index.html"]


def test_only_a_page_whose_widgets_import_ulab_asks_for_micropythons_ulab_build(site_dir):
    """The ulab build (about 40 KB more to download than the plain one) is shipped, checked like
    the other runtime files, and named by the pages that need it: the tiny-gpt page, the KV-cache
    lesson (kv-generate runs the array engine too) and the gallery, in the early-start meta (early.js) and on the widget (runtime.js). Other pages keep
    the plain build."""
    from course.widgets import micropython_build, names
    assert micropython_build(["tiny-gpt"]) == "ulab"
    assert [n for n in names() if micropython_build([n])] == ["kv-generate", "tiny-gpt"]
    wasm = site_dir / "assets" / "vendor" / "micropython" / "micropython-ulab.wasm"
    assert vendor.sha256(wasm) == vendor._manifest()["vendor"]["@micropython/micropython-webassembly-pyscript"][
        "sha256"]["micropython-ulab.wasm"]
    asking = sorted(p.relative_to(site_dir).as_posix() for p in site_dir.rglob("*.html")
                    if 'data-micropython="ulab"' in p.read_text(encoding="utf-8"))
    assert asking == ["authors/gallery/index.html", "c3/l4-kv-cache/index.html", "train/l1-tiny-gpt/index.html"]
    page = (site_dir / "train" / "l1-tiny-gpt" / "index.html").read_text(encoding="utf-8")
    meta = page[page.index('<meta name="cw-python"'):]
    assert 'data-micropython="ulab"' in meta[:meta.index(">")]
    lesson = (site_dir / "c4" / "l2-residual" / "index.html").read_text(encoding="utf-8")
    assert '<meta name="cw-python"' in lesson and 'data-micropython="ulab"' not in lesson
