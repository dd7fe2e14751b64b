// The widgets' Python on the light path: MicroPython's WebAssembly port (about 0.2 MB), in this
// module worker. Same messages as worker.js for widget calls (runtime.js picks the worker):
// Messages in:  {type: "start", build?}                  fetch and start MicroPython (runtime.js, at once)
//               {type: "boot", sharedModules?, size?, build?}  start MicroPython, write widgets/common/*.py
//                                                        (without the names, read shared-modules.json)
//               {type: "prefetch", folders, build?}      download, but neither parse nor start, MicroPython,
//                                                        the shared modules and these widgets' models and
//                                                        views (early.js)
//               build: "ulab" for the build with ulab (a numpy subset: a page whose widgets' Python
//               imports it, course/widgets.py micropython_build), else the plain one. The first
//               message that names it decides; a worker never changes builds (runtime.js makes a new one).
//               {id, type: "load", folder, url, modules} import widgets/<folder>/model.py, after writing
//                                                        widgets/common/<modules>.py (the widget's own)
//               {id, type: "call", folder, fn, params}   run model.fn(params) -> dict
//               {type: "ping"}                           answered by a pong at once
// Messages out: {type: "progress", text} | {type: "ready"} | {type: "boot-error", message}
//               {type: "started", id}   (the call's time limit starts now)
//               {type: "pong"}          (the answer to {type: "ping"}: the page's watchdog)
//               {id, ok: true, result: "<json>"} | {id, ok: false, kind: "model" | "result", error}
// Exercises never come here: they run the student's code on Pyodide (worker.js).
// A runaway call is stopped as under Pyodide: runtime.js terminates this worker.
const INDEX_URL = new URL("../../assets/vendor/micropython/", import.meta.url).href;
const COMMON_URL = new URL("../common/", import.meta.url);
const BRIDGE_URL = new URL("./mp_bridge.py", import.meta.url);
const SHARED_URL = new URL("./shared-modules.json", import.meta.url);
const WASM_FILES = { plain: "micropython.wasm", ulab: "micropython-ulab.wasm" };
const HOME = "/widgets";
// The heap MicroPython starts with; it grows when a model needs more (the pyscript variant).
const HEAP_BYTES = 4 * 1024 * 1024;

let mp;
let wasmFile = null; // WASM_FILES[build], fixed by the first message that says which
let bridge; // mp_bridge.py: load(module), call(module, fn, params_json)
let booted = null;
let starting = null; // Promise: MicroPython started (start)
const ahead = new Map(); // url -> Promise of its text, downloaded ahead ("prefetch"), taken once

const progress = (text) => postMessage({ type: "progress", text });

async function fetchText(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${new URL(url).pathname}: HTTP ${response.status}`);
  return response.text();
}

// A file's text, from the download made ahead where there was one (fetched again if it failed).
function fetchOnce(url) {
  const early = ahead.get(String(url));
  ahead.delete(String(url));
  return early ? early.catch(() => fetchText(url)) : fetchText(url);
}

// This worker's .wasm: the build named by the first message that names one, else the plain one.
function wasm(build) {
  wasmFile ??= WASM_FILES[build] || WASM_FILES.plain;
  return INDEX_URL + wasmFile;
}

async function checkWasm(url) {
  let response;
  try {
    response = await fetch(url, { method: "HEAD" });
  } catch {
    throw new Error(`取不到 ${wasmFile}`);
  }
  if (!response.ok) throw new Error(`取不到 ${wasmFile}（HTTP ${response.status}）`);
}

// MicroPython is fetched and started on "start", which runtime.js sends as it makes this worker,
// before the page's boot message (which waits for the list of shared modules on a main thread that
// may be busy). Ask for the .wasm first, as worker.js does for Pyodide: a missing file fails at
// once, with its name.
function start(build) {
  const url = wasm(build);
  starting ??= Promise.all([import(`${INDEX_URL}micropython.mjs`), checkWasm(url)]).then(([{ loadMicroPython }]) =>
    loadMicroPython({
      url,
      heapsize: HEAP_BYTES,
      stdout: (line) => console.log(line),
      stderr: (line) => console.error(line),
    }));
  starting.catch(() => {}); // awaited in boot; a failure is reported there
  return starting;
}

// Made by early.js while the page is still arriving: download what booting and the widgets will
// need, so that it is found here (the Python sources) or in the browser's HTTP cache (MicroPython's
// JavaScript and .wasm, the views that the page imports), but parse, compile and start nothing: on
// a phone with few cores that work slowed the page's own start (benchmarks/main_thread.py).
function prefetch(folders, build) {
  const cache = (url) => fetch(url).then((response) => response.arrayBuffer()).catch(() => {});
  const ask = (url) => {
    const text = fetchText(url);
    text.catch(() => {}); // fetched again when it is needed
    ahead.set(String(url), text);
    return text;
  };
  cache(`${INDEX_URL}micropython.mjs`);
  cache(wasm(build));
  ask(BRIDGE_URL);
  ask(SHARED_URL).then((text) => JSON.parse(text).forEach((name) => ask(new URL(`${name}.py`, COMMON_URL))), () => {});
  for (const folder of folders) {
    ask(new URL(`../${folder}/model.py`, import.meta.url));
    cache(new URL(`../${folder}/view.js`, import.meta.url));
  }
}

async function boot(sharedModules, size, build) {
  const started = start(build);
  const label = wasmFile === WASM_FILES.ulab ? "MicroPython（带 ulab）" : "MicroPython";
  progress(`下载 Python 运行时（${label}${size ? `，${size}` : ""}，只需一次）…`);
  sharedModules ??= JSON.parse(await fetchOnce(SHARED_URL));
  const sources = Promise.all([BRIDGE_URL, ...sharedModules.map((name) => new URL(`${name}.py`, COMMON_URL))]
    .map((url) => fetchOnce(url)));
  sources.catch(() => {}); // awaited below; a failure is reported there
  mp = await started;
  progress("启动 Python…");
  const [bridgeSource, ...shared] = await sources;
  mp.FS.mkdir(HOME);
  mp.FS.writeFile(`${HOME}/_cw_mp_bridge.py`, bridgeSource);
  sharedModules.forEach((name, i) => {
    mp.FS.writeFile(`${HOME}/${name}.py`, shared[i]);
    written.add(name);
  });
  mp.runPython(`import sys\nsys.path.insert(0, "${HOME}")`);
  bridge = mp.pyimport("_cw_mp_bridge");
  postMessage({ type: "ready" });
}

// widgets/common/ modules written so far: the shared ones at boot, a widget's own on its load.
const written = new Set();

async function handle({ id, type, folder, url, modules = [], fn, params }) {
  const module = `${folder}_model`;
  if (type === "load") {
    progress("载入组件的 Python 模型…");
    const own = modules.filter((name) => !written.has(name));
    const texts = await Promise.all([url, ...own.map((name) => new URL(`${name}.py`, COMMON_URL))].map((u) => fetchOnce(u)));
    own.forEach((name, i) => {
      mp.FS.writeFile(`${HOME}/${name}.py`, texts[i + 1]);
      written.add(name);
    });
    mp.FS.writeFile(`${HOME}/${module}.py`, texts[0]);
    postMessage({ type: "started", id });
    bridge.load(module);
    return "null";
  }
  if (type === "call") {
    postMessage({ type: "started", id });
    const text = bridge.call(module, fn, params);
    try {
      JSON.parse(text); // MicroPython writes NaN and infinity as nan and inf, which are not JSON
    } catch {
      const error = new Error(`ResultNotJSON: ${module}.${fn} returned ${text.slice(0, 120)}`);
      error.kind = "result";
      throw error;
    }
    return text;
  }
  throw new Error(`unknown message type ${type} (MicroPython runs widgets only)`);
}

// A Python traceback's last line ("ValueError: ...") says what happened; the rest goes to the console.
function describe(error) {
  const text = String(error && error.message ? error.message : error);
  const lines = text.trim().split("\n");
  const last = lines[lines.length - 1];
  if (lines.length > 1) console.error(text);
  const result = error.kind === "result" || /^(_cw_mp_bridge\.)?ResultNotJSON\b/.test(last);
  return { kind: result ? "result" : "model", error: last };
}

self.onmessage = async ({ data }) => {
  if (data.type === "prefetch") return prefetch(data.folders, data.build);
  if (data.type === "start") return start(data.build);
  if (data.type === "ping") return postMessage({ type: "pong" });
  if (data.type === "boot") {
    booted ??= boot(data.sharedModules, data.size, data.build).catch((error) => {
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
