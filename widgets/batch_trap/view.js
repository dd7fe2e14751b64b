// batch-trap: the batch radios ask model.py's view for the new batch; this writes its tokens,
// statistics and A's outputs (api.fill; rows outside the batch get data-in="false"). Draws and listens only.
export function mount(root, api) {
  const params = { ...api.params };
  const panel = root.querySelector(".bt");

  for (const input of root.querySelectorAll('input[name="bt-batch"]')) {
    input.addEventListener("change", async () => {
      params.batch = root.querySelector('input[name="bt-batch"]:checked').value;
      const state = await api.latest("view", { ...params });
      if (!state) return;
      api.fill(state);
      panel.dataset.batch = state.params.batch;
      api.announce(state.announce);
    });
  }
}
