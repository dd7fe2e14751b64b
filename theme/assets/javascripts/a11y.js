// Accessible names for two of Material's own elements that ship without one
// (axe-core: aria-dialog-name, aria-progressbar-name), and a keyboard stop on a
// wide table's scroll box (scrollable-region-focusable: on a phone a table may
// scroll sideways, and a keyboard reader must be able to reach it). Setting them
// here keeps the theme override thin: no copied Material template.
const NAMES = {
  ".md-search[role=dialog]": "搜索",
  ".md-progress[role=progressbar]": "页面载入进度",
};

let boxes = null; // watches the wide tables' scroll boxes of the page shown

function name() {
  for (const [selector, label] of Object.entries(NAMES)) {
    for (const el of document.querySelectorAll(selector)) {
      if (!el.hasAttribute("aria-label")) el.setAttribute("aria-label", label);
    }
  }
  // A box is measured once it comes near the screen, when the browser has laid it out anyway:
  // measuring one in a block that skips layout (course.css) would lay that block out first.
  // Every box of a batch is measured before any is written: a write between two reads would
  // force a layout each time.
  if (boxes) boxes.disconnect();
  boxes = new IntersectionObserver((entries) => {
    const near = entries.filter((entry) => entry.isIntersecting).map((entry) => entry.target);
    const wide = near.filter((box) => box.scrollWidth > box.clientWidth);
    for (const box of near) boxes.unobserve(box);
    for (const box of wide) {
      box.setAttribute("tabindex", "0");
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", "表格（可左右滚动）");
    }
  }, { rootMargin: "100% 0px" });
  for (const box of document.querySelectorAll(".md-typeset__scrollwrap:not([tabindex])")) boxes.observe(box);
}

if (window.document$) window.document$.subscribe(name);
else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", name);
else name();
