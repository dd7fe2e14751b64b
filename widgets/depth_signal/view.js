// depth-signal: the controls ask model.py's view for the new stack; this redraws the two
// curves and writes the numbers. Draws and listens only: every value comes from model.py.
const SVG = "http://www.w3.org/2000/svg";

function drawTicks(figure, chart) {
  const group = figure.querySelector("[data-ticks]");
  group.replaceChildren(
    ...chart.ticks.flatMap((t) => {
      const line = document.createElementNS(SVG, "line");
      Object.entries({ class: "ds-grid", x1: 0, x2: chart.w, y1: t.y, y2: t.y }).forEach(([k, v]) => line.setAttribute(k, v));
      const text = document.createElementNS(SVG, "text");
      Object.entries({ class: "ds-tick", x: -8, y: t.y, "text-anchor": "end", "dominant-baseline": "middle" })
        .forEach(([k, v]) => text.setAttribute(k, v));
      text.textContent = t.label;
      return [line, text];
    }),
  );
}

export function mount(root, api) {
  const params = { ...api.params };
  const controls = root.querySelector(".ds-controls");

  function read() {
    params.depth = Number(controls.querySelector('input[name="depth"]').value);
    params.residual = controls.querySelector('input[name="residual"]').checked;
    params.norm = controls.querySelector('input[name="norm"]').checked;
    params.init = controls.querySelector('input[name="ds-init"]:checked').value;
    params.activation = controls.querySelector('input[name="ds-activation"]:checked').value;
    params.seed = Number(controls.querySelector('input[name="ds-seed"]:checked').value);
  }

  async function refresh(speak) {
    read();
    const state = await api.latest("view", { ...params });
    if (!state) return;
    api.fill(state);
    const rms = root.querySelector('[data-chart="rms"]');
    const grad = root.querySelector('[data-chart="grad"]');
    drawTicks(rms, state.rms_chart);
    drawTicks(grad, state.grad_chart);
    rms.querySelector('[data-line="rms"]').setAttribute("points", state.rms_chart.points);
    rms.querySelector('[data-line="prediction"]').setAttribute("points", state.rms_chart.prediction);
    grad.querySelector('[data-line="grad"]').setAttribute("points", state.grad_chart.points);
    if (speak) api.announce(state.announce);
  }

  controls.querySelector('input[name="depth"]').addEventListener("input", () => refresh(false));
  controls.querySelector('input[name="depth"]').addEventListener("change", () => refresh(true));
  for (const input of controls.querySelectorAll('input[type="checkbox"], input[type="radio"]')) {
    input.addEventListener("change", () => refresh(true));
  }
}
