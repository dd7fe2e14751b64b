// Widget runtime: one Python (Pyodide in a Web Worker) for the whole visit.
//
// Widgets are pre-rendered at build time; this makes them live. A widget root
// <div data-widget="NAME" data-ready="false"> boots Python when it comes near the
// viewport or is first touched, then widgets/<name>/view.js is imported and its
// mount(root, api) is called; data-ready turns "true". The module survives
// Material's instant navigation, so Python boots once per visit.
const WIDGETS_URL = new URL("../", import.meta.url);
const WORKER_URL = new URL("./worker.js", import.meta.url);
const CALL_TIMEOUT_MS = 5000;
const LOAD_TIMEOUT_MS = 60000;
const BOOT_TIMEOUT_MS = 120000; // a stalled download must not leave a spinner forever

let worker = null;
let booting = null; // Promise: Python is ready in `worker`
let nextId = 1;
const pending = new Map(); // id -> {resolve, reject, timer}
const models = new Map(); // folder -> Promise: model imported in the current worker
const progressListeners = new Set();

const folderOf = (name) => name.replaceAll("-", "_");

function startWorker() {
  if (typeof WebAssembly !== "object") {
    return Promise.reject(new Error("这个浏览器不支持 WebAssembly"));
  }
  return new Promise((resolve, reject) => {
    worker = new Worker(WORKER_URL, { type: "module" });
    setTimeout(() => reject(new Error(`Python 在 ${BOOT_TIMEOUT_MS / 1000} 秒内没有启动`)), BOOT_TIMEOUT_MS);
    worker.onmessage = ({ data }) => {
      if (data.type === "progress") progressListeners.forEach((fn) => fn(data.text));
      else if (data.type === "ready") resolve();
      else if (data.type === "boot-error") reject(new Error(data.message));
      else settle(data);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      reject(new Error(event.message || "Web Worker 无法启动"));
    };
  });
}

function boot() {
  if (!booting) {
    booting = startWorker();
    // A failed start is not cached: the next touch of a widget tries again.
    booting.catch(() => restart("Python 启动失败"));
  }
  return booting;
}

function settle({ id, ok, result, error }) {
  const waiting = pending.get(id);
  if (!waiting) return;
  pending.delete(id);
  clearTimeout(waiting.timer);
  if (ok) waiting.resolve(JSON.parse(result));
  else waiting.reject(new Error(error));
}

// Pages on GitHub cannot send the headers that Pyodide interrupts need, so the
// only way to stop a runaway call is to end the worker and start a new one.
function restart(reason) {
  if (worker) worker.terminate();
  worker = null;
  booting = null;
  models.clear();
  for (const waiting of pending.values()) {
    clearTimeout(waiting.timer);
    waiting.reject(new Error(reason));
  }
  pending.clear();
}

function request(message, timeoutMs) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => restart(`计算超过 ${timeoutMs / 1000} 秒仍未结束，已重启 Python；再操作一次会重新启动它`),
      timeoutMs,
    );
    pending.set(id, { resolve, reject, timer });
    worker.postMessage({ id, ...message });
  });
}

async function loadModel(folder) {
  await boot();
  if (!models.has(folder)) {
    const url = new URL(`${folder}/model.py`, WIDGETS_URL).href;
    const loading = request({ type: "load", folder, url }, LOAD_TIMEOUT_MS);
    loading.catch(() => models.delete(folder));
    models.set(folder, loading);
  }
  return models.get(folder);
}

/** Run widgets/<name>/model.py's fn(params) in Python; resolves to its dict. */
export async function call(name, fn, params, timeoutMs = CALL_TIMEOUT_MS) {
  const folder = folderOf(name);
  await loadModel(folder);
  return request({ type: "call", folder, fn, params: JSON.stringify(params) }, timeoutMs);
}

/**
 * Write a model's state into the pre-rendered DOM. `state.out` maps data-out
 * names to text (keys starting with "data-" set attributes on the root);
 * `state.rows` does the same inside each [data-row="..."].
 */
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

function statusOf(root) {
  const line = root.querySelector(".cw-status");
  const text = line.querySelector(".cw-status-text");
  const bar = line.querySelector(".cw-progress");
  const set = (kind, message, busy) => {
    line.dataset.status = kind;
    text.textContent = message;
    bar.hidden = !busy;
  };
  return {
    progress: (message) => set("loading", message, true),
    ready: () => set("ready", "Python 已在浏览器里运行：动手试试。", false),
    failed: (error) =>
      set("error", `无法加载 Python 运行时（${error.message}）。下面显示的是构建时算好的初始状态，课文不受影响。`, false),
    callFailed: (error) => set("error", `这次计算没有完成：${error.message}`, false),
  };
}

function activate(root) {
  if (root.cwActivation) return root.cwActivation;
  const name = root.dataset.widget;
  const status = statusOf(root);
  const onProgress = (message) => status.progress(message);
  progressListeners.add(onProgress);
  status.progress("正在启动 Python…");
  root.cwActivation = (async () => {
    try {
      const [view] = await Promise.all([
        import(new URL(`${folderOf(name)}/view.js`, WIDGETS_URL).href),
        loadModel(folderOf(name)),
      ]);
      const params = JSON.parse(root.dataset.params);
      const api = {
        params,
        fill: (state) => fill(root, state),
        // Screen readers hear this through the widget's polite live region.
        announce: (text) => {
          root.querySelector(".cw-sr").textContent = text;
        },
        // Resolves to the model's dict, or null after showing why the call failed.
        call: async (fn, args) => {
          try {
            const state = await call(name, fn, args);
            if (root.dataset.ready === "true") status.ready();
            return state;
          } catch (error) {
            status.callFailed(error);
            return null;
          }
        },
      };
      // Like call, but overtaken calls resolve to null: use it for sliders and pickers.
      api.latest = latestOnly(api.call);
      await view.mount(root, api);
      root.dataset.ready = "true";
      status.ready();
    } catch (error) {
      status.failed(error);
      root.cwActivation = null;
    } finally {
      progressListeners.delete(onProgress);
    }
  })();
  return root.cwActivation;
}

let observer = null;

function scan() {
  if (observer) observer.disconnect();
  const roots = [...document.querySelectorAll("[data-widget]")];
  if (roots.length === 0) return; // pages without widgets never boot Python
  observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        observer.unobserve(entry.target);
        activate(entry.target);
      }
    },
    { rootMargin: "400px 0px" },
  );
  for (const root of roots) {
    observer.observe(root);
    const wake = () => activate(root);
    root.addEventListener("pointerdown", wake, { once: true, capture: true });
    root.addEventListener("focusin", wake, { once: true });
  }
}

// Material's document$ emits on the first load and after every instant-navigation swap.
if (window.document$) window.document$.subscribe(scan);
else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", scan);
else scan();
