// attention-toy: the sentence select, the mode radios, the mask box and the query buttons ask
// model.py's view for the table; this rebuilds the rows and the buttons from what it returns.
export function mount(root, api) {
  const params = { ...api.params };
  const tbody = root.querySelector(".at-table tbody");
  const list = root.querySelector(".at-token-list");
  const mask = root.querySelector('input[name="mask"]');

  function cell(tag, text, cls) {
    const el = document.createElement(tag);
    if (cls) el.className = cls;
    el.textContent = text;
    return el;
  }

  function draw(state) {
    api.fill(state);
    tbody.replaceChildren(
      ...state.table.map((r) => {
        const tr = document.createElement("tr");
        if (r.query) tr.className = "at-self";
        if (r.hidden) tr.className = "at-hidden";
        const th = cell("th", r.token);
        th.scope = "row";
        const w = cell("td", "", "at-w");
        const bar = cell("span", "", "at-bar");
        bar.style.width = `${r.width}%`;
        w.append(bar, cell("span", r.weight, "at-num"));
        tr.append(th, cell("td", r.distance), cell("td", r.key), cell("td", r.score), w);
        return tr;
      }),
    );
    const focused = document.activeElement && list.contains(document.activeElement);
    list.replaceChildren(
      ...state.tokens.map((t) => {
        const b = cell("button", t.token, "at-token");
        b.type = "button";
        b.dataset.token = t.token;
        b.setAttribute("aria-pressed", t.pressed);
        return b;
      }),
    );
    if (focused) list.querySelector('[aria-pressed="true"]')?.focus();
    mask.disabled = !state.qk;
    mask.checked = state.mask_on;
  }

  async function refresh() {
    const state = await api.latest("view", { ...params });
    if (!state) return;
    Object.assign(params, state.params);
    draw(state);
    api.announce(state.announce);
  }

  root.querySelector('select[name="sentence"]').addEventListener("change", (e) => {
    params.sentence = e.target.value;
    refresh();
  });
  for (const radio of root.querySelectorAll('input[name="mode"]')) {
    radio.addEventListener("change", () => {
      params.mode = radio.value;
      refresh();
    });
  }
  mask.addEventListener("change", () => {
    params.mask = mask.checked;
    refresh();
  });
  list.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-token]");
    if (!b) return;
    params.query = b.dataset.token;
    refresh();
  });
  mask.disabled = params.mode !== "qk";
}
