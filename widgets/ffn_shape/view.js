// ffn-shape: both scales are pre-rendered and the radios switch them in CSS (:has),
// so the switch works before Python boots and without JavaScript. Once live, this
// only tells screen readers what the newly shown figure contains (text from model.py).
// It never calls its model, so the Python runtime (megabytes to download) is not started for it.
export const python = false;

export function mount(root, api) {
  for (const radio of root.querySelectorAll('input[name="scale"]')) {
    radio.addEventListener("change", () => {
      const figure = root.querySelector(`.fshape-fig[data-scale="${radio.value}"]`);
      if (radio.checked && figure) api.announce(figure.dataset.summary);
    });
  }
}
