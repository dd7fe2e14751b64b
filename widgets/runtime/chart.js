// Log-scale chart ticks as widgets/common/logchart.py lays them out: one grid line and one label
// per tick, redrawn by depth-signal's and norm-placement's views. `prefix` is the widget's class prefix.
const SVG = "http://www.w3.org/2000/svg";

export function drawTicks(figure, chart, prefix) {
  figure.querySelector("[data-ticks]").replaceChildren(
    ...chart.ticks.flatMap((t) => {
      const line = document.createElementNS(SVG, "line");
      Object.entries({ class: `${prefix}-grid`, x1: 0, x2: chart.w, y1: t.y, y2: t.y }).forEach(([k, v]) => line.setAttribute(k, v));
      const text = document.createElementNS(SVG, "text");
      Object.entries({ class: `${prefix}-tick`, x: -8, y: t.y, "text-anchor": "end", "dominant-baseline": "middle" })
        .forEach(([k, v]) => text.setAttribute(k, v));
      text.textContent = t.label;
      return [line, text];
    }),
  );
}
