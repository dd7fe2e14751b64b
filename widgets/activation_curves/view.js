// activation-curves: the x slider, the jump buttons and the checkboxes ask model.py's view for the
// new state; this moves the markers, shows or hides the curves and writes the numbers. Draws only.
export function mount(root, api) {
  const params = { ...api.params, curves: [...api.params.curves] };
  const slider = root.querySelector('input[name="x"]');
  const boxes = [...root.querySelectorAll('input[name="curve"]')];

  function draw(state) {
    api.fill(state);
    for (const panel of state.panels) {
      const figure = root.querySelector(`[data-panel="${panel.key}"]`);
      for (const line of panel.lines) figure.querySelector(`[data-line="${line.key}"]`).dataset.shown = String(line.shown);
      for (const m of panel.markers) {
        const dot = figure.querySelector(`[data-marker="${m.key}"]`);
        dot.setAttribute("cx", m.cx);
        dot.setAttribute("cy", m.cy);
        dot.dataset.shown = String(m.shown);
      }
      for (const m of panel.minima) {  // a minimum's dot and its label (drawn above the markers)
        for (const part of figure.querySelectorAll(`[data-minimum="${m.key}"]`)) part.dataset.shown = String(m.shown);
      }
    }
  }

  async function refresh(speak) {
    const state = await api.latest("view", { ...params, curves: [...params.curves] });
    if (!state) return;
    draw(state);
    if (speak) api.announce(state.announce);
  }

  slider.addEventListener("input", () => {
    params.x = Number(slider.value);
    refresh(false);
  });
  slider.addEventListener("change", () => {
    params.x = Number(slider.value);
    refresh(true);
  });
  for (const box of boxes) {
    box.addEventListener("change", () => {
      params.curves = boxes.filter((b) => b.checked).map((b) => b.value);
      refresh(true);
    });
  }
  for (const button of root.querySelectorAll("button[data-jump]")) {
    button.addEventListener("click", () => {
      params.x = Number(button.dataset.x); // the model's minimum, between two slider steps
      slider.value = String(params.x);
      refresh(true);
    });
  }
}
