// Lesson page behaviour that needs no Python: the clickable formula terms and
// the ①②③ stepper. Both are plain HTML that reads fully without JavaScript;
// this only shows one part at a time. Re-bound on every instant-navigation swap.

function bindTerms(box) {
  const buttons = [...box.querySelectorAll("button[data-term]")];
  const infos = [...box.querySelectorAll("[data-term-info]")];
  const show = (term) => {
    for (const button of buttons) button.setAttribute("aria-expanded", String(button.dataset.term === term));
    for (const info of infos) info.hidden = info.dataset.termInfo !== term;
  };
  box.dataset.live = "true";
  for (const button of buttons) button.addEventListener("click", () => show(button.dataset.term));
  show(buttons[0].dataset.term);
}

function bindStepper(box) {
  const buttons = [...box.querySelectorAll("button[data-step-to]")];
  const go = (step) => {
    box.dataset.step = step;
    for (const button of buttons) button.setAttribute("aria-pressed", String(button.dataset.stepTo === step));
  };
  box.dataset.live = "true";
  for (const button of buttons) button.addEventListener("click", () => go(button.dataset.stepTo));
  go("1");
}

function bind() {
  for (const box of document.querySelectorAll("[data-terms]:not([data-live])")) bindTerms(box);
  for (const box of document.querySelectorAll("[data-stepper]:not([data-live])")) bindStepper(box);
}

if (window.document$) window.document$.subscribe(bind);
else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", bind);
else bind();

// Blocks not yet seen are sized by estimate (course.css, content-visibility). Before the page
// scrolls to an anchor (a contents link, a cross-reference), lay the whole page out, so the target
// lands at the top of the screen and stays there. A typed address or a step through history
// scrolls before any event can tell: lay out, then scroll to the target again.
function layOutEverything() {
  const root = document.documentElement;
  if (root.classList.contains("cw-full-layout")) return false;
  root.classList.add("cw-full-layout");
  return true;
}
function layOutAndScrollToTarget() {
  if (!layOutEverything()) return;
  const target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  // Two frames on: after the browser's own scroll and Material's, both made with the estimates.
  if (target) requestAnimationFrame(() => requestAnimationFrame(() => target.scrollIntoView()));
}
document.addEventListener("click", (event) => {
  const link = event.target instanceof Element ? event.target.closest("a[href*='#']") : null;
  if (link) layOutEverything();
}, true);
addEventListener("popstate", layOutAndScrollToTarget); // fired by a fragment navigation too
addEventListener("hashchange", layOutAndScrollToTarget);
