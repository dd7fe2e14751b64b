"""depth-signal in Chromium, on its lesson: the depth slider redraws the curves, the residual
toggle brings the gradient at layer 1 back, the activation and seed controls change what the
model says (sigmoid vanishes, the ReLU stack's spread is the narrow width's), and the width and
seed are always on screen."""
import pytest

from support import open_live_widget

from course.widgets import load_model

pytestmark = pytest.mark.e2e
W = '[data-widget="depth-signal"]'
model = load_model("depth-signal")


def out(page, key):
    return page.locator(f'{W} [data-out="{key}"]').first.inner_text()


def wait_out(page, key, text):
    page.wait_for_function(f"document.querySelector('{W} [data-out=\"{key}\"]').textContent === {text!r}")


def test_depth_and_residual_change_what_the_model_says(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + "c4/l2-residual/", "depth-signal")
    first = model.view(model.PARAMS)
    assert out(page, "grad-first") == first["out"]["grad-first"]
    assert out(page, "setup") == f"宽度 {model.WIDTH}，随机种子 {model.PARAMS['seed']}"

    page.focus(f'{W} input[name="depth"]')
    page.keyboard.press("End")  # 64 layers, 128 writes
    want = model.view({**model.PARAMS, "depth": 64})
    wait_out(page, "writes", "128")
    wait_out(page, "grad-first", want["out"]["grad-first"])
    line = page.get_attribute(f'{W} [data-line="grad"]', "points")
    assert line == want["grad_chart"]["points"]

    page.check(f'{W} input[name="residual"]')  # the skip connections: the gradient comes back
    skip = model.view({**model.PARAMS, "depth": 64, "residual": True})
    wait_out(page, "grad-first", skip["out"]["grad-first"])
    assert out(page, "rms-final") == skip["out"]["rms-final"] and out(page, "compare") == "√(写入次数 + 1) = 11.36"
    assert "消失" not in out(page, "grad-verdict") and out(page, "grad-note") == skip["out"]["grad-note"]
    context.close()


def test_activation_and_seed_tell_the_true_story(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + "c4/l2-residual/", "depth-signal")
    base = dict(model.PARAMS)

    page.check(f'{W} input[name="ds-activation"][value="sigmoid"]')  # the sigmoid era: it vanishes
    sig = model.view({**base, "activation": "sigmoid"})
    wait_out(page, "grad-first", sig["out"]["grad-first"])
    assert sig["out"]["data-verdict"] == "消失" and out(page, "grad-note") == sig["out"]["grad-note"]
    assert out(page, "formula") == "F(h) = sigmoid(h W₁) W₂"
    assert page.get_attribute(f'{W} [data-line="prediction"]', "points") == ""

    page.check(f'{W} input[name="ds-activation"][value="relu"]')
    for seed in model.SEEDS[1:]:  # the keyboard moves inside the seed group
        page.focus(f'{W} input[name="ds-seed"]:checked')
        page.keyboard.press("ArrowRight")
        want = model.view({**base, "seed": seed})
        wait_out(page, "setup", f"宽度 {model.WIDTH}，随机种子 {seed}")
        wait_out(page, "grad-first", want["out"]["grad-first"])
        assert out(page, "grad-note") == want["out"]["grad-note"]
    announced = page.locator(f"{W} .cw-sr").inner_text()
    assert f"随机种子 {model.SEEDS[-1]}" in announced
    context.close()
