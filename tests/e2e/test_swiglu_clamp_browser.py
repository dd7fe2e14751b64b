"""swiglu-clamp in Chromium, in the authors' gallery: the first state is the model's (with the configs'
clamps from the course's facts); the g slider, the clamp radios, the u = g checkbox and the u slider work
from the keyboard and answer as the model computes (fp16 overflows at g = 300, a clamp caps the product),
screen readers hear it, it fits a 375 px phone in both palettes with no serious axe-core violation, and it
reads whole without JavaScript."""

import pytest

from support import ROOT, open_live_widget, open_phone_widget, overflows, serious_axe

from course.data import load_data
from course.facts import build_facts
from course.widgets import load_model

pytestmark = pytest.mark.e2e
W = '[data-widget="swiglu-clamp"]'
GALLERY = "authors/gallery/"
model = load_model("swiglu-clamp")
PARAMS = {**model.PARAMS, **model.example(build_facts(load_data(ROOT / "data", ROOT)))}


def out(page, key):
    return page.locator(f'{W} [data-out="{key}"]').first.inner_text()


def over(page, name):
    return page.locator(f'{W} [data-row="fmt-{name}"]').get_attribute("data-over")


def wait_out(page, key, want):
    page.wait_for_function(f"""() => document.querySelector('{W} [data-out="{key}"]').textContent === {want!r}""")


def test_sliders_clamps_and_tie_answer_from_the_model(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + GALLERY, "swiglu-clamp")
    first = model.view(PARAMS)
    assert out(page, "product") == first["out"]["product"] == "400.00" and over(page, "fp16") == "false"
    assert page.get_attribute(f'{W} [data-line="plain"]', "points") == first["chart"]["plain"]
    assert page.is_disabled(f'{W} input[name="u"]')  # u = g to start with

    page.focus(f'{W} input[name="g"]')
    stops = first["stops"]
    for _ in range(stops.index(300.0) - stops.index(20.0)):
        page.keyboard.press("ArrowRight")  # 20 -> 50 -> ... -> 300: past fp16's edge near 256
    big = model.view({**PARAMS, "g": 300.0})
    wait_out(page, "product", big["out"]["product"])
    assert big["out"]["product"] == "90,000" and over(page, "fp16") == "true" and over(page, "bf16") == "false"
    assert page.get_attribute(f'{W} input[name="g"]', "aria-valuetext") == "g = 300"
    page.wait_for_function(f"document.querySelector('{W} .cw-sr').textContent === {big['announce']!r}")

    page.focus(f'{W} input[name="sc-clamp"][value="none"]')
    page.keyboard.press("ArrowRight")  # none -> gpt-oss-120b's limit 7
    capped = model.view({**PARAMS, "g": 300.0, "clamp": "gpt-oss"})
    wait_out(page, "clamped", capped["out"]["clamped"])
    assert capped["out"]["clamped"] == "55.9996" and out(page, "clamp-range") == capped["out"]["clamp-range"]
    assert page.get_attribute(f'{W} [data-line="clamped"]', "points") == capped["chart"]["clamped"]
    assert page.get_attribute(f'{W} [data-dot="clamped"]', "visibility") == "visible"

    page.focus(f'{W} input[name="tied"]')
    page.keyboard.press("Space")  # untie u from g
    page.wait_for_function(f"!document.querySelector('{W} input[name=\"u\"]').disabled")
    page.focus(f'{W} input[name="u"]')
    page.keyboard.press("Home")  # u = -100
    apart = model.view({**PARAMS, "g": 300.0, "u": -100.0, "tied": False, "clamp": "gpt-oss"})
    wait_out(page, "product", apart["out"]["product"])
    assert out(page, "u") == "−100" and out(page, "clamped") == apart["out"]["clamped"]
    page.wait_for_function(f"document.querySelector('{W} .cw-sr').textContent === {apart['announce']!r}")
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_fits_a_phone_passes_axe_and_reads_without_javascript(browser, served_site, scheme):
    first = model.view(PARAMS)
    for js in (True, False):
        context, page = open_phone_widget(browser, served_site[1] + GALLERY, W, scheme, js)
        widths = overflows(page, W, "div, fieldset, figure")
        assert max(widths) <= 1, f"the widget or a part of it scrolls sideways on a phone: {widths}"
        box = page.locator(f"{W} svg").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 375
        assert out(page, "product") == first["out"]["product"]
        assert page.locator(f'{W} [data-row="fmt-bf16"]').inner_text().startswith("bf16")
        if js:
            serious = serious_axe(page, W)
            assert serious == [], serious
        context.close()
