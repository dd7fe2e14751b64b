// Time widget model calls under MicroPython's WebAssembly port in Node, for
// benchmarks/widget_latency.py. Reads JSON from stdin:
//   {"heap": bytes, "common": {stem: source}, "models": {name: source},
//    "calls": [[module, fn, params, repeat], ...]}
// and writes one JSON line: for each call, the milliseconds of each of its `repeat` runs,
// each run being fn(params) and json.dumps of the result (what the runtime's bridge sends back).
// The clock is the process's CPU time (process.cpuUsage(), user + system, in microseconds), not
// the wall clock: other work on a busy machine does not count (MicroPython's ticks_us counts
// whole milliseconds here anyway).
// A second of plain loops runs first: V8 compiles the interpreter in tiers, and until it has,
// the same bytecode runs many times slower (measured: 300 ms, then 11 ms, for one loop).
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const job = JSON.parse(Buffer.concat(chunks).toString("utf8"));
let out = "";
const mp = await loadMicroPython({
  heapsize: job.heap,
  stdout: (line) => (out += line + "\n"),
  stderr: (line) => process.stderr.write(line + "\n"),
});
mp.FS.mkdir("/widgets");
for (const [stem, source] of Object.entries({ ...job.common, ...job.models })) mp.FS.writeFile(`/widgets/${stem}.py`, source);
mp.FS.writeFile("/widgets/_calls.json", JSON.stringify(job.calls));
try {
  mp.runPython(`
import sys, json
import js
sys.path.insert(0, "/widgets")
import stack
stack.RESULTS = 0  # time every call as a new setting, not as a repeat served from simulate()'s answers
def now():
    used = js.process.cpuUsage()
    return (used.user + used.system) / 1000
t0 = now()
while now() - t0 < 1000:  # warm the engine up
    s = 0.0
    for i in range(2000):
        s += i * 0.5
    "%s" % [s, {"k": s}]
timings = []
for module, fn, params, repeat in json.load(open("/widgets/_calls.json")):
    f = getattr(__import__(module), fn)
    ms = []
    for _ in range(repeat):
        t0 = now()
        json.dumps(f(params))
        ms.append(now() - t0)
    timings.append(ms)
print(json.dumps(timings))
`);
} catch (e) {
  process.stderr.write(`${e.message || e}\n`);
  process.exit(1);
}
process.stdout.write(out);
