// depth-signal: the controls ask model.py's view for the new stack; this redraws the two
// curves and writes the numbers. Draws and listens only: every value comes from model.py.
import { drawTicks } from "../runtime/chart.js";

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
    drawTicks(rms, state.rms_chart, "ds");
    drawTicks(grad, state.grad_chart, "ds");
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
