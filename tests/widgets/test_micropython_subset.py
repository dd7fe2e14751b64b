"""Every widget model and shared module keeps to the subset of Python that MicroPython 1.29
(the phone runtime, issue 20) shares with CPython: a construct outside it fails here with its
file and line, and what to write instead (AUTHORING.md, "The common subset").

What MicroPython lacks or does differently was found by running it (the WebAssembly port in
node_modules, the one tests/widgets/test_micropython_parity.py runs): these checks are the ones
a reader can see in the source. What they cannot see (a dict's order, a sort's stability, a
float's last bit) the parity test catches by running every model on both runtimes.

    pytest tests/widgets/test_micropython_subset.py
"""
import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WIDGETS = ROOT / "widgets"
COMMON = WIDGETS / "common"

# The modules a model may import: math, and the shared modules in widgets/common/; time (its
# time_ns: the tiny-gpt page's calls end themselves by a deadline) and array (packed.py:
# a run's numbers kept compactly), which MicroPython has too.
STDLIB = {"math", "time", "array"}
# And these, only inside a `try` whose `except ImportError` carries on without them: ulab is in
# MicroPython's ulab build alone (the page loads it for a widget whose Python imports it;
# widgets/common/tinygpt_ulab.py), numpy stands in for it in CPython.
OPTIONAL = {"ulab", "numpy"}
INSTEAD = {
    "random": "rng.Rng (widgets/common/rng.py): MicroPython's random is another generator, without random.Random",
    "itertools": "a loop (MicroPython's itertools has no product, permutations, combinations, groupby, zip_longest)",
    "functools": "a plain function (MicroPython's functools has no lru_cache, cache, cmp_to_key, total_ordering)",
    "collections": "a dict or a list (MicroPython has no Counter; its OrderedDict and namedtuple are partial)",
    "dataclasses": "a dict or a small class",
    "fractions": "integers (numerator, denominator)",
    "statistics": "sum(values) / len(values) and the like, written out",
}
# MicroPython's math (dir(math) under 1.29): no fsum, prod, hypot, dist, isqrt, comb, perm, gcd, lcm, log1p, ...
MATH = {"acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "copysign", "cos", "cosh", "degrees",
        "e", "erf", "erfc", "exp", "expm1", "fabs", "factorial", "floor", "fmod", "frexp", "gamma", "inf", "isclose",
        "isfinite", "isinf", "isnan", "ldexp", "lgamma", "log", "log10", "log2", "modf", "nan", "pi", "pow", "radians",
        "sin", "sinh", "sqrt", "tan", "tanh", "tau", "trunc"}
# Methods CPython's str, int and float have and MicroPython's do not.
METHODS = {"maketrans", "translate", "zfill", "ljust", "rjust", "title", "capitalize", "expandtabs", "removeprefix",
           "removesuffix", "casefold", "swapcase", "isalnum", "isnumeric", "isdecimal", "isidentifier",
           "isprintable", "istitle", "format_map", "bit_length", "bit_count", "is_integer", "as_integer_ratio",
           "fromhex", "__doc__"}
BUILTINS = {"format", "vars", "ascii", "aiter", "anext", "breakpoint"}
FLOAT_SPEC = re.compile(r"\.\d|[eEfFgG%]$|[,_]")                      # a format spec that writes a float's digits
PERCENT_FLOAT = re.compile(r"%[#0\- +]*(\*|\d+)?(\.(\*|\d+))?[eEfFgG]")  # "%.3f" and the like
BRACE_FLOAT = re.compile(r"\{[^{}]*:[^{}]*(\.\d|[eEfFgG%]|[,_])[^{}]*\}")  # "{:.3f}".format(...)
DIGITS = "numfmt's num / fixed / sci / pct (MicroPython rounds a float's digits its own way)"


def shared_modules():
    return {p.stem for p in COMMON.glob("*.py")}


def files():
    """Every file the phone runtime imports: each widget's model.py and widgets/common/*.py."""
    return sorted(p.relative_to(ROOT).as_posix() for p in [*WIDGETS.glob("*/model.py"), *COMMON.glob("*.py")])


def problems(source, filename, local=frozenset()):
    """[(line, what is outside the subset and what to write instead)] for one file's source.
    local: the shared modules it may import besides math."""
    tree = ast.parse(source, filename)
    found = []

    def flag(node, text):
        found.append((node.lineno, text))

    module_dicts = {t.id for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, (ast.Dict, ast.DictComp))
                    for t in n.targets if isinstance(t, ast.Name)}

    def a_dicts_order(node):
        """NAME, NAME.items()/keys()/values() of a module-level dict: its order, which MicroPython does not keep."""
        if isinstance(node, ast.Name) and node.id in module_dicts:
            return node.id
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("items", "keys", "values")
                and isinstance(node.func.value, ast.Name) and node.func.value.id in module_dicts):
            return f"{node.func.value.id}.{node.func.attr}()"
        return None

    guarded = guarded_imports(tree)
    for node in ast.walk(tree):
        if node in guarded:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name not in STDLIB | set(local):
                    flag(node, f"import {a.name}: " + INSTEAD.get(a.name, f"MicroPython may lack it; only {', '.join(sorted(STDLIB))} "
                                                                     "and widgets/common/ are shared"))
        elif isinstance(node, ast.ImportFrom):
            if node.module == "math":
                for a in node.names:
                    if a.name not in MATH:
                        flag(node, f"math.{a.name}: MicroPython's math has no {a.name}; write it out")
            elif node.module not in STDLIB | set(local):
                flag(node, f"from {node.module} import ...: " + INSTEAD.get(node.module, "MicroPython may lack it; only "
                                                                              "math and widgets/common/ are shared"))
        elif isinstance(node, ast.Dict) and None in node.keys:
            flag(node, "{**a} in a dict literal (a SyntaxError in MicroPython): out = dict(a); out.update(...)")
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)) and any(isinstance(e, ast.Starred) for e in node.elts) \
                and isinstance(node.ctx if hasattr(node, "ctx") else ast.Load(), ast.Load):
            flag(node, "[*a, *b] in a list, tuple or set display (a SyntaxError in MicroPython): a + b, list(a) + ...")
        elif isinstance(node, ast.Match):
            flag(node, "match statement (MicroPython has none): if / elif")
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)) and node.args.posonlyargs:
            flag(node, "positional-only parameters (/) (a SyntaxError in MicroPython): plain parameters")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and node.slice.step is not None \
                and not_a_list(node.value):
            flag(node, "a slice with a step of a str or tuple (MicroPython steps through lists only): reversed(), "
                       "or a list")
        elif isinstance(node, ast.Attribute):
            # bytes.fromhex is there (MicroPython's bytes has hex and fromhex; packed.py); float's is not
            if node.attr in METHODS and not (node.attr == "fromhex" and isinstance(node.value, ast.Name)
                                             and node.value.id == "bytes"):
                flag(node, f".{node.attr} (MicroPython's str, int and float have none): write it out")
            elif isinstance(node.value, ast.Name) and node.value.id == "math" and node.attr not in MATH:
                flag(node, f"math.{node.attr}: MicroPython's math has no {node.attr}; write it out")
            elif isinstance(node.value, ast.Name) and node.value.id == "dict" and node.attr == "fromkeys":
                flag(node, "dict.fromkeys for an order of distinct items (MicroPython's dicts keep no order): "
                           "a list, appending what is not in it yet")
        elif isinstance(node, ast.Name) and node.id in BUILTINS and isinstance(node.ctx, ast.Load):
            flag(node, f"{node.id}() (not a MicroPython builtin)" + (": " + DIGITS if node.id == "format" else ""))
        elif isinstance(node, ast.FormattedValue):
            spec = "".join(v.value for v in node.format_spec.values if isinstance(v, ast.Constant)) \
                if node.format_spec else ""
            if FLOAT_SPEC.search(spec):
                flag(node, f"f-string format :{spec}: " + DIGITS)
            elif is_round_to_places(node.value):
                flag(node, "{round(x, n)} in an f-string prints float dust in MicroPython (98.59999999999999): "
                           "numfmt.fixed(x, n)")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) \
                and isinstance(node.left.value, str) and PERCENT_FLOAT.search(node.left.value):
            flag(node, f"{PERCENT_FLOAT.search(node.left.value).group()} formatting: " + DIGITS)
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "format" and isinstance(f.value, ast.Constant) \
                    and isinstance(f.value.value, str) and BRACE_FLOAT.search(f.value.value):
                flag(node, f"{BRACE_FLOAT.search(f.value.value).group()} in str.format: " + DIGITS)
            elif isinstance(f, ast.Name) and f.id == "str" and node.args and is_round_to_places(node.args[0]):
                flag(node, "str(round(x, n)) prints float dust in MicroPython (98.59999999999999): numfmt.fixed(x, n)")
            elif isinstance(f, ast.Name) and f.id == "zip" and any(k.arg == "strict" for k in node.keywords):
                flag(node, "zip(strict=...) (MicroPython's zip takes no keywords): check the lengths yourself")
            if (isinstance(f, ast.Name) and f.id in ("list", "tuple", "enumerate", "zip", "next", "iter")
                    or isinstance(f, ast.Attribute) and f.attr == "join"):
                for arg in node.args:
                    if a_dicts_order(arg):
                        flag(node, f"the order of {a_dicts_order(arg)} (MicroPython's dicts keep none): "
                                   "an order tuple beside the dict, or sorted()")
        if isinstance(node, (ast.For, ast.comprehension)) and a_dicts_order(node.iter):
            flag(node.iter, f"the order of {a_dicts_order(node.iter)} (MicroPython's dicts keep none): "
                            "an order tuple beside the dict, or sorted()")
    found += literal_problems(source)
    return sorted(set(found))


def guarded_imports(tree):
    """The imports of OPTIONAL modules that sit in a `try` with an `except ImportError` (or a tuple
    naming it): the module carries on where the runtime lacks them."""
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        caught = [h.type for h in node.handlers]
        names = [n.id for t in caught for n in ([t] if isinstance(t, ast.Name) else getattr(t, "elts", []))
                 if isinstance(n, ast.Name)]
        if "ImportError" not in names:
            continue
        for child in node.body:
            modules = [a.name for a in child.names] if isinstance(child, ast.Import) else \
                [child.module] if isinstance(child, ast.ImportFrom) else []
            if modules and all(m.split(".")[0] in OPTIONAL for m in modules):
                found.add(child)
    return found


def not_a_list(node):
    """A value the source shows is a str or a tuple (of others the parity test finds out)."""
    return isinstance(node, (ast.Constant, ast.JoinedStr, ast.Tuple)) or \
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("str", "tuple")


def is_round_to_places(node):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "round" \
        and len(node.args) == 2


def literal_problems(source):
    """What only the tokens show: \\N{...} escapes, and a plain literal with braces run together with
    an f-string ('x{}' f'{y}'), which MicroPython reads as one format string."""
    found = []
    for k, line in enumerate(source.splitlines(), 1):
        if "\\N{" in line:
            found.append((k, "\\N{NAME} escape (MicroPython has none): \\uXXXX"))
    group, inside_f = [], 0

    def close():
        if any(f for f, _, _ in group) and any(not f and ("{" in text or "}" in text) for f, text, _ in group):
            found.append((group[0][2], "a literal with braces run together with an f-string (MicroPython formats the "
                                       "whole as one f-string): write the braces inside the f-string, {{ }}"))
        group.clear()

    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        kind = tokenize.tok_name[tok.type]
        if kind == "FSTRING_START":            # Python 3.12+: an f-string is several tokens
            inside_f += 1
            if inside_f == 1:
                group.append((True, "", tok.start[0]))
        elif kind == "FSTRING_END":
            inside_f -= 1
        elif inside_f:
            continue
        elif kind == "STRING":
            prefix = re.match(r"[A-Za-z]*", tok.string).group().lower()
            group.append(("f" in prefix, tok.string[len(prefix):], tok.start[0]))
        elif kind not in ("NL", "COMMENT"):
            close()
    close()
    return found


@pytest.mark.parametrize("rel", files())
def test_the_file_keeps_to_what_micropython_shares(rel):
    source = (ROOT / rel).read_text(encoding="utf-8")
    found = problems(source, rel, local=shared_modules() - {Path(rel).stem})
    assert not found, "outside the common subset (AUTHORING.md):\n" + "\n".join(f"{rel}:{line}: {text}"
                                                                               for line, text in found)


BAD = '''import random
from itertools import product
from numfmt import num

ORDER = {"a": 1, "b": 2}


def view(params):
    out = {**params, "x": 1}
    names = ", ".join(ORDER)
    table = "abc".translate(str.maketrans("a", "b"))
    label = f"{params['x']:.3f}" + "%.1f" % 2.25 + str(round(0.15, 1))
    rows = [*params["rows"], *ORDER.values()]
    return {"out": out, "names": names, "r": random.random(), "h": math.hypot(3, 4), "s": "abc"[::-1]}
'''


def test_a_model_outside_the_subset_fails_with_its_lines():
    found = problems(BAD, "widgets/bad/model.py", local={"numfmt"})
    lines = {}
    for line, text in found:
        lines.setdefault(line, []).append(text)
    assert sorted(lines) == [1, 2, 9, 10, 11, 12, 13, 14], found
    assert "rng.Rng" in lines[1][0] and "a loop" in lines[2][0]
    assert any("{**a}" in t for t in lines[9])
    assert any("order of ORDER" in t for t in lines[10])
    assert {".translate", ".maketrans"} <= {t.split(" ")[0] for t in lines[11]}
    assert len(lines[12]) == 3 and all("numfmt" in t for t in lines[12])
    assert any("[*a, *b]" in t for t in lines[13])
    assert any("math.hypot" in t for t in lines[14]) and any("slice with a step" in t for t in lines[14])


def test_an_optional_module_is_allowed_only_behind_except_import_error():
    guarded = "try:\n    from ulab import numpy as np\nexcept ImportError:\n    np = None\n"
    assert problems(guarded, "m.py") == []
    assert [line for line, _ in problems("from ulab import numpy as np\n", "m.py")] == [1]
    assert [line for line, _ in problems("try:\n    import numpy\nexcept ValueError:\n    pass\n", "m.py")] == [2]
    assert [line for line, _ in problems("try:\n    import random\nexcept ImportError:\n    pass\n", "m.py")] == [2]


def test_a_literal_run_together_with_an_f_string_is_caught():
    assert [line for line, _ in problems('x = 1\ny = (f"{x}"\n     "{}")\n', "m.py")] == [2]
    assert problems('x = 1\ny = f"{x}" "plain" f"{{braces}}"\n', "m.py") == []


def test_the_subset_test_covers_every_model():
    assert {f"widgets/{p.parent.name}/model.py" for p in WIDGETS.glob("*/model.py")} <= set(files())
