"""Pyodide's standard library, trimmed to what the widgets' Python imports.

Pyodide ships Python's standard library as one archive, python_stdlib.zip (about
2.5 MB compressed), of which the widgets use a small part. The site ships instead a
trimmed archive (SITE_PATH), computed from the sources at every build. It holds

  - what every widget's model.py, widgets/common/*.py and the runtime's own Python
    (widgets/runtime/bridge.py, checker.py, run_exercise.py) import, anywhere in those files;
  - for each standard module they import (and `traceback`, which formats every error),
    what its functions import too: those a user of the module can reach, i.e. the
    names in its `__all__` (or not starting with _) and what they use, so a command
    line main() or a self-test is left out (live_names);
  - what the interpreter and Pyodide's JavaScript import by name (STARTUP), with
    `_pyodide` whole;
  - and, through the archive, what each of these imports when it is imported (module
    level and class bodies; `if TYPE_CHECKING:` and `if __name__ == "__main__":` aside),
    and so on. A function of a deeper module imports what it needs only when called;
    none that the widgets reach needs more today, and the browser test that runs every
    model on the trimmed archive is the check;
  - the codecs that a shipped module or a model passes as an encoding ("utf-16").

A model that imports a module Pyodide does not have fails the build, naming the model,
the line and the module, so a student never meets a ModuleNotFoundError.

Pyodide's sources are Python 3.14 while the build may run 3.11: they are read through
mask(), which blanks strings and comments so that `ast` sees their structure whatever
newer string or type syntax they use.

Comments and docstrings are left out of the shipped sources (as `python -OO` leaves out
docstrings; the standard library is tested that way), with every line kept where it
was, so that a traceback still points to the right line. `pyodide` and `_pyodide` are
shipped as they are: Pyodide reads their docstrings.

The archive is deterministic (entries sorted, fixed time stamps and attributes,
deflate level 9): the same inputs give the same bytes. What is learnt about each module
of Pyodide's archive is cached under node_modules/.cache/course-stdlib/, keyed by the
archive's and this file's contents, so a build reads it once (about 5 s) and then
takes a fraction of a second.

    python -m course.stdlib      lists the shipped modules and their sizes
"""
import ast
import hashlib
import io
import json
import os
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from . import ROOT, widgets
from .errors import CourseError

SITE_PATH = "assets/vendor/pyodide/python_stdlib.trimmed.zip"
STDLIB_SITE_PATH = "assets/vendor/pyodide/python_stdlib.zip"  # the vendored full archive (sha256-checked)
WASM_SITE_PATH = "assets/vendor/pyodide/pyodide.asm.wasm"
BRIDGE = widgets.WIDGETS / "runtime" / "bridge.py"
CHECKER = widgets.WIDGETS / "runtime" / "checker.py"  # checks a student's exercise code in the browser
RUN_EXERCISE = widgets.WIDGETS / "runtime" / "run_exercise.py"  # runs it (imports checker.py as _cw_checker)
CLEAN_STATE = widgets.WIDGETS / "runtime" / "clean_state.py"  # puts back what a run changed
RUNTIME_MODULES = {"_cw_bridge", "_cw_checker", "_cw_run", "_cw_state"}  # the names worker.js gives the runtime's files

# Imported by name, not by an import statement that a scan could find: by the interpreter's
# C code, or by Pyodide's JavaScript (pyodide.asm.mjs).
STARTUP = {
    "site": "run by the interpreter when it starts",
    "encodings": "the codec registry the interpreter starts with",
    "encodings.utf_8": "the interpreter's own encoding",
    "io": "the interpreter's standard streams",
    "warnings": "imported by the interpreter's C warnings machinery",
    "traceback": "prints and formats a Python error (Pyodide's error messages)",
    "_colorize": "asked by the interpreter whether a traceback is coloured",
    "copyreg": "imported by object.__reduce_ex__",
    "zipimport": "imports modules from this very archive",
    "_pyodide": "Pyodide's start-up, before the JavaScript bridge exists",
    "_pyodide._base": "Pyodide's JavaScript (runPython)",
    "pyodide": "Pyodide's JavaScript",
    "pyodide.code": "Pyodide's JavaScript (runPython, calls with keyword arguments)",
    "pyodide.ffi": "Pyodide's JavaScript",
    "pyodide._package_loader": "Pyodide's JavaScript",
}
WHOLE = ("_pyodide",)  # all of it runs at start-up
CALLED = ("traceback",)  # whose functions run for every Python error: what they import counts
# Built into every CPython without a PyInit_ function of their own.
CORE_BUILTINS = {"sys", "builtins", "marshal", "_warnings", "_imp", "_frozen_importlib",
                 "_frozen_importlib_external"}
SPECIAL = {"os.path"}  # a module that its package sets up, not a file
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
CACHE = ROOT / "node_modules" / ".cache" / "course-stdlib"


# ---------------------------------------------------------------- reading 3.14 sources

_PREFIXED_QUOTE = re.compile(r"([rRbBuUfFtT]{0,2})('''|\"\"\"|'|\")")
_NEXT = re.compile(r"[#'\"]|[^\W\d]\w*")
_WORD = re.compile(r"\w+")  # a comment, a quote, or a name (which may prefix a string)


@dataclass
class Masked:
    """A source with strings and comments blanked: `strings` maps where each string starts
    in the masked text, (line, column), to its (start, end) in the source; `comments`
    lists the (start, end) of each comment."""
    text: str
    strings: dict = field(default_factory=dict)
    comments: list = field(default_factory=list)


def mask(source):
    """Blank every string literal (f- and t-strings of any nesting included) to "" and drop
    every comment, keeping line numbers, so that `ast` parses newer syntax's structure.

    >>> mask('x = f"{a["k"]}"  # note\\n').text
    'x = ""  \\n'
    """
    out, strings, comments = [], {}, []
    size, line, line_start = 0, 1, 0  # the masked text's length, its current line and where that starts

    def emit(text):
        nonlocal size, line, line_start
        newlines = text.count("\n")
        if newlines:
            line, line_start = line + newlines, size + text.rfind("\n") + 1
        size += len(text)
        out.append(text)

    pos = 0
    while m := _NEXT.search(source, pos):
        start = m.start()
        emit(source[pos:start])
        quote = _PREFIXED_QUOTE.match(source, start)
        if m.group() == "#":
            pos = source.find("\n", start) % (len(source) + 1)  # up to the line's end (or the file's)
            comments.append((start, pos))
        elif quote and (quote.group(1) or m.group() in "'\""):
            pos = _string_end(source, quote)
            strings[line, size - line_start] = (start, pos)
            emit('""' + " \\\n" * source.count("\n", start, pos))  # continuations keep each line in place
        else:
            emit(m.group())
            pos = m.end()
    emit(source[pos:])
    return Masked("".join(out), strings, comments)


def _string_end(source, quote):
    """Offset just past the string literal whose prefix and opening quote `quote` matched.
    Inside an f- or t-string's replacement fields, nested strings may reuse its quote."""
    prefix, delim = quote.group(1).lower(), quote.group(2)
    formatted = "f" in prefix or "t" in prefix
    i, length, depth = quote.end(), len(source), 0
    while i < length:
        c = source[i]
        if c == "\\":
            i += 2
        elif depth == 0:
            if source.startswith(delim, i):
                return i + len(delim)
            if formatted and source.startswith("{{", i):
                i += 2
            elif formatted and c == "{":
                depth, i = 1, i + 1
            else:
                i += 1
        elif c == "{":
            depth += 1
            i += 1
        elif c == "}":
            depth -= 1
            i += 1
        elif c in "'\"":
            i = _string_end(source, _PREFIXED_QUOTE.match(source, i))
        elif c.isalpha() or c == "_":
            nested = _PREFIXED_QUOTE.match(source, i)
            i = _string_end(source, nested) if nested and nested.group(1) else _WORD.match(source, i).end()
        else:
            i += 1
    return length


# Syntax newer than 3.11 outside strings: generic parameters, `type` aliases, `except A, B:`.
_REPAIRS = [
    (re.compile(r"(?m)^(\s*(?:async\s+)?(?:def|class)\s+\w+)\[[^\]]*\]"), r"\1"),
    (re.compile(r"(?m)^(\s*)type\s+(\w+)\s*(?:\[[^\]]*\])?\s*="), r"\1\2 ="),
    (re.compile(r"(?m)^(\s*except\*?)\s+([^():\n]+,[^():\n]+):"), r"\1 (\2):"),
]


def parse(source, filename):
    """(ast of the masked source, Masked) for a standard-library source of any 3.x syntax."""
    masked = mask(source)
    text = masked.text
    for pattern, repl in _REPAIRS:
        text = pattern.sub(repl, text)
    try:
        return ast.parse(text, filename), masked
    except SyntaxError as e:
        raise CourseError(filename, f"cannot read this standard-library source ({e.msg}, line {e.lineno}): "
                                    f"course/stdlib.py's mask() needs to learn newer syntax") from None


# ---------------------------------------------------------------- imports

def imports_of(tree, module, is_package, literal=None):
    """(imports that run when the module is imported, imports inside its functions), each a
    list of (name, line, certain, owner). `from a import b` gives `a` (certain) and `a.b`
    (maybe a submodule, maybe just a name); relative imports are resolved against `module`;
    `owner` is the module-level function or class the import sits in. `literal(node)` reads
    a string constant (in a masked tree, its value is in the source)."""
    literal = literal or _constant
    at_import, in_functions = [], []

    def visit(node, owner, in_function):
        found = in_functions if in_function else at_import
        if isinstance(node, ast.If) and _never_on_import(node.test):
            for child in node.orelse:
                visit(child, owner, in_function)
            return
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, True, owner) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            found.append((base, node.lineno, True, owner))
            found += [(f"{base}.{a.name}", node.lineno, False, owner) for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Call) and _dynamic_import(node):
            name = literal(node.args[0])
            if isinstance(name, str) and name and not name.startswith("."):
                found.append((name, node.lineno, True, owner))
        defines = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, owner or (node.name if defines else None), inner)

    visit(tree, None, False)
    return at_import, in_functions


def _constant(node):
    return node.value if isinstance(node, ast.Constant) else None


def live_names(tree, literal):
    """The module-level functions and classes that a user of the module can reach: those in
    `__all__` (or, without one, whose names do not start with _), dunders such as a module
    __getattr__, what module-level code uses, and what those use in turn. A command-line
    main() or a _test() that only `if __name__ == "__main__":` calls is not among them."""
    defs = {}
    code = []  # module-level code outside the definitions (decorators and bases included)

    def collect(node):
        if isinstance(node, ast.If) and _never_on_import(node.test):
            code.extend(node.orelse)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs[node.name] = node
            code.extend(node.decorator_list + getattr(node, "bases", []) + getattr(node, "keywords", []))
            return
        if isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While, ast.Module)) or \
                type(node).__name__ == "TryStar":
            for child in ast.iter_child_nodes(node):
                collect(child) if isinstance(child, ast.stmt) else code.append(child)
            for handler in getattr(node, "handlers", []):
                for child in handler.body:
                    collect(child)
            return
        code.append(node)

    collect(tree)
    exported = _all_names(tree, literal)
    if exported is None:
        exported = {name for name in defs if not name.startswith("_")}
    todo = [*exported, *(name for name in defs if name.startswith("__") and name.endswith("__"))]
    todo += [n.id for node in code for n in ast.walk(node) if isinstance(n, ast.Name)]
    live = set()
    while todo:
        name = todo.pop()
        if name in defs and name not in live:
            live.add(name)
            todo += [n.id for n in ast.walk(defs[name]) if isinstance(n, ast.Name)]
    return live


def _all_names(tree, literal):
    """The names in a literal `__all__ = [...]`, or None."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets) \
                and isinstance(node.value, (ast.List, ast.Tuple)):
            names = [literal(element) for element in node.value.elts]
            if all(isinstance(name, str) for name in names):
                return set(names)
    return None


def _literals(source, masked):
    """literal(node): the value of a string constant of the masked tree, read from `source`."""
    lines = masked.text.split("\n")

    def literal(node):
        if not (isinstance(node, ast.Constant) and node.value == "" and node.end_lineno == node.lineno
                and node.end_col_offset == node.col_offset + 2):
            return None
        column = len(lines[node.lineno - 1].encode()[: node.col_offset].decode())
        start, end = masked.strings[node.lineno, column]
        return ast.literal_eval(source[start:end])
    return literal


def _never_on_import(test):
    """`if TYPE_CHECKING:` and `if __name__ == "__main__":` (a module of the archive is never
    run as a script; in the masked source the string reads "")."""
    text = ast.dump(test)
    return "TYPE_CHECKING" in text or "'__name__'" in text and isinstance(test, ast.Compare)


def _dynamic_import(call):
    """importlib.import_module("name") or __import__("name"), with a constant name."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    return (name in ("import_module", "__import__") and call.args and isinstance(call.args[0], ast.Constant)
            and isinstance(call.args[0].value, str) and not call.args[0].value.startswith("."))


# ---------------------------------------------------------------- comments and docstrings

def strip(source, tree, masked, filename):
    """`source` without its comments and docstrings, every line where it was (a docstring
    that is its body's only statement becomes `pass`). Checked: the result parses to the
    same tree as `source`, docstrings aside. `tree` and `masked` are parse(source)."""
    lines = masked.text.split("\n")
    cuts = []
    for start, end in masked.comments:
        if source.count("\n", 0, start) < 2 and re.match(r"#!|#.*coding[:=]", source[start:end]):
            continue  # a shebang or an encoding declaration
        while start and source[start - 1] in " \t":
            start -= 1
        cuts.append((start, end, ""))
    comment_starts = {start for start, _ in masked.comments}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        doc = node.body[0] if node.body else None
        if not (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and doc.value.value == ""
                and doc.end_lineno == doc.lineno and doc.end_col_offset == doc.col_offset + 2):
            continue  # not a docstring, or one written as several strings
        column = len(lines[doc.lineno - 1].encode()[: doc.col_offset].decode())
        start, end = masked.strings[doc.lineno, column]
        rest = source[end:source.find("\n", end) % (len(source) + 1)]
        if rest.strip() and end + len(rest) - len(rest.lstrip(" \t")) not in comment_starts:
            continue  # more code follows it on its line
        keep = "pass" if len(node.body) == 1 and not isinstance(node, ast.Module) else ""
        cuts.append((start, end, keep + "\n" * source.count("\n", start, end)))
        if keep:
            node.body[0] = ast.Pass()  # the tree the stripped source must parse to
        else:
            del node.body[0]
    parts, pos = [], 0
    for start, end, text in sorted(cuts):
        parts += [source[pos:start], text]
        pos = end
    stripped = "".join(parts + [source[pos:]])
    if stripped.count("\n") != source.count("\n") or ast.dump(parse(stripped, filename)[0]) != ast.dump(tree):
        raise CourseError(filename, "leaving out comments and docstrings would change this module's code "
                                    "(a bug in course/stdlib.py's strip())")
    return stripped


# ---------------------------------------------------------------- the archive

class Stdlib:
    """Pyodide's python_stdlib.zip and the names of the C modules built into its interpreter.
    What is learnt about each module (its imports, its stripped source) is kept in a cache
    beside node_modules' own, keyed by the archive's and this file's contents."""

    def __init__(self, zip_path, wasm_path):
        data = zip_path.read_bytes()
        self.zip = zipfile.ZipFile(io.BytesIO(data))
        self.files = {}  # module -> its file in the archive
        for name in self.zip.namelist():
            if name.endswith(".py"):
                self.files[name[:-3].replace("/", ".").removesuffix(".__init__")] = name
        # C modules linked into the interpreter: each has a PyInit_<name> function.
        found = re.findall(rb"PyInit_(\w+)", wasm_path.read_bytes())
        self.builtins = CORE_BUILTINS | {name.decode() for name in found}
        key = hashlib.sha256(data + Path(__file__).read_bytes()).hexdigest()[:16]
        self.cache_path = CACHE / f"{key}.json"
        try:
            self.cache = json.loads(self.cache_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.cache = {}
        self.cache_changed = False

    def is_package(self, module):
        return self.files[module].endswith("/__init__.py")

    def has(self, module):
        return module in self.files or module in self.builtins or module in SPECIAL

    def source(self, module):
        return self.zip.read(self.files[module]).decode("utf-8")

    def scan(self, module):
        """{at_import: [name], in_functions: [name], encodings: [name], stripped: str | None}."""
        if module not in self.cache:
            source, filename = self.source(module), self.files[module]
            tree, masked = parse(source, filename)
            literal = _literals(source, masked)
            at_import, in_functions = imports_of(tree, module, self.is_package(module), literal)
            live = live_names(tree, literal)
            whole = module.split(".")[0] in ("_pyodide", "pyodide")  # Pyodide reads their docstrings
            self.cache[module] = {
                "at_import": sorted({name for name, *_ in at_import}),
                # what a user of the module can make it import: its live functions' imports
                "in_functions": sorted({name for name, _, _, owner in in_functions if owner in live}),
                "encodings": sorted(_encoding_names(tree, literal)),
                "stripped": None if whole else strip(source, tree, masked, filename)}
            self.cache_changed = True
        return self.cache[module]

    def save_cache(self):
        if not self.cache_changed:
            return
        try:
            CACHE.mkdir(parents=True, exist_ok=True)
            tmp = self.cache_path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self.cache, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.cache_path)
            for old in CACHE.glob("*.json"):  # made from another archive or another version of this file
                if old != self.cache_path:
                    old.unlink(missing_ok=True)
        except OSError:
            pass  # a read-only checkout builds all the same, only slower


_ENCODING_CALLS = {"encode", "decode", "lookup", "getencoder", "getdecoder", "getincrementalencoder",
                   "getincrementaldecoder", "getreader", "getwriter", "iterencode", "iterdecode"}


def _encoding_names(tree, literal):
    """The string constants that `tree` passes as an encoding: `x.encode("utf-16")`,
    `codecs.lookup("idna")`, `encoding="cp437"` in a call or as a parameter's default,
    `str(data, "ascii")`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            found += [k.value for k in node.keywords if k.arg == "encoding"]
            if name in _ENCODING_CALLS:
                found += node.args[:1]
            elif name in ("str", "bytes", "bytearray"):
                found += node.args[1:2]
        elif isinstance(node, ast.arguments):
            params = node.posonlyargs + node.args
            defaults = list(zip(params[len(params) - len(node.defaults):], node.defaults))
            defaults += [(a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults) if d is not None]
            found += [default for arg, default in defaults if arg.arg == "encoding"]
    return {value for value in map(literal, found) if isinstance(value, str)}


def closure(stdlib, direct, encodings=(), startup=STARTUP):
    """The archive's modules to ship: `direct` and CALLED modules with what their live
    functions import, the `startup` modules and the `WHOLE` packages, what all of these
    import when imported, and so on; and the codecs named by `encodings` or by a shipped
    module. Names that are not modules of the archive (a class imported with `from`, a C
    module) are passed over."""
    modules, todo = set(), list(startup) + [m for m in stdlib.files if m.split(".")[0] in WHOLE]
    for name in sorted({*direct, *CALLED}):
        todo.append(name)
        if name in stdlib.files:
            todo += stdlib.scan(name)["in_functions"]
    while todo:
        parts = todo.pop().split(".")
        for i in range(1, len(parts) + 1):
            module = ".".join(parts[:i])
            if module in stdlib.files and module not in modules:
                modules.add(module)
                todo += stdlib.scan(module)["at_import"]
    return modules | _codecs_named(stdlib, modules, encodings) | _sysconfig_data(stdlib, modules)


def _codecs_named(stdlib, modules, encodings):
    """The codecs of `encodings` that a shipped module or a model passes as an encoding
    ("utf-16", "cp437"), found as encodings.search_function finds them: normalised, then
    through the aliases."""
    aliases = _aliases(stdlib)
    codecs = set()
    for name in {*encodings, *(e for module in modules for e in stdlib.scan(module)["encodings"])}:
        key = re.sub(r"[^\w.]+", "_", name.strip().lower())
        for candidate in (aliases.get(key), key):
            if f"encodings.{candidate}" in stdlib.files:
                codecs.add(f"encodings.{candidate}")
    return codecs | {dep for codec in codecs for dep in stdlib.scan(codec)["at_import"] if dep in stdlib.files}


def _aliases(stdlib):
    """encodings.aliases.aliases, read from the archive's source without running it."""
    for node in ast.parse(stdlib.source("encodings.aliases")).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "aliases":
            return ast.literal_eval(node.value)
    raise CourseError(stdlib.files["encodings.aliases"], "no `aliases = {...}` table found")


def _sysconfig_data(stdlib, modules):
    """sysconfig imports its platform's data module under a name that it computes."""
    return {m for m in stdlib.files if m.startswith("_sysconfigdata_")} if "sysconfig" in modules else set()


def write_archive(entries):
    """A zip of {name: bytes}, the same bytes for the same entries: sorted, fixed times and modes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix, wherever the build runs
            info.external_attr = 0o644 << 16
            archive.writestr(info, entries[name], compresslevel=9)
    return buffer.getvalue()


# ---------------------------------------------------------------- the widgets' Python

def sources():
    """(site-relative label, path) of every Python file the browser runs: the widgets' models,
    widgets/common/ and the runtime's own bridge.py, checker.py, run_exercise.py and clean_state.py."""
    found = [widgets.folder_of(name) / "model.py" for name in widgets.names()]
    found += sorted(widgets.COMMON.glob("*.py")) + [BRIDGE, CHECKER, RUN_EXERCISE, CLEAN_STATE]
    return [(path.relative_to(widgets.ROOT).as_posix(), path) for path in found]


def _optional_lines(tree):
    """The lines of imports in the body of a `try` that catches ImportError: the file carries on
    where the module is missing (widgets/common/tinygpt_ulab.py: ulab, else numpy, else neither)."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError")
                for h in node.handlers for n in ([h.type] if isinstance(h.type, ast.Name) else getattr(h.type, "elts", []))):
            lines |= {child.lineno for child in node.body if isinstance(child, (ast.Import, ast.ImportFrom))}
    return lines


def direct_imports(stdlib, files):
    """(the standard modules these files import, the encodings they name); a module that
    Pyodide lacks fails the build at its line."""
    local = set(widgets.common_modules()) | RUNTIME_MODULES
    direct, encodings = set(), set()
    for label, path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), label)
        except SyntaxError as e:
            raise CourseError(label, f"invalid Python: {e.msg}", line=e.lineno) from None
        at_import, in_functions = imports_of(tree, path.stem, False)
        encodings |= _encoding_names(tree, _constant)
        optional = _optional_lines(tree)
        for name, line, certain, _ in at_import + in_functions:
            if not certain:
                if name in stdlib.files:
                    direct.add(name)  # `from package import submodule`
            elif name.split(".")[0] in local:
                continue
            elif line in optional and not stdlib.has(name):
                continue  # `except ImportError` carries on without it (ulab, in MicroPython's ulab build only)
            elif not name:
                raise CourseError(label, "a relative import: widget Python is imported as a top-level module",
                                  line=line)
            elif stdlib.has(name):
                direct.add(name)
            else:
                raise CourseError(label, f"imports '{name}', which the browser's Python does not have: Pyodide's "
                                         f"standard library has no such module (a widget may use the standard "
                                         f"library and widgets/common/ only)", line=line)
    return direct, encodings


def trimmed(zip_path, wasm_path, files=None):
    """(archive bytes, {file in the archive: its size}) for the widgets' Python."""
    stdlib = Stdlib(zip_path, wasm_path)
    modules = closure(stdlib, *direct_imports(stdlib, files or sources()))
    entries = {}
    for module in modules:
        stripped = stdlib.scan(module)["stripped"]
        entries[stdlib.files[module]] = (stdlib.source(module) if stripped is None else stripped).encode("utf-8")
    stdlib.save_cache()
    return write_archive(entries), {name: len(data) for name, data in sorted(entries.items())}


def site_file(vendored):
    """The trimmed archive's bytes, from the vendored (source, site path) pairs (sha256-checked)."""
    by_dest = {dest: src for src, dest in vendored}
    return trimmed(by_dest[STDLIB_SITE_PATH], by_dest[WASM_SITE_PATH])[0]


if __name__ == "__main__":
    from . import vendor
    by_dest = {dest: src for src, dest in vendor.vendored_files()}
    data, sizes = trimmed(by_dest[STDLIB_SITE_PATH], by_dest[WASM_SITE_PATH])
    for name, size in sizes.items():
        print(f"{size:>8,}  {name}")
    print(f"{len(sizes)} modules, {sum(sizes.values()):,} bytes of source, archive {len(data):,} bytes "
          f"(full: {by_dest[STDLIB_SITE_PATH].stat().st_size:,})")
