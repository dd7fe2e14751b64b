"""batch-trap in Chromium, in the authors' gallery: the first state is the model's, the batch radios
(keyboard) change A's batch-statistics output while its per-token output stays, a batch of one token
gives zeros, screen readers hear it, it fits a 375 px phone in both palettes with no serious axe-core
violation, and it reads whole without JavaScript."""

import pytest

from support import open_live_widget, open_phone_widget, overflows, serious_axe

from course.widgets import load_model

pytestmark = pytest.mark.e2e
W = '[data-widget="batch-trap"]'
GALLERY = "authors/gallery/"
model = load_model("batch-trap")


def out(page, key):
    return page.locator(f'{W} [data-out="{key}"]').first.inner_text()


def outputs(page, kind):
    return [[page.locator(f'{W} [data-row="{kind}{i}"] [data-out="d{j}"]').inner_text() for j in range(3)]
            for i in range(3)]


def want(state, kind):
    return [[state["rows"][f"{kind}{i}"][f"d{j}"] for j in range(3)] for i in range(3)]


def visible_rows(page):
    return [r.get_attribute("data-row") for r in page.locator(f'{W} tr[data-in]').all() if r.is_visible()]


def test_the_batch_changes_batch_statistics_not_per_token_ones(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + GALLERY, "batch-trap")
    one = model.view({"batch": "batch1"})
    assert outputs(page, "bn") == want(one, "bn") and outputs(page, "bn")[0] == ["−0.392", "1.604", "−1.604"]
    assert visible_rows(page) == ["A0", "A1", "A2", "B0", "B1"]
    per_token = outputs(page, "ln")

    page.focus(f'{W} input[name="bt-batch"]:checked')
    page.keyboard.press("ArrowRight")  # batch 2, from the keyboard
    two = model.view({"batch": "batch2"})
    page.wait_for_function(f"document.querySelector('{W} [data-row=\"bn0\"] [data-out=\"d0\"]').textContent"
                           f" === {two['rows']['bn0']['d0']!r}")
    assert outputs(page, "bn") == want(two, "bn") != want(one, "bn")
    assert outputs(page, "ln") == per_token  # per-token statistics: the same answer in either batch
    assert visible_rows(page) == ["A0", "A1", "A2", "C0", "C1", "C2"]
    assert [page.locator(f'{W} [data-row="mean"] [data-out="d{j}"]').inner_text() for j in range(3)] == \
        ["4.000", "3.000", "3.000"]
    assert "最多差 2.066" in out(page, "verdict")
    page.wait_for_function(f"document.querySelector('{W} .cw-sr').textContent === {two['announce']!r}")

    page.keyboard.press("ArrowRight")  # one sentence, one token: variance 0
    single = model.view({"batch": "single"})
    page.wait_for_function(f"document.querySelector('{W} [data-out=\"verdict\"]').textContent"
                           f" === {single['out']['verdict']!r}")
    assert outputs(page, "bn") == [["0.000"] * 3] * 3 and outputs(page, "ln") == per_token
    assert visible_rows(page) == ["A0"]
    assert page.is_checked(f'{W} input[name="bt-batch"][value="single"]')
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_fits_a_phone_passes_axe_and_reads_without_javascript(browser, served_site, scheme):
    first = model.view(model.PARAMS)
    for js in (True, False):
        context, page = open_phone_widget(browser, served_site[1] + GALLERY, W, scheme, js)
        widths = overflows(page, W, "div, table")
        assert max(widths) <= 1, f"the widget or one of its tables scrolls sideways on a phone: {widths}"
        assert outputs(page, "bn") == want(first, "bn") and out(page, "verdict") == first["out"]["verdict"]
        assert visible_rows(page) == ["A0", "A1", "A2", "B0", "B1"]
        if js:
            serious = serious_axe(page, W)
            assert serious == [], serious
        context.close()
