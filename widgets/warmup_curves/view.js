// warmup-curves: the window radios and the series checkboxes ask model.py's view for the new state;
// this redraws the chart's groups (as widget.html draws them) and writes the sentences. Draws and
// listens only: every position, label and sentence comes from model.py.
const SVG = "http://www.w3.org/2000/svg";

function svg(name, attrs, text) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

function draw(root, state) {
  const c = state.chart;
  const chart = root.querySelector("svg[data-chart]");
  chart.setAttribute("aria-label", c.summary);
  chart.querySelector("[data-yticks]").replaceChildren(...c.yticks.flatMap((t) => [
    svg("line", { class: "wc-grid", x1: 0, x2: c.w, y1: t.y, y2: t.y }),
    svg("text", { class: "wc-tick", x: -8, y: t.y, "text-anchor": "end", "dominant-baseline": "middle" }, t.label),
  ]));
  chart.querySelector("[data-xticks]").replaceChildren(...c.xticks.flatMap((t) => [
    svg("line", { class: "wc-axis", x1: t.x, x2: t.x, y1: c.h, y2: c.h + 6 }),
    svg("text", { class: "wc-tick", x: t.x, y: c.h + 22, "text-anchor": "middle" }, t.label),
  ]));
  chart.querySelector("[data-refs]").replaceChildren(...c.refs.map((r) =>
    svg("line", { class: `wc-ref wc-ref--${r.key}`, x1: 0, x2: c.w, y1: r.y, y2: r.y })));
  chart.querySelector("[data-lines]").replaceChildren(...c.lines.map((l) =>
    svg("path", { class: `wc-line wc-s${l.style}`, "data-line": l.key, d: l.d })));
  chart.querySelector("[data-reflabels]").replaceChildren(...c.refs.map((r) =>
    svg("text", { class: "wc-ref-label", x: c.w - 4, y: r.y, dy: r.dy, "text-anchor": "end" }, r.label)));
  const list = root.querySelector("[data-sentences]");
  list.replaceChildren(...state.sentences.map((s) => {
    const li = document.createElement("li");
    li.textContent = s;
    return li;
  }));
}

export function mount(root, api) {
  const params = { ...api.params };
  const radios = [...root.querySelectorAll('input[name="wc-window"]')];
  const boxes = [...root.querySelectorAll('input[name="wc-series"]')];

  async function refresh() {
    params.window = radios.find((r) => r.checked).value;
    params.shown = boxes.filter((b) => b.checked).map((b) => b.value);
    const state = await api.latest("view", { ...params, shown: [...params.shown] });
    if (!state) return;
    api.fill(state);
    for (const s of state.series) {
      const box = boxes.find((b) => b.value === s.key);
      if (box) box.disabled = !s.available;
    }
    draw(root, state);
    api.announce(state.announce);
  }

  for (const input of [...radios, ...boxes]) input.addEventListener("change", refresh);
}
