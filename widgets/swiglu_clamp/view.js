// swiglu-clamp: the g and u sliders pick stops the model listed (data-stops), the checkbox ties u to g,
// the radios pick a clamp; model.py's view answers with the numbers and the chart's points, which this
// writes in. Draws and listens only.
export function mount(root, api) {
  const params = { ...api.params };
  const g = root.querySelector('input[name="g"]');
  const u = root.querySelector('input[name="u"]');
  const tied = root.querySelector('input[name="tied"]');
  let stops = g.dataset.stops.split(" ").map(Number);

  function draw(state) {
    api.fill(state);
    params.g = state.params.g;
    params.u = state.params.u;
    params.tied = state.params.tied;
    params.clamp = state.params.clamp;
    stops = state.stops; // the clamps' limits and the current values are stops too
    for (const [input, name, index] of [[g, "g", state.g_index], [u, "u", state.u_index]]) {
      input.max = String(stops.length - 1);
      input.value = String(index);
      input.setAttribute("aria-valuetext", `${name} = ${state.out[name]}`);
    }
    u.disabled = state.params.tied;
    g.dataset.stops = stops.join(" ");
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

  for (const [input, name] of [[g, "g"], [u, "u"]]) {
    input.addEventListener("input", () => refresh({ [name]: stops[Number(input.value)] }, false));
    input.addEventListener("change", () => refresh({ [name]: stops[Number(input.value)] }, true));
  }
  tied.addEventListener("change", () => refresh({ tied: tied.checked }, true));
  for (const radio of root.querySelectorAll('input[name="sc-clamp"]')) {
    radio.addEventListener("change", () => refresh({ clamp: radio.value }, true));
  }
}
