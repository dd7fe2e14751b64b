// token-identity: the layer slider, the attention and seed radios ask model.py's view for the
// new state; this writes the numbers and the readout (api.fill, rows included). Draws and
// listens only: every value comes from model.py.
export function mount(root, api) {
  const params = { ...api.params };
  const slider = root.querySelector('input[name="layers"]');

  function read() {
    params.layers = Number(slider.value);
    params.attention = root.querySelector('input[name="ti-attention"]:checked').value;
    params.seed = Number(root.querySelector('input[name="ti-seed"]:checked').value);
  }

  async function refresh(speak) {
    read();
    const state = await api.latest("view", { ...params });
    if (!state) return; // overtaken by a newer move
    api.fill(state);
    if (speak) api.announce(state.announce);
  }

  slider.addEventListener("input", () => refresh(false));
  slider.addEventListener("change", () => refresh(true));
  for (const input of root.querySelectorAll('input[type="radio"]')) {
    input.addEventListener("change", () => refresh(true));
  }
}
