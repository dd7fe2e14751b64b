"""Training speed of the tiny-gpt page's engine (widgets/common/tinygpt.py) at the page's default
settings, on the page's data (data/tiny-gpt.json), in CPython and in headless Chromium on Pyodide
(the vendored npm package, served from 127.0.0.1), and in MicroPython's WebAssembly port in Node.

    python benchmarks/tinygpt_speed.py [--seconds 60] [--only cpython pyodide micropython]

Each runtime trains from the defaults' first step for --seconds of wall time, then prints steps
per second, the validation loss at the last evaluation (every 25 steps) and when it first went
below the unigram line. The machine's load counts: run it on a quiet machine for the page's
figures (the issue's goal: below the unigram line within 60 s on desktop Chromium).
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

COMMON = ("tinygpt", "rng", "numfmt")

# Runs in every runtime, with `model` the page's model module and DATA the page's data:
# train in chunks of 5 steps until SECONDS have passed, noting each validation loss's time.
BENCH = """
import time
def bench(model, data, seconds):
    clock = getattr(time, "perf_counter", None) or time.time
    run = model.Session(data, dict(model.DEFAULTS, steps=100000))
    t0 = clock()
    seen, below = 1, None
    evals = []
    while clock() - t0 < seconds:
        run.train(5)
        now = clock() - t0
        for s, v in run.val_log[seen:]:
            evals.append([s, now, v])
            if below is None and v < data["reference"]["unigram"]:
                below = [s, now]
        seen = len(run.val_log)
    wall = clock() - t0
    return {"steps": run.step, "seconds": wall, "steps_per_s": run.step / wall, "evals": evals,
            "below_unigram": below, "unigram": data["reference"]["unigram"]}
"""

PAGE = """<!doctype html><meta charset="utf-8"><title>bench</title><script type="module">
const { loadPyodide } = await import("/node_modules/pyodide/pyodide.mjs");
const py = await loadPyodide({ indexURL: "/node_modules/pyodide/" });
const text = async (u) => (await fetch(u)).text();
for (const m of %s) py.FS.writeFile(`/home/pyodide/${m}.py`, await text(`/widgets/common/${m}.py`));
py.FS.writeFile("/home/pyodide/tiny_gpt_model.py", await text("/widgets/tiny_gpt/model.py"));
py.FS.writeFile("/home/pyodide/_bench.py", %s);
py.FS.writeFile("/home/pyodide/_data.json", await text("/data/tiny-gpt.json"));
window.runBench = (seconds) => py.runPython(`
import sys, json
sys.path.insert(0, "/home/pyodide")
import tiny_gpt_model, _bench
json.dumps(_bench.bench(tiny_gpt_model, json.load(open("/home/pyodide/_data.json")), ${seconds}))`);
window.ready = true;
</script>"""

MICROPYTHON = """import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";
import { readFileSync } from "node:fs";
const job = JSON.parse(readFileSync(0, "utf8"));
let out = "";
const mp = await loadMicroPython({ heapsize: 256 * 1024 * 1024, stdout: (l) => (out += l + "\\n") });
mp.FS.mkdir("/w");
for (const [stem, src] of Object.entries(job.files)) mp.FS.writeFile(`/w/${stem}.py`, src);
mp.FS.writeFile("/w/_data.json", job.data);
mp.runPython(`
import sys, json
sys.path.insert(0, "/w")
import tiny_gpt_model, _bench
print(json.dumps(_bench.bench(tiny_gpt_model, json.load(open("/w/_data.json")), ${job.seconds})))`);
process.stdout.write(out);
"""


def report(name, r):
    last = r["evals"][-1] if r["evals"] else None
    below = f"step {r['below_unigram'][0]} at {r['below_unigram'][1]:.1f} s" if r["below_unigram"] else "not yet"
    print(f"{name:12} {r['steps_per_s']:6.2f} steps/s  {r['steps']} steps in {r['seconds']:.0f} s;  "
          f"val {last[2]:.3f} at step {last[0]} ({last[1]:.0f} s);  unigram {r['unigram']:.3f}, below it: {below}",
          flush=True)


def cpython(seconds):
    import importlib.util
    namespace = {}
    exec(BENCH, namespace)
    spec = importlib.util.spec_from_file_location("tiny_gpt_model", ROOT / "widgets" / "tiny_gpt" / "model.py")
    model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(model)
    data = json.loads((ROOT / "data" / "tiny-gpt.json").read_text(encoding="utf-8"))
    return namespace["bench"](model, data, seconds)


def pyodide(seconds):
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
            page.goto(f"http://127.0.0.1:{server.server_port}/bench.html")
            page.wait_for_function("window.ready === true", timeout=120000)
            result = json.loads(page.evaluate(f"runBench({seconds})"))
            browser.close()
            return result
    finally:
        server.shutdown()


def micropython(seconds):
    files = {m: (ROOT / "widgets" / "common" / f"{m}.py").read_text(encoding="utf-8") for m in COMMON}
    files["tiny_gpt_model"] = (ROOT / "widgets" / "tiny_gpt" / "model.py").read_text(encoding="utf-8")
    files["_bench"] = BENCH
    job = {"files": files, "seconds": seconds, "data": (ROOT / "data" / "tiny-gpt.json").read_text(encoding="utf-8")}
    script = ROOT / "benchmarks" / ".tinygpt_micropython.mjs"
    script.write_text(MICROPYTHON, encoding="utf-8")
    try:
        out = subprocess.run(["node", str(script)], input=json.dumps(job), capture_output=True, text=True,
                             cwd=ROOT, check=True, timeout=seconds * 4 + 120).stdout
    finally:
        script.unlink()
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--only", nargs="+", default=["cpython", "pyodide", "micropython"])
    args = ap.parse_args()
    for name in args.only:
        t = time.time()
        report(name, {"cpython": cpython, "pyodide": pyodide, "micropython": micropython}[name](args.seconds))
        print(f"{'':12} ({time.time() - t:.0f} s with start-up)", flush=True)


if __name__ == "__main__":
    main()
