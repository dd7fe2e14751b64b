// norm-token: the four number inputs, the preset buttons, the w slider and the eps select ask
// model.py's view for the new steps; this writes them in. Draws and listens only.
export function mount(root, api) {
  const params = { ...api.params, x: [...api.params.x] };
  const panel = root.querySelector(".nt");
  const inputs = [...root.querySelectorAll('.nt-x input[type="number"]')];
  const slider = root.querySelector('input[name="w"]');
  const select = root.querySelector('select[name="eps"]');

  function readInputs() {
    const x = inputs.map((input) => (input.value.trim() === "" ? NaN : Number(input.value)));
    // Half-typed ("-", "") or outside the inputs' min..max: wait for the next key.
    return x.every(Number.isFinite) && inputs.every((input) => input.checkValidity()) ? x : null;
  }

  async function refresh(speak) {
    const state = await api.latest("view", { ...params, x: [...params.x] });
    if (!state) return;
    api.fill(state);
    params.x = [...state.params.x];
    params.preset = null; // a preset sets x once; from then on x is what the inputs hold
    inputs.forEach((input, k) => {
      if (Number(input.value) !== state.params.x[k] || input.value.trim() === "") input.value = String(state.params.x[k]);
    });
    panel.dataset.preset = state.current;
    for (const button of root.querySelectorAll("button[data-preset]")) {
      button.setAttribute("aria-pressed", String(button.dataset.preset === state.current));
    }
    if (speak) api.announce(state.announce);
  }

  for (const input of inputs) {
    const update = (speak) => {
      const x = readInputs();
      if (!x) return;
      params.x = x;
      params.preset = null;
      refresh(speak);
    };
    input.addEventListener("input", () => update(false));
    input.addEventListener("change", () => update(true));
  }
  for (const button of root.querySelectorAll("button[data-preset]")) {
    button.addEventListener("click", () => {
      params.preset = button.dataset.preset;
      refresh(true);
    });
  }
  slider.addEventListener("input", () => {
    params.w = Number(slider.value);
    refresh(false);
  });
  slider.addEventListener("change", () => {
    params.w = Number(slider.value);
    refresh(true);
  });
  select.addEventListener("change", () => {
    params.eps = Number(select.value);
    refresh(true);
  });
}
