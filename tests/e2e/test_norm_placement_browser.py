"""norm-placement in Chromium, on its lesson: the depth slider, the placement radios and the
init radios redraw from the model, and the chosen placement's row is marked."""
import pytest

from support import open_live_widget

from course.widgets import load_model

pytestmark = pytest.mark.e2e
W = '[data-widget="norm-placement"]'
model = load_model("norm-placement")


def out(page, key, row=None):
    scope = f'{W} [data-row="{row}"] ' if row else f"{W} "
    return page.locator(f'{scope}[data-out="{key}"]').first.inner_text()


def test_depth_and_placement_answer_from_the_model(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + "c4/l3-norm/", "norm-placement")
    first = model.view(model.PARAMS)
    assert out(page, "last", "post") == first["rows"]["post"]["last"] == first["out"]["last"]
    assert out(page, "reading") == first["out"]["reading"]
    page.focus(f'{W} input[name="depth"]')
    page.keyboard.press("End")  # 32 layers
    want = model.view({**model.PARAMS, "depth": 32})
    page.wait_for_function(f"document.querySelector('{W} [data-out=\"depth\"]').textContent === '32'")
    page.wait_for_function(
        f"document.querySelector('{W} [data-row=\"pre\"] [data-out=\"last\"]').textContent === {want['rows']['pre']['last']!r}")
    assert out(page, "last", "post") == want["rows"]["post"]["last"]
    page.check(f'{W} input[name="np-place"][value="pre"]')
    page.wait_for_function(f"document.querySelector('{W} [data-row=\"pre\"]').dataset.selected === 'true'")
    assert out(page, "place").startswith("Pre-LN")
    assert page.get_attribute(f'{W} [data-row="post"]', "data-selected") == "false"
    # GPT-2's init, chosen from the keyboard: the table and the sentence are the model's for it
    page.focus(f'{W} input[name="np-init"][value="unit"]')
    assert page.locator(f'{W} fieldset:has(input[name="np-init"]) legend').inner_text() == "初始化"
    page.keyboard.press("ArrowRight")  # radios in one group: the arrow keys move and check
    scaled = model.view({**model.PARAMS, "depth": 32, "place": "pre", "init": "scaled"})
    assert scaled["out"]["reading"] != model.view({**model.PARAMS, "depth": 32, "place": "pre"})["out"]["reading"]
    page.wait_for_function(
        f"document.querySelector('{W} [data-out=\"reading\"]').textContent === {scaled['out']['reading']!r}")
    assert page.is_checked(f'{W} input[name="np-init"][value="scaled"]')
    for row in ("pre", "post", "output"):
        for key in ("last", "first", "top", "rms"):
            assert out(page, key, row) == scaled["rows"][row][key], (row, key)
    assert out(page, "reading").startswith("写回矩阵按层数缩小时")
    assert "写回矩阵按层数缩小" in out(page, "setup")
    context.close()
