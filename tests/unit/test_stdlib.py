"""The trimmed standard library (course/stdlib.py): what it ships, what it refuses, and that
the same inputs give the same bytes. The browser side (every model runs on it) is in
tests/e2e/test_warm_up_browser.py."""
import ast
import io
import textwrap
import zipfile

import pytest
from support import ROOT

from course import stdlib, vendor
from course.errors import CourseError


@pytest.fixture(scope="module")
def pyodide():
    """Pyodide's archive (checked against its recorded sha256) and its interpreter's C modules."""
    by_dest = {dest: src for src, dest in vendor.vendored_files()}
    return stdlib.Stdlib(by_dest[stdlib.STDLIB_SITE_PATH], by_dest[stdlib.WASM_SITE_PATH])


def shipped(pyodide, *extra_models, tmp_path=None):
    """The modules shipped for the runtime's bridge.py and `extra_models` (sources of scratch
    models), or, without any, for the real widgets."""
    files = [(label, path) for label, path in stdlib.sources() if path == stdlib.BRIDGE or not extra_models]
    for i, source in enumerate(extra_models):
        path = tmp_path / f"scratch{i}" / "model.py"
        path.parent.mkdir(parents=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        files.append((f"widgets/scratch{i}/model.py", path))
    return stdlib.closure(pyodide, *stdlib.direct_imports(pyodide, files))


def test_it_ships_what_pyodide_and_the_runtime_need(pyodide):
    modules = shipped(pyodide)
    assert {"site", "encodings", "encodings.utf_8", "traceback", "zipimport", "pyodide", "pyodide.code",
            "pyodide.ffi", "pyodide._package_loader", "pyodide.webloop", "asyncio"} <= modules
    assert {m for m in pyodide.files if m.split(".")[0] == "_pyodide"} <= modules, "_pyodide ships whole"
    assert {"json", "importlib", "random"} <= modules  # the bridge's and the models' imports
    assert len(modules) < len(pyodide.files) / 2


def test_a_model_that_imports_fractions_gets_it_with_what_it_imports(pyodide, tmp_path):
    before = shipped(pyodide, "import math\n", tmp_path=tmp_path / "before")
    after = shipped(pyodide, "from fractions import Fraction\n", tmp_path=tmp_path / "after")
    assert {"fractions", "decimal", "numbers"} <= after - before
    assert before <= after


def test_imports_inside_a_models_functions_count_too(pyodide, tmp_path):
    assert "colorsys" not in shipped(pyodide, "import math\n", tmp_path=tmp_path / "before")
    after = shipped(pyodide, """
        def view(params):
            import colorsys
            return {"out": {"hue": colorsys.rgb_to_hsv(1, 0, 0)[0]}}
        """, tmp_path=tmp_path / "after")
    assert "colorsys" in after


def test_a_codec_a_model_names_ships(pyodide, tmp_path):
    assert "encodings.utf_16" not in shipped(pyodide, 'DATA = "x".encode()\n', tmp_path=tmp_path / "before")
    assert "encodings.utf_16" in shipped(pyodide, 'DATA = "x".encode("UTF-16")\n', tmp_path=tmp_path / "after")


@pytest.mark.parametrize("source, module, line", [
    ("import math\nimport nosuchmodule\n", "nosuchmodule", 2),
    ("def view(params):\n    import venv\n", "venv", 2),  # in CPython's standard library, not in Pyodide's
    ("from xml.etree import NoSuchThing\nimport xml.nosuch\n", "xml.nosuch", 2),
])
def test_a_module_pyodide_lacks_fails_the_build_naming_model_line_and_module(pyodide, tmp_path, source, module,
                                                                             line):
    with pytest.raises(CourseError) as error:
        shipped(pyodide, source, tmp_path=tmp_path)
    assert str(error.value).startswith(f"widgets/scratch0/model.py:{line}: imports '{module}', ")
    assert "Pyodide" in str(error.value)


def test_an_import_that_except_import_error_carries_on_without_may_be_missing(pyodide, tmp_path):
    """widgets/common/tinygpt_ulab.py: ulab where MicroPython's ulab build has it, else numpy
    (CPython), else neither (Pyodide): no file for them, and the build goes on; what Pyodide has
    still ships."""
    modules = shipped(pyodide, """
        try:
            from ulab import numpy as np
        except ImportError:
            try:
                import numpy as np
            except (ImportError, ValueError):
                np = None
        try:
            import colorsys
        except ImportError:
            colorsys = None
        """, tmp_path=tmp_path)
    assert "colorsys" in modules and not {"ulab", "numpy"} & modules
    with pytest.raises(CourseError, match="imports 'ulab'"):
        shipped(pyodide, "try:\n    import ulab\nexcept ValueError:\n    pass\n", tmp_path=tmp_path / "unguarded")


def test_c_modules_built_into_pyodide_need_no_file(pyodide, tmp_path):
    shipped(pyodide, "import math, itertools, _random, unicodedata, zlib\n", tmp_path=tmp_path)
    assert {"math", "itertools", "zlib"} <= pyodide.builtins


def test_the_archive_is_the_same_bytes_from_the_same_inputs(pyodide, tmp_path, monkeypatch):
    by_dest = {dest: src for src, dest in vendor.vendored_files()}
    first, sizes = stdlib.trimmed(by_dest[stdlib.STDLIB_SITE_PATH], by_dest[stdlib.WASM_SITE_PATH])
    monkeypatch.setattr(stdlib, "CACHE", tmp_path / "cold-cache")  # read every source afresh
    again, _ = stdlib.trimmed(by_dest[stdlib.STDLIB_SITE_PATH], by_dest[stdlib.WASM_SITE_PATH])
    assert again == first
    archive = zipfile.ZipFile(io.BytesIO(first))
    names = archive.namelist()
    assert names == sorted(names) == sorted(sizes)
    assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    assert archive.testzip() is None


def test_shipped_sources_lose_comments_and_docstrings_but_keep_their_lines(pyodide):
    by_dest = {dest: src for src, dest in vendor.vendored_files()}
    archive = zipfile.ZipFile(io.BytesIO(stdlib.site_file([(src, dest) for dest, src in by_dest.items()])))
    for name in ("json/encoder.py", "random.py", "encodings/utf_8.py"):
        original = pyodide.zip.read(name).decode()
        short = archive.read(name).decode()
        assert short.count("\n") == original.count("\n")
        assert len(short) < len(original)
        assert ast.get_docstring(ast.parse(short)) is None
    assert archive.read("_pyodide/_core_docs.py") == pyodide.zip.read("_pyodide/_core_docs.py"), \
        "Pyodide reads these docstrings"


def test_strip_keeps_the_code():
    source = textwrap.dedent('''\
        #!/usr/bin/env python3
        # -*- coding: utf-8 -*-
        """Module docstring."""
        from __future__ import annotations  # must stay first
        import os  # a comment


        class Empty:
            """Only a docstring."""


        def f(x="# not a comment", y=f"{'a'}"):
            """Docstring
            on two lines."""
            return x  # trailing
        ''')
    tree, masked = stdlib.parse(source, "example.py")
    out = stdlib.strip(source, tree, masked, "example.py")
    assert out.count("\n") == source.count("\n")
    assert out.splitlines()[:2] == source.splitlines()[:2], "shebang and coding line kept"
    assert "docstring" not in out.lower() and "# a comment" not in out and "trailing" not in out
    assert 'x="# not a comment"' in out
    compile(out, "example.py", "exec")
    namespace = {}
    exec(compile(out.replace("from __future__ import annotations", ""), "example.py", "exec"), namespace)
    assert namespace["f"]() == "# not a comment" and namespace["Empty"].__doc__ is None


NEWER_SYNTAX = '''\
import os
type Alias[T] = list[T]


def first[T](items: list[T]) -> T:
    import json
    return f"{items["key"]!r:>{10}}" + t"{items}" and json


class Box[T]:
    pass


try:
    import _winapi
except ImportError, AttributeError:
    pass
if __name__ == "__main__":
    import argparse
'''


def test_sources_in_newer_syntax_are_read_with_their_imports_and_lines():
    tree, masked = stdlib.parse(NEWER_SYNTAX, "newer.py")
    at_import, in_functions = stdlib.imports_of(tree, "newer", False)
    assert [(name, line) for name, line, *_ in at_import] == [("os", 1), ("_winapi", 15)]
    assert [(name, line, owner) for name, line, _, owner in in_functions] == [("json", 6, "first")]
    assert masked.text.count("\n") == NEWER_SYNTAX.count("\n")


def test_every_source_in_pyodides_archive_can_be_read(pyodide):
    """A Pyodide upgrade with syntax that mask() does not know fails here, not in a build."""
    for module in pyodide.files:
        stdlib.parse(pyodide.source(module), pyodide.files[module])


def test_a_script_entry_point_does_not_count_as_what_a_model_calls(pyodide):
    # random's command line (main() -> _parse_args() -> argparse) and its self-test (statistics)
    random = pyodide.scan("random")
    assert "argparse" not in random["in_functions"] and "statistics" not in random["in_functions"]
    assert "warnings" in random["in_functions"]  # from a method a model may call
