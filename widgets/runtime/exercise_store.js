// Saved exercise work, in this browser's localStorage: one entry per exercise, keyed by its
// stable id (data-exercise, e.g. "c4/l1/ffn-two-neurons"), never by the URL or its #anchor.
// A record: {code, starterSha (the starter it was written from), ran, solved, hints (how many
// are open), answer (revealed), saved (time)}. Every write can fail (private windows,
// quota, storage blocked): write() says so, and the block shows it.
//
// Nothing read is trusted: a record is checked field by field (clean()). A stored record the
// page cannot read is set aside under ASIDE (kept, and in the download's `unreadable`), never
// shown as code; importing the download restores what of it can be read (salvage()). An import
// file with a wrong field is refused with what is wrong, and writes nothing. The limits are one
// set for writing, reading and importing: code the page would refuse to read is never written
// (write() says "too-long"), so nothing saved is refused after a reload.
const PREFIX = "cw-exercise:";
const ASIDE = "cw-exercise-unreadable:"; // + id: the text of a record that could not be read
const FORMAT = "llm-from-scratch-exercises"; // the downloaded file's "format"
const VERSION = 1;
export const MAX_CODE = 200_000; // characters of one exercise's code: written, read and imported alike
const MAX_RECORDS = 500; // exercises in one file: the course has a few dozen
const ID = /^[a-z0-9][a-z0-9_-]*(\/[a-z0-9][a-z0-9_-]*)*$/;
const FLAGS = ["ran", "solved", "answer"];

function storage() {
  try {
    return window.localStorage; // the getter itself throws where storage is blocked
  } catch {
    return null;
  }
}

/** Whether this browser keeps what is written (tried, not assumed). */
export function available() {
  const s = storage();
  if (!s) return false;
  try {
    s.setItem(`${PREFIX}probe`, "1");
    s.removeItem(`${PREFIX}probe`);
    return true;
  } catch {
    return false;
  }
}

/**
 * A record as the page can use it, or the reason it cannot: {record} or {problem} (Chinese).
 * Missing fields are fine (an empty record is the starter); a field of the wrong type is not.
 */
export function clean(value) {
  if (!value || typeof value !== "object" || Array.isArray(value)) return { problem: "记录不是一个对象" };
  const record = {};
  if (value.code != null) {
    if (typeof value.code !== "string") return { problem: "code（代码）不是文字" };
    if (value.code.length > MAX_CODE) return { problem: `code（代码）超过 ${MAX_CODE.toLocaleString("en")} 个字符` };
    record.code = value.code;
  }
  if (value.starterSha != null) {
    if (typeof value.starterSha !== "string" || value.starterSha.length > 64) return { problem: "starterSha 不对" };
    record.starterSha = value.starterSha;
  }
  for (const flag of FLAGS) {
    if (value[flag] == null) continue;
    if (typeof value[flag] !== "boolean") return { problem: `${flag} 不是 true 或 false` };
    if (value[flag]) record[flag] = true;
  }
  if (value.hints != null) {
    if (!Number.isInteger(value.hints) || value.hints < 0 || value.hints > 100) return { problem: "hints（提示数）不是 0 到 100 的整数" };
    record.hints = value.hints;
  }
  if (value.saved != null) {
    if (!Number.isFinite(value.saved)) return { problem: "saved（保存时间）不是数字" };
    record.saved = value.saved;
  }
  return { record };
}

const memory = new Map(); // where storage fails, the page still remembers until it is left

function stored(id) {
  let text;
  try {
    text = storage()?.getItem(PREFIX + id);
  } catch {
    return null;
  }
  if (!text) return null;
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const { record } = clean(value);
  if (record) return record;
  setAside(id, text);
  return null;
}

// An unreadable record leaves its key (so the block starts from the starter) for ASIDE.
function setAside(id, text) {
  try {
    const s = storage();
    s.setItem(ASIDE + id, text);
    s.removeItem(PREFIX + id);
  } catch {
    // storage that cannot move it cannot hand it to the page either: the starter it is
  }
}

/** The text of `id`'s record set aside as unreadable (it is in the download), or null. */
export function setAsideFor(id) {
  try {
    return storage()?.getItem(ASIDE + id) ?? null;
  } catch {
    return null;
  }
}

/** Put back (text) or drop (null) `id`'s set-aside record: an import that restored it drops it, 撤销 puts it back. */
export function putAside(id, text) {
  try {
    if (text == null) storage()?.removeItem(ASIDE + id);
    else storage()?.setItem(ASIDE + id, text);
  } catch {
    // nothing to move where storage refuses
  }
}

/**
 * What can be read of a record the page set aside (its stored text): {record} when its code
 * can be read (the other fields are kept where they read too), else {problem} (Chinese).
 *
 * A record is set aside whole for one bad field (`hints: 2.5`); its code is what matters.
 */
export function salvage(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: "不是 JSON" };
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return { problem: "不是一个对象" };
  const code = clean({ code: value.code });
  if (code.problem || code.record.code == null) return { problem: code.problem || "没有代码" };
  const record = {};
  for (const key of Object.keys(value)) Object.assign(record, clean({ [key]: value[key] }).record);
  return { record };
}

const newer = (a, b) => (!a || !b ? a || b : (a.saved || 0) >= (b.saved || 0) ? a : b);

/** The saved record of exercise `id` (an empty one if none): the newer of storage and memory. */
export function read(id) {
  return { ...(newer(memory.get(id), stored(id)) || {}) };
}

/** What other tabs saved of `id` (storage only), or null. */
export function readStored(id) {
  return stored(id);
}

function put(id, value) {
  memory.set(id, value);
  try {
    const s = storage();
    if (!s) return false;
    s.setItem(PREFIX + id, JSON.stringify(value));
    return true;
  } catch {
    return false;
  }
}

/**
 * Save `record` for `id`: true, false when the browser refused (memory keeps it until the page is
 * left), or "too-long" when its code is over MAX_CODE: then nothing is written, and what was
 * saved before stays (a record the page could not read back is never written). What another tab
 * saved meanwhile is kept where it only adds (solved, hints opened, answer shown): a stale tab
 * never takes it away.
 */
export function write(id, record) {
  if (typeof record.code === "string" && record.code.length > MAX_CODE) return "too-long";
  const other = stored(id) || {};
  const value = { ...record, saved: Date.now() };
  for (const flag of FLAGS) if (other[flag]) value[flag] = true;
  if ((other.hints || 0) > (value.hints || 0)) value.hints = other.hints;
  return put(id, value);
}

/** Put `record` back exactly as it was (undo), or remove it (null). */
export function replace(id, record) {
  if (record) return put(id, record);
  memory.delete(id);
  try {
    storage()?.removeItem(PREFIX + id);
    return true;
  } catch {
    return false;
  }
}

function all() {
  const found = {};
  const aside = {};
  const s = storage();
  try {
    for (let i = 0; s && i < s.length; i++) {
      const key = s.key(i);
      if (key.startsWith(ASIDE)) aside[key.slice(ASIDE.length)] = s.getItem(key);
    }
    for (let i = 0; s && i < s.length; i++) {
      const key = s.key(i);
      if (key.startsWith(PREFIX) && key !== `${PREFIX}probe`) {
        const id = key.slice(PREFIX.length);
        const record = stored(id);
        if (record) found[id] = record;
      }
    }
  } catch {
    // what memory holds is still worth downloading
  }
  for (const [id, record] of memory) found[id] = newer(record, found[id]); // storage full: memory is newer
  return { found, aside };
}

/** Download every saved exercise of the course as one JSON file. */
export function download() {
  const { found, aside } = all();
  const data = { format: FORMAT, version: VERSION, exported: new Date().toISOString(), exercises: found };
  if (Object.keys(aside).length) data.unreadable = aside; // records this page could not read, as they were
  const blob = new Blob([JSON.stringify(data, null, 1)], { type: "application/json" });
  const link = Object.assign(document.createElement("a"), {
    href: URL.createObjectURL(blob),
    download: `从0训练LLM-练习-${data.exported.slice(0, 10)}.json`,
  });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

/**
 * Read a downloaded file's text, writing nothing: {records: [[id, record]], exported (time or
 * null), salvaged (ids among `records` restored from the file's `unreadable` section), unusable
 * ([[id, why]]: its unreadable records that stay so)}. A record of `unreadable` is restored
 * where its code can be read and the file has no readable record of the same exercise (that one
 * is newer: the block started afresh after setting the old one aside). Throws an Error whose
 * message says, in Chinese, what is wrong with the file.
 */
export function parse(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error("它不是 JSON 文件");
  }
  if (!data || data.format !== FORMAT || !data.exercises || typeof data.exercises !== "object" ||
      Array.isArray(data.exercises)) {
    throw new Error("它不是「下载全部练习」生成的文件");
  }
  if (typeof data.version !== "number" || data.version > VERSION) throw new Error("它来自更新版本的课程网站，请先刷新页面");
  const entries = Object.entries(data.exercises);
  if (entries.length > MAX_RECORDS) throw new Error(`它有 ${entries.length} 道练习的记录，多得不像这门课的`);
  const records = [];
  for (const [id, value] of entries) {
    if (!ID.test(id) || id.length > 200) throw new Error(`其中「${id.slice(0, 40)}」不是练习的名字`);
    const { record, problem } = clean(value);
    if (problem) throw new Error(`练习 ${id} 的${problem}`);
    records.push([id, record]);
  }
  const salvaged = [];
  const unusable = [];
  const aside = data.unreadable && typeof data.unreadable === "object" && !Array.isArray(data.unreadable)
    ? Object.entries(data.unreadable).slice(0, MAX_RECORDS) : [];
  for (const [id, text] of aside) {
    if (!ID.test(id) || id.length > 200 || typeof text !== "string") continue; // not ours: ignored
    if (Object.hasOwn(data.exercises, id)) {
      unusable.push([id, "这里已有它更新的记录"]);
      continue;
    }
    const { record, problem } = salvage(text);
    if (problem) unusable.push([id, problem]);
    else {
      records.push([id, record]);
      salvaged.push(id);
    }
  }
  const exported = Date.parse(data.exported);
  return { records, exported: Number.isFinite(exported) ? exported : null, salvaged, unusable };
}
