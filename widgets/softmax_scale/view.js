// softmax-scale: the d_k select, the scaling box and the redraw button ask model.py's view for
// one draw's bars and the means; this writes them in.
export function mount(root, api) {
  const params = { ...api.params };
  const list = root.querySelector(".ss-bars");

  function span(cls, text) {
    const el = document.createElement("span");
    el.className = cls;
    if (text !== undefined) el.textContent = text;
    return el;
  }

  async function refresh() {
    const state = await api.latest("view", { ...params });
    if (!state) return;
    Object.assign(params, state.params);
    api.fill(state);
    list.replaceChildren(
      ...state.bars.map((b) => {
        const li = document.createElement("li");
        const track = span("ss-track");
        const bar = span("ss-bar");
        bar.style.width = `${b.width}%`;
        track.append(bar);
        li.append(span("ss-label", b.label), span("ss-score", `分数 ${b.score}`), track, span("ss-w", b.weight));
        return li;
      }),
    );
    api.announce(state.announce);
  }

  root.querySelector('select[name="d_k"]').addEventListener("change", (e) => {
    params.d_k = Number(e.target.value);
    refresh();
  });
  root.querySelector('input[name="scaled"]').addEventListener("change", (e) => {
    params.scaled = e.target.checked;
    refresh();
  });
  root.querySelector(".ss-redraw").addEventListener("click", () => {
    params.seed = (params.seed % 1000) + 1;
    refresh();
  });
}
