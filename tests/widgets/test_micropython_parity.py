"""The ported widget models give the same view under MicroPython's WebAssembly port (run in Node,
the runtime issue 20's phone path uses) as under CPython (the build), over a grid of parameters:
the same text, and numbers equal to 12 significant figures."""
import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("micropython_views.mjs")
PACKAGE = ROOT / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"

GRID = {  # model -> params to compare (the default first)
    "batch-trap": [{}, {"batch": "batch2"}, {"batch": "single"}],
    "norm-token": [{}, {"preset": "outlier"}, {"preset": "near-zero", "eps": 0.01}, {"w": -0.5}],
    "norm-placement": [{}, {"depth": 3, "place": "pre", "seed": 1}],
    "depth-signal": [{}, {"depth": 4, "residual": True, "norm": False}],
    "token-identity": [{}],
}


def same(a, b, path="view"):
    """Equal JSON, floats to 12 significant figures (the two runtimes round the last bits differently)."""
    if isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12), f"{path}: {a!r} != {b!r}"
    elif isinstance(a, dict):
        assert sorted(a) == sorted(b), f"{path}: keys {sorted(set(a) ^ set(b))}"
        for k in a:
            same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{path}: {len(a)} != {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


@pytest.mark.skipif(not shutil.which("node") or not PACKAGE.exists(), reason="needs node and `npm ci`")
@pytest.mark.parametrize("name", sorted(GRID))
def test_micropython_gives_the_view_cpython_gives(name):
    from course.widgets import COMMON, folder_of, load_model
    model = load_model(name)
    calls = [{**model.PARAMS, **p} for p in GRID[name]]
    module = folder_of(name).name + "_model"
    job = {"common": {p.stem: p.read_text(encoding="utf-8") for p in COMMON.glob("*.py")},
           "models": {module: (folder_of(name) / "model.py").read_text(encoding="utf-8")},
           "calls": [[module, params] for params in calls]}
    done = subprocess.run(["node", str(SCRIPT)], input=json.dumps(job), capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    want = json.loads(json.dumps([model.view(params) for params in calls], ensure_ascii=False))
    for params, g, w in zip(calls, got, want):
        same(g, w, f"{name}{params}")
