import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";
import { readFileSync } from "node:fs";
const job = JSON.parse(readFileSync(0, "utf8"));
let out = "";
// The heap the page's worker starts with (widgets/runtime/mp_worker.js, HEAP_BYTES); it grows as needed.
const mp = await loadMicroPython({ heapsize: 4 * 1024 * 1024, stdout: (l) => (out += l + "\n") });
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
const result = JSON.parse(out.trim().split("\n").pop());
process.stdout.write(JSON.stringify({ ...result, cpu_seconds: seconds }) + "\n");
