"""warmup-curves in Chromium, in the authors' gallery (with the course's own curves): the first state is
the model's; the window radios and the series checkboxes, from the keyboard, redraw the chart and the
sentences as the model computes them and screen readers hear it; it fits a 375 px phone in both
palettes with no serious axe-core violation, and reads whole without JavaScript."""
import pytest

from support import ROOT, open_live_widget, open_phone_widget, overflows, serious_axe

from course.data import load_data
from course.facts import build_facts
from course.widgets import load_model

pytestmark = pytest.mark.e2e
W = '[data-widget="warmup-curves"]'
GALLERY = "authors/gallery/"
model = load_model("warmup-curves")


@pytest.fixture(scope="module")
def example():
    return model.example(build_facts(load_data(ROOT / "data", ROOT)))


def state_for(example, **params):
    p = dict(model.PARAMS)
    p.update(example)
    p.update(params)
    return model.view(p)


def drawn(page):
    """What the page shows: the paths' (key, d), the sentences, the aria-label of the chart."""
    paths = page.locator(f"{W} [data-lines] path").all()
    return ([(p.get_attribute("data-line"), p.get_attribute("d")) for p in paths],
            page.locator(f"{W} [data-sentences] li").all_inner_texts(),
            page.get_attribute(f"{W} svg[data-chart]", "aria-label"))


def want(state):
    return ([(l["key"], l["d"]) for l in state["chart"]["lines"]], state["sentences"], state["chart"]["summary"])


def wait_sentences(page, sentences):
    page.wait_for_function(f"""() => [...document.querySelectorAll('{W} [data-sentences] li')]
        .map(li => li.textContent).join('|') === {'|'.join(sentences)!r}""")


def test_window_and_checkboxes_redraw_from_the_model_by_keyboard(browser, served_site, example):
    assert example is not None, "the gallery has no curves to show"
    context, page = open_live_widget(browser, served_site[1] + GALLERY, "warmup-curves")
    first = state_for(example)
    assert drawn(page) == want(first)
    assert page.locator(f"{W} fieldset:has(input[name='wc-window']) legend").inner_text() == "看多少步"
    assert page.locator(f"{W} fieldset:has(input[name='wc-series']) legend").inner_text() == "画哪几次训练"

    page.focus(f'{W} input[name="wc-window"][value="short"]')
    page.keyboard.press("ArrowRight")  # radios in one group: the arrow key moves and checks -> the full schedule
    full = state_for(example, window="full")
    wait_sentences(page, full["sentences"])
    assert drawn(page) == want(full)
    assert page.locator(f'{W} [data-out="drawn"]').inner_text() == full["out"]["drawn"]
    assert page.locator(f'{W} [data-out="caption"]').inner_text() == full["out"]["caption"]
    for s in full["series"]:  # a run with only the first window's steps cannot be ticked here
        assert page.is_disabled(f'{W} input[name="wc-series"][value="{s["key"]}"]') == (not s["available"])
    page.wait_for_function(f"document.querySelector('{W} .cw-sr').textContent === {full['announce']!r}")

    page.focus(f'{W} input[name="wc-window"][value="full"]')
    page.keyboard.press("ArrowLeft")  # back to the first steps
    wait_sentences(page, first["sentences"])
    keys = [s["key"] for s in first["series"]]
    page.focus(f'{W} input[name="wc-series"][value="{keys[0]}"]')
    page.keyboard.press("Space")  # hide the first run
    fewer = state_for(example, shown=keys[1:])
    wait_sentences(page, fewer["sentences"])
    assert drawn(page) == want(fewer)
    assert not page.is_checked(f'{W} input[name="wc-series"][value="{keys[0]}"]')
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_fits_a_phone_passes_axe_and_reads_without_javascript(browser, served_site, example, scheme):
    first = state_for(example)
    for js in (True, False):
        context, page = open_phone_widget(browser, served_site[1] + GALLERY, W, scheme, js)
        widths = overflows(page, W, "div, fieldset, figure, svg, ul")
        assert max(widths) <= 1, f"the widget or a part of it scrolls sideways on a phone: {widths}"
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        box = page.locator(f"{W} svg[data-chart]").bounding_box()
        assert box["width"] <= 375 and box["height"] > 150, box  # the chart scales down, and stays readable
        assert drawn(page) == want(first)
        assert page.locator(f'{W} [data-out="rule"]').inner_text() == first["out"]["rule"]
        assert page.locator(f'{W} [data-out="card"]').inner_text() == first["out"]["card"]
        if js:
            serious = serious_axe(page, W)
            assert serious == [], serious
        context.close()
