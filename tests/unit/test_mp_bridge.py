"""The MicroPython runtime's bridge (widgets/runtime/mp_bridge.py) writes a model's answer as
json.dumps does, in pieces joined once: MicroPython's own json.dumps takes time that grows with
the square of the text's length (a tiny-gpt run's state, 1.7 MB, took 5-10 s in one piece, over
the 5 s call limit). The same text as json.dumps, in CPython and in MicroPython."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BRIDGE = ROOT / "widgets" / "runtime" / "mp_bridge.py"
sys.path.insert(0, str(BRIDGE.parent))

import mp_bridge  # noqa: E402

VALUES = [
    {"settings": {"n_embd": 32, "lr": 0.01}, "weights": [[[0.1 * i - j / 3 for j in range(5)] for i in range(70)]],
     "log": [[s, 1.0 / (s + 1)] for s in range(200)], "flat": [i / 7 for i in range(300)], "empty": [], "none": None,
     "nested": {"a": [], "b": [[], [1, "二"]], "c": ("x", 2)}, "text": "三國\n\"引号\"", "ok": True},
    [i * 0.5 for i in range(64)], [i * 0.5 for i in range(65)], [], {}, "plain", 3.25, [[1], 2, {"k": [3]}],
]


@pytest.mark.parametrize("value", VALUES)
def test_the_same_text_as_json_dumps_in_cpython(value):
    assert mp_bridge.dumps(value) == json.dumps(value)


def test_a_key_that_is_not_a_string_is_written_as_cpythons_json_writes_it():
    assert json.loads(mp_bridge.dumps({1: "a", "2": [1]})) == {"1": "a", "2": [1]}


MODEL = '''import json
import mp_bridge


def view(params):
    return [mp_bridge.dumps(v) == json.dumps(v) for v in params["values"]]
'''


@pytest.mark.skipif(not shutil.which("node") or not (ROOT / "node_modules" / "@micropython").exists(),
                    reason="needs node and `npm ci`")
def test_the_same_text_as_json_dumps_in_micropython():
    job = {"common": {"mp_bridge": BRIDGE.read_text(encoding="utf-8")}, "models": {"bridge_check": MODEL},
           "calls": [["bridge_check", {"values": VALUES}]]}
    done = subprocess.run(["node", str(ROOT / "tests" / "widgets" / "micropython_views.mjs")], input=json.dumps(job),
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [[True] * len(VALUES)]
