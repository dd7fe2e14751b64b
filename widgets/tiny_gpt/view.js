// tiny-gpt: runs the training loop's rhythm (calls to model.train, each given CALL_MS: the model
// returns by then with the steps it took, so the page stays responsive, the chart redraws a few
// times a second, and no call runs into the runtime's 5 s limit), keeps the run in IndexedDB
// every SAVE_MS and on 停止 and at the end, streams 生成 in pieces, offers the downloads. Every number and every point
// of the chart comes from model.py.
const DB = "cw-tiny-gpt"; // IndexedDB: store "runs", key "run": {version, saved: model.state()}, its tensors as bytes
const OLD_KEY = "cw-tiny-gpt-run"; // localStorage of the page's first version (JSON lists): dropped
const VERSION = 2; // model.STATE_VERSION
const CALL_MS = 350; // each training call's budget (the model checks its clock between steps)
const DRAW_MS = 250; // each piece of 生成: the characters drawn in it appear at once
const DRAW_CHARS = 60;
const SAVE_MS = 5000; // how often a training call brings the run's state to store

// The state's tensors travel from Python as hex (bytes.hex is C on every runtime) and are stored as bytes.
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const nibble = (code) => (code < 58 ? code - 48 : code - 87); // "0"-"9", "a"-"f" (bytes.hex writes lower case)
function hexToBytes(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = (nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1));
  return out;
}
function bytesToHex(bytes) {
  const parts = new Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) parts[i] = HEX[bytes[i]];
  return parts.join("");
}

let opened = null;
function database() {
  opened ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(DB, 1);
    request.onupgradeneeded = () => request.result.createObjectStore("runs");
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  opened.catch(() => (opened = null));
  return opened;
}
async function inStore(mode, act) {
  const db = await database();
  return new Promise((resolve, reject) => {
    const tx = db.transaction("runs", mode);
    const request = act(tx.objectStore("runs"));
    tx.oncomplete = () => resolve(request.result);
    tx.onerror = tx.onabort = () => reject(tx.error || request.error);
  });
}
const keepRun = (saved) =>
  inStore("readwrite", (store) => store.put({ version: VERSION, saved: { ...saved, tensors: hexToBytes(saved.tensors) } }, "run"));
const keptRun = () => inStore("readonly", (store) => store.get("run"));
const forgetRun = () => inStore("readwrite", (store) => store.delete("run"));

export function mount(root, api) {
  const data = api.params.data;
  const $ = (sel) => root.querySelector(sel);
  const button = (name) => $(`[data-action="${name}"]`);
  const inputs = [...root.querySelectorAll(".tg-settings input")];
  const temperature = $('input[name="temperature"]');
  const prompt = $('input[name="prompt"]');
  let slow = false; // the pure engine on MicroPython (no ulab): smaller settings, shorter samples
  let running = false; // the loop is asking for steps
  let live = false; // Python holds a run
  let drawing = null; // a 生成 being streamed: the training loop waits for it (one model per text)
  let last = null; // the latest progress() from Python
  let lastSave = -Infinity; // when a call last brought the run's state

  const say = (key, text) => api.fill({ out: { [key]: text } });
  // What the runtime's status line said about a call that did not come back (it is overwritten later).
  const runtimeReason = () => ($(".cw-status-text")?.textContent || "").trim();

  function setButtons() {
    const done = last && (last.status.done || last.status.diverged);
    button("start").disabled = running || live;
    button("stop").disabled = !running;
    button("continue").disabled = running || !live || Boolean(done);
    button("restart").disabled = running || !live;
    button("generate").disabled = !live || Boolean(drawing);
    button("weights").disabled = !live || running;
    button("log").disabled = !live;
    for (const input of inputs) input.disabled = running || live;
  }

  function draw(progress) {
    last = progress;
    const c = progress.chart;
    for (const name of ["train", "held", "val", "band", "ref_mean"]) root.querySelector(`[data-line="${name}"]`).setAttribute("points", c[name]);
    const s = progress.status;
    api.fill({ out: { step: s.step, steps: s.steps, train: s.train, held: s.held, val: s.val, chart_note: "现在画的是你这次训练的曲线。" } });
  }

  function settings() {
    return Object.fromEntries(inputs.map((input) => [input.name, input.value.trim() === "" ? null : Number(input.value)]));
  }

  // Every call's state is stored before its numbers are shown: what the page shows, a reload finds
  // (a call that only measured a part of a validation brings none: that part is measured again).
  async function save(saved) {
    try {
      await keepRun(saved);
      say("storage", `第 ${saved.step} 步的训练已存在这个浏览器里（训练时每 ${SAVE_MS / 1000} 秒存一次，停下时也存），关掉页面再回来可以接着练。`);
    } catch (error) {
      say("storage", error && error.name === "QuotaExceededError"
        ? "这次训练太大，浏览器存不下：离开页面后就找不回来了；训练本身照常进行。"
        : "浏览器不让存（存储被禁用），这次训练离开页面后就找不回来了；训练本身照常进行。");
    }
  }

  // A call did not come back (the runtime said why on its status line, e.g. it ran past the time
  // limit and Python was restarted): the reason stays in the widget's own lines, and a run Python
  // lost is taken back from the last save, which holds every call before this one.
  async function recover(what) {
    const reason = runtimeReason();
    const check = await api.call("held", {});
    let where = "";
    if (check && !check.held) {
      live = false;
      const step = await resumeSaved(false);
      where = step === false ? "Python 重新启动过，这次训练没能找回。"
        : `Python 重新启动过，训练已从存下的第 ${step} 步找回。`;
    }
    const text = `${what}没有完成：${reason || "这次计算出了错。"}${where}`;
    say("status", `${text}${live ? "按「继续」接着练。" : ""}`);
    api.announce(text);
    setButtons();
    return text;
  }

  // The speed readout: this device's pace while training (the wall clock, validations included).
  let trainedMs = 0;
  let trainedSteps = 0;
  function showSpeed(s) {
    if (trainedMs < 1000 || !trainedSteps) return;
    const rate = trainedSteps / (trainedMs / 1000);
    const left = Math.max(0, Number(s.steps.replaceAll(",", "")) - Number(s.step.replaceAll(",", "")));
    say("speed", `这台设备上：每秒约 ${rate.toFixed(1)} 步（连同验证），这次已练 ${Math.round(trainedMs / 1000)} 秒` +
      (left ? `；照这个速度，剩下的 ${left} 步还要约 ${Math.ceil(left / rate)} 秒。` : "。"));
  }

  // The run's state now (on 停止, and when training ends), not only every SAVE_MS.
  function saveNow() {
    if (!live) return;
    api.call("state", {}).then((saved) => {
      if (saved && !saved.lost) {
        lastSave = performance.now();
        save(saved);
      }
    });
  }

  async function loop() {
    running = true;
    setButtons();
    say("status", "训练中…");
    while (running) {
      if (drawing) await drawing;
      if (!running) break;
      const t0 = performance.now();
      const before = last ? last.step : 0;
      // The state comes with a call at most every SAVE_MS, and with the last: on MicroPython its
      // json.dumps of the packed numbers (about 1.4 MB of text at the defaults) took seconds.
      const saving = performance.now() - lastSave >= SAVE_MS;
      const progress = await api.call("train", { n: 1000000, budget_ms: CALL_MS, save: saving });
      if (progress && !progress.lost) {
        trainedMs += performance.now() - t0;
        trainedSteps += progress.step - before;
      }
      if (!progress) {
        running = false;
        await recover("训练的一次计算");
        break;
      }
      if (progress.lost) { // Python restarted under us: carry on from the last saved state
        running = false;
        await resumeSaved(false);
        break;
      }
      if (progress.saved) {
        lastSave = performance.now();
        await save(progress.saved);
      }
      draw(progress);
      const s = progress.status;
      showSpeed(s);
      if (s.diverged) {
        running = false;
        say("status", s.diverged);
        api.announce(s.diverged);
      } else if (s.done) {
        running = false;
        saveNow();
        say("status", `训练完成：${s.steps} 步，验证损失 ${s.val}。可以按「生成」看看它写出什么。`);
        api.announce(`训练完成，验证损失 ${s.val}`);
      }
    }
    setButtons();
  }

  async function start() {
    say("problems", "");
    const result = await api.call("start", { data, settings: settings(), runtime: root.dataset.runtime });
    if (!result) return;
    if (result.problems) {
      const box = $(".tg-problems");
      box.replaceChildren(...result.problems.map((p) => Object.assign(document.createElement("p"), { textContent: p })));
      api.announce(result.problems.join(" "));
      return;
    }
    live = true;
    trainedMs = 0;
    trainedSteps = 0;
    say("sample", "");
    say("speed", "");
    draw(result);
    api.announce("开始训练");
    loop();
  }

  function stop() {
    running = false;
    saveNow();
    say("status", "已停止。可以按「继续」接着练，或「生成」看看现在的模型写出什么。");
    api.announce("已停止");
  }

  async function restart() {
    running = false;
    live = false;
    try {
      await forgetRun();
    } catch { /* nothing kept */ }
    say("storage", "");
    say("sample", "");
    say("status", "改好设置，再按「开始训练」。");
    setButtons();
    inputs[0].focus();
  }

  // 生成: a new text each press, streamed in pieces of DRAW_MS (the model draws until its budget
  // is spent), so no call runs long and the characters appear as they come.
  async function generate() {
    let release;
    drawing = new Promise((resolve) => (release = resolve));
    setButtons();
    say("sample", "生成中…");
    let shown = null;
    try {
      let result = await api.call("generate", { temperature: Number(temperature.value), prompt: prompt.value,
        n: slow ? 20 : DRAW_CHARS, budget_ms: DRAW_MS });
      while (result && !result.lost && !result.problem) {
        shown = (shown ?? `（第 ${result.step} 步的模型）${prompt.value}`) + result.text;
        say("sample", result.done ? shown : `${shown}…`);
        if (result.done) break;
        result = await api.call("generate", { more: true, budget_ms: DRAW_MS });
      }
      if (!result) {
        const text = await recover("生成");
        say("sample", `${shown || ""}［${text}］`);
      } else if (result.lost) {
        live = false;
        const step = await resumeSaved(false);
        say("sample", step === false ? "Python 重新启动过，这次训练没能找回。" : `Python 重新启动过，训练已从存下的第 ${step} 步找回；再按一次「生成」。`);
      } else if (result.problem) say("sample", result.problem);
      else api.announce(shown);
    } finally {
      drawing = null;
      release();
      setButtons();
    }
  }

  function download(name, type, text) {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = Object.assign(document.createElement("a"), { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  async function downloadWeights() {
    const weights = await api.call("weights", {});
    if (weights) download(`tiny-gpt-step${weights.step}.json`, "application/json", JSON.stringify(weights));
  }

  async function downloadLog() {
    const log = await api.call("loss_log", {});
    if (log) download("tiny-gpt-loss.csv", "text/csv", log.csv);
  }

  // The run kept in this browser, into Python -> its step, or false when there is none (or it cannot be read).
  async function resumeSaved(announce) {
    let kept = null;
    try {
      kept = await keptRun();
    } catch {
      kept = null;
    }
    if (!kept || kept.version !== VERSION) return false;
    const saved = { ...kept.saved, tensors: bytesToHex(kept.saved.tensors) };
    const result = await api.call("resume", { data, saved });
    if (!result || result.problems) return false;
    live = true;
    for (const input of inputs) if (input.name in saved.settings) input.value = saved.settings[input.name];
    draw(result);
    const s = result.status;
    say("status", s.diverged || (s.done ? `上次的训练已完成（${s.steps} 步）。` : `找回了上次的训练：第 ${s.step} 步。按「继续」接着练。`));
    say("storage", `第 ${s.step} 步的训练存在这个浏览器里。`);
    if (announce) api.announce(`找回了上次的训练，第 ${s.step} 步`);
    setButtons();
    return result.step;
  }

  button("start").addEventListener("click", start);
  button("stop").addEventListener("click", stop);
  button("continue").addEventListener("click", () => loop());
  button("restart").addEventListener("click", restart);
  button("generate").addEventListener("click", generate);
  button("weights").addEventListener("click", downloadWeights);
  button("log").addEventListener("click", downloadLog);
  temperature.addEventListener("input", () => say("temperature", temperature.value));
  try {
    localStorage.removeItem(OLD_KEY);
  } catch { /* storage disabled */ }
  setButtons();
  // Which engine trains here (model.engine says, and the line under the settings shows it), then
  // the run kept in storage, if any; else, where the pure engine runs on MicroPython, the smaller settings.
  api.call("engine", { runtime: root.dataset.runtime })
    .then((info) => {
      if (info) {
        slow = info.slow;
        api.fill(info);
      }
      return resumeSaved(true);
    })
    .then((resumed) => {
      if (!slow || resumed !== false) return;
      say("expect", $("[data-slow-note]").dataset.slowNote);
      for (const input of inputs) input.value = input.dataset.slow;
    });
}
