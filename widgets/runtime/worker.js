// The widgets' Python: one Pyodide, started once per visit, in this module worker.
// Messages in:  {type: "boot", sharedModules, exercises, size, stdlibSize, again}  start Python,
//                                                            import widgets/common/*.py (and run_exercise.py
//                                                            when exercises); size: what the download
//                                                            costs, as text (stdlibSize: the full standard
//                                                            library's); again: a restart
//               {id, type: "load", folder, url, modules, limitMs}  import widgets/<folder>/model.py,
//                                                            after writing widgets/common/<modules>.py
//               {id, type: "call", folder, fn, params, limitMs}  run model.fn(params) -> dict
//               {id, type: "exercise", code, given, check, limitMs}  run a student's code, then its
//                                                            check (run_exercise.py) -> {ran, error, verdict, timeout}
// Messages out: {type: "progress", text} | {type: "ready"} | {type: "boot-error", message}
//               {type: "ping"}  -> {type: "pong"} at once (this worker still answers: the page's watchdog)
//               {type: "started", id}   (the call's time limit starts now)
//               {type: "retire", id, reason}   (an exercise's code may change this Python for good:
//                                              the page replaces this worker after the run)
//               {type: "output", id, stream, text}   what an exercise prints, batched, up to MAX_OUTPUT
//               {id, ok: true, result: "<json>", heap?}  heap: after an exercise, the memory's size in bytes
//               {id, ok: false, kind: "model" | "result" | "runaway" | "runtime" | "stack", error}
// URLs come from this file's own URL, so the site works under any base path.
const INDEX_URL = new URL("../../assets/vendor/pyodide/", import.meta.url).href;
// The standard library cut down by the build to what the widgets' Python imports (course/stdlib.py).
const STDLIB = "python_stdlib.trimmed.zip";
const COMMON_URL = new URL("../common/", import.meta.url);
const BRIDGE_URL = new URL("./bridge.py", import.meta.url);
// An exercise's Python, written into the worker on the first run: module name -> file.
const EXERCISE_FILES = { _cw_checker: "./checker.py", _cw_state: "./clean_state.py", _cw_run: "./run_exercise.py" };
// Pyodide's whole standard library, for a student's import that the trimmed archive lacks.
const FULL_STDLIB = "python_stdlib.zip";
const HOME = "/home/pyodide";
const MAX_OUTPUT = 50_000; // characters of a run's output sent to the page; the rest is dropped
const OUTPUT_BATCH_MS = 40; // output is sent at most this often (one message per print froze the page)
const OUTPUT_BATCH_CHARS = 8_000;

// The time limit, enforced inside Python. The page ends a runaway call by terminating this
// worker, but WebKit does not terminate a worker that loops in WebAssembly. Pyodide reads its
// interrupt buffer from JavaScript every few dozen bytecodes: this one answers SIGINT once the
// call's deadline has passed (bridge.TimeUp ends the code), SIGTERM if the code is still running
// GRACE_MS later (it swallowed TimeUp: bridge leaves Python), and the call itself lets WebKit's
// terminate() take effect. Python that runs outside any call (a student's asyncio callback or
// timer, after the run) gets STRAY_MS.
const SIGINT = 2;
const SIGTERM = 15;
const GRACE_MS = 1000;
const STRAY_MS = 2000;
const IDLE_GAP_MS = 100; // no check for this long: Python was idle, a new stretch of running begins
let deadline = Infinity; // of the call that has started
let inside = 0; // calls and boot steps in progress: Python running outside them is stray
let interrupted = null; // when SIGINT was answered (once per call or stretch)
let overran = false; // the call that started last was interrupted by its deadline
let lastCheck = 0;
let strayFrom = 0;
let tick = null; // called on every check: sends output that waits while Python keeps running
const interrupts = {
  get 0() {
    const now = performance.now();
    tick?.(now);
    if (now - lastCheck > IDLE_GAP_MS) {
      strayFrom = now;
      if (!inside) interrupted = null;
    }
    lastCheck = now;
    if (now <= (inside ? deadline : strayFrom + STRAY_MS)) return 0;
    if (interrupted === null) {
      interrupted = now;
      overran ||= inside > 0;
      return SIGINT;
    }
    return now > interrupted + GRACE_MS ? SIGTERM : 0;
  },
  set 0(value) {}, // Pyodide clears the signal after reading it; the clock decides instead
};
const timeIsUp = () => overran;
function setDeadline(ms) {
  deadline = ms;
  interrupted = null;
}

let pyodide;
let loadModule; // bridge.py's load(module) and call(module, fn, params_json)
let callModel;
let booted = null;
let exerciseRunner = null; // Promise: run_exercise.py imported
let fullStdlib = null; // Promise: the full archive is on sys.path
let fullStdlibSize = ""; // what it costs to download, as text (from the page's boot message)

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

async function boot(sharedModules, size, again) {
  progress(again ? "正在重新启动 Python…" : `下载 Python 运行时（Pyodide${size ? `，${size}` : ""}，只需一次）…`);
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
  bridgeModule.arm();
  pyodide.setInterruptBuffer(interrupts);
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
    return { run: pyodide.pyimport("_cw_run"), snapshot: pyodide.pyimport("_cw_state").snapshot };
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

// What a run prints, sent in batches and cut at MAX_OUTPUT (here, out of the student's reach).
function outputTo(id) {
  let left = MAX_OUTPUT;
  let batch = [];
  let size = 0;
  let sent = -Infinity;
  const send = () => {
    if (batch.length) postMessage({ type: "output", id, pieces: batch });
    batch = [];
    size = 0;
    sent = performance.now();
  };
  const emit = (stream, text) => {
    if (stream !== "note") {
      if (left <= 0 || !text) return;
      text = text.slice(0, left);
      left -= text.length;
    }
    const last = batch[batch.length - 1];
    if (last && last[0] === stream) last[1] += text;
    else batch.push([stream, text]);
    size += text.length;
    if (stream !== "note" && left <= 0) {
      batch.push(["note", `（输出超过 ${MAX_OUTPUT.toLocaleString("en")} 个字符，后面的不再显示；代码还在继续运行。）\n`]);
    }
    if (size >= OUTPUT_BATCH_CHARS || performance.now() - sent >= OUTPUT_BATCH_MS) send();
  };
  const due = (now) => {
    if (batch.length && now - sent >= OUTPUT_BATCH_MS) send();
  };
  return { emit, send, due };
}

async function runExercise(id, { code, given, check }, start) {
  const { run, snapshot } = await runner();
  const out = outputTo(id);
  const missing = run.missing_modules(code).toJs();
  if (missing.length) {
    out.emit("note", `正在载入标准库模块 ${missing.join("、")}（第一次用时需要下载）…\n`);
    out.send();
    try {
      await addFullStdlib(run);
    } catch (error) {
      // Offline, say: the run's own error, in words; this Python is fine, and a later run tries again.
      console.warn(`the full standard library did not load: ${error && error.message ? error.message : error}`);
      start();
      return run.unavailable(code, missing.join(","), fullStdlibSize);
    }
  }
  // Code that may change this Python beyond what clean_state.py puts back (run_exercise.taint):
  // the page is told before it runs, so the code cannot take it back, and retires this worker
  // once the run has ended. Nothing the code does can then reach the next run or the widgets.
  const tainted = run.taint(code);
  if (tainted) postMessage({ type: "retire", id, reason: tainted });
  // Everything the run changes in this Python is put back: the next run, the check and the
  // widgets see Python as it was (clean_state.py). The restore is fetched before the code runs.
  const saved = snapshot();
  const restore = saved.restore;
  start();
  tick = out.due;
  try {
    return run.run(code, given, check, out.emit, restore);
  } finally {
    tick = null;
    out.send();
    setDeadline(Infinity); // what is left is the runtime's own work
    restore();
    restore.destroy();
    saved.destroy();
  }
}

// widgets/common/ modules written so far: the shared ones at boot, a widget's own on its load.
const written = new Set();

async function handle({ id, type, folder, url, modules = [], fn, params, limitMs, ...rest }) {
  const module = `${folder}_model`;
  const start = () => {
    setDeadline(performance.now() + (limitMs || Infinity));
    overran = false;
    postMessage({ type: "started", id });
  };
  if (type === "load") {
    progress("载入组件的 Python 模型…");
    const own = modules.filter((name) => !written.has(name));
    await Promise.all([writeModule(url, `${module}.py`),
      ...own.map((name) => writeModule(new URL(`${name}.py`, COMMON_URL), `${name}.py`))]);
    own.forEach((name) => written.add(name));
    start();
    loadModule(module);
    return "null";
  }
  if (type === "call") {
    start();
    return callModel(module, fn, params);
  }
  if (type === "exercise") return runExercise(id, rest, start);
  throw new Error(`unknown message type ${type}`);
}

// The size of this Python's WebAssembly memory, in bytes (0 if it cannot be read).
const heapBytes = () => pyodide?._module?.HEAP8?.length ?? 0;

// How each engine words a JavaScript stack overflow (Chromium and WebKit; Firefox).
const STACK_OVERFLOW = /Maximum call stack size exceeded|too much recursion/i;

// A Python traceback's last line ("ValueError: ...") says what happened; the rest goes to the console.
function describe(error) {
  const text = String(error && error.message ? error.message : error);
  const lines = text.trim().split("\n");
  const last = lines[lines.length - 1];
  if (lines.length > 1) console.error(text);
  return { kind: /^(_cw_bridge\.)?ResultNotJSON\b/.test(last) ? "result" : "model", error: last };
}

// Python that this worker runs on its own (booting, importing the runner) counts as inside.
async function within(step) {
  inside++;
  try {
    return await step();
  } finally {
    inside--;
  }
}

self.onmessage = async ({ data }) => {
  if (data.type === "boot") {
    fullStdlibSize = data.stdlibSize || "";
    booted ??= within(() => boot(data.sharedModules, data.size, data.again)).catch((error) => {
      postMessage({ type: "boot-error", message: String(error && error.message ? error.message : error) });
      throw error;
    });
    // On a page with exercises, the runner is imported before the first run asks for it.
    if (data.exercises) booted.then(() => within(runner)).catch(() => {});
    return;
  }
  if (data.type === "ping") {
    postMessage({ type: "pong" });
    return;
  }
  overran = false;
  inside++;
  try {
    await booted;
    const result = await handle(data);
    // An exercise's run says how big this Python's memory has grown: WebAssembly memory never
    // shrinks, so the page replaces a worker that one run left bloated (runtime.js, RETIRE_HEAP_BYTES).
    postMessage({ id: data.id, ok: true, result, ...(data.type === "exercise" && { heap: heapBytes() }) });
  } catch (error) {
    // run_exercise.py catches the student's errors itself: one that reaches here means this
    // Python is broken, and the page starts another. Past the deadline it is the time limit
    // (TimeUp in a widget's model, or Python left for good); an exercise that overflowed the
    // engine's stack did it with its own nesting or recursion ("stack": the student's to fix).
    const kind = timeIsUp() ? "runaway" : data.type !== "exercise" ? null
      : STACK_OVERFLOW.test(String(error && error.message ? error.message : error)) ? "stack" : "runtime";
    postMessage({ id: data.id, ok: false, ...describe(error), ...(kind && { kind }) });
  } finally {
    inside--;
    setDeadline(Infinity);
  }
};
