// residual-paths: weight sliders and path buttons ask model.py's view; this writes the numbers
// and marks which layers the chosen path passes through. Draws and listens only.
export function mount(root, api) {
  const params = { ...api.params, w: [...api.params.w] };
  const panel = root.querySelector(".rp");

  async function refresh(speak) {
    const state = await api.latest("view", { ...params, w: [...params.w] });
    if (!state) return;
    api.fill(state);
    panel.dataset.through = state.through.join(",");
    for (const button of root.querySelectorAll("button[data-path]")) {
      button.setAttribute("aria-pressed", String(button.dataset.path === state.params.path));
    }
    if (speak) api.announce(`${state.out.path}。${state.announce}`);
  }

  root.querySelectorAll('input[type="range"]').forEach((slider, k) => {
    slider.addEventListener("input", () => {
      params.w[k] = Number(slider.value);
      refresh(false);
    });
    slider.addEventListener("change", () => refresh(true));
  });
  for (const button of root.querySelectorAll("button[data-path]")) {
    button.addEventListener("click", () => {
      params.path = button.dataset.path;
      refresh(true);
    });
  }
}
