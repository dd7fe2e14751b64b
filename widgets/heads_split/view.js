// heads-split: the heads select and the sharpness slider ask model.py's view for each head's weights;
// this rebuilds the heads' tables from what it returns. Every value comes from model.py.
export function mount(root, api) {
  const params = { ...api.params };
  const box = root.querySelector(".hs-heads");
  const slider = root.querySelector('input[name="sharpness"]');

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function draw(state) {
    api.fill(state);
    box.replaceChildren(
      ...state.heads.map((h) => {
        const div = el("div", "hs-head");
        const table = el("table");
        table.append(el("caption", "cw-sr", `${h.label} 的权重`));
        const tbody = el("tbody");
        for (const b of h.bars) {
          const tr = el("tr");
          const th = el("th", "", b.token);
          th.scope = "row";
          const td = el("td", "hs-w");
          const bar = el("span", "hs-bar");
          bar.style.width = `${b.width}%`;
          td.append(bar, el("span", "hs-num", b.weight));
          tr.append(th, td);
          tbody.append(tr);
        }
        table.append(tbody);
        div.append(el("p", "hs-label", `${h.label}：${h.said}`), table);
        return div;
      }),
    );
  }

  async function refresh(speak) {
    params.heads = Number(root.querySelector('select[name="heads"]').value);
    params.sharpness = Number(slider.value);
    const state = await api.latest("view", { ...params });
    if (!state) return;
    draw(state);
    if (speak) api.announce(state.announce);
  }

  root.querySelector('select[name="heads"]').addEventListener("change", () => refresh(true));
  slider.addEventListener("input", () => refresh(false));
  slider.addEventListener("change", () => refresh(true));
}
