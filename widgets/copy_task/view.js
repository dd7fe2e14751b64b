// copy-task: the model select and the step slider ask model.py's view for the heads' maps and the words;
// this redraws the maps and moves the chart's marker. Every value comes from model.py.
const SVG = "http://www.w3.org/2000/svg";

export function mount(root, api) {
  const params = { ...api.params };
  const box = root.querySelector(".ct-heads");
  const slider = root.querySelector('input[name="snapshot"]');
  const now = root.querySelector('[data-line="now"]');

  function svgEl(tag, attrs) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    return e;
  }

  function draw(state) {
    api.fill(state);
    box.replaceChildren(
      ...state.heads.map((h) => {
        const fig = document.createElement("figure");
        fig.className = "ct-head";
        const svg = svgEl("svg", { viewBox: `0 0 ${h.size} ${h.size}`, role: "img", "aria-label": `${h.label}：${h.said}` });
        svg.append(svgEl("rect", { class: "ct-frame", x: 0, y: 0, width: h.size, height: h.size }));
        for (const c of h.cells) svg.append(svgEl("rect", { x: c.x, y: c.y, width: 9, height: 9, fill: c.fill }));
        const cap = document.createElement("figcaption");
        const strong = document.createElement("strong");
        strong.textContent = h.label;
        cap.append(strong, `：${h.said}`);
        fig.append(svg, cap);
        return fig;
      }),
    );
    slider.max = String(state.slider.max);
    slider.value = String(state.params.snapshot);
    slider.setAttribute("aria-valuetext", state.out.step);
    now.setAttribute("x1", state.chart.x);
    now.setAttribute("x2", state.chart.x);
  }

  async function refresh(speak) {
    params.arm = root.querySelector('select[name="arm"]').value;
    params.snapshot = Number(slider.value);
    const state = await api.latest("view", { ...params });
    if (!state) return;
    Object.assign(params, state.params);
    draw(state);
    if (speak) api.announce(state.announce);
  }

  root.querySelector('select[name="arm"]').addEventListener("change", () => {
    slider.value = slider.max; // each model opens at its last kept step
    refresh(true);
  });
  slider.addEventListener("input", () => refresh(false));
  slider.addEventListener("change", () => refresh(true));
}
