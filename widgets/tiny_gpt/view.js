// tiny-gpt: runs the training loop's rhythm (a few steps per call to model.train, sized to take
// about CALL_MS, so the page stays responsive and the chart redraws a few times a second),
// keeps the run in localStorage, offers the downloads. Every number and every point of the
// chart comes from model.py.
const KEY = "cw-tiny-gpt-run"; // localStorage: {version, saved: model.state()}
const VERSION = 1;
const CALL_MS = 350; // aim for each training call; the runtime stops a call after 5 s
const SAVE_MS = 15000; // keep the run in storage this often while training

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
  let perCall = 1; // steps per call, adapted to CALL_MS
  let lastSave = 0;
  let last = null; // the latest progress() from Python

  const say = (key, text) => api.fill({ out: { [key]: text } });

  function setButtons() {
    const done = last && (last.status.done || last.status.diverged);
    button("start").disabled = running || live;
    button("stop").disabled = !running;
    button("continue").disabled = running || !live || Boolean(done);
    button("restart").disabled = running || !live;
    button("generate").disabled = !live;
    button("weights").disabled = !live || running;
    button("log").disabled = !live;
    for (const input of inputs) input.disabled = running || live;
  }

  function draw(progress) {
    last = progress;
    const c = progress.chart;
    for (const name of ["train", "val", "band", "ref_mean"]) root.querySelector(`[data-line="${name}"]`).setAttribute("points", c[name]);
    const s = progress.status;
    api.fill({ out: { step: s.step, steps: s.steps, train: s.train, val: s.val, chart_note: "现在画的是你这次训练的曲线。" } });
  }

  function settings() {
    return Object.fromEntries(inputs.map((input) => [input.name, input.value.trim() === "" ? null : Number(input.value)]));
  }

  function save(force) {
    if (!live || (!force && performance.now() - lastSave < SAVE_MS)) return;
    lastSave = performance.now();
    api.call("state", {}).then((saved) => {
      if (!saved) return;
      try {
        localStorage.setItem(KEY, JSON.stringify({ version: VERSION, saved }));
        say("storage", `这次训练（第 ${last ? last.status.step : saved.step} 步）已存在这个浏览器里，关掉页面再回来可以接着练。`);
      } catch {
        say("storage", "浏览器不让存（存储被禁用或已满），这次训练离开页面后就找不回来了；训练本身照常进行。");
      }
    });
  }

  async function loop() {
    running = true;
    setButtons();
    say("status", "训练中…");
    while (running) {
      const t0 = performance.now();
      const before = last ? last.step : 0;
      const progress = await api.call("train", { n: perCall });
      if (!progress) { // the status line says what went wrong (a call over the time limit, say)
        running = false;
        live = false;
        say("status", "训练中断了：这一步在这台设备上太慢。换小一点的宽度、上下文或层数再试。");
        break;
      }
      if (progress.lost) { // Python restarted under us: carry on from the last saved state
        running = false;
        await resumeSaved(false);
        break;
      }
      // A call that took steps sizes the next (a call may also stop early where a validation
      // falls due, or measure a part of one and take no step).
      const done = progress.step - before;
      const ms = performance.now() - t0;
      if (done > 0) perCall = Math.max(1, Math.min(50, Math.round(done * (CALL_MS / Math.max(ms, 1)))));
      draw(progress);
      const s = progress.status;
      if (s.diverged) {
        running = false;
        say("status", s.diverged);
        api.announce(s.diverged);
      } else if (s.done) {
        running = false;
        say("status", `训练完成：${s.steps} 步，验证损失 ${s.val}。可以按「生成」看看它写出什么。`);
        api.announce(`训练完成，验证损失 ${s.val}`);
      }
      save(!running);
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
    perCall = 1;
    say("sample", "");
    draw(result);
    api.announce("开始训练");
    loop();
  }

  function stop() {
    running = false;
    save(true);
    say("status", "已停止。可以按「继续」接着练，或「生成」看看现在的模型写出什么。");
    api.announce("已停止");
  }

  async function restart() {
    running = false;
    live = false;
    try {
      localStorage.removeItem(KEY);
    } catch { /* nothing kept */ }
    say("storage", "");
    say("sample", "");
    say("status", "改好设置，再按「开始训练」。");
    setButtons();
    inputs[0].focus();
  }

  async function generate() {
    button("generate").disabled = true;
    say("sample", "生成中…");
    const result = await api.call("generate", { temperature: Number(temperature.value), prompt: prompt.value, n: slow ? 20 : 60 });
    button("generate").disabled = !live;
    if (!result) return say("sample", "");
    if (result.lost) return say("sample", "Python 重新启动过，先按「继续」恢复训练。");
    say("sample", result.problem || `（第 ${result.step} 步的模型）${prompt.value}${result.text}`);
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

  async function resumeSaved(announce) {
    let kept = null;
    try {
      kept = JSON.parse(localStorage.getItem(KEY) || "null");
    } catch {
      kept = null;
    }
    if (!kept || kept.version !== VERSION) return false;
    const result = await api.call("resume", { data, saved: kept.saved });
    if (!result || result.problems) return false;
    live = true;
    for (const input of inputs) if (input.name in kept.saved.settings) input.value = kept.saved.settings[input.name];
    draw(result);
    const s = result.status;
    say("status", s.diverged || (s.done ? `上次的训练已完成（${s.steps} 步）。` : `找回了上次的训练：第 ${s.step} 步。按「继续」接着练。`));
    say("storage", "这次训练存在这个浏览器里。");
    if (announce) api.announce(`找回了上次的训练，第 ${s.step} 步`);
    setButtons();
    return true;
  }

  button("start").addEventListener("click", start);
  button("stop").addEventListener("click", stop);
  button("continue").addEventListener("click", () => loop());
  button("restart").addEventListener("click", restart);
  button("generate").addEventListener("click", generate);
  button("weights").addEventListener("click", downloadWeights);
  button("log").addEventListener("click", downloadLog);
  temperature.addEventListener("input", () => say("temperature", temperature.value));
  window.addEventListener("pagehide", () => {
    if (running) save(true);
  });
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
      if (!slow || resumed) return;
      say("expect", $("[data-slow-note]").dataset.slowNote);
      for (const input of inputs) input.value = input.dataset.slow;
    });
}
