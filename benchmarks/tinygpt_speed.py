"""Training speed of the tiny-gpt page's engine (widgets/common/tinygpt.py) at the page's default
settings, on the page's data (data/tiny-gpt.json): in CPython, in headless Chromium on Pyodide (the
vendored npm package, served from 127.0.0.1) and in MicroPython's WebAssembly port in Node.

    python benchmarks/tinygpt_speed.py [--steps 25] [--only cpython pyodide micropython micropython-ulab ulab ulab-train ulab-longer]

The page's two engines as the page runs them (issue 54): `--only pyodide micropython-ulab` trains
the page's Session (its validations over the whole slice and the held-out slice included) with
tinygpt.py on Pyodide and with tinygpt_ulab.py on MicroPython's ulab build, which the page runs
on every device: steps per second of CPU.

Each runtime trains the defaults (seed 1) for --steps steps. The clock is CPU time, not the wall
clock, so other work on a busy machine does not count: CPython's process_time(), Chromium's
renderer ProcessTime (DevTools Protocol Performance.getMetrics; Pyodide runs on the page's main
thread here, the page runs it in a worker), Node's process.cpuUsage(). Start-up and the first
validation loss are outside the timed part. Prints the seconds per step, the steps one free core
runs in 60 s and in 5 min, and the validation loss at those steps: the training is deterministic,
so it is the reference run of seed 1 in data/tiny-gpt.json (trained in CPython; each runtime's own
losses up to --steps are checked against it), against the unigram line.

--only ulab-longer times the longer runs' settings (data/tiny-gpt.json's `longer`) on MicroPython's ulab
build and says how long a run on the page would take to their lowest point and to the bigram line.

--only ulab-train (not in the default list: about two minutes of CPU) measures the second backend:
it trains DEFAULTS and SLOW_DEFAULTS on MicroPython in Node with the pure engine (on the plain build
and on the ulab build) and with widgets/common/tinygpt_ulab.py (the same algorithm on ulab arrays,
which the page trains with on MicroPython's ulab build), prints each one's steps per second and
the time of one validation call, and checks that the ulab engine's losses match the pure engine's
step for step.
"""
import argparse
import functools
import http.server
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "widgets" / "common"))

COMMON = ("tinygpt", "tinygpt_ulab", "rng", "numfmt", "packed")  # what the page's model imports

# Runs in every runtime, with `model` the page's model module: make() starts the defaults' run
# (untimed), train(n) is the timed part.
BENCH = """
RUN = {}
def make(model, data, steps):
    settings = dict(model.DEFAULTS)
    settings["steps"] = steps
    RUN["run"] = model.Session(data, settings)
def train(steps):
    run = RUN["run"]
    run.train(steps)
    return {"steps": run.step, "val_log": run.val_log}
"""

PAGE = """<!doctype html><meta charset="utf-8"><title>bench</title><script type="module">
const { loadPyodide } = await import("/node_modules/pyodide/pyodide.mjs");
const py = await loadPyodide({ indexURL: "/node_modules/pyodide/" });
const text = async (u) => (await fetch(u)).text();
for (const m of %s) py.FS.writeFile(`/home/pyodide/${m}.py`, await text(`/widgets/common/${m}.py`));
py.FS.writeFile("/home/pyodide/tiny_gpt_model.py", await text("/widgets/tiny_gpt/model.py"));
py.FS.writeFile("/home/pyodide/_bench.py", %s);
py.FS.writeFile("/home/pyodide/_data.json", await text("/data/tiny-gpt.json"));
window.make = (steps) => py.runPython(`
import sys, json
sys.path.insert(0, "/home/pyodide")
import tiny_gpt_model, _bench
_bench.make(tiny_gpt_model, json.load(open("/home/pyodide/_data.json")), ${steps})`);
window.train = (steps) => py.runPython(`json.dumps(_bench.train(${steps}))`);
window.ready = true;
</script>"""

MICROPYTHON = """import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";
import { readFileSync } from "node:fs";
const job = JSON.parse(readFileSync(0, "utf8"));
let out = "";
// The heap the page's worker starts with (widgets/runtime/mp_worker.js, HEAP_BYTES); it grows as needed.
const mp = await loadMicroPython({ ...(job.wasm && { url: job.wasm }), heapsize: 4 * 1024 * 1024,
  stdout: (l) => (out += l + "\\n") });
mp.FS.mkdir("/w");
for (const [stem, src] of Object.entries(job.files)) mp.FS.writeFile(`/w/${stem}.py`, src);
mp.FS.writeFile("/w/_data.json", job.data);
mp.runPython(`
import sys, json
sys.path.insert(0, "/w")
import tiny_gpt_model, _bench
_bench.make(tiny_gpt_model, json.load(open("/w/_data.json")), ${job.steps})`);
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
// One step a call, as the page calls it on MicroPython (measured at the phone settings: 4 steps in
// one call and 4 calls of one step took the same CPU time).
const t0 = cpu();
for (let i = 1; i < job.steps; i++) mp.runPython("_bench.train(1)");
mp.runPython(`print(json.dumps(_bench.train(1)))`);
const seconds = cpu() - t0;
const result = JSON.parse(out.trim().split("\\n").pop());
process.stdout.write(JSON.stringify({ ...result, cpu_seconds: seconds }) + "\\n");
"""


# The npm package holds a second MicroPython build with ulab (a numpy subset), which the site ships
# for the tiny-gpt page: the same product at the shape of the page's default output layer (B*T = 64 rows of
# width 32, a vocabulary of 256), the engine's own linear() against ulab's dot, in the same build.
ULAB = """import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";
import { readFileSync } from "node:fs";
const job = JSON.parse(readFileSync(0, "utf8"));
let out = "";
const mp = await loadMicroPython({ url: job.wasm, heapsize: 256 * 1024 * 1024, stdout: (l) => (out += l + "\\n") });
mp.FS.mkdir("/w");
for (const [stem, src] of Object.entries(job.files)) mp.FS.writeFile(`/w/${stem}.py`, src);
mp.runPython(`
import sys
sys.path.insert(0, "/w")
import tinygpt
from ulab import numpy as np
X = [[(i * 7 + j) % 13 / 13.0 for j in range(32)] for i in range(64)]
W = [[(i * 5 + j) % 11 / 11.0 for j in range(32)] for i in range(256)]
Xa = np.array(X)
WaT = np.array(W).transpose()`);
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const time = (code, n) => { const t0 = cpu(); for (let i = 0; i < n; i++) mp.runPython(code); return (cpu() - t0) / n; };
const pure = time("Y = tinygpt.linear(X, W)", 3);
const ulab = time("Ya = np.dot(Xa, WaT)", 30);
mp.runPython("print(max(abs(Y[i][j] - Ya[i][j]) for i in range(64) for j in range(256)))");
process.stdout.write(JSON.stringify({ pure, ulab, diff: Number(out.trim()) }) + "\\n");
"""


def run_node(name, source, job):
    """Write `source` to benchmarks/.NAME.mjs, run it in Node with `job` as JSON on stdin, remove it,
    and return the JSON object on its last line of output."""
    script = ROOT / "benchmarks" / f".{name}.mjs"
    script.write_text(source, encoding="utf-8")
    try:
        out = subprocess.run(["node", str(script)], input=json.dumps(job), capture_output=True, text=True,
                             cwd=ROOT, check=True).stdout
    finally:
        script.unlink()
    return json.loads(out.strip().splitlines()[-1])


def ulab():
    """The engine's linear() and ulab's dot on the ulab build of MicroPython, in Node: ns per multiply-add."""
    wasm = ROOT / "node_modules" / "@micropython" / "micropython-webassembly-pyscript" / "micropython-ulab.wasm"
    files = {m: (ROOT / "widgets" / "common" / f"{m}.py").read_text(encoding="utf-8") for m in COMMON}
    r = run_node("tinygpt_ulab", ULAB, {"wasm": str(wasm), "files": files})
    madds = 64 * 256 * 32
    assert r["diff"] < 1e-9, r
    print(f"{'ulab':12} output layer 64x32 @ 32x256 on MicroPython's ulab build: engine's linear() "
          f"{r['pure'] * 1e9 / madds:6.0f} ns/multiply-add, ulab dot {r['ulab'] * 1e9 / madds:5.0f} ns "
          f"({r['pure'] / r['ulab']:.0f}x); same products to {r['diff']:.0e}", flush=True)


# The same training on the ulab build, in two engines: the pure-Python one (widgets/common/tinygpt.py)
# and widgets/common/tinygpt_ulab.py, the same algorithm with ulab arrays; the pure one on the plain
# build too. Each job is a fresh MicroPython with the page's heap: it starts the run as the page's
# Session does (same seed, weights and batches), takes a warm-up step, times the rest one step a
# call (as the page calls), then times forward passes of one validation call (EVAL_PER_CALL windows).
# The ulab engine runs 50 or 100 steps, and its validation loss there is checked against the
# reference run of seed 1 in data/tiny-gpt.json (the pure engine in CPython).
ULAB_TRAIN_PY = """
import sys, json
sys.path.insert(0, "/w")
import tinygpt as tg
import tiny_gpt_model as model
from rng import Rng
RUN = {}
def make(engine, which, settings=None):
    s = settings or (model.DEFAULTS if which == "defaults" else model.SLOW_DEFAULTS)
    e = tg
    if engine == "ulab":
        import tinygpt_ulab
        e = tinygpt_ulab
    d = json.load(open("/w/_data.json"))
    tok = tg.Tokenizer(d["vocab"])
    cfg = tg.Config(len(d["vocab"]), s["n_layer"], s["n_embd"], s["n_head"], s["block_size"])
    names = tg.weight_names(cfg)
    W = tg.init_weights(cfg, s["seed"])
    if e is not tg:
        W = e.to_arrays(W)
    vx, vy = tg.cover_windows(tok.encode(d["val_text"]), cfg.block_size)
    RUN.update({"e": e, "cfg": cfg, "W": W, "opt": e.AdamW(W, names, lr=s["lr"], weight_decay=model.WEIGHT_DECAY),
                "rng": Rng(s["seed"] + 100000), "tokens": tok.encode(d["train_text"]), "losses": [],
                "vx": vx, "vy": vy})
def step():
    r = RUN
    xs, ys = tg.get_batch(r["tokens"], model.BATCH, r["cfg"].block_size, r["rng"])
    r["losses"].append(r["e"].train_step(r["cfg"], r["W"], r["opt"], xs, ys))
def val_call():
    r = RUN
    r["e"].forward(r["cfg"], r["W"], r["vx"][:model.EVAL_PER_CALL], r["vy"][:model.EVAL_PER_CALL])
def done(full):
    r = RUN
    out = {"losses": r["losses"], "float_bytes": 8 if 1.0 + 2.0 ** -52 != 1.0 else 4}
    if full:  # the whole validation set, as the page's Session measures it
        out["val"] = r["e"].loss_of(r["cfg"], r["W"], r["vx"], r["vy"], model.EVAL_PER_CALL)
    print(json.dumps(out))
"""

ULAB_TRAIN = """import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";
import { readFileSync } from "node:fs";
const job = JSON.parse(readFileSync(0, "utf8"));
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const results = [];
for (const run of job.runs) {
  let out = "";
  const mp = await loadMicroPython({ url: run.wasm, heapsize: 4 * 1024 * 1024, stdout: (l) => (out += l + "\\n") });
  mp.FS.mkdir("/w");
  for (const [stem, src] of Object.entries(job.files)) mp.FS.writeFile(`/w/${stem}.py`, src);
  mp.FS.writeFile("/w/_data.json", job.data);
  mp.runPython(job.bench);
  mp.runPython(`make("${run.engine}", "${run.which}", ${run.settings ? JSON.stringify(run.settings) : "None"})`);
  mp.runPython("step()");  // warm-up, untimed
  let t0 = cpu();
  for (let i = 1; i < run.steps; i++) mp.runPython("step()");
  const step = (cpu() - t0) / (run.steps - 1);
  mp.runPython("val_call()");  // warm-up, untimed
  t0 = cpu();
  for (let i = 0; i < run.val_calls; i++) mp.runPython("val_call()");
  const val = (cpu() - t0) / run.val_calls;
  mp.runPython(`done(${run.engine === "ulab" ? "True" : "False"})`);
  results.push({ ...run, ...JSON.parse(out.trim().split("\\n").pop()), step_seconds: step, val_seconds: val });
}
process.stdout.write(JSON.stringify(results) + "\\n");
"""

# name, build, engine, settings, steps (the first a warm-up), timed validation calls
ULAB_RUNS = [
    ("pure, plain build", "micropython.wasm", "pure", "defaults", 6, 1),
    ("pure, ulab build", "micropython-ulab.wasm", "pure", "defaults", 8, 1),
    ("ulab engine", "micropython-ulab.wasm", "ulab", "defaults", 50, 10),
    ("pure, plain build", "micropython.wasm", "pure", "slow", 16, 3),
    ("pure, ulab build", "micropython-ulab.wasm", "pure", "slow", 16, 3),
    ("ulab engine", "micropython-ulab.wasm", "ulab", "slow", 100, 20),
]


def ulab_train(runs=ULAB_RUNS):
    """Steps per second of the pure engine and the ulab engine on MicroPython in Node, and their losses
    step for step (the same seed, weights and batches)."""
    sys.path.insert(0, str(ROOT / "widgets" / "tiny_gpt"))
    import model
    package = ROOT / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"
    files = {m: (ROOT / "widgets" / "common" / f"{m}.py").read_text(encoding="utf-8") for m in COMMON}
    files["tiny_gpt_model"] = (ROOT / "widgets" / "tiny_gpt" / "model.py").read_text(encoding="utf-8")
    d = data()
    job = {"files": files, "bench": ULAB_TRAIN_PY, "data": json.dumps(d, ensure_ascii=False),
           "runs": [{"name": n, "build": w, "wasm": str(package / w), "engine": e, "which": s, "steps": k, "val_calls": v}
                    for n, w, e, s, k, v in runs]}
    results = run_node("tinygpt_ulab_train", ULAB_TRAIN, job)
    for which, settings, ref in (("defaults", model.DEFAULTS, d["reference"]), ("slow", model.SLOW_DEFAULTS, d["reference_slow"])):
        mine = [r for r in results if r["which"] == which]
        if not mine:
            continue
        cost = model.step_cost(settings)
        print(f"{'DEFAULTS' if which == 'defaults' else 'SLOW_DEFAULTS'} (n_embd {settings['n_embd']}, block_size "
              f"{settings['block_size']}, batch {model.BATCH}; about {cost / 1e6:.1f} million multiply-adds a step)")
        base = next((r for r in mine if r["engine"] == "pure" and r["build"] == "micropython-ulab.wasm"), None)
        for r in mine:
            line = (f"  {r['name']:18} {r['step_seconds'] * 1000:7.1f} ms/step ({1 / r['step_seconds']:6.2f} steps/s of one core, "
                    f"{r['step_seconds'] * 1e9 / cost:4.0f} ns/multiply-add), timed over {r['steps'] - 1} steps; one validation "
                    f"call ({model.EVAL_PER_CALL} windows) {r['val_seconds'] * 1000:6.1f} ms")
            assert r["float_bytes"] == 8, r  # float64 in both builds, ulab's arrays too
            if base and r is not base:
                n = min(len(r["losses"]), len(base["losses"]))
                diff = max(abs(a - b) for a, b in zip(r["losses"][:n], base["losses"][:n]))
                line += f"; losses of steps 1-{n} against the pure engine's on the ulab build: max |diff| {diff:.1e}"
                assert diff < 1e-9, (r["name"], r["losses"][:n], base["losses"][:n])
            print(line, flush=True)
            steps = len(r["losses"])
            if "val" in r and steps in ref["steps"]:
                want = next(run for run in ref["runs"] if run["seed"] == settings["seed"])["val"][ref["steps"].index(steps)]
                print(f"  {'':18} validation loss after {steps} steps {r['val']:.12f}, the pure engine's in CPython "
                      f"(data/tiny-gpt.json, seed {settings['seed']}) {want:.12f}: |diff| {abs(r['val'] - want):.1e}", flush=True)
                assert abs(r["val"] - want) < 1e-9, (r["val"], want)
        ulab_run = next((r for r in mine if r["engine"] == "ulab"), None)
        if base and ulab_run:
            print(f"  ulab engine / pure engine on the ulab build: {base['step_seconds'] / ulab_run['step_seconds']:.1f}x "
                  f"the steps/s", flush=True)


def ulab_longer():
    """The longer runs of data/tiny-gpt.json (`longer`) in time: each setting's seconds per step and per
    validation call of the ulab engine on MicroPython's ulab build in Node (CPU time), and what a run on
    the page would take (its steps, plus a whole validation every EVAL_EVERY steps) to the step where
    the lab's runs were lowest and, where they crossed it, to that text's bigram line."""
    sys.path.insert(0, str(ROOT / "widgets" / "tiny_gpt"))
    import model
    package = ROOT / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"
    files = {m: (ROOT / "widgets" / "common" / f"{m}.py").read_text(encoding="utf-8") for m in COMMON}
    files["tiny_gpt_model"] = (ROOT / "widgets" / "tiny_gpt" / "model.py").read_text(encoding="utf-8")
    d = data()
    longer = d["longer"]
    settings = {a["name"]: {**model.DEFAULTS, **a["settings"], "seed": 1} for a in longer["arms"]}
    job = {"files": files, "bench": ULAB_TRAIN_PY, "data": json.dumps(d, ensure_ascii=False),
           "runs": [{"name": name, "build": "micropython-ulab.wasm", "wasm": str(package / "micropython-ulab.wasm"),
                     "engine": "ulab", "which": name, "settings": s, "steps": 30, "val_calls": 5}
                    for name, s in settings.items()]}
    results = {r["name"]: r for r in run_node("tinygpt_ulab_train", ULAB_TRAIN, job)}
    steps = longer["steps"]
    for a in longer["arms"]:
        r, s = results[a["name"]], settings[a["name"]]
        windows = sum((len(t) - 1) // s["block_size"] for t in (d["val_text"], d["heldout_text"]))
        validation = -(-windows // model.EVAL_PER_CALL) * r["val_seconds"]

        def page_seconds(n):
            return n * r["step_seconds"] + (n // model.EVAL_EVERY + 1) * validation
        mean = [sum(v) / len(v) for v in zip(*[run["val"] for run in a["runs"]])]
        best = steps[min(range(len(mean)), key=mean.__getitem__)]
        line = (f"{a['name']:9} on {a['train_chars']:,} characters: {r['step_seconds'] * 1000:6.1f} ms/step "
                f"({1 / r['step_seconds']:5.1f} steps/s of one core), a whole validation {validation:5.2f} s; "
                f"to its lowest point (step {best:,}) {page_seconds(best) / 60:5.1f} min on the page")
        crossed = next((st for st, v in zip(steps, mean) if v < a["bigram"]), None)
        if crossed:
            line += f", below its bigram line (step {crossed:,}) {page_seconds(crossed) / 60:5.1f} min"
        print(line, flush=True)


def data():
    return json.loads((ROOT / "data" / "tiny-gpt.json").read_text(encoding="utf-8"))


def report(name, r, d):
    ref = d["reference"]
    seed1 = next(run for run in ref["runs"] if run["seed"] == 1)
    curve = list(zip(ref["steps"], seed1["val"]))
    reference = dict(curve)
    for s, v in r["val_log"]:  # the same run, step for step
        if s in reference:
            assert abs(v - reference[s]) < 1e-9 * v, f"{name}: val {v} at step {s}, CPython's reference {reference[s]}"
    per_step = r["cpu_seconds"] / r["steps"]

    def at(seconds):
        steps = int(seconds / per_step)
        done = [(s, v) for s, v in curve if s <= steps]
        if steps > curve[-1][0]:
            return f"{steps} steps (past the reference's {curve[-1][0]}: val {curve[-1][1]:.3f} there)"
        return f"{steps} steps, val {done[-1][1]:.3f} (step {done[-1][0]})"

    below = next((s for s, v in curve if v < ref["unigram"]), None)
    print(f"{name:12} {per_step * 1000:7.0f} ms/step ({1 / per_step:5.2f} steps/s of one core);  "
          f"60 s: {at(60)};  5 min: {at(300)};  unigram {ref['unigram']:.3f}, first below it at step {below} "
          f"= {below * per_step:.0f} s", flush=True)


def cpython(steps, d):
    import importlib.util
    namespace = {}
    exec(BENCH, namespace)
    spec = importlib.util.spec_from_file_location("tiny_gpt_model", ROOT / "widgets" / "tiny_gpt" / "model.py")
    model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model)
    namespace["make"](model, d, steps)
    t0 = time.process_time()
    r = namespace["train"](steps)
    r["cpu_seconds"] = time.process_time() - t0
    return r


def pyodide(steps, d):
    from playwright.sync_api import sync_playwright
    from support import BROWSER_ARGS, chromium_path

    page_html = PAGE % (json.dumps(list(COMMON)), json.dumps(BENCH))

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/bench.html":
                body = page_html.encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write(body)
                return
            super().do_GET()

        def log_message(self, *args):
            pass

    Handler.extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map, **{".mjs": "text/javascript"})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(ROOT)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=BROWSER_ARGS)
            page = browser.new_page()
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")

            def process_time():
                return next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"] if m["name"] == "ProcessTime")

            page.goto(f"http://127.0.0.1:{server.server_port}/bench.html")
            page.wait_for_function("window.ready === true", timeout=600_000)
            page.evaluate(f"make({steps})")
            t0 = process_time()
            result = json.loads(page.evaluate(f"train({steps})"))
            result["cpu_seconds"] = process_time() - t0
            browser.close()
            return result
    finally:
        server.shutdown()


def micropython(steps, d, build=None):
    files = {m: (ROOT / "widgets" / "common" / f"{m}.py").read_text(encoding="utf-8") for m in COMMON}
    files["tiny_gpt_model"] = (ROOT / "widgets" / "tiny_gpt" / "model.py").read_text(encoding="utf-8")
    files["_bench"] = BENCH
    job = {"files": files, "steps": steps, "data": json.dumps(d, ensure_ascii=False)}
    if build:
        job["wasm"] = str(ROOT / "node_modules" / "@micropython" / "micropython-webassembly-pyscript" / build)
    return run_node("tinygpt_micropython", MICROPYTHON, job)


def micropython_ulab(steps, d):
    """What the page runs on every device: the page's Session on MicroPython's ulab build, whose
    model trains with tinygpt_ulab.py (its validations over the whole slice included)."""
    return micropython(steps, d, "micropython-ulab.wasm")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=25)
    ap.add_argument("--only", nargs="+", default=["cpython", "pyodide", "micropython", "ulab"])
    args = ap.parse_args()
    d = data()
    for name in args.only:
        if name == "ulab":
            ulab()
            continue
        if name == "ulab-train":
            ulab_train()
            continue
        if name == "ulab-longer":
            ulab_longer()
            continue
        run = {"cpython": cpython, "pyodide": pyodide, "micropython": micropython, "micropython-ulab": micropython_ulab}[name]
        report(name, run(args.steps, d), d)


if __name__ == "__main__":
    main()
