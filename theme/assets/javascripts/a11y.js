// Accessible names for two of Material's own elements that ship without one
// (axe-core: aria-dialog-name, aria-progressbar-name). Setting them here keeps
// the theme override thin: no copied Material template.
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
}

if (window.document$) window.document$.subscribe(name);
else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", name);
else name();
