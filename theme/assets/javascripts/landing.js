// Landing where the reader expects when blocks not yet seen are sized by estimate (course.css,
// content-visibility). Before the page scrolls to an anchor (a contents link, a cross-reference,
// the address bar, a shared link, back and forward) the whole lesson is laid out
// (html.cw-full-layout), and the target is kept at the top while the blocks above it settle
// (widgets going live, fonts arriving), until the reader scrolls or a few seconds pass.
// A reload returns to the block the reader was reading, not to a pixel offset: the offset was
// measured with estimated and live blocks, the reloaded page has neither (theme/main.html turns
// the browser's own restoring off for a reload).

const root = document.documentElement;
const STOP_EVENTS = ["wheel", "touchstart", "keydown", "pointerdown"];
const PIN_MS = 3000;
let unpin = () => {};
let fromHistory = false;

function layOutEverything() {
  root.classList.add("cw-full-layout");
}

function target() {
  if (!location.hash) return null;
  return document.getElementById(decodeURIComponent(location.hash.slice(1)));
}

// Keep `place()` true while the page settles: now, and each time the lesson changes size.
function pin(place) {
  unpin();
  const content = document.querySelector(".md-content__inner");
  if (!content) return;
  const observer = new ResizeObserver(place);
  const timer = setTimeout(() => unpin(), PIN_MS);
  unpin = () => {
    observer.disconnect();
    clearTimeout(timer);
    for (const name of STOP_EVENTS) removeEventListener(name, unpin, true);
    unpin = () => {};
  };
  // After the browser's own scroll and Material's, both made before the layout was complete.
  requestAnimationFrame(() => requestAnimationFrame(() => observer.observe(content)));
  for (const name of STOP_EVENTS) addEventListener(name, unpin, { capture: true, passive: true });
}

function landOnTarget() {
  const element = target();
  if (!element) return;
  layOutEverything();
  pin(() => element.scrollIntoView());
}

// The reader's place: the first block of the lesson still on screen, and how far down it starts.
const PLACE_KEY = "cw-place";
function keepPlace() {
  const blocks = document.querySelector(".md-content__inner")?.children || [];
  const index = [...blocks].findIndex((block) => block.getBoundingClientRect().bottom > 0);
  if (index < 0) return;
  const place = { path: location.pathname, index, top: blocks[index].getBoundingClientRect().top };
  try { sessionStorage.setItem(PLACE_KEY, JSON.stringify(place)); } catch { /* storage off: the top */ }
}

function returnToPlace() {
  let place = null;
  try { place = JSON.parse(sessionStorage.getItem(PLACE_KEY)); } catch { /* nothing kept */ }
  const block = place && place.path === location.pathname
    && document.querySelector(".md-content__inner")?.children[place.index];
  if (!block) return;
  pin(() => scrollBy(0, block.getBoundingClientRect().top - place.top));
}

document.addEventListener("click", (event) => {
  const link = event.target instanceof Element ? event.target.closest("a[href*='#']") : null;
  if (link) layOutEverything();
}, true);
addEventListener("popstate", () => {  // also fired by a fragment navigation
  fromHistory = true;
  layOutEverything();
  landOnTarget();
});
addEventListener("hashchange", landOnTarget);

// Every page Material's instant navigation swaps in, and the first one: land on its anchor, or
// go back to laying out only what is near the screen (the first page keeps what the head script
// chose for a reload or a step through history).
let first = true;
const reloaded = performance.getEntriesByType("navigation")[0]?.type === "reload";
function arrive() {
  if (target()) landOnTarget();
  else if (first && reloaded) returnToPlace();
  else if (!first && !fromHistory) root.classList.remove("cw-full-layout");
  first = false;
  fromHistory = false;
}

addEventListener("pagehide", keepPlace);
window.cwOnEveryPage(arrive); // this page and each one Material's instant navigation swaps in (material_start.js)
