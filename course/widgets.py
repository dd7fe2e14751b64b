"""Widgets: find them, pre-render their first state in CPython, list their files for the site.

A widget named `linear-fit` lives in `widgets/linear_fit/`:
  model.py     pure Python (standard library): PARAMS and view(params) -> dict
  widget.html  Jinja template of its HTML, filled from view(PARAMS) at build time
  view.js      draws and listens in the browser; calls model.py through the runtime
  style.css    optional
Shared Python used by models (number formatting) lives in `widgets/common/`.
"""
import ast
import importlib.util
import json
import sys

import jinja2
from markupsafe import Markup

from . import ROOT
from .editor_bundle import inline_script
from .errors import CourseError

WIDGETS = ROOT / "widgets"
COMMON = WIDGETS / "common"
REQUIRED = ("model.py", "view.js", "widget.html")
SHIPPED = (".py", ".js", ".css")


def folder_of(name):
    """>>> folder_of("linear-fit").name -> 'linear_fit'"""
    return WIDGETS / name.replace("-", "_")


def names():
    return sorted(p.name.replace("_", "-") for p in WIDGETS.iterdir()
                  if (p / "model.py").exists())


def load_module(path, name):
    """Import a file afresh (mkdocs serve keeps processes alive; authors edit models)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_model(name):
    folder = folder_of(name)
    missing = [f for f in REQUIRED if not (folder / f).exists()]
    if missing:
        known = ", ".join(names()) or "none"
        raise CourseError(f"widgets/{folder.name}", f"unknown widget '{name}' (missing {', '.join(missing)}; "
                          f"known widgets: {known})")
    for stem in load_order(common_modules()):  # models `import numfmt`, as under Pyodide
        common_module(stem)
    return load_module(folder / "model.py", f"{folder.name}_model")


def common_modules():
    """The modules in widgets/common/ that every model may import: the build loads them all for
    the first state."""
    return sorted(p.stem for p in COMMON.glob("*.py"))


def _imports(path, local):
    """The names in `local` that the Python file at `path` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found & local


def needed_modules(name):
    """The widgets/common/ modules that widget `name`'s model imports, directly or through
    another common module (stack imports vec)."""
    local = set(common_modules())
    todo = list(_imports(folder_of(name) / "model.py", local))
    found = set()
    while todo:
        stem = todo.pop()
        if stem not in found:
            found.add(stem)
            todo.extend(_imports(COMMON / f"{stem}.py", local))
    return found


# A common module at most this many widgets need travels with them, not with every page's boot.
OWN_AT_MOST = 2


def own_modules():
    """{widget name: [its own common modules]}: a module in widgets/common/ that at most
    OWN_AT_MOST widgets need travels with those widgets (the browser fetches it when it imports
    such a model, named by the page in the widget's data-modules) instead of with every page's
    Python (tinygpt.py, the engine of the tiny-gpt and kv-generate widgets, is 23 KB). The rest
    are shared_modules()."""
    users = {}
    for name in names():
        for stem in needed_modules(name):
            users.setdefault(stem, []).append(name)
    out = {}
    for stem, who in sorted(users.items()):
        if len(who) <= OWN_AT_MOST:
            for name in who:
                out.setdefault(name, []).append(stem)
    return out


def micropython_build(names):
    """"ulab" where the Python of one of these widgets (its model or the common modules it needs)
    imports ulab, else None. MicroPython's WebAssembly package holds two builds: the plain one
    (about 200 KB compressed) and one with ulab, a numpy subset (about 40 KB more). The runtime
    starts the ulab build for a page that says so (widgets/runtime/runtime.js, mp_worker.js):
    the tiny-gpt page, whose engine tinygpt_ulab.py trains on ulab's arrays; other pages keep the
    plain one."""
    for name in names:
        paths = [folder_of(name) / "model.py"] + [COMMON / f"{stem}.py" for stem in sorted(needed_modules(name))]
        if any(_imports(path, {"ulab"}) for path in paths):
            return "ulab"
    return None


def shared_modules():
    """The common modules the browser's Python loads when it boots, on every page
    (widgets/runtime/shared-modules.json): all but the widgets' own_modules()."""
    owned = {stem for stems in own_modules().values() for stem in stems}
    return [stem for stem in common_modules() if stem not in owned]


def load_order(stems):
    """The shared modules with each one after the shared modules it imports (stack imports vec):
    the build loads them by path, so an import of a sibling not loaded yet would fail."""
    local = set(stems)
    done = []

    def visit(stem):
        if stem in done:
            return
        tree = ast.parse((COMMON / f"{stem}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            for name in names:
                if name in local and name != stem:
                    visit(name)
        done.append(stem)

    for stem in stems:
        visit(stem)
    return done


def shared_modules_json():
    return json.dumps(shared_modules())


def common_module(stem):
    return load_module(COMMON / f"{stem}.py", stem)


class Renderer:
    """Pre-renders widgets into HTML blocks that Markdown passes through untouched."""

    def __init__(self, filters):
        self.env = jinja2.Environment(loader=jinja2.FileSystemLoader(WIDGETS),
                                      undefined=jinja2.StrictUndefined, autoescape=True)
        self.env.filters.update(filters)
        self.embedded = []  # names embedded on the page being rendered (its experiment count)

    def __call__(self, name, **params):
        if "_" in name:
            raise CourseError(f"widgets/{name}", f"widgets are named with hyphens: widget({name.replace('_', '-')!r})")
        model = load_model(name)
        unknown = sorted(set(params) - set(model.PARAMS))
        if unknown:
            raise CourseError(f"widgets/{folder_of(name).name}/model.py",
                              f"widget {name!r} has no parameter(s) {', '.join(unknown)}; "
                              f"its PARAMS: {', '.join(sorted(model.PARAMS))}")
        self.embedded.append(name)
        first = {**model.PARAMS, **params}
        try:
            state = model.view(first)
        except Exception as e:
            raise CourseError(f"widgets/{folder_of(name).name}/model.py", f"view() failed: {e!r}") from None
        body = self.env.get_template(f"{folder_of(name).name}/widget.html").render(state=state, params=first)
        # A model may trim what the page carries for later calls (e.g. a compact copy of its data).
        shipped = model.page_params(first) if hasattr(model, "page_params") else first
        html = self.env.get_template("runtime/frame.html").render(
            name=name, body=Markup(body), modules=" ".join(own_modules().get(name, [])),
            micropython=micropython_build([name]),
            params_json=_single_quoted(json.dumps(shipped, ensure_ascii=False, separators=(",", ":"))))
        # Markdown ends a raw HTML block at a blank line: keep the block in one piece.
        return Markup("\n".join(line for line in html.splitlines() if line.strip()))


def _single_quoted(text):
    """Escape for an attribute in single quotes: JSON's many double quotes stay as they are."""
    return Markup(text.replace("&", "&amp;").replace("'", "&#39;").replace("<", "&lt;"))


def gallery(facts):
    """Every widget for the authors' gallery page: its name, what its model says it is, its
    parameters with their defaults, and the params it is shown with (the model's
    example(facts) when it needs data from the course, else its defaults)."""
    out = []
    for name in names():
        model = load_model(name)
        doc = (model.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        defaults = {k: ("（由课文传入）" if v is None else json.dumps(v, ensure_ascii=False))
                    for k, v in model.PARAMS.items()}
        example = model.example(facts) if hasattr(model, "example") else {}
        out.append({"name": name, "doc": doc, "defaults": defaults, "example": example,
                    "shown": example is not None, "functions": sorted(
                        f for f in dir(model) if not f.startswith("_") and callable(getattr(model, f))
                        and getattr(getattr(model, f), "__module__", None) == model.__name__)})
    return out


def shipped_files():
    """(source path, site path) for every widget file the browser needs."""
    for path in sorted(WIDGETS.rglob("*")):
        if path.suffix in SHIPPED and path.is_file() and "__pycache__" not in path.parts:
            yield path, "widgets/" + path.relative_to(WIDGETS).as_posix()


def page_stylesheets(embedded, exercises, math):
    """The stylesheets one page links, beyond the site's own (mkdocs.yml extra_css): KaTeX's
    when it has math or exercises (whose hints and answers may hold math), the runtime's frame
    with any widget or exercise, the exercises', and each embedded widget's own style.css.
    A page without widgets or math (the home page) links none of them; Material's instant
    navigation adds and drops these links as the reader moves between pages."""
    out = ["assets/vendor/katex/dist/katex.min.css"] if math or exercises else []
    if embedded or exercises:
        out.append("widgets/runtime/runtime.css")
    if exercises:
        out.append("widgets/runtime/exercise.css")
    for name in dict.fromkeys(embedded):
        css = folder_of(name) / "style.css"
        if css.exists():
            out.append("widgets/" + css.relative_to(WIDGETS).as_posix())
    return out


def python_widgets(embedded):
    """The widgets among `embedded` whose view calls its model in the browser (not those whose
    view.js says `export const python = false;`), once each: early.js fetches their models."""
    return [name for name in dict.fromkeys(embedded)
            if "export const python = false;" not in (folder_of(name) / "view.js").read_text(encoding="utf-8")]


def early_script():
    """widgets/runtime/early.js, minified by esbuild, inlined in every page's <head>
    (theme/main.html): the runtime's choice and MicroPython's early start run before the body
    arrives, with no request first, and every page carries it (its comments stay in the source)."""
    return inline_script(WIDGETS / "runtime" / "early.js", ROOT)


# Site paths of the CSS that widgets/ ships, beside their sources: a page inlines these.
_INLINE_PREFIX = "widgets/"


def split_stylesheets(paths):
    """(linked, inlined) for a page's stylesheets (page_stylesheets): KaTeX's stays a link, cached
    across pages and resolving its fonts by relative URL; the runtime's, the exercises' and each
    widget's own small style.css go into the page's <head> as <style data-css="PATH"> (theme/main.html).
    On a phone a render-blocking request each cost the first paint more than their bytes (issue 20:
    a lesson linked up to 12 stylesheets). Material's instant navigation swaps <style> in <head> as it
    swaps links (it diffs head elements by their HTML)."""
    linked, inlined = [], []
    for path in paths:
        if not path.startswith(_INLINE_PREFIX):
            linked.append(path)
            continue
        source = WIDGETS / path[len(_INLINE_PREFIX):]
        css = source.read_text(encoding="utf-8")
        if "</style" in css.lower() or "url(" in css:
            raise CourseError(source.relative_to(ROOT).as_posix(), "a stylesheet inlined in the page may hold "
                              "neither '</style' nor url(...) (a relative URL would resolve against the page)")
        inlined.append((path, Markup(css)))
    return linked, inlined
