"""The widget models written for every runtime keep to the subset MicroPython shares with
CPython: only these imports, no {**a} in dict literals, no str.maketrans/translate (f-strings
too in token-identity, which formats with %). More models join as they are ported (issue 20)."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PORTED = {  # file -> (the imports it may use, whether f-strings are allowed)
    "widgets/batch_trap/model.py": ({"math", "numfmt"}, False),
    "widgets/depth_signal/model.py": ({"math", "numfmt", "stack", "logchart"}, True),
    "widgets/common/stack.py": ({"math", "rng", "vec"}, True),
    "widgets/common/logchart.py": ({"math"}, True),
    "widgets/norm_token/model.py": ({"math", "numfmt"}, False),
    "widgets/norm_placement/model.py": ({"stack", "logchart", "numfmt"}, True),
    "widgets/token_identity/model.py": ({"math", "numfmt", "rng", "vec"}, False),
    "widgets/common/rng.py": ({"math"}, True),
    "widgets/common/vec.py": (set(), True),
    "widgets/common/numfmt.py": ({"math"}, False),
}


@pytest.mark.parametrize("rel", sorted(PORTED))
def test_the_model_keeps_to_what_micropython_shares(rel):
    allowed, fstrings = PORTED[rel]
    source = (ROOT / rel).read_text(encoding="utf-8")
    tree = ast.parse(source)
    imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imports |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imports <= allowed, f"{rel}: imports {sorted(imports - allowed)}"
    assert not any(isinstance(n, ast.Dict) and None in n.keys for n in ast.walk(tree)), f"{rel}: {{**a}}"
    assert fstrings or not any(isinstance(n, ast.JoinedStr) for n in ast.walk(tree)), f"{rel}: f-string"
    assert "maketrans" not in source and ".translate(" not in source
