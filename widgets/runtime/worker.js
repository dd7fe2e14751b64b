// The widgets' Python: one Pyodide, started once per visit, in this module worker.
// Messages in:  {id, type: "load", folder, url}        import widgets/<folder>/model.py
//               {id, type: "call", folder, fn, params} run model.fn(params) -> dict
// Messages out: {type: "progress", text} | {type: "ready"} | {type: "boot-error", message}
//               {id, ok: true, result: "<json>"} | {id, ok: false, error}
// URLs come from this file's own URL, so the site works under any base path.
const INDEX_URL = new URL("../../assets/vendor/pyodide/", import.meta.url).href;
const COMMON_URL = new URL("../common/", import.meta.url);
const SHARED_MODULES = ["numfmt"]; // widgets/common/*.py that models import
const HOME = "/home/pyodide";

let pyodide;
let callModel;

const progress = (text) => postMessage({ type: "progress", text });

async function writeModule(url, filename) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${new URL(url).pathname}: HTTP ${response.status}`);
  pyodide.FS.writeFile(`${HOME}/${filename}`, await response.text());
}

// loadPyodide never settles when its .wasm cannot be fetched, so ask for each
// core file first: a missing file then fails at once, with its name.
async function checkCoreFiles() {
  for (const file of ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"]) {
    let response;
    try {
      response = await fetch(INDEX_URL + file, { method: "HEAD" });
    } catch {
      throw new Error(`取不到 ${file}`);
    }
    if (!response.ok) throw new Error(`取不到 ${file}（HTTP ${response.status}）`);
  }
}

async function boot() {
  progress("下载 Python 运行时（Pyodide，约 6 MB，只需一次）…");
  await checkCoreFiles();
  const { loadPyodide } = await import(`${INDEX_URL}pyodide.mjs`);
  // enableRunUntilComplete: false, because its default relies on stack switching that Safari lacks.
  pyodide = await loadPyodide({ indexURL: INDEX_URL, enableRunUntilComplete: false });
  progress("启动 Python…");
  for (const name of SHARED_MODULES) await writeModule(new URL(`${name}.py`, COMMON_URL), `${name}.py`);
  pyodide.runPython(`
import importlib, json, sys
sys.path.insert(0, "${HOME}")
def _cw_call(module, fn, params_json):
    return json.dumps(getattr(importlib.import_module(module), fn)(json.loads(params_json)), ensure_ascii=False)
`);
  callModel = pyodide.globals.get("_cw_call");
  postMessage({ type: "ready" });
}

const booted = boot().catch((error) => {
  postMessage({ type: "boot-error", message: String(error && error.message ? error.message : error) });
  throw error;
});

async function handle({ type, folder, url, fn, params }) {
  const module = `${folder}_model`;
  if (type === "load") {
    progress("载入组件的 Python 模型…");
    await writeModule(url, `${module}.py`);
    pyodide.runPython(`importlib.invalidate_caches(); import ${module}`);
    return "null";
  }
  if (type === "call") return callModel(module, fn, params);
  throw new Error(`unknown message type ${type}`);
}

self.onmessage = async ({ data }) => {
  try {
    await booted;
    postMessage({ id: data.id, ok: true, result: await handle(data) });
  } catch (error) {
    postMessage({ id: data.id, ok: false, error: String(error && error.message ? error.message : error) });
  }
};
