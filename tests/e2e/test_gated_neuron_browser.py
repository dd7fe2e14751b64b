"""gated-neuron in Chromium, in the authors' gallery: the first state is the model's (step 1's ReLU neuron without a
gate); the activation radios, a slider, the task radios and the 精确解 button (keyboard) change the outputs, the MSE
and the sentence under them the way the model computes them, a gate with no exact solution disables the button, and
the task shows its own table; screen readers hear it; it fits a 375 px phone in both palettes with no serious
axe-core violation, and it reads whole without JavaScript."""

import pytest

from support import open_live_widget, open_phone_widget, overflows, serious_axe

from course.widgets import load_model

pytestmark = pytest.mark.e2e
W = '[data-widget="gated-neuron"]'
GALLERY = "authors/gallery/"
model = load_model("gated-neuron")
NAMES = [name for name, *_ in model.REVIEWS]
CELLS = [("n" + str(i), "p" + str(j)) for i in range(len(model.GRID)) for j in range(len(model.GRID))]


def out(page, key):
    return page.locator(f'{W} [data-out="{key}"]').first.inner_text()


def outputs(page):
    return [page.locator(f'{W} [data-row="{n}"] [data-out="out"]').inner_text() for n in NAMES]


def cells(page):
    return [page.locator(f'{W} [data-row="{r}"] [data-out="{c}"]').inner_text() for r, c in CELLS]


def want(state):
    return [state["rows"][n]["out"] for n in NAMES]


def want_cells(state):
    return [state["rows"][r][c] for r, c in CELLS]


def wait_out(page, key, text):
    page.wait_for_function(f"document.querySelector('{W} [data-out=\"{key}\"]').textContent === {text!r}")


def test_radios_sliders_tasks_and_the_exact_button_answer_from_the_model(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + GALLERY, "gated-neuron")
    first = model.view(model.PARAMS)
    assert outputs(page) == want(first) and out(page, "verdict") == first["out"]["verdict"]
    assert out(page, "reason") == first["out"]["reason"] and out(page, "unit") == "不带门的 ReLU 神经元"

    page.focus(f'{W} input[name="up-c"]')
    page.keyboard.press("ArrowLeft")  # u's bias 1 -> 0.75: still a constant, still no gate
    up = [0.0, 0.0, 0.75]
    moved = model.view({**model.PARAMS, "up": up})
    wait_out(page, "formula", moved["out"]["formula"])
    assert outputs(page) == want(moved) and out(page, "up") == moved["out"]["up"]

    page.focus(f'{W} input[name="gn-activation"][value="relu"]')
    for activation in ("gelu", "silu", "sigmoid"):  # ReLU -> GELU -> SiLU -> σ
        page.keyboard.press("ArrowDown")
        state = model.view({**model.PARAMS, "activation": activation, "up": up})
        wait_out(page, "formula", state["out"]["formula"])
        assert out(page, "reason") == state["out"]["reason"] and outputs(page) == want(state)
    assert page.locator(f'{W} button[data-action="exact"]').is_disabled()  # σ: no exact solution
    assert out(page, "button-note") == state["out"]["button-note"]
    page.keyboard.press("ArrowDown")  # σ -> none (Bilinear)
    none = model.view({**model.PARAMS, "activation": "none", "up": up})
    wait_out(page, "formula", none["out"]["formula"])
    assert page.locator(f'{W} button[data-action="exact"]').is_enabled()

    page.focus(f'{W} button[data-action="exact"]')
    page.keyboard.press("Enter")
    exact = model.view({"task": "reviews", "activation": "none", "gate": model.EXACT_GATE, "up": model.EXACT_UP})
    wait_out(page, "verdict", exact["out"]["verdict"])
    assert outputs(page) == want(exact) == ["1.000", "0.000", "0.000", "1.000"]
    assert [page.input_value(f'{W} input[name="up-{k}"]') for k in "abc"] == ["-1", "-1", "2"]
    assert out(page, "poly") == exact["out"]["poly"]
    page.wait_for_function(f"document.querySelector('{W} .cw-sr').textContent === {exact['announce']!r}")

    page.focus(f'{W} input[name="gn-task"][value="reviews"]')
    page.keyboard.press("ArrowDown")  # reviews -> graded strengths: the grid shows, the reviews' table hides
    graded = model.view({"task": "graded", "activation": "none", "gate": model.EXACT_GATE, "up": model.EXACT_UP})
    wait_out(page, "verdict", graded["out"]["verdict"])
    assert page.locator(f'{W} [data-table="graded"]').is_visible()
    assert page.locator(f'{W} [data-table="reviews"]').is_hidden()
    assert cells(page) == want_cells(graded)
    note = page.locator(f'{W} [data-out="limit-note"]').text_content()  # in the folded answer: its text, unread
    assert note == graded["out"]["limit-note"]
    page.focus(f'{W} button[data-action="exact"]')
    page.keyboard.press("Enter")  # g = p, u = n: the product is pn
    pn = model.view({"task": "graded", "activation": "none", "gate": [1.0, 0.0, 0.0], "up": [0.0, 1.0, 0.0]})
    wait_out(page, "verdict", pn["out"]["verdict"])
    assert cells(page) == want_cells(pn) and out(page, "reason") == pn["out"]["reason"]
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_fits_a_phone_passes_axe_and_reads_without_javascript(browser, served_site, scheme):
    first = model.view(model.PARAMS)
    for js in (True, False):
        context, page = open_phone_widget(browser, served_site[1] + GALLERY, W, scheme, js)
        widths = overflows(page, W, "div, table, fieldset")
        assert max(widths) <= 1, f"the widget or a part of it scrolls sideways on a phone: {widths}"
        assert outputs(page) == want(first)
        assert page.locator(f'{W} [data-table="graded"]').is_hidden()
        for key in ("verdict", "reason", "poly"):
            assert out(page, key) == first["out"][key]
        answer = page.locator(f"{W} details.gn-answer")  # the answer stays folded until the reader opens it
        assert not answer.evaluate("el => el.open")
        answer.locator("summary").click()
        for key in ("exact-note", "limit-note"):
            assert out(page, key) == first["out"][key]
        if js:
            serious = serious_axe(page, W)
            assert serious == [], serious
            page.locator(f'{W} input[name="gn-task"][value="graded"]').check()  # the 5 × 5 grid fits too
            graded = model.view({**model.PARAMS, "task": "graded"})
            wait_out(page, "verdict", graded["out"]["verdict"])
            assert cells(page) == want_cells(graded)
            widths = overflows(page, W, "div, table, fieldset")
            assert max(widths) <= 1, f"the grid scrolls sideways on a phone: {widths}"
        context.close()
