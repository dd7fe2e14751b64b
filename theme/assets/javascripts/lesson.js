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

window.cwOnEveryPage(bind); // this page and each one Material's instant navigation swaps in (material_start.js)

