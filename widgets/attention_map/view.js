// attention-map: the passage, layer and head selects and the token buttons (click, or arrows with
// one tab stop) ask model.py's view for the colours, the detail and the head's measures.
export function mount(root, api) {
  const params = { ...api.params };
  const passage = root.querySelector(".am-passage");
  const tbody = root.querySelector(".am-table tbody");

  function draw(state, focus) {
    api.fill(state);
    Object.assign(params, state.params);
    passage.replaceChildren(
      ...state.tokens.map((t, i) => {
        const b = document.createElement("button");
        b.type = "button";
        b.className = t.later ? "am-tok am-later" : "am-tok";
        b.dataset.token = String(i);
        b.setAttribute("aria-pressed", t.pressed);
        b.setAttribute("aria-label", t.label);
        b.tabIndex = t.pressed === "true" ? 0 : -1;
        if (t.color !== "transparent") b.style.backgroundColor = t.color;
        b.textContent = t.text;
        return b;
      }),
    );
    tbody.replaceChildren(
      ...state.measures.map((m) => {
        const tr = document.createElement("tr");
        const th = document.createElement("th");
        th.scope = "row";
        th.textContent = m.label;
        const a = document.createElement("td");
        a.textContent = m.head;
        const b = document.createElement("td");
        b.textContent = m.blind;
        tr.append(th, a, b);
        return tr;
      }),
    );
    for (const name of ["passage", "layer", "head"]) {
      root.querySelector(`select[name="${name}"]`).value = String(state.params[name]);
    }
    if (focus) passage.querySelector('[aria-pressed="true"]')?.focus();
  }

  async function refresh(focus) {
    const state = await api.latest("view", { ...params });
    if (!state) return;
    draw(state, focus);
    api.announce(state.announce);
  }

  for (const name of ["passage", "layer", "head"]) {
    root.querySelector(`select[name="${name}"]`).addEventListener("change", (e) => {
      params[name] = Number(e.target.value);
      if (name === "passage") params.query = null;
      refresh(false);
    });
  }
  passage.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-token]");
    if (!b) return;
    params.query = Number(b.dataset.token);
    refresh(true);
  });
  passage.addEventListener("keydown", (e) => {
    const n = passage.querySelectorAll("button[data-token]").length;
    const at = params.query;
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: n - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    params.query = Math.max(0, Math.min(n - 1, to));
    refresh(true);
  });
}
