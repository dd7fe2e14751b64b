"""C3 第 4 课's widgets in Chromium: kv-memory answers from the model (a preset, a shape no model
has, in words); kv-generate generates both ways on Pyodide and on MicroPython's ulab build, says
the cached run matches the full recomputation, the wrong position diverges and the speed-up on the
student's own clock; both fit a 375 px phone in both palettes with no serious axe-core violation
and read whole without JavaScript."""
import re

import pytest

from support import ROOT, open_live_widget, open_phone_widget, overflows, serious_axe

from course.data import load_data
from course.facts import build_facts
from course.widgets import load_model

pytestmark = pytest.mark.e2e
PAGE = "c3/l4-kv-cache/"
MEM = '[data-widget="kv-memory"]'
GEN = '[data-widget="kv-generate"]'
FACTS = build_facts(load_data(ROOT / "data", ROOT))
memory = load_model("kv-memory")
PARAMS = {**memory.PARAMS, "presets": FACTS["kv_cache"]["presets"], "preset": "llama3"}


def out(page, w, key):
    return page.locator(f'{w} [data-out="{key}"]').first.inner_text()


def wait_out(page, w, key, want):
    page.wait_for_function(f"""() => document.querySelector('{w} [data-out="{key}"]').textContent === {want!r}""")


def test_the_memory_calculator_answers_from_the_model(browser, served_site):
    context, page = open_live_widget(browser, served_site[1] + PAGE, "kv-memory")
    first = memory.view(PARAMS)
    assert out(page, MEM, "total") == first["out"]["total"] and first["out"]["total"].startswith("1 GiB")
    page.select_option(f'{MEM} select[name="preset"]', "ds67b")
    ds = memory.view({**PARAMS, "preset": "ds67b"})
    wait_out(page, MEM, "total", ds["out"]["total"])
    assert out(page, MEM, "per-token").startswith("380 KiB") and page.input_value(f'{MEM} input[name="layers"]') == "95"
    page.fill(f'{MEM} input[name="kv_heads"]', "3")
    page.press(f'{MEM} input[name="kv_heads"]', "Enter")
    page.locator(f'{MEM} input[name="kv_heads"]').blur()
    bad = memory.view({**PARAMS, **{k: ds["params"][k] for k in memory.FIELDS}, "kv_heads": 3, "preset": None})
    wait_out(page, MEM, "error", bad["out"]["error"])
    assert "整除" in bad["out"]["error"] and out(page, MEM, "total") == "—"
    assert page.input_value(f'{MEM} select[name="preset"]') == "custom"
    page.wait_for_function(f"document.querySelector('{MEM} .cw-sr').textContent === {bad['announce']!r}")
    context.close()


def generate(page, timeout):
    page.click(f"{GEN} .kvg-go")
    page.wait_for_function(f"""() => document.querySelector('{GEN} [data-out="speedup"]').textContent !== ''""",
                           timeout=timeout)
    row = lambda m, k: page.locator(f'{GEN} [data-row="{m}"] [data-out="{k}"]').inner_text()
    return {m: {k: row(m, k) for k in ("text", "time", "verdict")} for m in ("full", "cached", "wrong")}, \
        out(page, GEN, "speedup")


def speedup_of(text):
    return float(re.search(r"(?:快了|只有它的) ([\d.,]+) 倍", text).group(1).replace(",", ""))


@pytest.mark.parametrize("runtime", ["pyodide", "micropython"])
def test_the_cached_run_matches_and_is_faster(browser, served_site, runtime):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(served_site[1] + PAGE + f"?runtime={runtime}")
    page.locator(GEN).scroll_into_view_if_needed()
    page.wait_for_selector(f'{GEN}[data-ready="true"]', timeout=300_000)
    assert page.get_attribute(GEN, "data-runtime") == runtime
    rows, speedup = generate(page, 600_000)
    assert rows["cached"]["text"] == rows["full"]["text"] != "—"
    assert rows["cached"]["verdict"].startswith("和整段重算逐个 token 相同（16 个）")
    if runtime == "pyodide":  # the pure engine: the same arithmetic in the same order
        assert "0（一位不差）" in rows["cached"]["verdict"]
    assert rows["wrong"]["verdict"].startswith("从第 ") and rows["wrong"]["text"] != rows["full"]["text"]
    assert all(r["time"].endswith(" ms）") for r in rows.values())
    print(f"\n{runtime}: {speedup} | full {rows['full']['time']} | cached {rows['cached']['time']}")
    # The sentence is the ratio of the two times shown (each rounded to the ms); how much faster the cache is
    # on this machine is a measurement (benchmarks/kv_cache_speed.py), not something a test can assert.
    full, cached = (float(re.match(r"([\d,]+) ms", rows[m]["time"]).group(1).replace(",", "")) for m in ("full", "cached"))
    assert (full - 0.5) / (cached + 0.5) - 0.05 <= speedup_of(speedup) <= (full + 0.5) / max(cached - 0.5, 0.5) + 0.05
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_fits_a_phone_passes_axe_and_reads_without_javascript(browser, served_site, scheme):
    first = memory.view(PARAMS)
    for js in (True, False):
        for w, parts in ((MEM, "div, dl, label"), (GEN, "div, p")):
            context, page = open_phone_widget(browser, served_site[1] + PAGE, w, scheme, js)
            widths = overflows(page, w, parts)
            assert max(widths) <= 1, f"{w} or a part of it scrolls sideways on a phone: {widths}"
            if w == MEM:
                assert out(page, MEM, "total") == first["out"]["total"]
            else:
                assert out(page, GEN, "work-full") == load_model("kv-generate").view(
                    {"vocab": FACTS["tinygpt"]["data"]["vocab"], "n": 16})["out"]["work-full"]
            if js:
                serious = serious_axe(page, w)
                assert serious == [], serious
            context.close()
