// norm-placement: depth, placement, init and seed ask model.py's view; this redraws the two curves
// and writes the numbers. Draws and listens only: every value comes from model.py.
import { drawTicks } from "../runtime/chart.js";

export function mount(root, api) {
  const params = { ...api.params };
  const depth = root.querySelector('input[name="depth"]');

  async function refresh(speak) {
    params.depth = Number(depth.value);
    params.place = root.querySelector('input[name="np-place"]:checked').value;
    params.init = root.querySelector('input[name="np-init"]:checked').value;
    params.seed = Number(root.querySelector('input[name="np-seed"]:checked').value);
    const state = await api.latest("view", { ...params });
    if (!state) return;
    api.fill(state);
    for (const name of ["grad", "rms"]) {
      const figure = root.querySelector(`[data-chart="${name}"]`);
      drawTicks(figure, state[`${name}_chart`], "np");
      figure.querySelector(`[data-line="${name}"]`).setAttribute("points", state[`${name}_chart`].points);
    }
    if (speak) api.announce(state.announce);
  }

  depth.addEventListener("input", () => refresh(false));
  depth.addEventListener("change", () => refresh(true));
  for (const input of root.querySelectorAll('input[type="radio"]')) input.addEventListener("change", () => refresh(true));
}
