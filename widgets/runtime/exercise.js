// Exercises: the block the build wrote (widgets/runtime/exercise.html) becomes an editor with
// 运行 / 停止 / 重置 / 提示 / 答案. runtime.js imports this module on pages that have exercises.
//
// The editor (CodeMirror 6, one bundled file) is fetched only when a block comes near the
// viewport; until then, and without JavaScript, the block reads as the task and a code block.
// A run goes to the runtime's Pyodide (runExercise): output streams in as text, then the
// check's verdict. Where Pyodide has not started yet and the connection is metered (the phone
// path), the first run first says what the download costs and waits for a click.
// Work is saved in this browser, keyed by the exercise's stable id.
import { downloadCost, keepSpare, runExercise } from "./runtime.js";
import * as store from "./exercise_store.js";

const EDITOR_URL = new URL("../../assets/vendor/codemirror/editor.js", import.meta.url);
const SAVE_DELAY_MS = 400; // typing is saved this long after the last key
const FLUSH_MS = 50; // streamed output is drawn at most this often
const MAC = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
const RUN_KEYS = MAC ? "⌘+Enter" : "Ctrl+Enter";
const MAX_SHOWN = 60_000; // characters of output drawn per run, whatever the worker sends (it caps at 50,000)
const MAX_LINE = 10_000; // characters of one message line (an error's traceback, a note): run_exercise.py cuts them shorter

let editorModule = null; // Promise of the bundled editor, fetched once per visit
const loadEditor = () => {
  editorModule ??= import(EDITOR_URL.href);
  editorModule.catch(() => (editorModule = null));
  return editorModule;
};

let downloadAccepted = false; // the reader agreed to Pyodide's download on this visit

const live = new Set(); // the blocks of the page on screen (their unsaved edits are flushed on leaving)

async function fetchJSON(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${new URL(url).pathname}: HTTP ${response.status}`);
  return response.json();
}

function element(tag, props = {}, text = "") {
  const el = Object.assign(document.createElement(tag), props);
  if (text) el.textContent = text;
  return el;
}

// The exercise's title as a message names it: without the heading's permalink mark (¶).
function titleOf(root) {
  const heading = root.querySelector(".cw-exercise__title")?.cloneNode(true);
  if (!heading) return "";
  heading.querySelectorAll(".headerlink").forEach((link) => link.remove());
  return heading.textContent.replace(/^练习\s*·\s*/, "").trim();
}

class Exercise {
  constructor(root) {
    this.root = root;
    this.id = root.dataset.exercise;
    this.files = new URL(root.dataset.files, document.baseURI);
    this.title = titleOf(root) || this.id;
    this.record = store.read(this.id);
    this.running = false;
    this.saveTimer = null;
  }

  async mount() {
    this.root.dataset.ready = "loading";
    let spec;
    let editor;
    try {
      [spec, editor] = await Promise.all([fetchJSON(new URL("check.json", this.files)), loadEditor()]);
    } catch (error) {
      console.error(`exercise ${this.id}:`, error);
      this.root.dataset.ready = "false";
      this.root.querySelector("[data-exercise-status]").textContent =
        "练习的编辑器没能载入（网络或文件出了问题），上面的起始代码仍可复制到自己的 Python 里做；刷新页面会重试。";
      return;
    }
    this.spec = spec;
    this.build(editor.createEditor);
    live.add(this);
    this.root.dataset.ready = "true";
    if (this.record.hints) this.showHints(this.record.hints).catch(() => {});
    if (this.record.answer) this.showAnswer().catch(() => {});
  }

  build(createEditor) {
    const starterBlock = this.root.querySelector(".cw-exercise__starter");
    const label = this.root.querySelector(".cw-exercise__starter-label");
    const code = this.record.code ?? this.spec.starter;
    if (label) label.textContent = "你的代码：";
    const host = element("div", { className: "cw-exercise__editor" });
    starterBlock.before(host);
    starterBlock.hidden = true; // the starter as the page shipped it: for readers without JavaScript
    this.editor = createEditor(host, {
      doc: code,
      label: `练习「${this.title}」的代码`,
      onChange: () => this.edited(),
      onRun: () => this.run(),
    });
    const keys = element("p", { className: "cw-exercise__keys" },
      `Tab 缩进；要离开编辑器，先按 Esc 再按 Tab。${RUN_KEYS} 运行。`);
    this.buttons = {};
    const bar = element("div", { className: "cw-exercise__bar" });
    bar.setAttribute("role", "group");
    bar.setAttribute("aria-label", "练习操作");
    for (const [action, text] of [["run", "运行"], ["stop", "停止"], ["reset", "重置"], ["hint", "提示"], ["answer", "答案"]]) {
      const button = element("button", { type: "button", className: "md-button" }, text);
      button.dataset.action = action;
      button.addEventListener("click", () => this[action]());
      bar.append(button);
      this.buttons[action] = button;
    }
    this.buttons.run.classList.add("md-button--primary");
    this.verdict = element("p", { className: "cw-exercise__verdict" });
    this.verdict.setAttribute("role", "status");
    this.output = element("pre", { className: "cw-exercise__output", hidden: true, tabIndex: 0 });
    this.output.setAttribute("role", "region"); // a label needs a role: a bare <pre> may not carry one
    this.output.setAttribute("aria-label", "运行的输出");
    this.notice = element("p", { className: "cw-exercise__notice", hidden: true });
    this.download = element("p", { className: "cw-exercise__download", hidden: true });
    this.hints = element("div", { className: "cw-exercise__hints" });
    this.answerBox = element("div", { className: "cw-exercise__answer", hidden: true });
    this.saveLine = element("p", { className: "cw-exercise__save" });
    this.saveText = element("span");
    const exportButton = element("button", { type: "button", className: "cw-exercise__link" }, "下载全部练习");
    const importButton = element("button", { type: "button", className: "cw-exercise__link" }, "载入练习文件");
    this.fileInput = element("input", { type: "file", accept: ".json,application/json", hidden: true });
    exportButton.addEventListener("click", () => {
      flushAll(); // what is on screen, also where storage is full (memory keeps it)
      store.download();
    });
    importButton.addEventListener("click", () => this.fileInput.click());
    this.fileInput.addEventListener("change", () => this.importFile());
    this.saveLine.append(this.saveText, " ", exportButton, " ", importButton, this.fileInput);
    host.after(keys, this.notice, bar, this.download, this.verdict, this.output, this.hints, this.answerBox, this.saveLine);
    if (this.record.code != null && this.record.starterSha !== this.root.dataset.starterSha &&
        this.record.code !== this.spec.starter) {
      this.notice.hidden = false;
      this.notice.textContent = "作者在你上次保存之后改过这道题的起始代码；这里保留的是你自己的代码。想换成新的起始代码，点「重置」。";
    }
    if (this.record.solved) this.say("上次你已经通过了这道题的全部检查。", "passed");
    if (store.setAsideFor(this.id) != null) {
      this.tell("这道题在这个浏览器里保存的记录坏了，读不出来：这里从起始代码开始。坏的记录没有删掉：" +
        "点「下载全部练习」可以拿到它，再用「载入练习文件」载入这个文件，能读出的代码会换回来。");
    }
    this.root.querySelector("[data-exercise-status]").textContent =
      `检查只是帮你练习，不是考试：不计分，也不上传。每次运行最多 ${this.root.dataset.timeLimit} 秒，超时会自动停止。`;
    this.showSaveState(store.available());
    this.update();
  }

  // --- state and saving ------------------------------------------------------------------

  update() {
    const { run, stop, reset, hint, answer } = this.buttons;
    run.disabled = this.running;
    stop.disabled = !this.running;
    reset.disabled = this.running;
    const total = this.spec.hints;
    const opened = Math.min(this.record.hints || 0, total);
    hint.hidden = total === 0;
    hint.disabled = opened >= total;
    hint.textContent = opened >= total ? `提示已全部打开（${total}）` : `提示（${opened}/${total}）`;
    answer.disabled = !this.record.ran || this.record.answer;
    answer.textContent = this.record.answer ? "答案已显示" : this.record.ran ? "看答案" : "答案（先运行一次）";
    this.root.dataset.solved = this.record.solved ? "true" : "false";
  }

  edited() {
    this.record.code = this.editor.text;
    this.record.starterSha ??= this.root.dataset.starterSha;
    clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => this.save(), SAVE_DELAY_MS);
  }

  save() {
    clearTimeout(this.saveTimer);
    this.saveTimer = null;
    this.showSaveState(store.write(this.id, this.record));
  }

  flush() {
    if (this.saveTimer) this.save();
  }

  // `saved`: what store.write() said (true, false, or "too-long").
  showSaveState(saved) {
    this.saveLine.dataset.saved = String(saved);
    if (saved === "too-long") {
      this.saveText.textContent = `⚠ 代码有 ${this.record.code.length.toLocaleString("en")} 个字符，` +
        `超过了这里能保存的 ${store.MAX_CODE.toLocaleString("en")} 个：最近的改动没有保存，` +
        "保存着的（重新打开页面时看到的，也是下载的）是上一次没有超长的代码。删短一些，就会接着自动保存。";
      return;
    }
    this.saveText.textContent = saved
      ? "你的代码、提示和完成情况自动保存在这个浏览器里。"
      : "⚠ 这个浏览器不让网页保存数据（无痕模式、存储已满或被禁用）：你写的代码不会被保存，离开前请点「下载全部练习」。";
  }

  say(text, kind = "") {
    text = String(text);
    this.verdict.textContent = text.length > MAX_LINE ? `${text.slice(0, MAX_LINE - 1)}…` : text;
    this.verdict.dataset.kind = kind;
  }

  // A notice above the buttons, with an optional button that acts on it (撤销, say).
  tell(text, action = null) {
    this.notice.hidden = false;
    this.notice.replaceChildren(text);
    if (action) {
      const button = element("button", { type: "button", className: "cw-exercise__link" }, action.label);
      button.dataset.action = action.name;
      button.addEventListener("click", () => {
        this.notice.hidden = true;
        action.run();
      });
      this.notice.append(" ", button);
    }
  }

  // --- running ---------------------------------------------------------------------------

  // Before Pyodide's first download on a metered connection: its size, and a button to go ahead.
  async askDownload() {
    const cost = downloadAccepted ? null : await downloadCost();
    if (!cost) return false;
    const go = element("button", { type: "button", className: "md-button md-button--primary" }, "下载并运行");
    go.dataset.action = "download";
    go.addEventListener("click", () => {
      downloadAccepted = true;
      this.download.hidden = true;
      this.buttons.run.focus();
      this.run();
    });
    this.download.replaceChildren(
      `运行代码要先下载 Python 运行时 Pyodide（${cost.text}，这次访问只下载一次）。` +
        "你的网络像是按流量计费的（移动网络或省流量模式）：确定要下载吗？ ",
      go,
    );
    this.download.hidden = false;
    go.focus();
    return true;
  }

  async run() {
    if (this.running) return;
    if (await this.askDownload()) return;
    const hadFocus = this.root.contains(document.activeElement) && document.activeElement === this.buttons.run;
    this.running = true;
    this.abort = new AbortController();
    this.record.code = this.editor.text;
    this.record.starterSha ??= this.root.dataset.starterSha;
    this.save(); // saved before Python sees it: a Stop or a crash loses nothing
    this.update();
    if (hadFocus) this.buttons.stop.focus();
    this.output.replaceChildren();
    this.output.hidden = true;
    this.say("运行中…", "running");
    keepSpare();
    const out = this.streamer();
    const seconds = Number(this.root.dataset.timeLimit);
    try {
      const result = await runExercise({
        title: this.title,
        code: this.record.code,
        given: JSON.stringify(this.spec.given),
        check: JSON.stringify({ ...this.spec.check, cases: this.spec.cases }),
        limitMs: seconds * 1000,
        onOutput: out.add,
        onBoot: (text) => this.say(text, "running"),
        signal: this.abort.signal,
      });
      out.flush();
      this.record.ran = true; // the code ran: the answer may be shown now
      this.report(result, out, seconds);
    } catch (error) {
      out.flush();
      if (error && error.started) this.record.ran = true;
      this.failed(error, seconds, out);
    } finally {
      this.running = false;
      this.abort = null;
      this.save();
      this.update();
      if (document.activeElement === this.buttons.stop || document.activeElement === document.body) {
        if (hadFocus) this.buttons.run.focus();
      }
    }
  }

  // Output arrives in many small pieces: they are drawn together, as text (never as HTML).
  // The page keeps its own caps (MAX_SHOWN, MAX_LINE): output or a result posted by student code
  // straight through js.postMessage bypasses the worker's and run_exercise.py's.
  streamer() {
    let queue = [];
    let timer = null;
    let left = MAX_SHOWN;
    const flush = () => {
      clearTimeout(timer);
      timer = null;
      if (!queue.length) return;
      const fragment = document.createDocumentFragment();
      for (const [stream, text] of queue) {
        fragment.append(stream === "stdout" ? text : element("span", { className: `cw-out-${stream}` }, text));
      }
      queue = [];
      this.output.hidden = false;
      this.output.append(fragment);
      this.output.scrollTop = this.output.scrollHeight;
    };
    return {
      add: (stream, text) => {
        text = String(text).slice(0, Math.max(left, 0));
        if (!text) return;
        left -= text.length;
        const last = queue[queue.length - 1];
        if (last && last[0] === stream) last[1] += text; // one node per stretch of one stream
        else queue.push([stream, text]);
        timer ??= setTimeout(flush, FLUSH_MS);
      },
      flush,
      // A message of the runtime's own (an error, a note): cut on its own, so that an error
      // after a flood of output is still shown, and a huge one cannot freeze the page.
      line: (stream, text) => {
        text = String(text);
        queue.push([stream, text.length > MAX_LINE ? `${text.slice(0, MAX_LINE - 1)}…\n` : text]);
        flush();
      },
    };
  }

  report(result, out, seconds) {
    const { error, verdict, timeout, checking } = result && typeof result === "object" ? result : {};
    if (!timeout && !(error && typeof error.text === "string") && !(verdict && typeof verdict.message === "string")) {
      // Not what run_exercise.py returns: the code posted a result of its own (js.postMessage).
      this.say("这次运行的结果读不出来（代码自己往页面发了消息？），检查没有进行。", "error");
      return;
    }
    if (timeout) {
      this.failed({ kind: "runaway", checking }, seconds, out);
      return;
    }
    if (error) {
      out.line("error", error.text);
      if (error.hint) out.line("hint", `说明：${error.hint}\n`);
      const where = error.line ? `（第 ${error.line} 行）` : "";
      this.say(`代码运行出错${where}，检查没有进行。看下面的出错信息。`, "error");
      return;
    }
    if (verdict.passed) {
      this.record.solved = true;
      this.say(`✓ ${verdict.message}`, "passed");
    } else {
      this.say(verdict.message, "failed");
    }
  }

  failed(error, seconds, out) {
    const kind = error && error.kind;
    if (kind === "stopped" && !error.started) {
      this.say("已停止：代码还没开始运行。", "stopped");
    } else if (kind === "stopped") {
      out.line("note", "（已停止）\n");
      this.say("已停止。改好代码再运行一次。", "stopped");
    } else if (kind === "runaway" && Array.isArray(error.checking)) {
      // The code ran to its end; the checks, which call it once a case, ran out of time.
      const [at, total] = error.checking;
      out.line("note", `（检查超过 ${seconds} 秒，已停止）\n`);
      this.say(`你的代码运行完了；检查进行到第 ${at} 个（共 ${total} 个）时，运行加检查超过了 ${seconds} 秒，` +
        "已经停止。检查要用每个输入调用一次你的函数：函数也许没错、只是太慢（多余的循环、重复的计算），" +
        "也许在某个输入上停不下来。", "error");
    } else if (kind === "runaway") {
      out.line("note", `（超过 ${seconds} 秒，已停止）\n`);
      this.say(`运行超过了 ${seconds} 秒，已经停止：是不是有一个停不下来的循环？`, "error");
    } else {
      console.error(`exercise ${this.id}:`, error);
      this.say(error && error.message ? error.message : String(error), "error");
    }
  }

  stop() {
    this.abort?.abort(); // this run only: another exercise's run goes on
  }

  reset() {
    if (!window.confirm("重置会丢掉你在这道题里写的代码，换回起始代码。确定吗？")) return;
    this.editor.text = this.spec.starter;
    this.record.code = this.spec.starter;
    this.record.starterSha = this.root.dataset.starterSha;
    this.notice.hidden = true;
    this.save();
    this.editor.focus();
  }

  // --- hints and the answer (fetched when asked for: they are in no page) -------------------

  async hint() {
    const next = (this.record.hints || 0) + 1;
    try {
      await this.showHints(next);
    } catch (error) {
      console.error(`exercise ${this.id}:`, error);
      this.say("提示没能载入（网络断了？）：连上网后再点一次「提示」。", "error");
      return;
    }
    this.record.hints = next;
    this.save();
    this.update();
    this.hints.lastElementChild?.focus();
  }

  async showHints(count) {
    this.hintTexts ??= (await fetchJSON(new URL("hints.json", this.files))).hints;
    this.hints.replaceChildren();
    this.hintTexts.slice(0, count).forEach((html, i) => {
      const box = element("div", { className: "cw-exercise__hint", tabIndex: -1 });
      box.append(element("p", { className: "cw-exercise__hint-label" }, `提示 ${i + 1}`));
      const body = element("div");
      body.innerHTML = html; // written by our build (Markdown and KaTeX), not by a student
      box.append(body);
      this.hints.append(box);
    });
  }

  async answer() {
    try {
      await this.showAnswer();
    } catch (error) {
      console.error(`exercise ${this.id}:`, error);
      this.say("答案没能载入（网络断了？）：连上网后再点一次「看答案」。", "error");
      return;
    }
    this.record.answer = true;
    this.save();
    this.update();
    this.answerBox.focus();
  }

  async showAnswer() {
    const { code } = await fetchJSON(new URL("answer.json", this.files));
    const pre = element("pre");
    const text = element("code", { tabIndex: 0 }, code); // focusable: a keyboard can scroll it
    text.setAttribute("aria-label", "参考答案的代码");
    pre.append(text);
    this.answerBox.tabIndex = -1;
    this.answerBox.replaceChildren(element("p", { className: "cw-exercise__hint-label" }, "参考答案（写法不止这一种）："), pre);
    this.answerBox.hidden = false;
  }

  // --- moving work between machines --------------------------------------------------------

  // Import asks first: which exercises it would change, and whether the file is older than
  // what is here; what it replaces is kept for 撤销 until the page is left.
  async importFile() {
    const file = this.fileInput.files[0];
    this.fileInput.value = "";
    if (!file) return;
    let parsed;
    try {
      parsed = store.parse(await file.text());
    } catch (error) {
      this.say(`没能载入这个文件：${error.message}。这里的代码没有改动。`, "error");
      return;
    }
    for (const block of live) block.flush();
    const same = (a, b) => JSON.stringify({ ...a, saved: 0 }) === JSON.stringify({ ...b, saved: 0 });
    const changes = parsed.records.filter(([id, record]) => !same(store.read(id), record));
    const nameOf = (id) => titles.get(id) || id;
    const list = (ids) => `${ids.slice(0, 8).map(nameOf).join("、")}${ids.length > 8 ? " 等" : ""}`;
    const unusable = parsed.unusable.length
      ? `文件里还有 ${parsed.unusable.length} 道读不出来的记录（${parsed.unusable.slice(0, 3)
        .map(([id, why]) => `${nameOf(id)}：${why}`).join("；")}${parsed.unusable.length > 3 ? " 等" : ""}），` +
        "这次不载入，它们仍在文件里。"
      : "";
    if (!changes.length) {
      this.say(`这个文件里的记录和这里保存的一样，没有要改的。${unusable}`, "passed");
      return;
    }
    const salvaged = changes.filter(([id]) => parsed.salvaged.includes(id)).map(([id]) => id);
    const older = changes.filter(([id, record]) => (store.read(id).saved || 0) > (record.saved || parsed.exported || 0));
    const question = [
      `载入这个文件会替换 ${changes.length} 道练习的记录：${list(changes.map(([id]) => id))}。`,
      older.length ? `其中 ${older.length} 道，文件里的比这里保存的旧。` : "",
      salvaged.length ? `其中 ${salvaged.length} 道（${list(salvaged)}）是这个浏览器之前读不出来的记录，从文件里找回了代码。` : "",
      unusable,
      "替换之后可以点「撤销」换回来（离开页面之前）。确定载入吗？",
    ].join("");
    if (!window.confirm(question)) {
      this.say("没有载入：这里的代码没有改动。", "");
      return;
    }
    const previous = changes.map(([id]) => {
      const before = store.read(id);
      return [id, before.saved ? before : null, store.setAsideFor(id)];
    });
    const failed = changes.filter(([id, record]) => !store.replace(id, { ...record, saved: record.saved || Date.now() }));
    for (const id of salvaged) if (!failed.some(([other]) => other === id)) store.putAside(id, null); // restored
    for (const block of live) block.reload();
    const undo = {
      name: "undo-import",
      label: "撤销",
      run: () => {
        for (const [id, record, aside] of previous) {
          store.replace(id, record);
          if (aside != null) store.putAside(id, aside);
        }
        for (const block of live) block.reload();
        this.say(`已撤销：${changes.length} 道练习换回了载入之前的记录。`, "");
      },
    };
    if (failed.length) {
      this.say(`只载入了 ${changes.length - failed.length} 道；${failed.length} 道没能保存（浏览器的存储已满或被禁用）。`, "error");
    } else {
      this.say(`已载入 ${changes.length} 道练习的记录。`, "passed");
    }
    this.tell("刚才载入的文件替换了这里的记录。", undo);
  }

  reload() {
    this.record = store.read(this.id);
    this.editor.text = this.record.code ?? this.spec.starter;
    if (store.setAsideFor(this.id) == null && this.notice.textContent.includes("读不出来")) this.notice.hidden = true;
    this.hints.replaceChildren();
    if (this.record.hints) this.showHints(this.record.hints).catch(() => {});
    this.answerBox.hidden = !this.record.answer;
    if (this.record.answer) this.showAnswer().catch(() => {});
    if (this.record.solved) this.say("上次你已经通过了这道题的全部检查。", "passed");
    this.update();
  }

  // Another tab saved this exercise (the storage event). What only adds (solved, hints, the
  // answer) is taken at once. Different code is taken too when nothing typed here is waiting
  // to be saved, with 撤销; otherwise this tab's code stays, and the student is told.
  changedElsewhere() {
    const other = store.readStored(this.id);
    if (!other) return;
    const mine = this.editor.text;
    for (const flag of ["ran", "solved", "answer"]) if (other[flag]) this.record[flag] = true;
    if ((other.hints || 0) > (this.record.hints || 0)) {
      this.record.hints = other.hints;
      this.showHints(other.hints).catch(() => {});
    }
    if (other.answer && this.answerBox.hidden) this.showAnswer().catch(() => {});
    this.update();
    if (other.code == null || other.code === mine) return;
    if (this.saveTimer) {
      this.tell("这道题在另一个标签页里也改过代码。这里的代码会在保存时替换那边的；想要那边的代码，点这里：",
        { name: "take-other", label: "换成另一个标签页的代码", run: () => this.takeCode(other.code, mine) });
      return;
    }
    this.takeCode(other.code, mine, true);
  }

  takeCode(code, mine, fromOtherTab = false) {
    clearTimeout(this.saveTimer);
    this.saveTimer = null;
    this.editor.text = code;
    this.record.code = code;
    this.save();
    this.tell(fromOtherTab ? "这道题在另一个标签页里改过：这里已换成那边刚保存的代码。" : "已换成另一个标签页的代码。", {
      name: "undo-take",
      label: "撤销",
      run: () => {
        this.editor.text = mine;
        this.record.code = mine;
        this.save();
      },
    });
  }
}

const titles = new Map(); // exercise id -> title, of the blocks on this page (for import's question)

let observer = null;

/** Make this page's exercise blocks live as they come near the viewport. */
export function mount(roots) {
  for (const block of live) block.flush();
  live.clear();
  titles.clear();
  roots.forEach((root) => titles.set(root.dataset.exercise, titleOf(root)));
  if (observer) observer.disconnect();
  observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        observer.unobserve(entry.target);
        new Exercise(entry.target).mount();
      }
    },
    { rootMargin: "600px 0px" },
  );
  roots.forEach((root) => observer.observe(root));
}

// Leaving the page, or the tab going to the background, saves what was typed since the last save.
const flushAll = () => live.forEach((block) => block.flush());
document.addEventListener("visibilitychange", () => document.visibilityState === "hidden" && flushAll());
window.addEventListener("pagehide", flushAll);
// Another tab of this site saved an exercise: the block of it on this page hears it.
window.addEventListener("storage", (event) => {
  if (!event.key || !event.key.startsWith("cw-exercise:")) return;
  const id = event.key.slice("cw-exercise:".length);
  live.forEach((block) => block.id === id && block.changedElsewhere());
});
