"""How long a widget takes to answer an interaction, in CPython and in MicroPython (the phone
runtime, issue 20), against a budget of 100 ms per interaction on a phone.

    python benchmarks/widget_latency.py [--repeat 5] [--factor 4] [--budget 100] [widget ...]

An interaction is one call a widget's view.js makes (view, or select / least_squares /
shuffle / reset): every entry of the parity test's GRID (tests/widgets/test_micropython_parity.py,
with the gallery's params from the facts, and what the page carries on MicroPython's side),
plus each widget's slowest settings (EXTRA: the deepest stacks). Each call is timed as the
runtime runs it, fn(params) and json.dumps of the result, REPEAT times; the table shows the
median, and under MicroPython also the fastest and the first run (a fresh page: weights not
drawn yet). stack.py's cache of whole answers is off, so a repeat is timed as a new setting. Times are milliseconds of CPU time (the process's, user + system), not of the wall
clock, so that other work on a busy machine does not count; on an idle machine they agree.

MicroPython runs in Node (the WebAssembly port the site ships, node_modules/, with the heap
widgets/runtime/mp_worker.js starts with). The phone estimate is MicroPython-in-Node's median
times --factor: an assumption, not a measurement, that a mid-range phone runs one thread of
WebAssembly about 4x slower than this machine (Chrome DevTools' "4x CPU slowdown" preset for
a mid-range phone). Over budget: the estimate above --budget ms. The machine's load average
is printed: CPU time still reads somewhat high on a busy machine (shared caches).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "widgets"))

import test_micropython_parity as parity  # noqa: E402  (GRID and the params it builds)

from course.data import load_data  # noqa: E402
from course.facts import build_facts  # noqa: E402
from course.widgets import COMMON, folder_of, load_model, names  # noqa: E402

RUNNER = ROOT / "benchmarks" / "micropython_timing.mjs"
EXTRA = {  # the slowest settings a reader can reach, beyond the parity grid
    "depth-signal": [{"depth": 64}, {"depth": 64, "residual": True}, {"depth": 64, "activation": "sigmoid"},
                     {"depth": 64, "residual": True, "init": "scaled", "seed": 2}],
    "norm-placement": [{"depth": 32}, {"depth": 32, "place": "pre", "seed": 2}],
}


def heap_bytes():
    """The heap mp_worker.js starts MicroPython with (4 MB as written there), or 4 MB."""
    worker = ROOT / "widgets" / "runtime" / "mp_worker.js"
    m = re.search(r"HEAP_BYTES = ([\d\s*]+);", worker.read_text()) if worker.exists() else None
    return eval(m.group(1)) if m else 4 * 1024 * 1024  # a product of integer literals


def live(name):
    """False for a widget whose view.js never calls its model (export const python = false)."""
    return "export const python = false" not in (folder_of(name) / "view.js").read_text(encoding="utf-8")


def interactions(name, facts):
    saved = parity.GRID.get(name, [{}])
    parity.GRID[name] = list(saved) + EXTRA.get(name, [])
    try:
        return parity.calls_of(name, facts)
    finally:
        parity.GRID[name] = saved


def label(fn, params, model):
    changed = {k: v for k, v in params.items() if k != "data" and model.PARAMS.get(k) != v}
    text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in changed.items())
    return f"{fn}({text})"


def no_answer_cache(model):
    """Time every call as a new setting: stack.py keeps simulate()'s answers, and a repeat served
    from them would time a lookup (the weights it draws per seed stay cached, as in the page)."""
    stack = getattr(model, "stack", None)  # the stack module this model imported
    if stack is not None:
        stack.RESULTS = 0
        stack._results.clear()
        del stack._result_keys[:]


def cpython_ms(model, fn, params, repeat):
    no_answer_cache(model)
    f = getattr(model, fn)
    out = []
    for _ in range(repeat):
        t0 = time.process_time()
        json.dumps(f(params))
        out.append(1000 * (time.process_time() - t0))
    return out


def micropython_ms(name, calls, repeat):
    module = folder_of(name).name + "_model"
    job = {"heap": heap_bytes(),
           "common": {p.stem: p.read_text(encoding="utf-8") for p in COMMON.glob("*.py")},
           "models": {module: (folder_of(name) / "model.py").read_text(encoding="utf-8")},
           "calls": [[module, fn, params, repeat] for fn, params in calls]}
    done = subprocess.run(["node", str(RUNNER)], input=json.dumps(job), capture_output=True, text=True,
                          cwd=ROOT, timeout=1200)
    if done.returncode:
        raise SystemExit(f"{name}: MicroPython failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("widgets", nargs="*", help="widget names (default: all)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per call (median reported)")
    ap.add_argument("--factor", type=float, default=4.0, help="phone slowdown against MicroPython in Node")
    ap.add_argument("--budget", type=float, default=100.0, help="ms per interaction on the phone")
    args = ap.parse_args()
    facts = build_facts(load_data(ROOT / "data", ROOT))
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; MicroPython heap "
          f"{heap_bytes() // 1024 // 1024} MB; median of {args.repeat}; phone = MicroPython x {args.factor:g}")
    head = (f"{'widget':<18} {'call':<46} {'CPython':>8} {'MicroPy':>8} {'min':>8} {'first':>8} {'x':>5} "
            f"{'phone':>7}")
    print(head + "\n" + "-" * len(head))
    over = []
    for name in args.widgets or names():
        if not live(name):
            print(f"{name:<18} {'(never calls its model: python = false)':<46}")
            continue
        model, calls = interactions(name, facts)
        mp = micropython_ms(name, [(fn, page) for fn, _, page in calls], args.repeat)
        worst = 0.0
        for (fn, full, page), mp_runs in zip(calls, mp):
            cp = statistics.median(cpython_ms(model, fn, page, args.repeat))
            m = statistics.median(mp_runs)
            phone = m * args.factor
            worst = max(worst, phone)
            flag = "  OVER" if phone > args.budget else ""
            print(f"{name:<18} {label(fn, page, model)[:46]:<46} {cp:8.1f} {m:8.1f} {min(mp_runs):8.1f} {mp_runs[0]:8.1f} "
                  f"{m / cp if cp else 0:5.1f} {phone:7.0f}{flag}")
        if worst > args.budget:
            over.append((name, worst))
    print()
    if over:
        print(f"over {args.budget:g} ms on the phone estimate: " +
              ", ".join(f"{n} (up to {w:.0f} ms)" for n, w in over))
    else:
        print(f"every interaction within {args.budget:g} ms on the phone estimate")


if __name__ == "__main__":
    main()
