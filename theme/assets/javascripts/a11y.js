// Accessible names for two of Material's own elements that ship without one
// (axe-core: aria-dialog-name, aria-progressbar-name), and a keyboard stop on a
// wide table's scroll box and on each code block (scrollable-region-focusable: on a phone a table may
// scroll sideways, and a keyboard reader must be able to reach it), before and
// after Material's bundle starts. Setting them
// here keeps the theme override thin: no copied Material template.
const NAMES = {
  ".md-search[role=dialog]": "搜索",
  ".md-progress[role=progressbar]": "页面载入进度",
};

// A table's scroll box: the wrapper Material's bundle puts around each table when it starts, at
// the reader's first interaction (material_start.js); until then the table itself scrolls
// (Material's CSS). A wide table a lesson or widget wraps in .cw-scroll scrolls there.
const SCROLL_BOXES = ".md-typeset__scrollwrap, .md-typeset table:not([class]), .cw-scroll";
const KEY_STOP = { tabindex: "0", role: "region", "aria-label": "表格（可左右滚动）" };
const CODE_KEY_STOP = { ...KEY_STOP, "aria-label": "代码（可左右滚动）" };

let boxes = null; // watches the wide tables' scroll boxes of the page shown

function scrollBoxes() {
  return [...document.querySelectorAll(SCROLL_BOXES)].filter((box) => !box.hasAttribute("tabindex")
    && (box.matches(".md-typeset__scrollwrap") || !box.closest(".md-typeset__scrollwrap")));
}

function setKeyStop(box, on) {
  for (const [attribute, value] of Object.entries(box.matches("code") ? CODE_KEY_STOP : KEY_STOP)) {
    if (on) box.setAttribute(attribute, value);
    else box.removeAttribute(attribute);
  }
}

function name() {
  for (const [selector, label] of Object.entries(NAMES)) {
    for (const el of document.querySelectorAll(selector)) {
      if (!el.hasAttribute("aria-label")) el.setAttribute("aria-label", label);
    }
  }
  // A code block is a key stop whatever its width (few pages have one; a long line scrolls on a phone).
  for (const code of document.querySelectorAll(".md-typeset pre > code:not([tabindex])")) setKeyStop(code, true);
  // A box is measured once it comes near the screen, when the browser has laid it out anyway:
  // measuring one in a block that skips layout (course.css) would lay that block out first.
  // Every box of a batch is measured before any is written: a write between two reads would
  // force a layout each time.
  if (boxes) boxes.disconnect();
  boxes = new IntersectionObserver((entries) => {
    const near = entries.filter((entry) => entry.isIntersecting).map((entry) => entry.target);
    const wide = near.filter((box) => box.scrollWidth > box.clientWidth);
    for (const box of near) boxes.unobserve(box);
    for (const box of wide) setKeyStop(box, true);
  }, { rootMargin: "100% 0px" });
  for (const box of scrollBoxes()) boxes.observe(box);
}

// Material has wrapped the tables: a table that was a key stop hands it to its wrapper, which
// now does the scrolling, and the wrappers not yet measured are watched.
function tablesWrapped() {
  for (const table of document.querySelectorAll(".md-typeset__scrollwrap table[tabindex]")) {
    setKeyStop(table, false);
    setKeyStop(table.closest(".md-typeset__scrollwrap"), true);
  }
  name();
}
addEventListener("cw:material-started", tablesWrapped);

window.cwOnEveryPage(name); // this page and each one Material's instant navigation swaps in (material_start.js)
