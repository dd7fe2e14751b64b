// The widgets' Python: one Pyodide, started once per visit, in this module worker.
// Messages in:  {type: "boot", sharedModules, exercises, size}  start Python, import widgets/common/*.py
//                                                            (and run_exercise.py when exercises);
//                                                            size: what the download costs, as text
//               {id, type: "load", folder, url, modules}     import widgets/<folder>/model.py, after
//                                                            writing widgets/common/<modules>.py
//               {id, type: "call", folder, fn, params}       run model.fn(params) -> dict
//               {id, type: "exercise", code, given, check}   run a student's code, then its check
//                                                            (run_exercise.py) -> {ran, error, verdict}
// Messages out: {type: "progress", text} | {type: "ready"} | {type: "boot-error", message}
//               {type: "started", id}   (the call's time limit starts now)
//               {type: "output", id, stream, text}   what an exercise prints, as it prints it
//               {id, ok: true, result: "<json>"} | {id, ok: false, kind: "model" | "result", error}
// URLs come from this file's own URL, so the site works under any base path.
const INDEX_URL = new URL("../../assets/vendor/pyodide/", import.meta.url).href;
// The standard library cut down by the build to what the widgets' Python imports (course/stdlib.py).
const STDLIB = "python_stdlib.trimmed.zip";
const COMMON_URL = new URL("../common/", import.meta.url);
const BRIDGE_URL = new URL("./bridge.py", import.meta.url);
// An exercise's Python, written into the worker on the first run: module name -> file.
const EXERCISE_FILES = { _cw_checker: "./checker.py", _cw_run: "./run_exercise.py" };
// Pyodide's whole standard library, for a student's import that the trimmed archive lacks.
const FULL_STDLIB = "python_stdlib.zip";
const HOME = "/home/pyodide";

let pyodide;
let loadModule; // bridge.py's load(module) and call(module, fn, params_json)
let callModel;
let booted = null;
let exerciseRunner = null; // Promise: run_exercise.py imported
let fullStdlib = null; // Promise: the full archive is on sys.path

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

async function boot(sharedModules, size) {
  progress(`下载 Python 运行时（Pyodide${size ? `，${size}` : ""}，只需一次）…`);
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
  sharedModules.forEach((name, i) => {
    pyodide.FS.writeFile(`${HOME}/${name}.py`, shared[i]);
    written.add(name);
  });
  pyodide.runPython(`import sys; sys.path.insert(0, "${HOME}")`);
  const bridgeModule = pyodide.pyimport("_cw_bridge");
  loadModule = bridgeModule.load;
  callModel = bridgeModule.call;
  postMessage({ type: "ready" });
}

function runner() {
  exerciseRunner ??= (async () => {
    const names = Object.keys(EXERCISE_FILES);
    const texts = await Promise.all(names.map((name) => fetchText(new URL(EXERCISE_FILES[name], import.meta.url))));
    names.forEach((name, i) => pyodide.FS.writeFile(`${HOME}/${name}.py`, texts[i]));
    loadModule("_cw_run");
    return pyodide.pyimport("_cw_run");
  })();
  exerciseRunner.catch(() => (exerciseRunner = null));
  return exerciseRunner;
}

function addFullStdlib(run) {
  fullStdlib ??= (async () => {
    const response = await fetch(INDEX_URL + FULL_STDLIB);
    if (!response.ok) throw new Error(`取不到 ${FULL_STDLIB}（HTTP ${response.status}）`);
    const path = "/lib/python_stdlib_full.zip";
    pyodide.FS.writeFile(path, new Uint8Array(await response.arrayBuffer()));
    run.add_archive(path);
  })();
  fullStdlib.catch(() => (fullStdlib = null));
  return fullStdlib;
}

async function runExercise(id, { code, given, check }) {
  const run = await runner();
  const emit = (stream, text) => postMessage({ type: "output", id, stream, text });
  const missing = run.missing_modules(code).toJs();
  if (missing.length) {
    emit("note", `正在载入标准库模块 ${missing.join("、")}（第一次用时需要下载）…\n`);
    await addFullStdlib(run);
  }
  postMessage({ type: "started", id });
  return run.run(code, given, check, emit);
}

// widgets/common/ modules written so far: the shared ones at boot, a widget's own on its load.
const written = new Set();

async function handle({ id, type, folder, url, modules = [], fn, params, ...rest }) {
  const module = `${folder}_model`;
  if (type === "load") {
    progress("载入组件的 Python 模型…");
    const own = modules.filter((name) => !written.has(name));
    await Promise.all([writeModule(url, `${module}.py`),
      ...own.map((name) => writeModule(new URL(`${name}.py`, COMMON_URL), `${name}.py`))]);
    own.forEach((name) => written.add(name));
    postMessage({ type: "started", id });
    loadModule(module);
    return "null";
  }
  if (type === "call") {
    postMessage({ type: "started", id });
    return callModel(module, fn, params);
  }
  if (type === "exercise") return runExercise(id, rest);
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
    booted ??= boot(data.sharedModules, data.size).catch((error) => {
      postMessage({ type: "boot-error", message: String(error && error.message ? error.message : error) });
      throw error;
    });
    // On a page with exercises, the runner is imported before the first run asks for it.
    if (data.exercises) booted.then(() => runner()).catch(() => {});
    return;
  }
  try {
    await booted;
    postMessage({ id: data.id, ok: true, result: await handle(data) });
  } catch (error) {
    // run_exercise.py catches the student's errors itself: one that reaches here means this
    // Python is broken (a stack overflow, say), and the page starts another.
    postMessage({ id: data.id, ok: false, ...describe(error), ...(data.type === "exercise" && { kind: "runtime" }) });
  }
};
