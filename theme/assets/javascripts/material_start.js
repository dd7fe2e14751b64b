// Material's JavaScript starts at the reader's first interaction, not while the lesson arrives.
// theme/main.html inlines this classic script in every page's <head> (minified by esbuild, its
// <script data-bundle> naming Material's bundle) and leaves out Material's own <script>.
//
// Why: on a phone (CPU 4x slower) Material's start-up took 1.7 s of the main thread on 第 1 课 in
// two long tasks, evaluating its bundle and its DOMContentLoaded handler, most of it layouts of
// the whole lesson forced by parts a reader does not see at arrival (the contents' scroll spy,
// the sidebars, search results, the back-to-top button). Without it Lighthouse's mobile score of
// 第 1 课 went from 64 to 90 (benchmarks/lighthouse.py). What a reader needs at arrival works
// without it: the palette is set by theme/partials/javascripts/palette.html, the drawer and the
// search box open by CSS, links are links, and scrolling by touch needs no script.
//
// So the bundle loads when the reader moves the mouse, taps or clicks, presses a key, turns the
// wheel or moves focus (a screen reader), at once for a search link (?q=), and once loaded for a
// link to an anchor (see the end). A click on the palette toggle or one of Material's shortcut
// keys made before the bundle runs is handed to it once it does, so the first press is not lost.
// If the bundle cannot load, the page stays as it is and the next interaction tries again.
//
// window.cwOnEveryPage(fn): fn(document) once this page is parsed, and again for every page
// Material's instant navigation swaps in once it runs (lesson.js, a11y.js, landing.js, runtime.js).
(function () {
  const bundle = document.currentScript.dataset.bundle;
  const TRIGGERS = ["mousemove", "click", "keydown", "wheel", "focusin"];
  // Material's keys outside a text field: search (/ s f), previous (p ,) and next (n .) page.
  const SHORTCUTS = new Set(["/", "s", "f", "p", ",", "n", "."]);
  const pages = []; // what runs for every page
  const held = []; // presses made before Material ran, handed to it once it does
  const material = { state: "waiting" }; // waiting | loading | started (tests read it)
  // Not readyState: it turns "interactive" before the module scripts run, and their per-page work
  // waits for DOMContentLoaded, as it did when Material's document$ ran it.
  let parsed = document.readyState !== "loading";
  document.addEventListener("DOMContentLoaded", () => { parsed = true; }, { once: true });

  window.cwMaterial = material;
  window.cwOnEveryPage = function (fn) {
    pages.push(fn);
    if (parsed) fn(document);
    else document.addEventListener("DOMContentLoaded", () => fn(document), { once: true });
  };

  function editable(target) {
    return target instanceof Element && (target.isContentEditable || target.closest("input, textarea, select"));
  }

  // What to hand Material of a press it would have acted on, or null.
  function pressFor(event) {
    const target = event.target;
    if (event.type === "click" && target instanceof Element && target.closest('[data-md-component="palette"] label')) {
      const label = target.closest("label");
      return () => label.click();
    }
    if (event.type !== "keydown" || event.ctrlKey || event.metaKey || event.altKey || editable(target)) return null;
    const { key, code, shiftKey } = event;
    if (SHORTCUTS.has(key) || (key === "Enter" && target instanceof HTMLLabelElement)) {
      return () => target.dispatchEvent(new KeyboardEvent("keydown", { key, code, shiftKey, bubbles: true, cancelable: true }));
    }
    return null;
  }

  function interacted(event) {
    const press = pressFor(event);
    if (press) {
      event.preventDefault(); // ("/" opens Firefox's quick find; a label's click would pick a palette unheard)
      held.push(press);
    }
    start();
  }

  // Material's instant navigation: every page it swaps in. Its first value is this page, which
  // DOMContentLoaded has already served.
  function followPages() {
    let first = true;
    window.document$.subscribe((doc) => {
      if (first) { first = false; return; }
      for (const fn of pages) fn(doc);
    });
  }

  function start() {
    if (material.state !== "waiting") return;
    material.state = "loading";
    const script = document.createElement("script");
    script.src = bundle;
    script.onload = () => {
      for (const type of TRIGGERS) removeEventListener(type, interacted, true);
      followPages();
      // Material waits for DOMContentLoaded; if that has passed, this is the page it waited for.
      if (parsed) window.document$.next(document);
      material.state = "started";
      dispatchEvent(new Event("cw:material-started")); // (a11y.js: Material has wrapped the tables)
      for (const press of held.splice(0)) press();
    };
    script.onerror = () => {
      script.remove();
      material.state = "waiting";
      console.warn("Material's script could not load: the page works without it; the next interaction tries again.");
    };
    document.head.append(script);
  }

  for (const type of TRIGGERS) addEventListener(type, interacted, { capture: true });
  if (new URLSearchParams(location.search).has("q")) start();
  // A page opened at an anchor: when Material starts it sees the target and shuts the drawer and
  // the search box 125 ms later, which would shut the drawer the reader's first tap had opened.
  // So it starts once the page has loaded, as it always did.
  else if (location.hash) addEventListener("load", start, { once: true });
})();
