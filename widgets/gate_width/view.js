// gate-width: the d slider picks one of the stops the model listed (data-stops) and asks model.py's
// view for that d's widths; this writes them in and sizes the bars. Draws and listens only.
export function mount(root, api) {
  const params = { ...api.params };
  const slider = root.querySelector('input[name="d"]');
  const stops = slider.dataset.stops.split(" ").map(Number);

  async function refresh(speak) {
    const state = await api.latest("view", { ...params, d: stops[Number(slider.value)] });
    if (!state) return;
    api.fill(state);
    params.d = state.params.d;
    slider.setAttribute("aria-valuetext", state.valuetext);
    for (const bar of state.bars) {
      root.querySelector(`.gw-bar-${bar.key}`).style.width = `${bar.share}%`;
    }
    if (speak) api.announce(state.announce);
  }

  slider.addEventListener("input", () => refresh(false));
  slider.addEventListener("change", () => refresh(true));
}
