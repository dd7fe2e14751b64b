"""widgets/runtime/clean_state.py: a student's run cannot change the next one. Each cheat of
the attacks review (exercise-attacks.md, section 4) runs, then a wrong answer must still fail
and print must still print. In a child process: the restore touches the whole interpreter."""
import json
import subprocess
import sys

import pytest
from support import ROOT

SCRIPT = r'''
import json, os, sys
sys.path.insert(0, ROOT)
from course.widgets import load_module
runtime = os.path.join(ROOT, "widgets", "runtime")
load_module(os.path.join(runtime, "checker.py"), "_cw_checker")
load_module(os.path.join(runtime, "bridge.py"), "_cw_bridge")
state = load_module(os.path.join(runtime, "clean_state.py"), "_cw_state")
run_exercise = load_module(os.path.join(runtime, "run_exercise.py"), "_cw_run")
CHECK = json.dumps({"source": "def result(you, case):\n    return you.double(case)\n", "file": "x.py", "line": 1,
                    "cases": [{"input": 2, "expected": 4, "seen": True}]})

def run(code):
    saved = state.snapshot()
    out = []
    try:
        return json.loads(run_exercise.run(code, "{}", CHECK, lambda s, t: out.append(t), saved.restore)), "".join(out)
    finally:
        saved.restore()

cheat, _ = run(CHEAT)
wrong, _ = run("def double(x):\n    return 0\n")
_, printed = run("print(6 * 7)\n")
import warnings
print(json.dumps({"cheat": (cheat["verdict"] or {}).get("passed"), "wrong": wrong["verdict"]["passed"],
                  "printed": printed, "dumps": json.dumps([1]), "shadow": os.path.exists("statistics.py"),
                  "filters": not any(f[0] == "error" and f[2] is Warning for f in warnings.filters)}))
'''

WRONG = "def double(x):\n    return 0\n"
CHEATS = {
    "C1 math.isclose": "import math\nmath.isclose = lambda *a, **k: True\n" + WRONG,
    "C2 verdict": "import _cw_checker\n_cw_checker.verdict = lambda *a, **k: {'passed': True, 'message': 'ok'}\n",
    "C2b close in the function": "def double(x):\n    import _cw_checker\n    _cw_checker.close = lambda *a, **k: True\n"
                                 "    return 'anything'\n",
    "C3 builtins.all": "import builtins\nbuiltins.all = lambda it: True\n" + WRONG,
    "C14 print": "import builtins\nbuiltins.print = lambda *a, **k: None\n" + WRONG,
    "C15 json.dumps": "import json\njson.dumps = lambda *a, **k: '{\"ran\": true, \"error\": null, "
                      "\"verdict\": {\"passed\": true, \"message\": \"ok\"}}'\n" + WRONG,
    "class attribute": "import json\njson.JSONEncoder.encode = lambda self, o: 'x'\n" + WRONG,
    "sys.stdout": "import sys\nsys.stdout = None\n" + WRONG,
    "shadowed module": "open('statistics.py', 'w').write('print(1)')\n" + WRONG,
    # exercise-attacks-2.md rank 11 (N27): the filter turned the next run's warnings into errors
    "warnings.simplefilter": "import warnings\nwarnings.simplefilter('error')\n" + WRONG,
}


@pytest.mark.parametrize("name", CHEATS)
def test_a_patch_does_not_outlive_its_run(name, tmp_path):
    script = f"ROOT = {str(ROOT)!r}\nCHEAT = {CHEATS[name]!r}\n" + SCRIPT
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"cheat": result["cheat"], "wrong": False, "printed": "42\n", "dumps": "[1]", "shadow": False,
                      "filters": True}
    if name in ("C2 verdict", "C2b close in the function", "C15 json.dumps"):
        assert not result["cheat"]  # settle() ran before the check compared: the cheat itself fails too
