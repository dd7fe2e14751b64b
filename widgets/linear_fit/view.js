// linear-fit: sliders a, b, c -> the model's view; the button asks the model for least squares.
// Draws and listens only: every number comes from model.py.
export function mount(root, api) {
  const params = { ...api.params };
  const sliders = [...root.querySelectorAll('input[type="range"]')];
  let busy = false;
  let again = false;

  // One call in flight at a time; a drag that outruns Python collapses to its latest value.
  async function refresh() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    const state = await api.call("view", { ...params });
    busy = false;
    if (state) api.fill(state);
    if (again) {
      again = false;
      refresh();
    }
  }

  for (const slider of sliders) {
    slider.addEventListener("input", () => {
      params[slider.name] = Number(slider.value);
      refresh();
    });
  }

  root.querySelector('[data-action="least-squares"]').addEventListener("click", async () => {
    const state = await api.call("least_squares", { ...params });
    if (!state) return;
    Object.assign(params, state.params);
    for (const slider of sliders) slider.value = params[slider.name];
    api.fill(state);
    api.announce(state.announce);
  });
}
