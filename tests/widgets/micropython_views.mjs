// Run widget models' view() under MicroPython's WebAssembly port in Node, for the parity test
// (tests/widgets/test_micropython_parity.py). Reads JSON from stdin:
//   {"common": {stem: source}, "models": {name: source}, "calls": [[name, params], ...]}
// and writes one JSON line: [view(params) for each call], as MicroPython's json.dumps gives it.
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const job = JSON.parse(Buffer.concat(chunks).toString("utf8"));
let out = "";
const mp = await loadMicroPython({ stdout: (line) => (out += line + "\n"), stderr: (line) => process.stderr.write(line + "\n") });
mp.FS.mkdir("/widgets");
for (const [stem, source] of Object.entries({ ...job.common, ...job.models })) mp.FS.writeFile(`/widgets/${stem}.py`, source);
mp.FS.writeFile("/widgets/_calls.json", JSON.stringify(job.calls));
mp.runPython(`
import sys, json
sys.path.insert(0, "/widgets")
results = []
for name, params in json.load(open("/widgets/_calls.json")):
    results.append(__import__(name).view(params))
print(json.dumps(results))
`);
process.stdout.write(out);
