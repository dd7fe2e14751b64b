// rope-rotation: the selects, the two position sliders and the shift button ask model.py's view for the
// pair's arrows, its wave and the numbers; this writes them in. Every value comes from model.py.
export function mount(root, api) {
  const params = { ...api.params };
  const m = root.querySelector('input[name="m"]');
  const n = root.querySelector('input[name="n"]');

  async function refresh(speak) {
    params.pair = Number(root.querySelector('select[name="pair"]').value);
    params.base = Number(root.querySelector('select[name="base"]').value);
    params.m = Number(m.value);
    params.n = Number(n.value);
    const state = await api.latest("view", { ...params });
    if (!state) return;
    api.fill(state);
    for (const name of ["q", "k"]) {
      const line = root.querySelector(`[data-arrow="${name}"]`);
      line.setAttribute("x2", state[name].x);
      line.setAttribute("y2", state[name].y);
    }
    root.querySelector('[data-line="wave"]').setAttribute("points", state.chart.points);
    const dot = root.querySelector("[data-dot]");
    dot.setAttribute("cx", state.chart.dot.x);
    dot.setAttribute("cy", state.chart.dot.y);
    dot.style.visibility = state.chart.inside ? "visible" : "hidden";
    if (speak) api.announce(state.announce);
  }

  for (const slider of [m, n]) {
    slider.addEventListener("input", () => refresh(false));
    slider.addEventListener("change", () => refresh(true));
  }
  for (const select of root.querySelectorAll("select")) select.addEventListener("change", () => refresh(true));
  const shiftButton = root.querySelector(".rr-shift");
  const shift = Number(shiftButton.dataset.shift); // model.py's SHIFT
  shiftButton.addEventListener("click", () => {
    const room = Number(m.max) - Math.max(Number(m.value), Number(n.value));
    const step = room >= shift ? shift : -Math.min(shift, Math.min(Number(m.value), Number(n.value)));
    m.value = String(Number(m.value) + step);
    n.value = String(Number(n.value) + step);
    refresh(true);
  });
}
