// Firefox (Gecko) smoke run for tests/e2e/test_firefox_browser.py, driven as
// ../shared/reviews/cross-browser-2.md drove it: puppeteer-core over WebDriver BiDi, headless
// Firefox ESR, no geckodriver. It measures and prints; the pytest file judges.
//
//   node tests/e2e/firefox_smoke.mjs BASE_URL FIREFOX LESSON[,LESSON...]
//
// BASE_URL is the served site (http://127.0.0.1:PORT/course/), FIREFOX the browser's binary.
// Prints one JSON object on stdout: what each lesson's widgets did, what the exercise printed,
// how fast 停止 answered, and the CPU (in cores) that this Firefox's processes used before, during
// and after a runaway loop. A step that fails or times out is named in `error`; what was
// measured before it is still printed.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import puppeteer from "puppeteer-core";

const [base, firefox, lessonList] = process.argv.slice(2);
if (!base || !firefox || !lessonList) {
  console.error("usage: node firefox_smoke.mjs BASE_URL FIREFOX LESSON[,LESSON...]");
  process.exit(2);
}
const LESSONS = lessonList.split(",");
const FFN = '[data-exercise="c4/l1/ffn-two-neurons"]';
const EXERCISE_PAGE = "c4/l1-ffn/";
const BOOT_MS = 120_000; // Python starts in a few seconds in Firefox; this machine may be loaded
const HZ = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => performance.now();

const result = { firefox: null, lessons: [], exercise: {}, guards: {}, page_errors: [], console_errors: [], error: null };

// In every page before its scripts: the Python workers made (not Material's search worker), those
// still alive and how many were terminated.
const WORKERS = `(() => {
  window.__py = { live: new Set(), ended: 0 };
  const Real = window.Worker;
  window.Worker = class extends Real {
    constructor(...args) { super(...args); this.__py = String(args[0]).includes("/widgets/runtime/"); if (this.__py) window.__py.live.add(this); }
    terminate() { if (this.__py) { window.__py.live.delete(this); window.__py.ended++; } super.terminate(); }
  };
})()`;

// CPU seconds used so far by the launched Firefox and every process under it (content processes
// run the pages and their workers). cutime/cstime keep the time of children already gone.
function cpuSeconds(root) {
  const parent = new Map();
  const ticks = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    parent.set(Number(name), Number(fields[1]));
    ticks.set(Number(name), Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]));
  }
  let total = 0;
  for (const [pid, t] of ticks) {
    for (let p = pid; p > 1; p = parent.get(p)) {
      if (p === root) {
        total += t;
        break;
      }
      if (!parent.has(p)) break;
    }
  }
  return total / HZ;
}

function treePids(root) {
  const parent = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const inTree = (pid) => {
    for (let p = pid; p > 1 && parent.has(p); p = parent.get(p)) if (p === root) return true;
    return false;
  };
  return [...parent.keys()].filter(inTree);
}

// Over the next `ms`: the cores' worth of CPU this Firefox used, and which of its threads were
// runnable (state R: running, or waiting for a core) in half the samples or more, taken every
// 100 ms, as "name fraction". `spinning` counts those runnable in 80 % or more: a loop keeps its
// thread runnable however little CPU a loaded machine gives it, so `spinning` tells a loop left
// running from a quiet browser even where `cores` cannot (a busy machine, a low priority).
async function busy(root, ms = 1500) {
  const pids = treePids(root);
  const before = cpuSeconds(root);
  const start = now();
  const runnable = new Map(); // "pid/tid" -> [name, samples in state R]
  let samples = 0;
  while (now() - start < ms) {
    for (const pid of pids) {
      let tids = [];
      try {
        tids = readdirSync(`/proc/${pid}/task`);
      } catch {
        continue; // the process ended
      }
      for (const tid of tids) {
        let stat;
        try {
          stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        } catch {
          continue; // the thread ended
        }
        if (stat[stat.lastIndexOf(")") + 2] !== "R") continue;
        const key = `${pid}/${tid}`;
        const seen = runnable.get(key) || [stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), 0];
        seen[1] += 1;
        runnable.set(key, seen);
      }
    }
    samples += 1;
    await sleep(100);
  }
  const cores = (cpuSeconds(root) - before) / ((now() - start) / 1000);
  const busiest = [...runnable.values()].filter(([, n]) => n >= 0.5 * samples);
  return {
    cores: Number(cores.toFixed(3)),
    spinning: busiest.filter(([, n]) => n >= 0.8 * samples).length,
    threads: busiest.map(([name, n]) => `${name} ${(n / samples).toFixed(2)}`),
  };
}

const quiet = (reading) => reading.threads.length === 0;

// Readings until this Firefox has been quiet (no thread runnable half the time) for two in a
// row, or `ms` has passed: a Python booting in a worker keeps a thread busy until it is up.
async function settle(root, ms) {
  const readings = [await busy(root)];
  const start = now();
  while (!(readings.length >= 2 && quiet(readings.at(-1)) && quiet(readings.at(-2))) && now() - start < ms) {
    readings.push(await busy(root));
  }
  return readings;
}

async function waitFor(page, what, fn, timeout, ...args) {
  try {
    await page.waitForFunction(fn, { timeout, polling: 100 }, ...args);
  } catch (e) {
    throw new Error(`timed out after ${timeout / 1000} s: ${what}`);
  }
}

// The same moves as the WebKit test's NEXT: steppers and term boxes on their last step, then
// the first widget not live yet to the middle of the screen, as a reader scrolls to it (one that
// failed is passed over, so that the widgets after it are still woken). Returns the widgets not
// live, with their status lines, and whether every one of them has failed.
function nextWidget() {
  document.querySelectorAll("[data-stepper][data-live]").forEach((s) => [...s.querySelectorAll("button[data-step-to]")].pop()?.click());
  document.querySelectorAll("[data-terms][data-live]").forEach((b) => [...b.querySelectorAll("button[data-term]")].pop()?.click());
  const waiting = [...document.querySelectorAll("[data-widget]")].filter((w) => w.dataset.ready !== "true");
  const todo = waiting.filter((w) => w.dataset.failed !== "true");
  (todo.find((w) => !w.checkVisibility || w.checkVisibility()) || todo[0])?.scrollIntoView({ block: "center" });
  return {
    waiting: waiting.map((w) => `${w.dataset.widget}: ${(w.querySelector(".cw-status-text") || {}).textContent || ""}`),
    failed: waiting.length > 0 && !todo.length,
  };
}

async function lessonWidgets(page, lesson) {
  const entry = { lesson, expected: null, live: 0, waiting: [], seconds: null };
  result.lessons.push(entry);
  const start = now();
  await page.goto(base + lesson, { waitUntil: "load" });
  entry.expected = await page.evaluate(() => document.querySelectorAll("[data-widget]").length);
  let seen = await page.evaluate(nextWidget);
  while (seen.waiting.length && !seen.failed && now() - start < BOOT_MS) {
    await sleep(300);
    seen = await page.evaluate(nextWidget);
  }
  entry.waiting = seen.waiting;
  entry.live = await page.evaluate(() => document.querySelectorAll('[data-widget][data-ready="true"]').length);
  entry.seconds = Number(((now() - start) / 1000).toFixed(1));
}

const text = (page, selector) => page.evaluate((s) => (document.querySelector(s) || {}).textContent || "", selector);
const output = (page) => text(page, `${FFN} .cw-exercise__output`);
const verdict = (page) => page.evaluate((s) => {
  const v = document.querySelector(s);
  return v ? { kind: v.dataset.kind || "", text: v.textContent } : null;
}, `${FFN} .cw-exercise__verdict`);

// Replace the editor's text from the keyboard and press 运行, as a student does. Returns the
// time of the click.
async function typeAndRun(page, lines) {
  await page.click(`${FFN} .cm-content`);
  await page.keyboard.down("Control");
  await page.keyboard.press("KeyA");
  await page.keyboard.up("Control");
  await page.keyboard.press("Delete");
  for (const [i, line] of lines.entries()) {
    if (i) await page.keyboard.press("Enter");
    await page.keyboard.type(line);
  }
  const typed = await page.evaluate((s) => [...document.querySelectorAll(s)].map((l) => l.textContent).join("\n"),
    `${FFN} .cm-content .cm-line`);
  if (typed !== lines.join("\n")) throw new Error(`the editor holds ${JSON.stringify(typed)}, not the typed ${JSON.stringify(lines.join("\n"))}`);
  await page.evaluate((s) => { // what the verdict line says while the run goes on, and when
    const trace = (window.__cwTrace = []);
    const v = document.querySelector(`${s} .cw-exercise__verdict`);
    let t0 = null;
    document.querySelector(`${s} button[data-action=run]`)
      .addEventListener("click", () => { t0 = performance.now(); }, { capture: true, once: true });
    window.__cwTraceStop?.disconnect();
    window.__cwTraceStop = new MutationObserver(() => {
      const said = `${v.dataset.kind}: ${v.textContent}`;
      if (t0 !== null && trace.at(-1)?.[1] !== said) trace.push([Math.round(performance.now() - t0), said]);
    });
    window.__cwTraceStop.observe(v, { attributes: true, childList: true, characterData: true, subtree: true });
  }, FFN);
  const clicked = now();
  await page.click(`${FFN} button[data-action=run]`);
  return clicked;
}

// Run code that prints 42 and wait for it: (output, ms from the click on 运行).
async function run42(page, what) {
  const clicked = await typeAndRun(page, ["print(6 * 7)"]);
  await waitFor(page, `${what}: print(6 * 7) shows 42`,
    (s) => (document.querySelector(s) || {}).textContent?.startsWith("42"), BOOT_MS, `${FFN} .cw-exercise__output`);
  const ms = Math.round(now() - clicked);
  return { output: await output(page), ms, verdicts: await page.evaluate(() => window.__cwTrace) };
}

// Start `while True: pass`, see it print and take a thread, press 停止: how long until the
// verdict says 已停止.
async function loopAndStop(page, root, into) {
  await typeAndRun(page, ["print('start')", "while True: pass"]);
  await waitFor(page, "the loop printed start", (s) => (document.querySelector(s) || {}).textContent?.includes("start"),
    BOOT_MS, `${FFN} .cw-exercise__output`);
  into.looping = await busy(root, 1000);
  await page.evaluate((s) => {
    const marks = (window.__cwStop = {});
    document.querySelector(`${s} button[data-action=stop]`)
      .addEventListener("click", () => { marks.clicked = performance.now(); }, { capture: true, once: true });
    const v = document.querySelector(`${s} .cw-exercise__verdict`);
    const seen = new MutationObserver(() => {
      if (v.dataset.kind === "stopped") {
        marks.said = performance.now();
        seen.disconnect();
      }
    });
    seen.observe(v, { attributes: true, childList: true, characterData: true, subtree: true });
  }, FFN);
  await page.click(`${FFN} button[data-action=stop]`);
  await waitFor(page, "停止 turned the verdict to stopped", () => window.__cwStop.said, 10_000);
  into.stop_ms = await page.evaluate(() => Math.round(window.__cwStop.said - window.__cwStop.clicked));
  into.stop_verdict = await verdict(page);
}

// Issue 55's new cases, after exercise() on the same page: an integer too big for one call is
// refused at once; an endless built-in loop (sum(itertools.count()), no bytecode) is ended by the
// limit inside Python, no worker terminated, and the CPU is given back.
async function guards(page, root) {
  const g = result.guards;
  const ended = () => page.evaluate(() => window.__py.ended);
  const settled = (ms) => waitFor(page, "the verdict settled", (s) => {
    const v = document.querySelector(s);
    return v && v.dataset.kind && v.dataset.kind !== "running";
  }, ms, `${FFN} .cw-exercise__verdict`);
  await settle(root, 90_000); // a spare still booting is not what is measured

  let before = await ended();
  let clicked = await typeAndRun(page, ["x = 1", "print(10 ** 10 ** 7)"]);
  await settled(30_000);
  g.too_big = { ms: Math.round(now() - clicked), verdict: await verdict(page), output: (await output(page)).slice(0, 400),
    ended: (await ended()) - before };

  before = await ended();
  clicked = await typeAndRun(page, ["import itertools", "print(sum(itertools.count()))"]);
  await settled(30_000);
  g.endless = { ms: Math.round(now() - clicked), verdict: await verdict(page), ended: (await ended()) - before };
  await sleep(1000);
  g.endless.after = await busy(root);

}

// On the lesson page already open (the desktop path: Pyodide, and a spare booted beside it once
// an exercise has run): an exercise prints; a runaway loop is stopped by 停止, the CPU it took
// is given back, and the next run prints at once (in the spare); a loop runs into the time
// limit, the CPU is given back again, and the next run prints.
//
// Each reading of the CPU starts from a quiet browser: the driver waits until the spare Python
// has booted (a reader takes that long to write the next code), so that what the CPU does after
// 停止 is the old loop's doing or nothing. (After 停止 nothing boots until the next run: the
// spare takes over then, and only then is a new spare started.)
async function exercise(page, root) {
  const ex = result.exercise;
  await page.evaluate((s) => document.querySelector(s).scrollIntoView(), FFN);
  await waitFor(page, `the exercise on ${EXERCISE_PAGE} is ready`,
    (s) => document.querySelector(s)?.dataset.ready === "true", BOOT_MS, FFN);
  ex.runtime = await page.evaluate(() => window.cwRuntime?.choice?.name);
  ex.first = await run42(page, "the first run");
  ex.spare_boot = await settle(root, 90_000);
  ex.idle = ex.spare_boot.at(-1);

  await loopAndStop(page, root, ex);
  await sleep(1000); // the measure: the CPU is released within 1 s of 停止
  ex.after_stop = await busy(root);
  ex.next = await run42(page, "the run after 停止");

  ex.respare_boot = await settle(root, 90_000); // the spare took over; a new one boots
  ex.time_limit_s = Number(await page.evaluate((s) => document.querySelector(s).dataset.timeLimit, FFN));
  const clicked = await typeAndRun(page, ["while True: pass"]);
  await waitFor(page, "the time limit stopped the loop", (s) => (document.querySelector(s) || {}).textContent?.includes("运行超过了"),
    30_000, `${FFN} .cw-exercise__verdict`);
  ex.limit_ms = Math.round(now() - clicked);
  ex.limit_verdict = await verdict(page);
  await sleep(1000);
  // Should the page boot a fresh Python after the limit, that keeps a thread busy for a few
  // seconds (more on a loaded machine); a loop left running would keep it for good. So the
  // readings go on for up to about 15 s, until one is quiet.
  ex.after_limit = [await busy(root)];
  while (!quiet(ex.after_limit.at(-1)) && ex.after_limit.length < 10) ex.after_limit.push(await busy(root));
  ex.after_limit_run = await run42(page, "the run after the time limit");
}

async function main() {
  const browser = await puppeteer.launch({
    browser: "firefox", executablePath: firefox, headless: true, timeout: 120_000, protocolTimeout: 300_000,
    defaultViewport: { width: 1280, height: 900 },
  });
  try {
    result.firefox = await browser.version();
    const root = browser.process().pid;
    const page = await browser.newPage();
    await page.evaluateOnNewDocument(WORKERS);
    page.on("pageerror", (e) => result.page_errors.push(`${page.url()}: ${e.message || e}`));
    page.on("console", (m) => { if (m.type() === "error") result.console_errors.push(`${page.url()}: ${m.text()}`); });
    let done = false;
    for (const lesson of LESSONS) {
      await lessonWidgets(page, lesson);
      if (lesson === EXERCISE_PAGE) { // its Python is up already: no second boot
        await exercise(page, root);
        await guards(page, root);
        done = true;
      }
    }
    if (!done) {
      await page.goto(base + EXERCISE_PAGE, { waitUntil: "load" });
      await exercise(page, root);
      await guards(page, root);
    }
  } finally {
    await browser.close();
  }
}

const started = now();
try {
  await main();
} catch (e) {
  result.error = String(e && e.message ? e.message : e);
}
result.seconds = Number(((now() - started) / 1000).toFixed(1));
process.stdout.write(JSON.stringify(result) + "\n");
