// ablation: click (or Enter on) a row to see its runs; the model writes the detail line.
export function mount(root, api) {
  const data = api.params.data;
  for (const row of root.querySelectorAll("button[data-row]")) {
    row.addEventListener("click", async () => {
      const state = await api.call("select", { ...api.params, data, selected: row.dataset.row });
      if (!state) return;
      api.fill(state);
      api.announce(state.out.detail);
    });
  }
}
