// @@NAME@@: the slider asks model.py's view for the new state and writes it in.
// Draws and listens only: every number comes from model.py.
export function mount(root, api) {
  const slider = root.querySelector('input[name="x"]');
  slider.addEventListener("input", async () => {
    // Keep every param the page gave (api.params), change only x.
    const state = await api.latest("view", { ...api.params, x: Number(slider.value) });
    if (!state) return; // overtaken by a newer move
    api.fill(state);
    api.announce(state.announce);
  });
}
