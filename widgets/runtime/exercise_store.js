// Saved exercise work, in this browser's localStorage: one entry per exercise, keyed by its
// stable id (data-exercise, e.g. "c4/l1/ffn-two-neurons"), never by the URL or its #anchor.
// A record: {code, starterSha (the starter it was written from), ran, solved, hints (how many
// are open), answer (revealed), saved (time)}. Every write can fail (private windows,
// quota, storage blocked): write() says so, and the block shows it.
const PREFIX = "cw-exercise:";
const FORMAT = "llm-from-scratch-exercises"; // the downloaded file's "format"
const VERSION = 1;

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

const memory = new Map(); // where storage fails, the page still remembers until it is left

/** The saved record of exercise `id` (an empty one if none). */
export function read(id) {
  try {
    const text = storage()?.getItem(PREFIX + id);
    if (text) return JSON.parse(text);
  } catch {
    // unreadable storage or a damaged record: start from the starter
  }
  return { ...(memory.get(id) || {}) };
}

/** Save `record` for `id`; false when the browser refused. */
export function write(id, record) {
  const value = { ...record, saved: Date.now() };
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

function all() {
  const found = Object.fromEntries(memory);
  const s = storage();
  try {
    for (let i = 0; s && i < s.length; i++) {
      const key = s.key(i);
      if (key.startsWith(PREFIX) && key !== `${PREFIX}probe`) found[key.slice(PREFIX.length)] = JSON.parse(s.getItem(key));
    }
  } catch {
    // what memory holds is still worth downloading
  }
  return found;
}

/** Download every saved exercise of the course as one JSON file. */
export function download() {
  const data = { format: FORMAT, version: VERSION, exported: new Date().toISOString(), exercises: all() };
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

/** Load a downloaded file's text: its records replace those saved here. Returns how many. */
export function load(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error("它不是 JSON 文件");
  }
  if (!data || data.format !== FORMAT || typeof data.exercises !== "object" || !data.exercises) {
    throw new Error("它不是「下载全部练习」生成的文件");
  }
  if (data.version > VERSION) throw new Error("它来自更新版本的课程网站，请先刷新页面");
  const entries = Object.entries(data.exercises).filter(([, record]) => record && typeof record === "object");
  for (const [id, record] of entries) write(id, record);
  return entries.length;
}
