"""activation-curves in Chromium, in the authors' gallery: the first state is the model's; the x slider, a
checkbox and a jump button (keyboard) move the markers and change the table the way the model computes
them, screen readers hear it; it fits a 375 px phone in both palettes with no serious axe-core violation,
and it reads whole without JavaScript."""
import json

import pytest

from support import open_live_widget, open_phone_widget, overflows, serious_axe

from course.widgets import load_model

pytestmark = pytest.mark.e2e
W = '[data-widget="activation-curves"]'
GALLERY = "authors/gallery/"
model = load_model("activation-curves")


def out(page, key):
    return page.locator(f'{W} [data-out="{key}"]').first.inner_text()


def values(page):
    return [page.locator(f'{W} [data-row="{k}"] [data-out="value"]').inner_text() for k in model.KEYS]


def want(state):
    return [state["rows"][k]["value"] for k in model.KEYS]


def wait_values(page, expected):
    keys = json.dumps(list(model.KEYS))
    page.wait_for_function(f"""() => {keys}.map(k => document.querySelector(
        '{W} [data-row="' + k + '"] [data-out="value"]').textContent).join('|') === {'|'.join(expected)!r}""")


def marker(page, panel, key):
    dot = page.locator(f'{W} [data-panel="{panel}"] [data-marker="{key}"]')
    return dot.get_attribute("cx"), dot.get_attribute("cy"), dot.get_attribute("data-shown")


def model_marker(state, panel, key):
    m = [m for m in [p for p in state["panels"] if p["key"] == panel][0]["markers"] if m["key"] == key][0]
    return m["cx"], m["cy"], "true" if m["shown"] else "false"


def test_slider_checkboxes_and_jumps_answer_from_the_model(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + GALLERY, "activation-curves")
    first = model.view(model.PARAMS)
    assert values(page) == want(first) and out(page, "x") == "−1.000"
    assert marker(page, "full", "silu") == model_marker(first, "full", "silu")

    page.focus(f'{W} input[name="x"]')
    page.keyboard.press("ArrowRight")  # one step of 0.05, from the keyboard
    step = model.view({**model.PARAMS, "x": -0.95})
    wait_values(page, want(step))
    assert out(page, "here") == step["out"]["here"]
    page.keyboard.press("End")  # x = 4: all four close to x
    end = model.view({**model.PARAMS, "x": 4.0})
    wait_values(page, want(end))
    assert out(page, "x") == "4.000" and marker(page, "full", "gelu") == model_marker(end, "full", "gelu")
    assert marker(page, "zoom", "gelu")[2] == "false"  # outside the magnified panel
    page.wait_for_function(f"document.querySelector('{W} .cw-sr').textContent === {end['announce']!r}")

    page.focus(f'{W} input[name="curve"][value="silu"]')
    page.keyboard.press("Space")  # hide SiLU
    hidden = model.view({"x": 4.0, "curves": ["relu", "gelu", "gelu_tanh"]})
    page.wait_for_selector(f'{W} [data-panel="full"] [data-line="silu"][data-shown="false"]', state="attached")
    assert marker(page, "full", "silu") == model_marker(hidden, "full", "silu")
    assert page.locator(f'{W} [data-row="silu"]').get_attribute("data-shown") == "false"
    assert not page.locator(f'{W} [data-panel="full"] [data-line="silu"]').is_visible()

    page.focus(f'{W} button[data-jump="gelu"]')
    page.keyboard.press("Enter")  # to GELU's minimum, which no slider step hits
    gmin = model.view({"x": model.gelu_min()["x"], "curves": ["relu", "gelu", "gelu_tanh"]})
    wait_values(page, want(gmin))
    assert out(page, "x") == gmin["out"]["x"] == "−0.752"
    assert out(page, "here") == gmin["out"]["here"] and "GELU 的最低点" in out(page, "here")
    assert marker(page, "zoom", "gelu") == model_marker(gmin, "zoom", "gelu")
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_fits_a_phone_passes_axe_and_reads_without_javascript(browser, served_site, scheme):
    first = model.view(model.PARAMS)
    for js in (True, False):
        context, page = open_phone_widget(browser, served_site[1] + GALLERY, W, scheme, js)
        widths = overflows(page, W, "div, table, figure")
        assert max(widths) <= 1, f"the widget or a part of it scrolls sideways on a phone: {widths}"
        assert values(page) == want(first)
        for key in ("negative", "positive", "tanh"):
            assert out(page, key) == first["out"][key]
        assert page.locator(f'{W} [data-panel="zoom"] svg').bounding_box()["width"] > 250  # both panels readable
        if js:
            serious = serious_axe(page, W)
            assert serious == [], serious
        context.close()
