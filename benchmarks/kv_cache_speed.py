"""The KV cache's speed-up in the browser engines (issue 51): generating n tokens with
sample_cached (the context read once, then one forward_step per token) against sample (the whole
window read again for every token), widgets/common/tinygpt.py and tinygpt_ulab.py, random weights.

    python benchmarks/kv_cache_speed.py [--repeat 5] [--only cpython micropython ulab]

Two cases: 16 tokens at block 16 (1 layer, d 32, 2 heads: the tiny-gpt page's default model) and
64 tokens at block 64 (2 layers, d 32, 2 heads), both from a one-token context, vocabulary 256 (the
page's). The same draws both ways are checked, then each way is timed --repeat times and the
median kept, in CPU time, so other work on a busy machine does not count: cpython, the pure engine
in this interpreter (process_time); micropython, the pure engine on MicroPython's WebAssembly port
in Node, and ulab, tinygpt_ulab.py on its ulab build (Node's process.cpuUsage around each call).
Prints seconds per generation both ways and the ratio.
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "widgets" / "common"))

CASES = [  # (name, n_layer, n_embd, n_head, block_size, tokens)
    ("16 tokens, block 16, 1 layer, d 32", 1, 32, 2, 16, 16),
    ("64 tokens, block 64, 2 layers, d 32", 2, 32, 2, 64, 64),
]
VOCAB = 256

# Runs in every runtime: setup(p) builds one case's model (untimed) and checks that both ways draw
# the same tokens; gen(way) is the timed part.
PROBE = """
import tinygpt as tg
from rng import Rng
S = {}


def setup(p):
    eng = tg
    if p["engine"] == "ulab":
        import tinygpt_ulab as eng
    cfg = tg.Config(p["vocab"], p["n_layer"], p["n_embd"], p["n_head"], p["block_size"])
    W = tg.init_weights(cfg, 1)
    if eng is not tg:
        W = eng.to_arrays(W)
    S["eng"], S["cfg"], S["W"], S["n"] = eng, cfg, W, p["n"]
    a = eng.sample(cfg, W, [1], p["n"], 1.0, Rng(2), 0)
    return a == eng.sample_cached(cfg, W, [1], p["n"], 1.0, Rng(2), 0) and len(a) == p["n"]


def gen(way):
    eng = S["eng"]
    fn = eng.sample if way == "full" else eng.sample_cached
    return fn(S["cfg"], S["W"], [1], S["n"], 1.0, Rng(2), 0)
"""

# MicroPython in Node, CPU time (process.cpuUsage) around each timed call, as tinygpt_speed.py.
NODE = """import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";
import { readFileSync } from "node:fs";
const job = JSON.parse(readFileSync(0, "utf8"));
let out = "";
const mp = await loadMicroPython({ url: job.wasm || undefined, heapsize: 256 * 1024 * 1024,
                                   stdout: (l) => (out += l + "\\n") });
mp.FS.mkdir("/w");
for (const [stem, src] of Object.entries(job.files)) mp.FS.writeFile(`/w/${stem}.py`, src);
mp.runPython("import sys, json\\nsys.path.insert(0, '/w')\\nimport _kv");
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const results = [];
for (const p of job.cases) {
  out = "";
  mp.runPython(`print(json.dumps(_kv.setup(json.loads('${JSON.stringify(p)}'))))`);
  const same = JSON.parse(out.trim());
  const times = { full: [], cached: [] };
  for (let r = 0; r < job.repeat; r++) {
    for (const way of ["full", "cached"]) {
      const t0 = cpu();
      mp.runPython(`_kv.gen("${way}")`);
      times[way].push(cpu() - t0);
    }
  }
  results.push({ same, ...times });
}
process.stdout.write(JSON.stringify(results) + "\\n");
"""


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def params(case, engine):
    _, L, d, h, T, n = case
    return {"engine": engine, "vocab": VOCAB, "n_layer": L, "n_embd": d, "n_head": h, "block_size": T, "n": n}


def in_cpython(repeat):
    ns = {}
    exec(PROBE, ns)
    out = []
    for c in CASES:
        same = ns["setup"](params(c, "pure"))
        times = {"full": [], "cached": []}
        for _ in range(repeat):
            for way in times:
                t0 = time.process_time()
                ns["gen"](way)
                times[way].append(time.process_time() - t0)
        out.append({"same": same, **times})
    return out


def in_micropython(engine, repeat):
    files = {p.stem: p.read_text(encoding="utf-8") for p in (ROOT / "widgets" / "common").glob("*.py")}
    files["_kv"] = PROBE
    wasm = ROOT / "node_modules" / "@micropython" / "micropython-webassembly-pyscript" / "micropython-ulab.wasm"
    job = {"files": files, "cases": [params(c, engine) for c in CASES], "repeat": repeat,
           "wasm": str(wasm) if engine == "ulab" else ""}
    script = ROOT / "benchmarks" / ".kv_cache_speed.mjs"
    script.write_text(NODE, encoding="utf-8")
    try:
        done = subprocess.run(["node", str(script)], input=json.dumps(job), capture_output=True, text=True, cwd=ROOT)
    finally:
        script.unlink()
    if done.returncode:
        sys.exit(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", nargs="+", default=["cpython", "micropython", "ulab"],
                    choices=["cpython", "micropython", "ulab"])
    args = ap.parse_args()
    print(f"python {sys.version.split()[0]}, median of {args.repeat}")
    for runtime in args.only:
        t0 = time.time()
        got = in_cpython(args.repeat) if runtime == "cpython" else in_micropython(
            "ulab" if runtime == "ulab" else "pure", args.repeat)
        label = {"cpython": "CPython, tinygpt.py", "micropython": "MicroPython (Node), tinygpt.py",
                 "ulab": "MicroPython ulab build (Node), tinygpt_ulab.py"}[runtime]
        for case, g in zip(CASES, got):
            full, cached = median(g["full"]), median(g["cached"])
            print(f"{label:48s} {case[0]:38s} full {full:8.4f} s  cached {cached:8.4f} s  "
                  f"x{full / cached:5.1f}  same tokens: {g['same']}")
        print(f"  ({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
