// kv-generate: 生成并计时 starts three runs in model.py and drives each one call at a time,
// timing every call with this page's clock (performance.now()); model.py compares the runs and
// says the times. Draws and listens only.
const METHODS = ["full", "cached", "wrong"];

export function mount(root, api) {
  const params = { ...api.params };
  const button = root.querySelector(".kvg-go");
  const select = root.querySelector('select[name="n"]');
  const say = (text) => api.fill({ out: { status: text } });

  select.addEventListener("change", async () => {
    params.n = Number(select.value);
    const state = await api.latest("view", { ...params });
    if (state) api.fill(state);
  });

  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const started = await api.call("start", { ...params, n: Number(select.value) });
      if (!started) return;
      const rows = {};
      for (const m of METHODS) rows[m] = { text: "—", time: "—", verdict: m === "full" ? "（这就是比较的基准）" : "—" };
      api.fill({ rows, out: { speedup: "" } });
      const ms = {};
      for (const m of METHODS) {
        let spent = 0;
        for (;;) {
          const t0 = performance.now();
          const r = await api.call("run", { method: m });
          spent += performance.now() - t0;
          if (!r) return;
          api.fill({ rows: { [m]: { text: r.text } } });
          say(`${started.methods.find((x) => x.key === m).name}：${r.made} / ${r.n} 个 token`);
          if (r.done) break;
        }
        ms[m] = spent;
      }
      const c = await api.call("compare", {});
      const rep = await api.call("report", { ms, n: started.n });
      if (!c || !rep) return;
      const out = {};
      for (const m of METHODS) {
        out[m] = { text: c.texts[m], time: rep.out[`time-${m}`] };
        if (m !== "full") out[m].verdict = c.verdicts[m];
      }
      api.fill({ rows: out, out: { speedup: rep.out.speedup, status: "完成。再按一次会重新计时（每次的时间会有起伏）。" } });
      api.announce(`${rep.announce} ${c.verdicts.cached}`);
    } finally {
      button.disabled = false;
    }
  });
}
