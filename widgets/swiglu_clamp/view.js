// swiglu-clamp: the x and y sliders pick stops the model listed (data-stops), the checkbox ties y to x,
// the radios pick a clamp; model.py's view answers with the numbers and the chart's points, which this
// writes in. Draws and listens only.
export function mount(root, api) {
  const params = { ...api.params };
  const x = root.querySelector('input[name="x"]');
  const y = root.querySelector('input[name="y"]');
  const tied = root.querySelector('input[name="tied"]');
  let stops = x.dataset.stops.split(" ").map(Number);

  function draw(state) {
    api.fill(state);
    params.x = state.params.x;
    params.y = state.params.y;
    params.tied = state.params.tied;
    params.clamp = state.params.clamp;
    stops = state.stops; // the clamps' limits and the current values are stops too
    for (const [input, name, index] of [[x, "x", state.x_index], [y, "y", state.y_index]]) {
      input.max = String(stops.length - 1);
      input.value = String(index);
      input.setAttribute("aria-valuetext", `${name} = ${state.out[name]}`);
    }
    y.disabled = state.params.tied;
    x.dataset.stops = stops.join(" ");
    root.querySelector('[data-line="plain"]').setAttribute("points", state.chart.plain);
    root.querySelector('[data-line="clamped"]').setAttribute("points", state.chart.clamped);
    const m = state.marker;
    const dots = [[root.querySelector('[data-dot="plain"]'), m.y, m.show], [root.querySelector('[data-dot="clamped"]'), m.cy, m.show && m.clamped]];
    for (const [dot, cy, show] of dots) {
      dot.setAttribute("cx", m.x);
      dot.setAttribute("cy", cy);
      dot.setAttribute("visibility", show ? "visible" : "hidden");
    }
  }

  async function refresh(change, speak) {
    const state = await api.latest("view", { ...params, ...change });
    if (!state) return;
    draw(state);
    if (speak) api.announce(state.announce);
  }

  for (const [input, name] of [[x, "x"], [y, "y"]]) {
    input.addEventListener("input", () => refresh({ [name]: stops[Number(input.value)] }, false));
    input.addEventListener("change", () => refresh({ [name]: stops[Number(input.value)] }, true));
  }
  tied.addEventListener("change", () => refresh({ tied: tied.checked }, true));
  for (const radio of root.querySelectorAll('input[name="sc-clamp"]')) {
    radio.addEventListener("change", () => refresh({ clamp: radio.value }, true));
  }
}
