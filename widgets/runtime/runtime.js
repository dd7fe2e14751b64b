// Widget runtime: one Python in a Web Worker for the whole visit, for the widgets' models.
//
// Widgets are pre-rendered at build time; this makes them live. A widget root
// <div data-widget="NAME" data-ready="false"> is activated when it comes near the
// viewport or is first touched: widgets/<name>/view.js is imported, Python boots
// (unless the view exports `python = false`), its mount(root, api) is called and
// data-ready turns "true". The module survives Material's instant navigation, so
// Python boots once per visit.
//
// Two runtimes run the same models (early.js's chooseRuntime says which, once per visit): Pyodide
// (worker.js) on a desktop, MicroPython's WebAssembly port (mp_worker.js) on a phone, a slow
// or metered connection or a small device, and wherever Pyodide fails to start. MicroPython comes
// in two builds: the plain one, and one with ulab (a numpy subset) for a widget whose Python
// imports it (its root says data-micropython="ulab": the tiny-gpt page); once a page needs it,
// the ulab build runs every widget for the rest of the visit. Exercises run
// the student's code in CPython's semantics, so always on Pyodide: on the MicroPython path it
// starts only when the student runs one, and on a metered connection exercise.js first says
// what the download costs (downloadCost).
//
// Warm-up: Python boots in the background and the page's models are imported (Pyodide once
// the page has loaded and the browser is idle, MicroPython at once), so that a reader who spends a
// few seconds on the text finds a widget live as soon as it comes near. Not where the
// reader asked to save data or the connection is 2G: there Python waits for a widget.
//
// Every call settles: with the model's dict, or with a WidgetError whose `kind`
// says what went wrong and whose message is the plain Chinese a student reads.
//
// Exercises (exercise.js) run a student's code in Pyodide with runExercise(). Stopping one
// ends the worker; where the device can afford it a spare Pyodide is already booted beside
// it (keepSpare), so the next run, and the widgets, carry on in the spare at once instead
// of waiting for a cold start.
const WIDGETS_URL = new URL("../", import.meta.url);
const WORKERS = {
  pyodide: new URL("./worker.js", import.meta.url),
  micropython: new URL("./mp_worker.js", import.meta.url),
};
const LABELS = { pyodide: "Pyodide", micropython: "MicroPython" };
const CALL_TIMEOUT_MS = 5000; // counted from when Python starts the call, not from when it was queued
// The worker ends a call that runs past its limit by itself (worker.js: the deadline inside
// Python), and says so; the page ends the worker only if that has not come this much later.
const SELF_STOP_SLACK_MS = 1500;
// While calls wait and none runs in Python, the worker must answer a ping within this time; one
// that does not has been closed or hangs (a student's js.close(), a stray callback's loop).
const ACCEPT_MS = 5000;
const LOAD_TIMEOUT_MS = 60000;
const BOOT_TIMEOUT_MS = 120000; // a stalled download must not leave a spinner forever
const MAX_REPLAYS = 2; // a queued call re-sent after another widget's runaway restarted Python
// An exercise's run that left Pyodide's memory bigger than this (`bytearray(1_500_000_000)`, a list
// of 10⁸ floats) retires its worker: WebAssembly memory never shrinks, so it would hold the
// memory for the rest of the visit. The spare, where there is one, takes over at once.
const RETIRE_HEAP_BYTES = 512 * 1024 * 1024;
const WAKE_EVENTS = ["pointerdown", "focusin", "keydown"];
const IDLE_TIMEOUT_MS = 5000; // warm up after this long even if the browser never seems idle
const NO_IDLE_CALLBACK_MS = 300; // where requestIdleCallback is missing (Safari): wait this long after load

const MESSAGES = {
  runtime: (who, detail) =>
    `无法加载 Python 运行时（${detail}）。下面显示的是构建时算好的初始状态，课文不受影响；点一下组件会重试。`,
  model: (who) => `「${who}」的 Python 模型出错了，这次操作没有生效（详情见浏览器控制台）。`,
  result: (who) => `「${who}」的模型算出了无法显示的结果（例如 NaN 或无穷大），这次操作没有生效。`,
  runaway: (who, detail) => `「${who}」的计算超过 ${detail} 秒仍未结束，已停止并重启 Python；再操作一次即可。`,
  view: (who) => `「${who}」的界面脚本没能载入，下面保留构建时算好的初始状态；点一下组件会重试。`,
  mount: (who) => `「${who}」的界面启动时出错，下面保留构建时算好的初始状态（详情见浏览器控制台）。`,
  replayed: (who) => `「${who}」的计算因 Python 重启而中断。`,
  stopped: (who) => `「${who}」已停止。`,
  broken: (who, detail) => `运行「${who}」时 Python 本身出了故障（${detail}），已重新启动；再运行一次即可。`,
  stack: (who, detail) =>
    `「${who}」的代码嵌套或递归太深，浏览器给 Python 的栈放不下（${detail}）：原样再运行还会这样，` +
    "要减少嵌套的层数或递归的深度。Python 已重新启动。",
};

/** What went wrong for one widget: `kind` is a key of MESSAGES, `detail` the technical part. */
export class WidgetError extends Error {
  constructor(kind, widget, detail) {
    super(MESSAGES[kind](widget, detail));
    this.kind = kind;
    this.widget = widget;
    this.detail = String(detail);
  }

  /** The same error told with another name for the widget (its title on the page). */
  messageFor(who) {
    return MESSAGES[this.kind](who, this.detail);
  }
}

// --- which Python runs the widgets ------------------------------------------------------------

// widgets/runtime/early.js, inlined in every page's <head>, chose the runtime for this visit
// (chooseRuntime there says how) and may have started MicroPython's worker already.
const EARLY = window.cwRuntime;

// MicroPython's worker that early.js made, if any, once: from now on early.js makes none.
function takeEarlyWorker() {
  const early = EARLY.early;
  EARLY.early = null;
  EARLY.taken = true;
  return early;
}

let choice = null; // early.js's choice, told once per visit
let fellBack = false; // Pyodide did not start on this visit and MicroPython did: widgets stay there

function chosen() {
  if (!choice) {
    choice = EARLY.choice;
    console.info(`widgets run on ${LABELS[choice.name]} (${choice.why})`);
  }
  return choice;
}

/** The runtime the widgets use now, and why: {name, why, fellBack}. */
export function runtimeInfo() {
  const { name, why } = chosen();
  return fellBack ? { name: "micropython", why: "pyodide-failed", fellBack } : { name, why, fellBack };
}

const savingData = () => EARLY.savingData(); // Save-Data or 2G: no download the reader did not ask for

// A connection the reader may pay for by the megabyte: cellular, Save-Data, or slower than 4G.
function metered() {
  const connection = navigator.connection;
  return Boolean(connection && (connection.saveData || connection.type === "cellular" ||
    /^(slow-2g|2g|3g)$/.test(connection.effectiveType || "")));
}

// --- the workers ---------------------------------------------------------------------------

let sharedModules = null; // Promise: names of widgets/common/*.py (written by the build)
let startupSizes = null; // Promise: widgets/runtime/runtimes.json (written by the build), or {}
let spareWanted = false; // an exercise on this visit asked for one (keepSpare)
let exercisesOnPage = false; // a Pyodide booted now prepares the exercises' runner too
let nextId = 1;
const pending = new Map(); // id -> {engine, widget, resolve, reject, limitMs, timer, onOutput, onStarted, exercise}

const folderOf = (name) => name.replaceAll("-", "_");

function fetchJSON(name) {
  return fetch(new URL(name, WORKERS.pyodide)).then((r) =>
    r.ok ? r.json() : Promise.reject(new Error(`取不到 ${name}（HTTP ${r.status}）`)),
  );
}

function sharedModuleNames() {
  sharedModules ??= fetchJSON("shared-modules.json");
  sharedModules.catch(() => (sharedModules = null));
  return sharedModules;
}

function sizes() {
  startupSizes ??= fetchJSON("runtimes.json").catch(() => ({})); // only for messages: never fatal
  return startupSizes;
}

const sizeText = (bytes) => (bytes >= 1e6 ? `约 ${(bytes / 1e6).toFixed(1)} MB` : `约 ${Math.round(bytes / 1e3)} KB`);
// What an exercise's first import outside the trimmed standard library downloads (a zip: sent as it is).
const fullStdlibText = (known) => (known["pyodide-full-stdlib"] ? sizeText(known["pyodide-full-stdlib"].bytes) : "");

/**
 * What starting Pyodide for an exercise downloads, when the reader should hear it first:
 * {bytes, text} on a metered connection where Pyodide has not started on this visit, else null.
 */
export async function downloadCost() {
  if (engines.pyodide.worker || !metered()) return null;
  const bytes = (await sizes()).pyodide?.gzip;
  return bytes ? { bytes, text: sizeText(bytes) } : { bytes: null, text: "几 MB" };
}

// One runtime's worker, booted on demand, with the models imported in it.
class Engine {
  constructor(name) {
    this.name = name;
    this.worker = null;
    this.booting = null; // Promise: Python is ready in `worker`
    this.spare = null; // {own, up}: a second worker booting or booted, taken over by the next start
    this.models = new Map(); // folder -> Promise: model imported in the current worker
    this.build = "plain"; // MicroPython: the build its workers start ("ulab" once a widget needs it)
    this.bootProgress = null; // the latest progress text while Python boots, for widgets activated meanwhile
    this.progressListeners = new Set();
  }

  // A worker booting Python: {own, up}. Its messages count only once it is `worker`; a spare's
  // own boot progress is not the page's news. The worker starts at once (MicroPython's is told to
  // fetch and start its runtime while the page is still busy); it is told to boot when `setup()`
  // gives the shared modules' names and the download's size text. MicroPython's worker that
  // early.js made while the page was arriving is taken over instead: it has downloaded what it
  // needs, is told to boot now and reads the names itself, and what it said meanwhile is heard.
  spawn(setup, again = this.restarted) {
    let early = this.name === "micropython" ? takeEarlyWorker() : null;
    if (early && early.build !== this.build) {
      if (early.build === "ulab") this.build = "ulab"; // it runs every widget: keep it
      else {
        early.worker.terminate(); // the plain build, made before this page's need for ulab was known
        early = null;
      }
    }
    const own = early ? early.worker : new Worker(WORKERS[this.name], { type: "module" });
    if (this.name === "micropython") own.postMessage({ type: early ? "boot" : "start", build: this.build });
    const record = { own, up: null, progress: null };
    record.up = new Promise((resolve, reject) => {
      let ready = false; // Python has started in `own`
      setTimeout(() => reject(new Error(`Python 在 ${BOOT_TIMEOUT_MS / 1000} 秒内没有启动`)), BOOT_TIMEOUT_MS);
      own.onmessage = ({ data }) => {
        if (data.type === "ready") {
          ready = true;
          record.progress = null; // a spare that is up has nothing to say when it takes over
          if (own === this.worker) this.bootProgress = null;
          resolve();
        } else if (data.type === "boot-error") reject(new Error(data.message));
        else if (own !== this.worker) {
          // A spare's boot (told to whoever waits on it once it takes over), or a terminated worker's last words.
          if (data.type === "progress" && !ready) record.progress = data.text;
        } else if (data.type === "progress") {
          if (!ready) this.bootProgress = data.text;
          this.progressListeners.forEach((fn) => fn(data.text));
        } else if (data.type === "pong") this.answered();
        else if (data.type === "started") started(data.id);
        else if (data.type === "retire") retireAfter(data.id, data.reason);
        else if (data.type === "output") {
          const job = pending.get(data.id);
          for (const [stream, text] of data.pieces || []) job?.onOutput?.(stream, text);
        } else settle(data);
      };
      own.onerror = (event) => {
        event.preventDefault();
        reject(new Error(event.message || "Web Worker 无法启动"));
      };
      if (early) {
        early.heard.forEach((data) => own.onmessage({ data }));
        return;
      }
      setup().then(({ modules, size, stdlibSize }) => {
        own.postMessage({ type: "boot", sharedModules: modules, exercises: exercisesOnPage, size, stdlibSize, again });
      }, reject);
    });
    record.up.catch(() => {});
    return record;
  }

  start() {
    if (typeof WebAssembly !== "object") {
      return Promise.reject(new Error("这个浏览器不支持 WebAssembly"));
    }
    const setup = () => Promise.all([sharedModuleNames(), sizes()]).then(([modules, known]) => {
      const bytes = known[this.build === "ulab" ? "micropython-ulab" : this.name]?.gzip; // runtimes.json's keys
      return { modules, size: bytes ? sizeText(bytes) : "", stdlibSize: fullStdlibText(known) };
    });
    const next = this.spare || this.spawn(setup); // the spare goes first
    this.spare = null;
    this.worker = next.own;
    this.bootProgress = next.progress; // a spare still booting: whoever waits hears how far it is,
    if (next.progress) this.progressListeners.forEach((fn) => fn(next.progress)); // now, not at its next message
    next.up.then(() => this.bootSpare(), () => {});
    return next.up;
  }

  // A second Pyodide (some 50 MB) for exercises, where the widgets' runtime is Pyodide too (a
  // desktop) and the device says it has 4 GB or more, or says nothing (Safari), and the reader
  // has not asked to save data.
  canAffordSpare() {
    const memory = navigator.deviceMemory;
    return this.name === "pyodide" && widgetEngine() === this && !savingData() && (memory === undefined || memory >= 4);
  }

  bootSpare() {
    if (!spareWanted || this.spare || !this.canAffordSpare() || !sharedModules) return;
    this.spare = this.spawn(() => Promise.all([sharedModules, sizes()]).then(([modules, known]) =>
      ({ modules, size: "", stdlibSize: fullStdlibText(known) })), true);
    this.spare.up.catch(() => {
      if (this.spare) this.spare.own.terminate();
      this.spare = null;
    });
  }

  boot() {
    if (!this.booting) {
      const attempt = this.start();
      this.booting = attempt;
      // A failed start is not cached: the next touch of a widget tries again.
      attempt.catch(() => {
        if (this.booting === attempt) this.restart(null, null);
      });
    }
    return this.booting;
  }

  // A widget on this page needs MicroPython's build `build` ("ulab", or "plain"/undefined: any).
  // From now on this engine's workers start the ulab build, and a worker already running the plain
  // one is replaced: the models are imported again as they are next called, and calls that were
  // waiting are sent again (as after a runaway). The plain build is never asked for back.
  use(build) {
    if (this.name !== "micropython" || build !== "ulab" || this.build === "ulab") return;
    this.build = "ulab";
    console.info("MicroPython: the build with ulab, which a widget on this page needs");
    if (this.worker) this.restart(null, null);
  }

  // Pages on GitHub cannot send the headers that Pyodide interrupts need (and MicroPython's
  // port has none), so the only way to stop a runaway call is to end the worker and start a
  // new one. The call that ran away gets `error`; calls that were only queued are replayed.
  restart(culprit, error) {
    if (this.worker) this.worker.terminate();
    this.restarted = true; // the next boot says so, not "download"
    clearTimeout(this.acceptTimer);
    this.acceptTimer = null;
    this.pinged = false;
    this.worker = null;
    this.booting = null;
    this.bootProgress = null;
    this.models.clear();
    for (const [id, job] of [...pending]) {
      if (job.engine !== this) continue;
      pending.delete(id);
      clearTimeout(job.timer);
      job.reject(id === culprit ? error : new WidgetError("replayed", job.widget, "Python restarted"));
    }
  }

  // Watchdog: while calls wait for this worker and none is running in Python (a running call has
  // its own time limit, `job.timer`), the worker must answer a ping within ACCEPT_MS, and again
  // every ACCEPT_MS while they wait; otherwise it is replaced and the calls are sent again. A
  // worker waiting for a download answers at once; a closed one (js.close()) or one looping
  // outside any call (a stray callback) never does. A call the worker took but will never finish
  // (it was closed meanwhile) does not count as running: only `started` does.
  watch() {
    const jobs = [...pending.values()].filter((job) => job.engine === this);
    if (!this.worker || !jobs.length || jobs.some((job) => job.timer)) {
      clearTimeout(this.acceptTimer);
      this.acceptTimer = null;
      this.pinged = false;
      return;
    }
    if (this.pinged) return; // its answer is awaited
    clearTimeout(this.acceptTimer);
    const worker = this.worker;
    this.pinged = true;
    worker.postMessage({ type: "ping" });
    this.acceptTimer = setTimeout(() => {
      this.acceptTimer = null;
      this.pinged = false;
      if (this.worker !== worker) return;
      console.warn(`${this.name}: the worker did not answer for ${ACCEPT_MS / 1000} s; it is replaced`);
      this.restart(null, null);
    }, ACCEPT_MS);
  }

  // The worker answered a ping: calls still waiting are checked again ACCEPT_MS later.
  answered() {
    if (!this.pinged) return;
    clearTimeout(this.acceptTimer);
    this.pinged = false;
    this.acceptTimer = setTimeout(() => {
      this.acceptTimer = null;
      this.watch();
    }, ACCEPT_MS);
  }

  request(widget, message, limitMs, onOutput = null, onStarted = null) {
    if (!this.worker) return Promise.reject(new WidgetError("replayed", widget, "Python restarted"));
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { engine: this, widget, resolve, reject, limitMs, timer: null, onOutput, onStarted,
        exercise: message.type === "exercise" });
      this.worker.postMessage({ id, limitMs, ...message });
      this.watch();
    });
  }
}

const engines = { pyodide: new Engine("pyodide"), micropython: new Engine("micropython") };

function widgetEngine() {
  return engines[fellBack ? "micropython" : chosen().name];
}

/** Keep a spare Pyodide booted beside the running one (an exercise's Stop then costs no cold start). */
export function keepSpare() {
  spareWanted = true;
  const engine = engines.pyodide;
  if (engine.booting) engine.booting.then(() => engine.bootSpare(), () => {});
}

// The worker has begun this call: only now does its time limit run (the worker keeps it itself;
// this is the page's backstop).
function started(id) {
  const job = pending.get(id);
  if (!job) return;
  job.started = true;
  job.onStarted?.();
  job.timer = setTimeout(() => runaway(id), job.limitMs + SELF_STOP_SLACK_MS);
  job.engine.watch(); // a call runs: no ping is awaited meanwhile
}

// The worker said, before an exercise's code ran, that the code may change its Python beyond what
// clean_state.py puts back (worker.js, run_exercise.taint): the worker is replaced once the run ends.
function retireAfter(id, reason) {
  const job = pending.get(id);
  if (job && job.exercise) job.retire = reason;
}

function runaway(id) {
  const job = pending.get(id);
  if (job) job.engine.restart(id, new WidgetError("runaway", job.widget, job.limitMs / 1000));
}

function settle({ id, ok, result, kind, error, heap }) {
  const job = pending.get(id);
  // A result for a call that has not started, or not of a result's shape, is no answer of the
  // worker's own: a student's code posting forged results (js.postMessage) while a widget's call
  // waited once filled the widget with them.
  if (!job || (ok && (!job.started || typeof result !== "string"))) return;
  pending.delete(id);
  clearTimeout(job.timer);
  job.engine.watch();
  const replaced = deliver(job, { ok, result, kind, error });
  if (!replaced && (job.retire || (job.exercise && heap > RETIRE_HEAP_BYTES))) {
    const why = job.retire ? `its code ${job.retire}` : `it left ${Math.round(heap / 2 ** 20)} MB of memory`;
    console.info(`${job.engine.name}: the worker of an exercise's run is replaced (${why})`);
    job.engine.restart(null, null);
  }
}

// The call's answer to whoever waits for it; true when that replaced the worker.
function deliver(job, { ok, result, kind, error }) {
  // The time limit ended the call inside Python (which may have had to leave Python for good),
  // or an exercise broke Python itself (its own stack overflow included): this Python is no
  // longer to be trusted.
  if (!ok && (kind === "runaway" || (job.exercise && (kind === "runtime" || kind === "stack")))) {
    job.reject(kind === "runaway" ? new WidgetError("runaway", job.widget, job.limitMs / 1000)
      : new WidgetError(kind === "stack" ? "stack" : "broken", job.widget, error));
    job.engine.restart(null, null);
    return true;
  }
  if (!ok) job.reject(new WidgetError(kind === "result" ? "result" : "model", job.widget, error));
  else {
    try {
      job.resolve(JSON.parse(result));
    } catch (parseError) {
      job.reject(new WidgetError("result", job.widget, `${parseError.message}: ${String(result).slice(0, 120)}`));
    }
  }
  return false;
}

// A widget whose Python imports ulab (its root says data-micropython="ulab": the tiny-gpt page)
// runs on MicroPython's ulab build on every device, desktops included: its array engine there
// trains several times faster than its pure-Python fallback does on Pyodide
// (benchmarks/tinygpt_speed.py). Where that build does not start, or an author asked for a
// runtime (?runtime=pyodide), it runs on the visit's runtime.
let arraysFailed = false;
function engineFor(root) {
  const arrays = root?.dataset.micropython === "ulab" && !arraysFailed && chosen().why !== "override";
  return arrays ? engines.micropython : widgetEngine();
}

// The widgets' Python, booted: where Pyodide was chosen by the rule (not by an author's override)
// and fails to start, the widgets fall back to MicroPython for the rest of the visit.
async function widgetReady(widget, onProgress, root = null) {
  const boot = async (engine) => {
    if (!onProgress) return engine.boot();
    engine.progressListeners.add(onProgress);
    if (engine.bootProgress) onProgress(engine.bootProgress); // a warm-up already under way
    try {
      return await engine.boot();
    } finally {
      engine.progressListeners.delete(onProgress);
    }
  };
  const engine = engineFor(root);
  try {
    await boot(engine);
    return engine;
  } catch (error) {
    if (engine !== widgetEngine()) { // MicroPython's ulab build did not start: the visit's runtime
      arraysFailed = true;
      console.warn(`MicroPython's ulab build did not start (${error.message}); ${widget} runs on the visit's runtime`);
      return widgetReady(widget, onProgress, null);
    }
    if (engine.name !== "pyodide" || chosen().why === "override") throw new WidgetError("runtime", widget, error.message);
    console.warn(`Pyodide did not start (${error.message}); the widgets fall back to MicroPython`);
    try {
      await boot(engines.micropython);
    } catch (fallbackError) {
      throw new WidgetError("runtime", widget, `${error.message}；MicroPython：${fallbackError.message}`);
    }
    fellBack = true;
    return engines.micropython;
  }
}

// The engine in which widgets/<name>/model.py is imported; onProgress hears its boot.
async function loadModel(widget, onProgress = null) {
  const root = document.querySelector(`[data-widget="${widget}"]`);
  engines.micropython.use(root?.dataset.micropython); // before it boots: the build this widget needs
  const engine = await widgetReady(widget, onProgress, root);
  const folder = folderOf(widget);
  if (!engine.models.has(folder)) {
    const url = new URL(`${folder}/model.py`, WIDGETS_URL).href;
    // The widgets/common/ modules only this widget imports (tinygpt.py) come with its model,
    // not with every page's Python: the page names them (course/widgets.py, own_modules).
    const modules = root?.dataset.modules ? root.dataset.modules.split(" ").filter(Boolean) : [];
    const loading = engine.request(widget, { type: "load", folder, url, modules }, LOAD_TIMEOUT_MS);
    loading.catch(() => {
      if (engine.models.get(folder) === loading) engine.models.delete(folder);
    });
    engine.models.set(folder, loading);
  }
  await engine.models.get(folder);
  return engine;
}

// Another call's runaway, an exercise's 停止 or a hung worker restarted Python while this waited:
// it is sent again (at most MAX_REPLAYS times).
async function replaying(step) {
  for (let replay = 0; ; replay++) {
    try {
      return await step();
    } catch (error) {
      if (!(error instanceof WidgetError) || error.kind !== "replayed" || replay >= MAX_REPLAYS) throw error;
    }
  }
}

/** Run widgets/<name>/model.py's fn(params) in Python; resolves to its dict, rejects with a WidgetError. */
export function call(name, fn, params, limitMs = CALL_TIMEOUT_MS) {
  return replaying(async () => {
    const engine = await loadModel(name);
    return engine.request(name, { type: "call", folder: folderOf(name), fn, params: JSON.stringify(params) }, limitMs);
  });
}

let exerciseTurn = Promise.resolve(); // exercises run one at a time, in the order asked

/**
 * Run a student's code in Pyodide, then its check. `spec`: {title (for messages), code, given
 * (JSON text), check (JSON text: source, file, line, cases), limitMs, onOutput(stream, text),
 * onBoot(text) (Python's start-up progress), signal (an AbortSignal: this run's 停止)}.
 * Resolves to {ran, error, verdict, timeout} (widgets/runtime/run_exercise.py); rejects with a
 * WidgetError: "runtime" (Python did not start), "runaway" (the time limit), "stopped" (the
 * signal), "broken" (Python failed), "stack" (the code's own nesting or recursion overflowed the
 * engine's stack). The error's `started` says whether the code began to run: a run stopped while
 * it waited for Python or for another exercise's run never did.
 */
export async function runExercise({ title, code, given, check, limitMs, onOutput, onBoot, signal }) {
  const engine = engines.pyodide;
  exercisesOnPage = true; // a Pyodide first booted for this run prepares the runner at once
  let started = false;
  const stopped = () => Object.assign(new WidgetError("stopped", title, ""), { started });
  const aborted = new Promise((_, reject) => {
    if (signal.aborted) reject(stopped());
    signal.addEventListener("abort", () => reject(stopped()), { once: true });
  });
  aborted.catch(() => {});
  const before = exerciseTurn;
  let done;
  exerciseTurn = Promise.all([before, new Promise((resolve) => (done = resolve))]);
  try {
    await Promise.race([before, aborted]);
    if (onBoot) {
      engine.progressListeners.add(onBoot);
      if (engine.bootProgress) onBoot(engine.bootProgress);
    }
    try {
      await Promise.race([engine.boot(), aborted]);
    } catch (error) {
      throw error instanceof WidgetError ? error : new WidgetError("runtime", title, error.message);
    } finally {
      if (onBoot) engine.progressListeners.delete(onBoot);
    }
    onBoot?.("运行中…");
    for (let replay = 0; ; replay++) {
      const id = nextId; // request() takes this id
      const stop = () => {
        if (pending.has(id)) engine.restart(id, stopped());
      };
      signal.addEventListener("abort", stop, { once: true });
      try {
        return await engine.request(title, { type: "exercise", code, given, check }, limitMs, onOutput,
          () => (started = true));
      } catch (error) {
        // The worker was replaced before this run began (another call's runaway, a hung
        // worker): send it again; it was not interrupted, it had not started.
        if (!(error instanceof WidgetError) || error.kind !== "replayed" || replay >= MAX_REPLAYS) {
          if (error instanceof WidgetError) error.started ??= started;
          throw error;
        }
        await Promise.race([engine.boot(), aborted]);
      } finally {
        signal.removeEventListener("abort", stop);
      }
    }
  } finally {
    done();
  }
}

export function fill(root, state) {
  const put = (scope, values, isRow) => {
    for (const [key, value] of Object.entries(values || {})) {
      if (key.startsWith("data-")) {
        scope.setAttribute(key, value);
        continue;
      }
      for (const el of scope.querySelectorAll(`[data-out="${key}"]`)) {
        if (isRow || !el.closest("[data-row]")) el.textContent = value;
      }
    }
  };
  put(root, state.out, false);
  for (const [row, values] of Object.entries(state.rows || {})) {
    const el = root.querySelector(`[data-row="${CSS.escape(row)}"]`);
    if (el) put(el, values, true);
  }
}

/**
 * Wrap a call so that calls made faster than Python answers collapse to the
 * latest: one runs at a time, and a call overtaken while waiting or running
 * resolves to null (a slider drag only ever draws its newest value).
 */
function latestOnly(callFn) {
  let running = false;
  let queued = null;
  async function drain() {
    running = true;
    while (queued) {
      const job = queued;
      queued = null;
      const state = await callFn(job.fn, job.args);
      job.resolve(queued ? null : state);
    }
    running = false;
  }
  return (fn, args) =>
    new Promise((resolve) => {
      if (queued) queued.resolve(null);
      queued = { fn, args, resolve };
      if (!running) drain();
    });
}

// The widget's short name for messages: its title up to the first colon or bracket.
function titleOf(root) {
  const text = root.querySelector(".cw-title")?.textContent.trim() || "";
  return text.split(/[：:（(]/)[0].trim() || root.dataset.widget;
}

function statusOf(root, title) {
  const line = root.querySelector(".cw-status");
  const text = line.querySelector(".cw-status-text");
  const bar = line.querySelector(".cw-progress");
  const set = (kind, message, busy) => {
    line.dataset.status = kind;
    text.textContent = message;
    bar.hidden = !busy;
    if (kind === "loading") {
      root.cwProgress = message;
      heldNote(root, message);
    }
  };
  return {
    progress: (message) => set("loading", message, true),
    ready: (python) => set("ready", python ? "Python 已在浏览器里运行：动手试试。" : "组件已可以操作。", false),
    failed: (error) => {
      console.error(`widget ${root.dataset.widget}:`, error.kind || "error", error.detail || error);
      const message = error instanceof WidgetError ? error.messageFor(title) : MESSAGES.mount(title);
      set("error", message, false);
    },
  };
}

// --- a press before the widget is live ----------------------------------------------------------

// A widget's view listens to its buttons only once it is mounted, after Python has started: a
// button pressed before that (开始训练 as soon as it is shown) would do nothing, silently. The
// press is held instead: said beside the button, with Python's start-up progress, and performed
// once the view is mounted; a widget that fails to start, or a button its view has disabled,
// says beside the button that the press was not performed. Only the latest press is kept.
const labelOf = (control) => control.textContent.trim() || control.getAttribute("aria-label") || "这个按钮";

function heldNote(root, progress) {
  const control = root.cwPressed;
  if (!control) return;
  let note = root.querySelector(".cw-pending");
  if (!note) {
    note = document.createElement("span");
    note.className = "cw-pending";
    note.setAttribute("role", "status");
  }
  if (note.previousElementSibling !== control) control.after(note);
  note.dataset.state = "waiting";
  note.textContent = `${progress || "正在启动 Python…"} 启动好后会执行「${labelOf(control)}」。`;
}

function holdPresses(root) {
  root.addEventListener("click", (event) => {
    if (root.dataset.ready === "true") return;
    const control = event.target.closest("button");
    if (!control || control.disabled || !root.contains(control)) return;
    root.cwPressed = control;
    heldNote(root, root.cwProgress);
    activate(root);
  }, true);
}

// The view is mounted: the held press is performed, or said not to be.
function releasePress(root) {
  const control = root.cwPressed;
  root.cwPressed = null;
  const note = root.querySelector(".cw-pending");
  if (!control) return;
  if (control.isConnected && !control.disabled) {
    note?.remove();
    control.click();
  } else if (note) {
    note.dataset.state = "refused";
    note.textContent = `「${labelOf(control)}」没有执行：组件启动后它暂时不能按，看组件里的说明。`;
  }
}

function refusePress(root) {
  const control = root.cwPressed;
  root.cwPressed = null;
  const note = root.querySelector(".cw-pending");
  if (!control || !note) return;
  note.dataset.state = "refused";
  note.textContent = `「${labelOf(control)}」没有执行：组件没能启动（原因见组件下方），再按一次会重试。`;
}

// After a failure the widget waits for the reader: the next touch tries again.
function armWake(root) {
  const wake = () => {
    for (const type of WAKE_EVENTS) root.removeEventListener(type, wake, true);
    activate(root);
  };
  for (const type of WAKE_EVENTS) root.addEventListener(type, wake, true);
}

async function importView(name, title) {
  try {
    return await import(new URL(`${folderOf(name)}/view.js`, WIDGETS_URL).href);
  } catch (error) {
    throw new WidgetError("view", title, error.message);
  }
}

function activate(root) {
  if (root.cwActivation || root.dataset.ready === "true") return root.cwActivation;
  const name = root.dataset.widget;
  const title = titleOf(root);
  const status = statusOf(root, title);
  const retry = root.dataset.failed === "true";
  const onProgress = (message) => status.progress(message);
  status.progress(retry ? "正在重试…" : "正在启动…");
  root.cwActivation = (async () => {
    try {
      const view = await importView(name, title);
      const python = view.python !== false;
      if (python) {
        const engine = await replaying(() => loadModel(name, onProgress));
        root.dataset.runtime = engine.name; // which Python answers this widget (for authors and tests)
      }
      const api = {
        params: JSON.parse(root.dataset.params),
        fill: (state) => fill(root, state),
        // Screen readers hear this through the widget's polite live region.
        announce: (text) => {
          root.querySelector(".cw-sr").textContent = text;
        },
        // Resolves to the model's dict, or null after the status line said why the call failed.
        call: async (fn, args) => {
          try {
            const state = await call(name, fn, args);
            if (root.dataset.ready === "true") status.ready(python);
            return state;
          } catch (error) {
            status.failed(error);
            return null;
          }
        },
      };
      // Like call, but overtaken calls resolve to null: use it for sliders and pickers.
      api.latest = latestOnly(api.call);
      try {
        await view.mount(root, api);
      } catch (error) {
        throw new WidgetError("mount", title, error && error.stack ? error.stack : error);
      }
      root.dataset.ready = "true";
      delete root.dataset.failed;
      status.ready(python);
      releasePress(root);
    } catch (error) {
      status.failed(error);
      root.dataset.failed = "true";
      root.cwActivation = null;
      refusePress(root);
      armWake(root);
    }
  })();
  return root.cwActivation;
}

function whenLoadedAndIdle(fn) {
  const idle = () =>
    window.requestIdleCallback
      ? requestIdleCallback(fn, { timeout: IDLE_TIMEOUT_MS })
      : setTimeout(fn, NO_IDLE_CALLBACK_MS);
  if (document.readyState === "complete") idle();
  else window.addEventListener("load", idle, { once: true });
}

let warming = null; // the widget roots of the page being warmed up

// Boot Python and import the models of this page's widgets, mounting none: activation
// (the reader coming near) stays as it was, only quicker. A failure stays quiet here;
// the widget that needs Python reports it when the reader gets there (and retries).
// Pyodide (some 4 MB) waits until the page has loaded and the browser is idle; MicroPython
// (some 0.2 MB, booted in its worker) starts at once: on a phone the reader may be at a widget
// before the page has settled.
function warmUp(roots, exercises) {
  warming = roots;
  if (savingData()) return;
  const needed = roots.map(engineFor);
  const light = needed.every((engine) => engine === engines.micropython);
  if (needed.includes(engines.micropython)) engines.micropython.boot().catch(() => {}); // its files download while the views do
  const warm = async () => {
    if (warming !== roots) return; // the reader has already moved to another page
    // An exercise's first run then starts at once; not on the MicroPython path, where Pyodide
    // is downloaded only when the student runs one.
    if (exercises && widgetEngine() === engines.pyodide) engines.pyodide.boot().catch(() => {});
    const names = [...new Set(roots.map((root) => root.dataset.widget))];
    const views = await Promise.all(names.map((name) => importView(name, name).catch(() => null)));
    if (warming !== roots) return;
    for (const [i, name] of names.entries()) {
      if (views[i] && views[i].python !== false) loadModel(name).catch(() => {});
    }
  };
  if (light) warm();
  else whenLoadedAndIdle(warm);
}

let observer = null;

function scan() {
  if (observer) observer.disconnect();
  const roots = [...document.querySelectorAll("[data-widget]")];
  const exercises = [...document.querySelectorAll(".cw-exercise[data-exercise]")];
  warming = null;
  exercisesOnPage ||= exercises.length > 0;
  if (exercises.length) {
    import("./exercise.js").then(
      (module) => module.mount(exercises),
      (error) => console.error("exercise.js did not load:", error),
    );
  }
  if (roots.length === 0 && exercises.length === 0) return; // pages without either never boot Python
  // MicroPython's ulab build, where a widget here needs it: said before anything boots.
  if (roots.some((root) => root.dataset.micropython === "ulab")) engines.micropython.use("ulab");
  warmUp(roots, exercises.length > 0);
  // A widget comes alive when it comes near the screen. In a lesson block that skips layout
  // (course.css) the widget has no box until the block is laid out, frames later on a slow
  // phone: the block is watched, and the widget itself where it is hidden (a ①②③ step not
  // shown yet), which has no box either way.
  const waiting = new Map(); // watched element -> the widget roots it stands for
  const watch = (element, root) => {
    if (!waiting.has(element)) {
      waiting.set(element, []);
      observer.observe(element);
    }
    waiting.get(element).push(root);
  };
  observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        observer.unobserve(entry.target);
        const near = waiting.get(entry.target);
        waiting.delete(entry.target);
        for (const root of near) {
          if (root === entry.target || (root.checkVisibility && root.checkVisibility())) activate(root);
          else watch(root, root);
        }
      }
    },
    { rootMargin: "400px 0px" },
  );
  for (const root of roots) {
    watch(root.closest(".md-content__inner > *") || root, root);
    armWake(root);
    holdPresses(root);
  }
}

// This page once parsed, and each page Material's instant navigation swaps in (material_start.js).
window.cwOnEveryPage(scan);
