// gated-neuron: the activation radios and the six sliders ask model.py's view for the new fit;
// 精确解 sets the sliders to the model's exact solution. Draws and listens only.
export function mount(root, api) {
  const params = { ...api.params, gate: [...api.params.gate], up: [...api.params.up] };
  const panel = root.querySelector(".gn");
  const button = root.querySelector('[data-action="exact"]');
  const sliders = [...root.querySelectorAll('input[type="range"]')];
  const KEYS = ["a", "b", "c"];

  function read() {
    for (const slider of sliders) {
      const [reading, key] = slider.name.split("-");
      params[reading][KEYS.indexOf(key)] = Number(slider.value);
    }
    params.activation = root.querySelector('input[name="gn-activation"]:checked').value;
  }

  async function refresh(speak) {
    const state = await api.latest("view", { ...params, gate: [...params.gate], up: [...params.up] });
    if (!state) return;
    api.fill(state);
    panel.dataset.activation = state.params.activation;
    button.disabled = !state.exact_available;
    for (const slider of sliders) {
      const [reading, key] = slider.name.split("-");
      slider.value = String(state.params[reading][KEYS.indexOf(key)]);
    }
    for (const [name, row] of Object.entries(state.rows)) {
      root.querySelector(`[data-row="${CSS.escape(name)}"]`).dataset.exact = row["data-exact"];
    }
    if (speak) api.announce(state.announce);
    return state;
  }

  for (const slider of sliders) {
    slider.addEventListener("input", () => {
      read();
      refresh(false);
    });
    slider.addEventListener("change", () => {
      read();
      refresh(true);
    });
  }
  for (const radio of root.querySelectorAll('input[name="gn-activation"]')) {
    radio.addEventListener("change", () => {
      read();
      refresh(true);
    });
  }
  button.addEventListener("click", async () => {
    read();
    const state = await api.latest("view", { ...params, gate: [...params.gate], up: [...params.up] });
    if (!state || !state.exact) return;
    params.gate = [...state.exact.gate];
    params.up = [...state.exact.up];
    refresh(true);
  });
}
