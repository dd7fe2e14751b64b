// Accessible names for two of Material's own elements that ship without one
// (axe-core: aria-dialog-name, aria-progressbar-name), and a keyboard stop on a
// wide table's scroll box (scrollable-region-focusable: on a phone a table may
// scroll sideways, and a keyboard reader must be able to reach it). Setting them
// here keeps the theme override thin: no copied Material template.
const NAMES = {
  ".md-search[role=dialog]": "搜索",
  ".md-progress[role=progressbar]": "页面载入进度",
};

function name() {
  for (const [selector, label] of Object.entries(NAMES)) {
    for (const el of document.querySelectorAll(selector)) {
      if (!el.hasAttribute("aria-label")) el.setAttribute("aria-label", label);
    }
  }
  // Measure every box first, then write: a write between two reads would force a layout each time.
  const wide = [...document.querySelectorAll(".md-typeset__scrollwrap")]
    .filter((box) => !box.hasAttribute("tabindex") && box.scrollWidth > box.clientWidth);
  for (const box of wide) {
    box.setAttribute("tabindex", "0");
    box.setAttribute("role", "region");
    box.setAttribute("aria-label", "表格（可左右滚动）");
  }
}

if (window.document$) window.document$.subscribe(name);
else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", name);
else name();
