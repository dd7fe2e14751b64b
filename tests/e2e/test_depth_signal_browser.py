"""depth-signal in Chromium, on its lesson: the depth
slider redraws the curves, the residual toggle moves the gradient at layer 1 by orders of magnitude."""
import pytest

from support import open_live_widget

from course.widgets import load_model

pytestmark = pytest.mark.e2e
W = '[data-widget="depth-signal"]'
model = load_model("depth-signal")


def out(page, key):
    return page.locator(f'{W} [data-out="{key}"]').first.inner_text()


def test_depth_and_residual_change_what_the_model_says(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + "c4/l2-residual/", "depth-signal")
    first = model.view(model.PARAMS)
    assert out(page, "grad-first") == first["out"]["grad-first"]

    page.focus(f'{W} input[name="depth"]')
    page.keyboard.press("End")  # 64 layers, 128 writes
    want = model.view({**model.PARAMS, "depth": 64})
    page.wait_for_function(f"document.querySelector('{W} [data-out=\"writes\"]').textContent === '128'")
    page.wait_for_function(f"document.querySelector('{W} [data-out=\"grad-first\"]').textContent === "
                           f"{want['out']['grad-first']!r}")
    line = page.get_attribute(f'{W} [data-line="grad"]', "points")
    assert line == want["grad_chart"]["points"]

    page.check(f'{W} input[name="residual"]')  # the skip connections: the gradient comes back
    skip = model.view({**model.PARAMS, "depth": 64, "residual": True})
    page.wait_for_function(f"document.querySelector('{W} [data-out=\"grad-first\"]').textContent === "
                           f"{skip['out']['grad-first']!r}")
    assert out(page, "rms-final") == skip["out"]["rms-final"] and out(page, "prediction") == "11.36"
    g_plain = model.simulate(64, False, True, "unit")["grad"][0]
    g_skip = model.simulate(64, True, True, "unit")["grad"][0]
    assert g_skip / g_plain > 1e6
    assert "消失" not in out(page, "grad-verdict")
    context.close()
