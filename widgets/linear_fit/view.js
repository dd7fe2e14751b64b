// linear-fit: sliders a, b, c -> the model's view; the button asks the model for least squares.
// Draws and listens only: every number comes from model.py.
export function mount(root, api) {
  const params = { ...api.params };
  const sliders = [...root.querySelectorAll('input[type="range"]')];

  for (const slider of sliders) {
    slider.addEventListener("input", async () => {
      params[slider.name] = Number(slider.value);
      const state = await api.latest("view", { ...params });
      if (state) api.fill(state);
    });
  }

  root.querySelector('[data-action="least-squares"]').addEventListener("click", async () => {
    const state = await api.latest("least_squares", { ...params });
    if (!state) return;
    Object.assign(params, state.params);
    for (const slider of sliders) slider.value = params[slider.name];
    api.fill(state);
    api.announce(state.announce);
  });
}
