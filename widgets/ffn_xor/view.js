// ffn-xor: activation radios, neuron 2's bias slider, review rows and "看它怎么算" buttons
// -> the model's view. Draws and listens only: every number and sentence comes from model.py.
export function mount(root, api) {
  const params = { ...api.params };
  const panel = root.querySelector(".ffn");
  const slider = root.querySelector('input[name="b2"]');

  function draw(state) {
    api.fill(state);
    panel.dataset.focus = state.focus;
    slider.setAttribute("aria-valuetext", state.out.b2);
    for (const row of root.querySelectorAll("[data-row]")) {
      row.querySelector("button.ffn-row").setAttribute("aria-pressed", row.dataset.selected);
    }
    for (const button of root.querySelectorAll('[data-action="explain"]')) {
      button.setAttribute("aria-pressed", String(button.dataset.neuron === state.focus));
    }
  }

  // `speak` names which of the model's sentences the live region reads after this call.
  async function refresh(speak) {
    const state = await api.latest("view", { ...params });
    if (!state) return;
    draw(state);
    api.announce(state[speak]);
  }

  for (const radio of root.querySelectorAll('input[name="activation"]')) {
    radio.addEventListener("change", () => {
      if (!radio.checked) return;
      params.activation = radio.value;
      refresh("announce");
    });
  }

  slider.addEventListener("input", () => {
    params.b2 = Number(slider.value);
    refresh("announce");
  });

  // A whole row is a click target; its first cell holds a real button for the keyboard.
  for (const row of root.querySelectorAll("[data-row]")) {
    row.addEventListener("click", () => {
      params.row = row.dataset.row;
      refresh("announce_steps");
    });
  }

  for (const button of root.querySelectorAll('[data-action="explain"]')) {
    button.addEventListener("click", () => {
      params.neuron = Number(button.dataset.neuron);
      refresh("announce_steps");
    });
  }
}
