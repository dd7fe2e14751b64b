// Run widget models' functions under MicroPython's WebAssembly port in Node, for the parity test
// (tests/widgets/test_micropython_parity.py). Reads JSON from stdin:
//   {"common": {stem: source}, "models": {name: source}, "calls": [[name, params, fn], ...], "build"?}
// (fn defaults to "view"; build "ulab" runs the package's ulab build, micropython-ulab.wasm, which
// the page loads for a widget whose Python imports ulab) and writes one JSON line: [fn(params) for
// each call], as MicroPython's json.dumps gives it.
import { fileURLToPath } from "node:url";
import { loadMicroPython } from "@micropython/micropython-webassembly-pyscript";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const job = JSON.parse(Buffer.concat(chunks).toString("utf8"));
let out = "";
const url = job.build === "ulab"
  ? fileURLToPath(new URL("micropython-ulab.wasm", import.meta.resolve("@micropython/micropython-webassembly-pyscript")))
  : undefined; // the package's default, micropython.wasm
const mp = await loadMicroPython({ url, stdout: (line) => (out += line + "\n"), stderr: (line) => process.stderr.write(line + "\n") });
mp.FS.mkdir("/widgets");
for (const [stem, source] of Object.entries({ ...job.common, ...job.models })) mp.FS.writeFile(`/widgets/${stem}.py`, source);
mp.FS.writeFile("/widgets/_calls.json", JSON.stringify(job.calls));
try {
  mp.runPython(`
import sys, json
sys.path.insert(0, "/widgets")
results = []
for call in json.load(open("/widgets/_calls.json")):
    fn = call[2] if len(call) > 2 else "view"
    results.append(getattr(__import__(call[0]), fn)(call[1]))
print(json.dumps(results))
`);
} catch (e) {
  // The Python traceback, not Node's dump of the minified runtime around the throw.
  process.stderr.write(`${e.message || e}\n`);
  process.exit(1);
}
process.stdout.write(out);
