// The widgets' Python: one Pyodide, started once per visit, in this module worker.
// Messages in:  {type: "boot", sharedModules}               start Python, import widgets/common/*.py
//               {id, type: "load", folder, url}              import widgets/<folder>/model.py
//               {id, type: "call", folder, fn, params}       run model.fn(params) -> dict
// Messages out: {type: "progress", text} | {type: "ready"} | {type: "boot-error", message}
//               {type: "started", id}   (the call's time limit starts now)
//               {id, ok: true, result: "<json>"} | {id, ok: false, kind: "model" | "result", error}
// URLs come from this file's own URL, so the site works under any base path.
const INDEX_URL = new URL("../../assets/vendor/pyodide/", import.meta.url).href;
// The standard library cut down by the build to what the widgets' Python imports (course/stdlib.py).
const STDLIB = "python_stdlib.trimmed.zip";
const COMMON_URL = new URL("../common/", import.meta.url);
const BRIDGE_URL = new URL("./bridge.py", import.meta.url);
const HOME = "/home/pyodide";

let pyodide;
let loadModule; // bridge.py's load(module) and call(module, fn, params_json)
let callModel;
let booted = null;

const progress = (text) => postMessage({ type: "progress", text });

async function fetchText(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${new URL(url).pathname}: HTTP ${response.status}`);
  return response.text();
}

async function writeModule(url, filename) {
  pyodide.FS.writeFile(`${HOME}/${filename}`, await fetchText(url));
}

// loadPyodide never settles when its .wasm cannot be fetched, so ask for each
// core file first: a missing file then fails at once, with its name.
async function checkCoreFiles() {
  const check = async (file) => {
    let response;
    try {
      response = await fetch(INDEX_URL + file, { method: "HEAD" });
    } catch {
      throw new Error(`取不到 ${file}`);
    }
    if (!response.ok) throw new Error(`取不到 ${file}（HTTP ${response.status}）`);
  };
  await Promise.all(["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", STDLIB].map(check));
}

async function boot(sharedModules) {
  progress("下载 Python 运行时（Pyodide，只需一次）…");
  // The small Python files travel while Pyodide downloads.
  const sources = Promise.all([BRIDGE_URL, ...sharedModules.map((name) => new URL(`${name}.py`, COMMON_URL))]
    .map((url) => fetchText(url)));
  sources.catch(() => {}); // awaited below; a failure is reported there
  await checkCoreFiles();
  const { loadPyodide } = await import(`${INDEX_URL}pyodide.mjs`);
  // enableRunUntilComplete: false, because its default relies on stack switching that Safari lacks.
  pyodide = await loadPyodide({ indexURL: INDEX_URL, stdLibURL: INDEX_URL + STDLIB, enableRunUntilComplete: false });
  progress("启动 Python…");
  const [bridge, ...shared] = await sources;
  pyodide.FS.writeFile(`${HOME}/_cw_bridge.py`, bridge);
  sharedModules.forEach((name, i) => pyodide.FS.writeFile(`${HOME}/${name}.py`, shared[i]));
  pyodide.runPython(`import sys; sys.path.insert(0, "${HOME}")`);
  const bridgeModule = pyodide.pyimport("_cw_bridge");
  loadModule = bridgeModule.load;
  callModel = bridgeModule.call;
  postMessage({ type: "ready" });
}

async function handle({ id, type, folder, url, fn, params }) {
  const module = `${folder}_model`;
  if (type === "load") {
    progress("载入组件的 Python 模型…");
    await writeModule(url, `${module}.py`);
    postMessage({ type: "started", id });
    loadModule(module);
    return "null";
  }
  if (type === "call") {
    postMessage({ type: "started", id });
    return callModel(module, fn, params);
  }
  throw new Error(`unknown message type ${type}`);
}

// A Python traceback's last line ("ValueError: ...") says what happened; the rest goes to the console.
function describe(error) {
  const text = String(error && error.message ? error.message : error);
  const lines = text.trim().split("\n");
  const last = lines[lines.length - 1];
  if (lines.length > 1) console.error(text);
  return { kind: /^(_cw_bridge\.)?ResultNotJSON\b/.test(last) ? "result" : "model", error: last };
}

self.onmessage = async ({ data }) => {
  if (data.type === "boot") {
    booted ??= boot(data.sharedModules).catch((error) => {
      postMessage({ type: "boot-error", message: String(error && error.message ? error.message : error) });
      throw error;
    });
    return;
  }
  try {
    await booted;
    postMessage({ id: data.id, ok: true, result: await handle(data) });
  } catch (error) {
    postMessage({ id: data.id, ok: false, ...describe(error) });
  }
};
