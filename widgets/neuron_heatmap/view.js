// neuron-heatmap: the neuron picker -> the model's view; hovering, clicking or arrowing through the
// passage shows a token's detail. Draws and listens only: every colour, number and sentence comes
// from model.py (the token details too, one per token, with each view).
export function mount(root, api) {
  const params = { ...api.params };
  const panel = root.querySelector(".nh");
  const select = root.querySelector('select[name="neuron"]');
  const passage = root.querySelector(".nh-passage");
  const tokens = [...passage.querySelectorAll("[data-token]")];
  const detail = root.querySelector('[data-out="token-detail"]');
  const bar = root.querySelector(".nh-legend-bar");
  const list = root.querySelector('[data-list="contexts"]');
  const hint = detail.textContent;
  let details = [];
  let chosen = null; // the token clicked or reached with the keyboard; hover shows others for a moment

  // One tab stop for the whole passage (roving tabindex); arrows move between tokens.
  tokens.forEach((el, i) => el.setAttribute("tabindex", i === 0 ? "0" : "-1"));

  function show(el) {
    detail.textContent = el ? details[Number(el.dataset.token)] || hint : hint;
  }

  function choose(el, speak) {
    if (chosen) chosen.removeAttribute("data-chosen");
    chosen = el;
    el.dataset.chosen = "true";
    for (const t of tokens) t.setAttribute("tabindex", t === el ? "0" : "-1");
    show(el);
    if (speak) api.announce(detail.textContent);
  }

  function drawContexts(contexts) {
    list.replaceChildren(
      ...contexts.map((c) => {
        const item = document.createElement("li");
        const act = document.createElement("span");
        act.className = "nh-ctx-act";
        act.textContent = c.activation;
        const text = document.createElement("span");
        text.className = "nh-ctx-text";
        const peak = document.createElement("mark");
        peak.className = c.fragment ? "nh-ctx-peak nh-ctx-frag" : "nh-ctx-peak";
        peak.style.backgroundColor = c.color;
        peak.textContent = c.chars; // a fragment shows the character it is part of
        text.append(c.before, peak, c.after);
        if (c.note) {
          peak.title = c.note;
          const note = document.createElement("span");
          note.className = "nh-ctx-note";
          note.textContent = `（${c.note}）`;
          text.append(note);
        }
        item.append(act, text);
        return item;
      }),
    );
  }

  function draw(state) {
    api.fill(state);
    details = state.details;
    tokens.forEach((el, i) => {
      el.style.backgroundColor = state.colors[i];
    });
    bar.style.background = state.legend.gradient;
    drawContexts(state.contexts);
    panel.dataset.neuron = String(state.neuron);
    panel.dataset.kind = state.kind;
    select.value = String(state.neuron);
    show(chosen);
  }

  async function refresh(speak) {
    const state = await api.latest("view", { ...params });
    if (!state) return;
    draw(state);
    if (speak) api.announce(state.announce);
  }

  select.addEventListener("change", () => {
    params.neuron = Number(select.value);
    refresh(true);
  });

  passage.addEventListener("pointerover", (event) => {
    const el = event.target.closest("[data-token]");
    if (el) show(el);
  });
  passage.addEventListener("pointerleave", () => show(chosen));
  passage.addEventListener("click", (event) => {
    const el = event.target.closest("[data-token]");
    if (el && el !== chosen) choose(el, true);
  });
  passage.addEventListener("focusin", (event) => {
    const el = event.target.closest("[data-token]");
    if (el && el !== chosen) choose(el, true);
  });
  passage.addEventListener("keydown", (event) => {
    const at = chosen ? tokens.indexOf(chosen) : 0;
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tokens.length - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    const el = tokens[Math.max(0, Math.min(tokens.length - 1, to))];
    choose(el, true);
    el.focus();
  });

  // The first state's token details (the colours are already in the page).
  return refresh(false);
}
