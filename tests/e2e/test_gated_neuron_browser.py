"""gated-neuron in Chromium, in the authors' gallery: the first state is the model's; the activation radios, a
slider and the 精确解 button (keyboard) change the four outputs and the MSE the way the model computes them,
and a σ gate disables the button; screen readers hear it; it fits a 375 px phone in both palettes with no
serious axe-core violation, and it reads whole without JavaScript."""

import pytest

from support import open_live_widget, open_phone_widget, overflows, serious_axe

from course.widgets import load_model

pytestmark = pytest.mark.e2e
W = '[data-widget="gated-neuron"]'
GALLERY = "authors/gallery/"
model = load_model("gated-neuron")
NAMES = [name for name, *_ in model.REVIEWS]


def out(page, key):
    return page.locator(f'{W} [data-out="{key}"]').first.inner_text()


def outputs(page):
    return [page.locator(f'{W} [data-row="{n}"] [data-out="out"]').inner_text() for n in NAMES]


def want(state):
    return [state["rows"][n]["out"] for n in NAMES]


def wait_out(page, key, text):
    page.wait_for_function(f"document.querySelector('{W} [data-out=\"{key}\"]').textContent === {text!r}")


def test_radios_sliders_and_the_exact_button_answer_from_the_model(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + GALLERY, "gated-neuron")
    first = model.view(model.PARAMS)
    assert outputs(page) == want(first) and out(page, "verdict") == first["out"]["verdict"]

    page.focus(f'{W} input[name="up-c"]')
    page.keyboard.press("ArrowLeft")  # u's bias 1 -> 0.75
    moved = model.view({**model.PARAMS, "up": [0.0, 0.0, 0.75]})
    wait_out(page, "formula", moved["out"]["formula"])
    assert outputs(page) == want(moved) and out(page, "up") == moved["out"]["up"]

    page.focus(f'{W} input[name="gn-activation"][value="silu"]')
    page.keyboard.press("ArrowUp")  # SiLU -> σ: no exact solution, the button goes off
    sigmoid = model.view({**model.PARAMS, "activation": "sigmoid", "up": [0.0, 0.0, 0.75]})
    wait_out(page, "formula", sigmoid["out"]["formula"])
    assert page.locator(f'{W} button[data-action="exact"]').is_disabled()
    assert out(page, "button-note") == sigmoid["out"]["button-note"]
    page.keyboard.press("ArrowUp")  # σ -> none (Bilinear)
    none = model.view({**model.PARAMS, "activation": "none", "up": [0.0, 0.0, 0.75]})
    wait_out(page, "formula", none["out"]["formula"])
    assert page.locator(f'{W} button[data-action="exact"]').is_enabled()

    page.focus(f'{W} button[data-action="exact"]')
    page.keyboard.press("Enter")
    exact = model.view({"activation": "none", "gate": model.EXACT_GATE, "up": model.EXACT_UP})
    wait_out(page, "verdict", exact["out"]["verdict"])
    assert outputs(page) == want(exact) == ["1.000", "0.000", "0.000", "1.000"]
    assert [page.input_value(f'{W} input[name="up-{k}"]') for k in "abc"] == ["-1", "-1", "2"]
    assert out(page, "poly") == exact["out"]["poly"]
    page.wait_for_function(f"document.querySelector('{W} .cw-sr').textContent === {exact['announce']!r}")

    page.focus(f'{W} input[name="gn-activation"][value="none"]')
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")  # none -> σ -> SiLU: the same readings stay exact, w_o becomes 1/SiLU(1)
    silu = model.view({"activation": "silu", "gate": model.EXACT_GATE, "up": model.EXACT_UP})
    wait_out(page, "formula", silu["out"]["formula"])
    assert out(page, "verdict") == silu["out"]["verdict"] and outputs(page) == want(silu)
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_fits_a_phone_passes_axe_and_reads_without_javascript(browser, served_site, scheme):
    first = model.view(model.PARAMS)
    for js in (True, False):
        context, page = open_phone_widget(browser, served_site[1] + GALLERY, W, scheme, js)
        widths = overflows(page, W, "div, table, fieldset")
        assert max(widths) <= 1, f"the widget or a part of it scrolls sideways on a phone: {widths}"
        assert outputs(page) == want(first)
        for key in ("verdict", "poly"):
            assert out(page, key) == first["out"][key]
        answer = page.locator(f"{W} details.gn-answer")  # the answer stays folded until the reader opens it
        assert not answer.evaluate("el => el.open")
        answer.locator("summary").click()
        for key in ("exact-note", "sigmoid-note"):
            assert out(page, key) == first["out"][key]
        if js:
            serious = serious_axe(page, W)
            assert serious == [], serious
        context.close()
