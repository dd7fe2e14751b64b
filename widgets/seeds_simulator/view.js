// seeds-simulator: sliders and the radios start the counts again (a new first batch); 再做 asks for the
// next batch with the counts the model returned; 换一批随机数 starts again from another random stream.
// Draws and listens only: every count, position and sentence comes from model.py.
const SVG = "http://www.w3.org/2000/svg";

function svg(name, attrs) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

function draw(root, c) {
  const chart = root.querySelector("svg[data-chart]");
  chart.querySelector("[data-ticks]").replaceChildren(...c.ticks.flatMap((t) => {
    const label = svg("text", { class: "ss-tick", x: t.x, y: c.h - 4, "text-anchor": "middle" });
    label.textContent = t.label;
    return [svg("line", { class: t.zero ? "ss-grid ss-zero" : "ss-grid", x1: t.x, x2: t.x, y1: 10, y2: c.h - 18 }), label];
  }));
  const truth = chart.querySelector("[data-truth]");
  truth.setAttribute("x1", c.truth);
  truth.setAttribute("x2", c.truth);
  chart.querySelector("[data-band]").replaceChildren(...(c.band
    ? [svg("rect", { class: "ss-band", x: c.band.x, y: c.band.y - 4, width: c.band.width, height: 8 })] : []));
  const gap = [];
  if (c.gap) {
    if (c.gap.x1 !== undefined) {
      gap.push(svg("line", { class: "ss-interval", x1: c.gap.x1, x2: c.gap.x2, y1: c.gap.y, y2: c.gap.y }));
      for (const x of [c.gap.x1, c.gap.x2]) gap.push(svg("line", { class: "ss-interval", x1: x, x2: x, y1: c.gap.y - 6, y2: c.gap.y + 6 }));
    }
    gap.push(svg("circle", { class: "ss-gap", cx: c.gap.x, cy: c.gap.y, r: 5 }));
  }
  chart.querySelector("[data-gap]").replaceChildren(...gap);
  chart.querySelector("[data-means]").replaceChildren(...c.means.map((m) =>
    svg("line", { class: "ss-mean", x1: m.x, x2: m.x, y1: m.y1, y2: m.y2 })));
  chart.querySelector("[data-dots]").replaceChildren(...c.dots.map((d) =>
    svg("circle", { class: d.failed ? "ss-dot ss-dot--failed" : "ss-dot", cx: d.x, cy: d.y, r: 6 })));
}

export function mount(root, api) {
  const params = { ...api.params };
  const sliders = [...root.querySelectorAll('input[type="range"]')];
  const radios = [...root.querySelectorAll('input[name="ss-where"]')];
  let carried = null; // the counts and the next batch number the last answer returned

  async function ask(more, speak) {
    for (const s of sliders) params[s.name] = Number(s.value);
    params.where = radios.find((r) => r.checked).value;
    const call = more && carried ? { ...params, tally: carried.tally, batch: carried.batch }
      : { ...params, tally: null, batch: 0 };
    const state = await api.latest("view", call);
    if (!state) return;
    carried = { tally: state.tally, batch: state.batch };
    api.fill(state);
    draw(root, state.chart);
    if (speak) api.announce(state.announce);
  }

  for (const s of sliders) {
    s.addEventListener("input", () => ask(false, false));
    s.addEventListener("change", () => ask(false, true));
  }
  for (const r of radios) r.addEventListener("change", () => ask(false, true));
  root.querySelector('[data-action="more"]').addEventListener("click", async () => {
    if (!carried) await ask(false, false); // the page's first state: its counts are not in params
    await ask(true, true);
  });
  root.querySelector('[data-action="reset"]').addEventListener("click", () => {
    params.seed = (params.seed || 0) + 1;
    ask(false, true);
  });
}
