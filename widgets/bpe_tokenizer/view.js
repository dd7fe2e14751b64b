// bpe-tokenizer: the text box, the example buttons, the merge slider and the token chips (click, or
// arrows with one tab stop) ask model.py's view for the tokens, the summary and a token's detail.
// Draws and listens only: the encoding is model.py's.
export function mount(root, api) {
  const params = { ...api.params };
  const box = root.querySelector('textarea[name="text"]');
  const slider = root.querySelector('input[name="steps"]');
  const chips = root.querySelector(".bt-tokens");
  const detail = root.querySelector("[data-detail]");

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function chip(c, i, selected) {
    const b = el("button", c.fragment ? "bt-tok bt-frag" : "bt-tok");
    b.type = "button";
    b.dataset.token = String(i);
    b.setAttribute("aria-pressed", c.pressed);
    b.tabIndex = c.pressed === "true" || (i === 0 && selected === null) ? 0 : -1;
    const t = el("span", "bt-text");
    for (const s of c.segments) t.append(s.part ? el("span", "bt-part", s.text) : document.createTextNode(s.text));
    b.append(t, el("span", "cw-sr", c.sr), el("span", "bt-id", String(c.id)), el("span", "cw-sr", "，字节 "),
      el("span", "bt-hex", c.hex));
    return b;
  }

  function drawDetail(d) {
    if (!d) {
      detail.replaceChildren(el("p", "", "点一个 token：看它的字节、它在词表文件（tokenizer.json）里写成什么样，以及它是哪两个 token 合并来的。"));
      return;
    }
    const dl = el("dl");
    for (const [k, v, mono] of [["id", String(d.id)], ["字节", d.hex, true], ["词表文件里写作", d.spelling, true],
      ["怎么来的", d.made], ["单独解码", d.note]]) {
      dl.append(el("dt", "", k), el("dd", mono ? "bt-mono" : "", v));
    }
    detail.replaceChildren(dl);
  }

  function draw(state, focus) {
    api.fill(state);
    Object.assign(params, state.params);
    slider.max = String(state.slider.max);
    slider.value = String(state.slider.value);
    chips.replaceChildren(...state.chips.map((c, i) => chip(c, i, state.params.selected)));
    drawDetail(state.detail);
    if (focus) chips.querySelector('[aria-pressed="true"]')?.focus();
  }

  async function refresh(focus, speak) {
    const state = await api.latest("view", { ...params });
    if (!state) return;
    draw(state, focus);
    if (speak) api.announce(state.announce);
  }

  function setText(text) {
    // A lone surrogate (half an emoji) has no UTF-8 bytes; model.py replaces it, this keeps JSON clean too.
    params.text = typeof text.toWellFormed === "function" ? text.toWellFormed() : text;
    params.steps = null;
    params.selected = null;
  }

  box.addEventListener("input", () => {
    setText(box.value);
    refresh(false, false);
  });
  box.addEventListener("change", () => refresh(false, true));
  for (const b of root.querySelectorAll("button[data-example]")) {
    b.addEventListener("click", () => {
      box.value = b.dataset.example;
      setText(box.value);
      refresh(false, true);
    });
  }
  slider.addEventListener("input", () => {
    params.steps = Number(slider.value);
    params.selected = null;
    refresh(false, false);
  });
  slider.addEventListener("change", () => refresh(false, true));
  chips.addEventListener("click", (e) => {
    const b = e.target.closest("button[data-token]");
    if (!b) return;
    params.selected = Number(b.dataset.token);
    refresh(true, false);
  });
  chips.addEventListener("keydown", (e) => {
    const n = chips.querySelectorAll("button[data-token]").length;
    if (!n) return;
    const at = params.selected === null || params.selected === undefined ? -1 : params.selected;
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: n - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    params.selected = Math.max(0, Math.min(n - 1, to));
    refresh(true, false);
  });
}
