"""norm-token in Chromium, in the authors' gallery: the first state is the model's, a preset button, the
number inputs, the w slider and the eps select (keyboard) change the steps the way the model computes
them, screen readers hear it, it fits a 375 px phone in both palettes with no serious axe-core
violation, and it reads whole without JavaScript."""

import pytest

from support import open_live_widget, open_phone_widget, overflows, serious_axe

from course.widgets import load_model

pytestmark = pytest.mark.e2e
W = '[data-widget="norm-token"]'
GALLERY = "authors/gallery/"
model = load_model("norm-token")


def out(page, key):
    return page.locator(f'{W} [data-out="{key}"]').first.inner_text()


def col(state, name):
    """One step of one norm, all 4 dimensions, as the model writes it: col(state, "ln-out")."""
    norm, key = name.split("-", 1)
    return [state["rows"][f"{norm}-{k}"][key] for k in range(4)]


def row(page, name):
    norm, key = name.split("-", 1)
    return [page.locator(f'{W} [data-row="{norm}-{k}"] [data-out="{key}"]').inner_text() for k in range(4)]


def wait_row(page, name, want):
    norm, key = name.split("-", 1)
    page.wait_for_function(f"""() => [0, 1, 2, 3].map(k => document.querySelector(
        '{W} [data-row="{norm}-' + k + '"] [data-out="{key}"]').textContent).join('|') === {'|'.join(want)!r}""")


def pressed(page):
    return [b.get_attribute("data-preset") for b in page.locator(f'{W} button[data-preset]').all()
            if b.get_attribute("aria-pressed") == "true"]


def test_presets_inputs_gain_and_eps_answer_from_the_model(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + GALLERY, "norm-token")
    first = model.view(model.PARAMS)
    assert row(page, "ln-out") == col(first, "ln-out") == ["−1.069", "−0.535", "0", "1.604"]
    assert out(page, "rms-ms") == "12.500" and pressed(page) == ["plain"]

    page.click(f'{W} button[data-preset="outlier"]')  # one outlier dimension
    outlier = model.view({**model.PARAMS, "preset": "outlier"})
    wait_row(page, "rms-out", col(outlier, "rms-out"))
    assert row(page, "ln-out") == col(outlier, "ln-out")
    assert [page.input_value(f'{W} input[name="x{k + 1}"]') for k in range(4)] == ["0.5", "-0.3", "0.2", "40"]
    assert pressed(page) == ["outlier"]
    page.wait_for_function(f"document.querySelector('{W} .cw-sr').textContent === {outlier['announce']!r}")

    page.focus(f'{W} input[name="x4"]')
    page.keyboard.press("ArrowUp")  # x4: 40 -> 41, from the keyboard; no preset matches any more
    edited = model.view({**model.PARAMS, "x": [0.5, -0.3, 0.2, 41.0]})
    wait_row(page, "ln-centred", col(edited, "ln-centred"))
    assert out(page, "ln-var") == edited["out"]["ln-var"] and pressed(page) == []

    page.focus(f'{W} input[name="w"]')
    page.keyboard.press("End")  # w = 1: the gain doubles every output
    doubled = model.view({**model.PARAMS, "x": [0.5, -0.3, 0.2, 41.0], "w": 1.0})
    wait_row(page, "rms-out", col(doubled, "rms-out"))
    assert out(page, "gain") == "2.0" and row(page, "ln-out") == col(doubled, "ln-out")

    page.click(f'{W} button[data-preset="near-zero"]')
    page.focus(f'{W} select[name="eps"]')
    page.keyboard.press("ArrowDown")  # eps 1e-5 -> 0.01: on a near-zero vector eps takes over the denominator
    near = model.view({**model.PARAMS, "preset": "near-zero", "w": 1.0, "eps": 0.01})
    wait_row(page, "ln-out", col(near, "ln-out"))
    assert page.input_value(f'{W} select[name="eps"]') == "0.01"
    assert out(page, "ln-eps") == near["out"]["ln-eps"] and "99.99%" in out(page, "ln-eps")
    page.wait_for_function(f"document.querySelector('{W} .cw-sr').textContent === {near['announce']!r}")
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_fits_a_phone_passes_axe_and_reads_without_javascript(browser, served_site, scheme):
    first = model.view(model.PARAMS)
    for js in (True, False):
        context, page = open_phone_widget(browser, served_site[1] + GALLERY, W, scheme, js)
        widths = overflows(page, W, "div, table")
        assert max(widths) <= 1, f"the widget or one of its tables scrolls sideways on a phone: {widths}"
        assert row(page, "ln-out") == col(first, "ln-out")
        assert out(page, "ln-eps") == first["out"]["ln-eps"]
        if js:
            serious = serious_axe(page, W)
            assert serious == [], serious
        context.close()
