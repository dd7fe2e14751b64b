"""Every widget model gives the same view under MicroPython's WebAssembly port (run in Node,
the runtime issue 20's phone path uses) as under CPython (the build), over a grid of parameters:
the same text, and numbers equal to 12 significant figures.

A grid entry is a dict of params for view(), or (function, params) for another function the
widget's view.js calls. Each call starts from the widget's defaults and the params its gallery
shows it with (model.example(facts)); Fact("residual.comparison") stands for a value of the
course's facts. CPython gets those params, as the build pre-renders them; MicroPython gets what
the page carries (model.page_params), as the browser calls it. Every widget needs an entry.

    pytest tests/widgets/test_micropython_parity.py      (needs node and `npm ci`)"""
import array
import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("micropython_views.mjs")
PACKAGE = ROOT / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"

class Fact:
    """A value from the course's facts, e.g. Fact("residual.comparison"), resolved when the test runs."""

    def __init__(self, path):
        self.path = path

    def __repr__(self):
        return f"Fact({self.path!r})"


GRID = {  # model -> params to compare (the default first)
    "bpe-tokenizer": [{}, {"text": "大模型怎么看中文？"}, {"text": "好😀𠀀"}, {"text": ""}, {"text": "玄德曰：「吾乃中山靖王之後。」", "steps": 3, "selected": 1},
                      {"text": "The model reads tokens.", "selected": 0}, {"text": "之" * 400}, {"text": "abc", "steps": 0},
                      {"text": "孔明" * 150, "steps": 40, "selected": 7}],
    "batch-trap": [{}, {"batch": "batch2"}, {"batch": "single"}],
    "norm-token": [{}, {"preset": "outlier"}, {"preset": "near-zero", "eps": 0.01}, {"w": -0.5}],
    "norm-placement": [{}, {"depth": 3, "place": "pre", "seed": 1}, {"depth": 7, "place": "output", "init": "scaled", "seed": 2},
                       {"depth": 1, "place": "post", "init": "scaled"}],
    "depth-signal": [{}, {"depth": 4, "residual": True, "norm": False}],
    "token-identity": [{}],
    "ablation": [{}, {"readings": False}, ("select", {"selected": "no_ffn"}), ("select", {"selected": "attn_only_12l"}),
                 {"data": Fact("residual.comparison"), "title": "去掉残差、或者加深，会怎样", "readings": False},
                 ("select", {"data": Fact("residual.comparison"), "readings": False, "selected": "deep_8l_no_residual"})],
    "neuron-heatmap": [{}, {"neuron": 330}, {"neuron": 419}, {"neuron": 313}],  # indices of data/real-model/neurons.json
    "ffn-xor": [{}, {"activation": "gelu", "b2": -0.35}, {"activation": "none", "row": "好吃", "neuron": 1},
                {"activation": "relu", "b2": -0.25, "row": "不难吃"}, {"b2": 0.0}],
    "linear-fit": [{}, {"a": -0.35, "b": 1.25, "c": 0.4}, ("least_squares", {"a": 0.5})],
    "position-wise": [{}, {"order": [4, 2, 0, 1, 3], "seed": 3}, ("shuffle", {}), ("shuffle", {"seed": 7}),
                      ("reset", {"order": [1, 0, 2, 3, 4]})],
    "ffn-shape": [{}, {"scale": "small"}, {"T": 3}],
    "attention-toy": [{}, {"mode": "average"}, {"mode": "position", "sentence": "inserted"}, {"mask": False},
                      {"query": "小王", "sentence": "inserted"}],
    "softmax-scale": [{}, {"scaled": True}, {"d_k": 4, "seed": 7}],
    "rope-rotation": [{}, {"pair": 31, "m": 400, "n": 3}, {"pair": 0, "base": 100.0, "m": 130, "n": 120},
                      {"pair": 12, "base": 500000.0, "m": 0, "n": 511}],
    "heads-split": [{}, {"heads": 2, "sharpness": 6.0}, {"heads": 4, "sharpness": 0.5}, {"heads": 1, "sharpness": 6.0}],
    "attention-map": [{}, {"layer": 2, "head": 3, "query": 5}, {"passage": 1, "layer": 1, "head": 1}],
    "copy-task": [{}, {"snapshot": 6}, {"arm": "smeared_1l", "snapshot": 3}, {"arm": "attn_only_1l", "snapshot": 0}],
    "residual-paths": [{}, {"w": [-0.3, 0.7, 1.0], "path": "101"}, {"w": [0.0, -1.0, 0.2], "path": "111"}],
    "skip-mechanism": [{}],
    "activation-curves": [{}, {"x": 2.5, "curves": ["silu", "relu"]}, {"x": -0.7517915246935645}, {"x": 0.0, "curves": []}],
    "gated-neuron": [{}, {"activation": "none", "gate": [1.0, 1.0, 0.0], "up": [-1.0, -1.0, 2.0]},
                     {"activation": "silu", "gate": [1.0, 1.0, 0.0], "up": [-1.0, -1.0, 2.0]},
                     {"activation": "sigmoid", "gate": [-2.0, 0.75, -1.25]}, {"activation": "gelu", "gate": [-2.0, -2.0, 0.0]},
                     {"task": "graded", "activation": "silu", "gate": [0.25, 0.0, 0.0], "up": [0.0, 1.0, 0.0]},
                     {"task": "graded", "activation": "relu", "gate": [1.0, 0.0, 0.0], "up": [0.0, 1.0, 0.0]},
                     {"task": "graded", "activation": "gelu", "gate": [1.75, -0.5, 0.25], "up": [0.0, 0.0, -1.5]}],
    "residual-evidence": [{}],
    "gate-width": [{}, {"d": 4096}, {"d": 8192}, {"d": 768}],
    "kv-generate": [{}, {"n": 8}, ("start", {"n": 8}), ("run", {"method": "cached"}), ("run", {"method": "full"}),
                    ("run", {"method": "wrong"}), ("compare", {}),
                    ("report", {"ms": {"full": 912.5, "cached": 61.25, "wrong": 60.0}, "n": 8}), ("report", {"ms": {"full": 40.0, "cached": 50.0}, "n": 8})],
    "kv-memory": [{}, {"preset": "anchor"}, {"preset": "ds67b"}, {"preset": "ours", "bits": 6, "context": 1048576},
                  {"heads": 32, "kv_heads": 3, "head_dim": 128, "layers": 32, "context": 8192, "bits": 16},
                  {"heads": 64, "kv_heads": 1, "head_dim": 128, "layers": 80, "context": 131072, "bits": 8}],
    "tiny-gpt": [{}, ("start", {"settings": {"n_layer": 2, "n_embd": 8, "n_head": 2, "block_size": 6, "lr": 0.01,
                                           "steps": 30, "seed": 4}}),
                 # the first validation, a part a call; steps to 25, where the next falls due; its first part
                 ] + [("train", {"n": 26})] * 6 + [("generate", {"n": 8, "temperature": 0.8}), ("loss_log", {}),
                 ("state", {})],
    "warmup-curves": [{}, {"window": "full"}, {"shown": []}, {"window": "full", "shown": []},
                      # nulls, a lone value, two seeds of one run, a run whose last mean covers 5 steps
                      {"data": {"every": 10, "unigram": 7.0, "bigram": 5.5, "full_steps": 400, "series": [
                          {"name": "a", "label": "甲", "seed": 0, "steps": 95,
                           "values": [7.6, None, 7.1, 6.9, None, 6.5, 6.4, None, None, 6.96]},
                          {"name": "a", "label": "甲", "seed": 1, "steps": 400, "values": [7.62] + [7.0] * 28 + [6.9] * 11},
                          {"name": "b", "label": "乙", "seed": 0, "steps": 100, "values": [None] * 10}]}},
                      {"data": {"every": 10, "unigram": 7.0, "bigram": 5.5, "full_steps": 400, "series": [
                          {"name": "a", "label": "甲", "seed": 1, "steps": 400, "values": [7.62] + [7.0] * 28 + [6.9] * 11},
                          {"name": "b", "label": "乙", "seed": 0, "steps": 100, "values": [6.5] * 10}]}, "window": "full"}],
    "swiglu-clamp": [{}, {"g": 300.0, "clamp": "gpt-oss"}, {"g": 2e19, "clamp": "deepseek-v4"},
                     {"tied": False, "g": -5.0, "u": 1e20}, {"tied": False, "g": 7.0, "u": 0.0, "clamp": "gpt-oss"}],
    "seeds-simulator": [{}, {"gap": 0.0, "where": "both"}, {"fail": 0.0, "n_base": 3, "n_variant": 1, "seed": 4},
                        {"tally": {"n": 100, "v1": 30, "v1_wrong": 0, "v2": 90, "v2_wrong": 1, "base_failed": 60,
                                   "base_failed_v1": 0}, "batch": 1}],
    "seed-curves": [{}],
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
    elif path.endswith(PACKED):  # float64 bytes as hex (widgets/common/packed.py): compared as the floats they hold
        same(unpack(a), unpack(b), path)
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


PACKED = (".tensors", ".train_loss", ".val_loss", ".held_loss")  # tiny-gpt's state() fields packed as float64 hex


def unpack(code):
    return list(array.array("d", bytes.fromhex(code)))


def fact(path, facts):
    for key in path.split("."):
        facts = facts[key]
    return facts


def calls_of(name, facts):
    """[(function, CPython's params, MicroPython's params)] for the widget's grid."""
    from course.widgets import load_model
    model = load_model(name)
    example = model.example(facts) if hasattr(model, "example") else {}
    assert example is not None, f"{name}: the data its gallery shows does not exist (model.example gave None)"
    out = []
    for entry in GRID[name]:
        fn, params = entry if isinstance(entry, tuple) else ("view", entry)
        params = {k: fact(v.path, facts) if isinstance(v, Fact) else v for k, v in params.items()}
        full = {**model.PARAMS, **example, **params}
        live = model.page_params(full) if hasattr(model, "page_params") else full
        out.append((fn, full, json.loads(json.dumps(live))))
    return model, out


def micropython(name, calls):
    """What the widget's functions return under MicroPython, one per (function, params)."""
    from course.widgets import COMMON, folder_of
    module = folder_of(name).name + "_model"
    job = {"common": {p.stem: p.read_text(encoding="utf-8") for p in COMMON.glob("*.py")},
           "models": {module: (folder_of(name) / "model.py").read_text(encoding="utf-8")},
           "calls": [[module, params, fn] for fn, params in calls]}
    done = subprocess.run(["node", str(SCRIPT)], input=json.dumps(job), capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_widget_has_a_grid():
    from course.widgets import names
    assert sorted(set(names()) - set(GRID)) == [], "widgets with no GRID entry in this file"


@pytest.mark.skipif(not shutil.which("node") or not PACKAGE.exists(), reason="needs node and `npm ci`")
@pytest.mark.parametrize("name", sorted(GRID))
def test_micropython_gives_the_view_cpython_gives(name, facts):
    model, calls = calls_of(name, facts)
    got = micropython(name, [(fn, live) for fn, _, live in calls])
    want = json.loads(json.dumps([getattr(model, fn)(full) for fn, full, _ in calls], ensure_ascii=False))
    for (fn, full, live), g, w in zip(calls, got, want):
        shown = {k: v for k, v in full.items() if k not in ("data",)}
        same(g, w, f"{name}.{fn}{shown}")


FORMATS = '''from numfmt import fixed, num, pct, sci, signed


def view(params):
    return [[fixed(x, 1), fixed(x, 3), num(x), num(x, 1), num(x, 3), sci(x), pct(x), signed(x, 2)]
            for x in params["values"]]
'''
# Ties and near-ties of decimal rounding, float dust, signs, tiny and large values (no -0.0: the
# JSON that carries params from JavaScript writes it as 0, in the browser as here).
VALUES = [0.25, 0.35, 56.25, -56.25, 2.0005, 2.675, 98.6, -0.04, 0.0, 600.0, 0.05, 1e-4, 1.23456e-7,
          12345.6789, -65504.0, 1 / 3, 2 / 3, 0.1 + 0.2, 82.9, 76.90000000000001, 7.25e5, 99.95, 9.995, -1.5]


@pytest.mark.skipif(not shutil.which("node") or not PACKAGE.exists(), reason="needs node and `npm ci`")
def test_numfmt_writes_the_same_digits_on_both_runtimes():
    """The formatters every model's text goes through, on values where "%.1f" or round() differ."""
    from course.widgets import COMMON
    job = {"common": {p.stem: p.read_text(encoding="utf-8") for p in COMMON.glob("*.py")},
           "models": {"formats_model": FORMATS}, "calls": [["formats_model", {"values": VALUES}]]}
    done = subprocess.run(["node", str(SCRIPT)], input=json.dumps(job), capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])[0]
    import numfmt
    want = [[numfmt.fixed(x, 1), numfmt.fixed(x, 3), numfmt.num(x), numfmt.num(x, 1), numfmt.num(x, 3),
             numfmt.sci(x), numfmt.pct(x), numfmt.signed(x, 2)] for x in VALUES]
    assert got == want
    assert [numfmt.fixed(x, d) for x in VALUES if x == 0 or abs(x) >= 1e-4 for d in (1, 3)] == \
        [str(round(x, d)) for x in VALUES if x == 0 or abs(x) >= 1e-4 for d in (1, 3)]
