// seed-curves: every chart was drawn at build time; the switch shows the one it names.
export const python = false;

export function mount(root) {
  const radios = [...root.querySelectorAll('input[name="sc-loss"]')];
  for (const r of radios) {
    r.addEventListener("change", () => {
      for (const fig of root.querySelectorAll("[data-chart]")) fig.hidden = fig.dataset.chart !== r.value;
    });
  }
}
