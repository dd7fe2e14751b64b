"""gate-width in Chromium, in the authors' gallery: the first state is the model's (with the course's
facts), the d slider moves by keyboard to Llama's and DeepSeek's d and the widths follow the model, screen
readers hear it, it fits a 375 px phone in both palettes with no serious axe-core violation, and it reads
whole without JavaScript."""

import pytest

from support import ROOT, open_live_widget, open_phone_widget, overflows, serious_axe

from course.data import load_data
from course.facts import build_facts
from course.widgets import load_model

pytestmark = pytest.mark.e2e
W = '[data-widget="gate-width"]'
GALLERY = "authors/gallery/"
model = load_model("gate-width")
PARAMS = {**model.PARAMS, **model.example(build_facts(load_data(ROOT / "data", ROOT)))}


def out(page, key):
    return page.locator(f'{W} [data-out="{key}"]').first.inner_text()


def card(page, k, key):
    return page.locator(f'{W} [data-row="model-{k}"] [data-out="{key}"]').inner_text()


def wait_out(page, key, want):
    page.wait_for_function(f"""() => document.querySelector('{W} [data-out="{key}"]').textContent === {want!r}""")


def test_the_d_slider_answers_from_the_model(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + GALLERY, "gate-width")
    first = model.view(PARAMS)
    assert out(page, "d") == first["out"]["d"] == "5,120"
    assert out(page, "rule") == first["out"]["rule"] and out(page, "matched") == first["out"]["matched"]
    assert card(page, 0, "verdict") == first["rows"]["model-0"]["verdict"]
    assert page.locator(f'{W} [data-row="model-0"]').get_attribute("data-current") == "true"

    page.focus(f'{W} input[name="d"]')
    page.keyboard.press("ArrowLeft")  # 5,120 -> 4,096: Llama 2 7B's d
    llama = model.view({**PARAMS, "d": 4096})
    wait_out(page, "rule", llama["out"]["rule"])
    assert llama["out"]["rule"] == "11,008" and out(page, "raw") == llama["out"]["raw"]
    assert out(page, "rule-weights") == llama["out"]["rule-weights"] and out(page, "d-names") == llama["out"]["d-names"]
    assert page.get_attribute(f'{W} input[name="d"]', "aria-valuetext") == llama["valuetext"]
    assert page.locator(f'{W} [data-row="model-2"]').get_attribute("data-current") == "true"
    page.wait_for_function(f"document.querySelector('{W} .cw-sr').textContent === {llama['announce']!r}")
    width = page.evaluate(f"document.querySelector('{W} .gw-bar-rule').style.width")
    assert width == [b["share"] for b in llama["bars"] if b["key"] == "rule"][0] + "%"

    page.keyboard.press("End")  # DeepSeek LLM 67B's 8,192
    ds = model.view({**PARAMS, "d": 8192})
    wait_out(page, "rule", ds["out"]["rule"])
    assert out(page, "plain") == ds["out"]["plain"] and ds["out"]["rule"] == card(page, 1, "d_ff") == "22,016"
    assert page.locator(f'{W} [data-row="model-1"]').get_attribute("data-current") == "true"
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_fits_a_phone_passes_axe_and_reads_without_javascript(browser, served_site, scheme):
    first = model.view(PARAMS)
    for js in (True, False):
        context, page = open_phone_widget(browser, served_site[1] + GALLERY, W, scheme, js)
        widths = overflows(page, W, "div, ul, li")
        assert max(widths) <= 1, f"the widget or a part of it scrolls sideways on a phone: {widths}"
        assert out(page, "rule") == first["out"]["rule"] and card(page, 0, "d_ff") == "17,408"
        assert out(page, "rule-vs-plain") == first["out"]["rule-vs-plain"]
        if js:
            serious = serious_axe(page, W)
            assert serious == [], serious
        context.close()
