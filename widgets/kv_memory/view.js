// kv-memory: the preset, the four numbers and the two selects ask model.py's view for the bill;
// this writes it in and sizes the bar. Draws and listens only.
export function mount(root, api) {
  const params = { ...api.params };
  const fields = ["heads", "kv_heads", "head_dim", "layers", "context", "bits"];
  const bar = root.querySelector(".kvm-bar");
  const preset = root.querySelector('select[name="preset"]');

  function draw(state) {
    api.fill(state);
    Object.assign(params, state.params);
    preset.value = state.preset;
    for (const f of fields) {
      const el = root.querySelector(`[name="${f}"]`);
      if (String(el.value) !== String(state.params[f])) el.value = String(state.params[f]);
    }
    bar.style.width = `${state.bar}%`;
  }

  async function refresh() {
    const state = await api.latest("view", { ...params });
    if (!state) return;
    draw(state);
    api.announce(state.announce);
  }

  preset.addEventListener("change", () => {
    if (preset.value === "custom") return;
    params.preset = preset.value;
    for (const f of fields) params[f] = null; // take the preset's own fields
    refresh();
  });
  for (const f of fields) {
    const el = root.querySelector(`[name="${f}"]`);
    el.addEventListener("change", () => {
      const v = Math.round(Number(el.value));
      if (!Number.isFinite(v) || el.value === "") return;
      for (const g of fields) params[g] = Number(root.querySelector(`[name="${g}"]`).value) || params[g];
      params[f] = v;
      refresh();
    });
  }
}
