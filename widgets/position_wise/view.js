// position-wise: the buttons ask model.py for a new order (or the original one);
// this puts the table rows in that order and writes the model's numbers. Draws only.
export function mount(root, api) {
  let params = { ...api.params };
  const body = root.querySelector("[data-row]").parentElement;

  async function show(fn) {
    const state = await api.call(fn, params);
    if (!state) return;
    params = state.params;
    for (const token of state.order) body.appendChild(body.querySelector(`[data-row="${CSS.escape(token)}"]`));
    api.fill(state);
    api.announce(state.announce);
  }

  root.querySelector('[data-action="shuffle"]').addEventListener("click", () => show("shuffle"));
  root.querySelector('[data-action="reset"]').addEventListener("click", () => show("reset"));
}
