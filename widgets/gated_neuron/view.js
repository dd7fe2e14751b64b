// gated-neuron: the task and activation radios and the six sliders ask model.py's view for the new fit;
// 精确解 sets the sliders to the model's exact solution; the task shows its own table. Draws and listens only.
export function mount(root, api) {
  const params = { ...api.params, gate: [...api.params.gate], up: [...api.params.up] };
  const panel = root.querySelector(".gn");
  const button = root.querySelector('[data-action="exact"]');
  const sliders = [...root.querySelectorAll('input[type="range"]')];
  const tables = [...root.querySelectorAll("[data-table]")];
  const KEYS = ["a", "b", "c"];

  function read() {
    for (const slider of sliders) {
      const [reading, key] = slider.name.split("-");
      params[reading][KEYS.indexOf(key)] = Number(slider.value);
    }
    params.activation = root.querySelector('input[name="gn-activation"]:checked').value;
    params.task = root.querySelector('input[name="gn-task"]:checked').value;
  }

  function copy() {
    return { ...params, gate: [...params.gate], up: [...params.up] };
  }

  async function refresh(speak) {
    const state = await api.latest("view", copy());
    if (!state) return;
    for (const table of tables) table.hidden = table.dataset.table !== state.params.task;
    api.fill(state);
    panel.dataset.activation = state.params.activation;
    panel.dataset.task = state.params.task;
    button.disabled = !state.exact_available;
    for (const slider of sliders) {
      const [reading, key] = slider.name.split("-");
      slider.value = String(state.params[reading][KEYS.indexOf(key)]);
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
  for (const radio of root.querySelectorAll('input[name="gn-activation"], input[name="gn-task"]')) {
    radio.addEventListener("change", () => {
      read();
      refresh(true);
    });
  }
  button.addEventListener("click", async () => {
    read();
    const state = await api.latest("view", copy());
    if (!state || !state.exact) return;
    params.gate = [...state.exact.gate];
    params.up = [...state.exact.up];
    refresh(true);
  });
}
