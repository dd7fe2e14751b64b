"""token-identity in Chromium, in the authors' gallery: the first state is the model's, the layer
slider (keyboard) moves the highlighted layer and the readout, the attention and seed radios
change what the model says, screen readers hear it, it fits a 375 px phone, and it reads whole
without JavaScript."""
import pytest

from support import open_live_widget

from course.widgets import load_model

pytestmark = pytest.mark.e2e
W = '[data-widget="token-identity"]'
GALLERY = "authors/gallery/"
model = load_model("token-identity")


def out(page, key):
    return page.locator(f'{W} [data-out="{key}"]').first.inner_text()


def wait_out(page, key, text):
    page.wait_for_function(f"document.querySelector('{W} [data-out=\"{key}\"]').textContent === {text!r}")


def cell(page, row, key):
    return page.locator(f'{W} [data-row="{row}"] [data-out="{key}"]').inner_text()


def test_layers_attention_and_seed_change_what_the_model_says(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + GALLERY, "token-identity")
    first = model.view(model.PARAMS)
    for key in ("skip-correct", "plain-correct", "skip-cos", "plain-cos", "self-weight"):
        assert out(page, key) == first["out"][key]
    assert out(page, "skip-correct") == "8/8" and out(page, "plain-correct") != "8/8"

    page.focus(f'{W} input[name="layers"]')
    page.keyboard.press("End")  # read after all 8 layers
    last = model.view({**model.PARAMS, "layers": model.LAYERS})
    wait_out(page, "layers", str(model.LAYERS))
    wait_out(page, "plain-cos", last["out"]["plain-cos"])
    assert page.get_attribute(f'{W} [data-row="layer-{model.LAYERS}"]', "data-selected") == "true"
    assert page.get_attribute(f'{W} [data-row="layer-{model.PARAMS["layers"]}"]', "data-selected") == "false"
    for t in range(len(model.SENTENCE)):
        assert cell(page, f"pos-{t}", "plain") == last["rows"][f"pos-{t}"]["plain"]
        assert page.get_attribute(f'{W} [data-row="pos-{t}"]', "data-skip-ok") == last["rows"][f"pos-{t}"]["data-skip-ok"]

    page.check(f'{W} input[name="ti-attention"][value="self"]')  # no mixing: apart, but still lost
    alone = model.view({**model.PARAMS, "layers": model.LAYERS, "attention": "self"})
    wait_out(page, "note", alone["out"]["note"])
    assert out(page, "plain-cos") == alone["out"]["plain-cos"] and out(page, "self-weight") == "1.00"

    page.focus(f'{W} input[name="ti-seed"]:checked')
    page.keyboard.press("ArrowRight")  # the next seed, from the keyboard
    after = model.SEEDS[(model.SEEDS.index(model.PARAMS["seed"]) + 1) % len(model.SEEDS)]  # ArrowRight: the next radio
    other = model.view({"layers": model.LAYERS, "attention": "self", "seed": after})
    wait_out(page, "plain-cos", other["out"]["plain-cos"])
    for k in range(model.LAYERS + 1):
        assert cell(page, f"layer-{k}", "cos-plain") == other["rows"][f"layer-{k}"]["cos-plain"]
    page.wait_for_function(f"document.querySelector('{W} .cw-sr').textContent === {other['announce']!r}")
    context.close()


def test_fits_a_phone_and_reads_without_javascript(browser, served_site):
    for js in (True, False):
        context = browser.new_context(viewport={"width": 375, "height": 800}, java_script_enabled=js)
        page = context.new_page()
        page.goto(served_site[1] + GALLERY)
        root = page.locator(W)
        root.scroll_into_view_if_needed()
        if js:
            page.wait_for_selector(f'{W}[data-ready="true"]', timeout=90_000)
        widths = page.evaluate(f"""() => [...document.querySelectorAll('{W}, {W} .ti-table')]
            .map(el => el.scrollWidth - el.clientWidth)""")
        assert max(widths) <= 1, "the widget or one of its tables scrolls sideways on a phone"
        first = model.view(model.PARAMS)
        assert out(page, "skip-correct") == first["out"]["skip-correct"]
        assert out(page, "note") == first["out"]["note"]
        assert cell(page, "pos-0", "plain") == first["rows"]["pos-0"]["plain"]
        context.close()
