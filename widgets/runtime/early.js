// Before the body arrives: theme/main.html inlines this classic script in every page's <head>.
// It says which Python runs the widgets on this visit (window.cwRuntime.choice; runtime.js reads
// it), and on the MicroPython path of a page with Python widgets (<meta name="cw-python">) it makes
// MicroPython's worker as soon as the page first paints: while this thread parses and lays out the
// lesson, which on a phone takes seconds, the worker downloads MicroPython, the shared
// modules and the page's widgets' models and views, so that none of it waits on the network
// later. runtime.js, a module that runs only once the page is parsed, takes that worker over and
// tells it to boot (window.cwRuntime.early). Booting here too, beside the parser, made the page's
// DOMContentLoaded 0.3 s later on a 2-core machine (benchmarks/main_thread.py, CPU 4x).
(function () {
  const OVERRIDE_KEY = "cw-runtime"; // localStorage: an author's ?runtime= choice, kept for the visit and after

  /**
   * The widgets' runtime for a reader's browser: {name: "pyodide" | "micropython", why}. Pure, so
   * that a test can hand it any browser; `env` is what runtimeEnvironment() reads:
   * {override, coarse, screenMin, connection: {saveData, effectiveType, type}, memory}.
   *
   * Measured in Chromium: Pyodide is some 4.4 MB compressed to download and boots in about 3 s on
   * a 2-core desktop; MicroPython's WebAssembly port is about 0.2 MB and boots in 0.26 s (0.54 s
   * with the CPU 4× slower), and runs widget math about 12× slower than CPython, still tens of
   * milliseconds a call for most widgets. A phone would spend seconds and megabytes on Pyodide
   * before a widget moved; a desktop can afford it and gets the CPython that exercises use. So
   * MicroPython wherever megabytes or seconds are dear: the reader saves data, the connection is
   * cellular or slower than 4G, the device says it has under 4 GB, or it is a phone-sized touch
   * screen (coarse pointer, shorter side under 768 CSS px: phones, not tablets).
   */
  function chooseRuntime(env) {
    if (env.override === "pyodide" || env.override === "micropython") return { name: env.override, why: "override" };
    const connection = env.connection || {};
    if (connection.saveData) return { name: "micropython", why: "save-data" };
    if (connection.type === "cellular") return { name: "micropython", why: "cellular" };
    if (/^(slow-2g|2g|3g)$/.test(connection.effectiveType || "")) return { name: "micropython", why: "slow-connection" };
    if (env.memory !== undefined && env.memory < 4) return { name: "micropython", why: "low-memory" };
    if (env.coarse && env.screenMin < 768) return { name: "micropython", why: "phone" };
    return { name: "pyodide", why: "desktop" };
  }

  /** What chooseRuntime reads from this browser. `?runtime=micropython|pyodide` in a page's URL
   * forces a runtime (kept in localStorage for later visits); `?runtime=auto` forgets it. */
  function runtimeEnvironment() {
    let override = null;
    try {
      const asked = new URLSearchParams(location.search).get("runtime");
      if (asked === "auto") localStorage.removeItem(OVERRIDE_KEY);
      else if (asked) localStorage.setItem(OVERRIDE_KEY, asked);
      override = localStorage.getItem(OVERRIDE_KEY);
    } catch {
      override = new URLSearchParams(location.search).get("runtime"); // storage disabled
    }
    const connection = navigator.connection;
    return {
      override,
      coarse: window.matchMedia("(pointer: coarse)").matches,
      screenMin: Math.min(screen.width, screen.height),
      connection: connection && { saveData: connection.saveData, effectiveType: connection.effectiveType, type: connection.type },
      memory: navigator.deviceMemory,
    };
  }

  // The reader asked to save data (Save-Data), or the connection is 2G: no download they did not ask for.
  function savingData() {
    const connection = navigator.connection;
    return Boolean(connection && (connection.saveData || /^(slow-)?2g$/.test(connection.effectiveType || "")));
  }

  // What runtime.js reads. early: {worker, heard, build} once made; taken: runtime.js has asked for it.
  const runtime = { choice: chooseRuntime(runtimeEnvironment()), savingData, early: null, taken: false };
  window.cwRuntime = runtime;

  const page = document.querySelector('meta[name="cw-python"]');
  // A page whose widgets need MicroPython's ulab build runs them on it on every device, unless an
  // author asked for a runtime (runtime.js, engineFor).
  const micropython = runtime.choice.name === "micropython" ||
    (page && page.dataset.micropython === "ulab" && runtime.choice.why !== "override");
  if (!page || !micropython || savingData() || typeof WebAssembly !== "object") return;

  function start() {
    if (runtime.taken) return; // runtime.js got there first (a page opened in the background)
    try {
      const url = new URL(page.dataset.worker, location.href);
      const worker = new Worker(url, { type: "module" });
      // build: MicroPython's build this page's widgets need ("ulab" or "plain", the meta's data-micropython).
      const early = { worker, heard: [], build: page.dataset.micropython || "plain" }; // heard: what the worker says before runtime.js listens
      worker.onmessage = ({ data }) => early.heard.push(data);
      worker.onerror = (event) => {
        event.preventDefault();
        early.heard.push({ type: "boot-error", message: event.message || "Web Worker 无法启动" });
      };
      const folders = page.content.split(" ").filter(Boolean).map((name) => name.replaceAll("-", "_"));
      worker.postMessage({ type: "prefetch", folders, build: early.build });
      runtime.early = early;
    } catch (error) {
      console.warn("Python could not start early; the widgets start it when needed:", error);
    }
  }
  // After the first frame: the render-blocking stylesheets go first.
  requestAnimationFrame(() => setTimeout(start, 0));
})();
