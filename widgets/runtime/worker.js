// The widgets' Python: one Pyodide, started once per visit, in this module worker.
// Messages in:  {type: "boot", sharedModules}               start Python, import widgets/common/*.py
//               {id, type: "load", folder, url}              import widgets/<folder>/model.py
//               {id, type: "call", folder, fn, params}       run model.fn(params) -> dict
// Messages out: {type: "progress", text} | {type: "ready"} | {type: "boot-error", message}
//               {type: "started", id}   (the call's time limit starts now)
//               {id, ok: true, result: "<json>"} | {id, ok: false, kind: "model" | "result", error}
// URLs come from this file's own URL, so the site works under any base path.
const INDEX_URL = new URL("../../assets/vendor/pyodide/", import.meta.url).href;
const COMMON_URL = new URL("../common/", import.meta.url);
const HOME = "/home/pyodide";

let pyodide;
let callModel;
let booted = null;

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

async function boot(sharedModules) {
  progress("下载 Python 运行时（Pyodide，约 6 MB，只需一次）…");
  await checkCoreFiles();
  const { loadPyodide } = await import(`${INDEX_URL}pyodide.mjs`);
  // enableRunUntilComplete: false, because its default relies on stack switching that Safari lacks.
  pyodide = await loadPyodide({ indexURL: INDEX_URL, enableRunUntilComplete: false });
  progress("启动 Python…");
  for (const name of sharedModules) await writeModule(new URL(`${name}.py`, COMMON_URL), `${name}.py`);
  // allow_nan=False: NaN and Infinity are not JSON, and JSON.parse would reject them later.
  pyodide.runPython(`
import importlib, json, sys
sys.path.insert(0, "${HOME}")
class ResultNotJSON(ValueError):
    pass
def _cw_call(module, fn, params_json):
    result = getattr(importlib.import_module(module), fn)(json.loads(params_json))
    try:
        return json.dumps(result, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ResultNotJSON(f"{module}.{fn} returned {e}") from None
`);
  callModel = pyodide.globals.get("_cw_call");
  postMessage({ type: "ready" });
}

async function handle({ id, type, folder, url, fn, params }) {
  const module = `${folder}_model`;
  if (type === "load") {
    progress("载入组件的 Python 模型…");
    await writeModule(url, `${module}.py`);
    postMessage({ type: "started", id });
    pyodide.runPython(`importlib.invalidate_caches(); import ${module}`);
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
  return { kind: last.startsWith("ResultNotJSON") ? "result" : "model", error: last };
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
