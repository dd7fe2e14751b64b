"""residual-paths in Chromium, on its lesson: a weight slider moves both gradients the way the model
computes them, and a path's button says which layers it passes through."""
import pytest

from support import open_live_widget

from course.widgets import load_model

pytestmark = pytest.mark.e2e
W = '[data-widget="residual-paths"]'
model = load_model("residual-paths")


def out(page, key):
    return page.locator(f'{W} [data-out="{key}"]').first.inner_text()


def wait_for(page, key, text):
    page.wait_for_function(f"document.querySelector('{W} [data-out=\"{key}\"]').textContent === {text!r}")


def test_weights_and_paths_answer_from_the_model(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + "c4/l2-residual/", "residual-paths")
    first = model.view(model.PARAMS)
    assert out(page, "plain-grad") == first["out"]["plain-grad"] == "0.125"
    assert out(page, "res-grad") == first["out"]["res-grad"] == "3.375"

    page.focus(f'{W} input[name="w1"]')
    page.keyboard.press("Home")  # w1 = -1: the plain product is -0.25, the residual stack loses layer 1's factor
    want = model.view({**model.PARAMS, "w": [-1.0, 0.5, 0.5]})
    wait_for(page, "res-grad", want["out"]["res-grad"])
    assert out(page, "plain-grad") == want["out"]["plain-grad"] == "−0.250"
    assert out(page, "sum") == want["out"]["res-grad"]  # the 8 paths add up to the derivative

    page.click(f'{W} button[data-path="101"]')
    picked = model.view({"w": [-1.0, 0.5, 0.5], "path": "101"})
    wait_for(page, "path", picked["out"]["path"])
    assert page.get_attribute(f"{W} .rp", "data-through") == "1,3"
    assert page.get_attribute(f'{W} button[data-path="101"]', "aria-pressed") == "true"
    assert page.get_attribute(f'{W} button[data-path="000"]', "aria-pressed") == "false"
    context.close()
