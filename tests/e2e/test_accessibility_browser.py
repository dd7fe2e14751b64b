"""axe-core on every built page, in both palettes, with widgets live, the stepper on its last step
and every exercise run once with a hint and its answer open.

Goal (and the bar): no serious or critical violation. axe-core is pinned in package.json
(devDependencies) and injected from node_modules, so nothing is fetched.
"""
import json

import pytest
from support import ROOT

pytestmark = pytest.mark.e2e
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")


def built_pages(site_dir):
    return sorted(p.parent.relative_to(site_dir).as_posix() for p in site_dir.rglob("index.html")
                  if "assets" not in p.parts and "widgets" not in p.parts)


def bring_page_to_life(page):
    """Every stepper on its last step (which shows what it hides) and every widget live."""
    for stepper in page.locator("[data-stepper]").all():
        stepper.locator("button[data-step-to]").last.click()
    for box in page.locator("[data-terms]").all():
        box.locator("button[data-term]").last.click()
    for root in page.locator("[data-widget]").all():
        root.scroll_into_view_if_needed()
        name = root.get_attribute("data-widget")
        page.wait_for_selector(f'[data-widget="{name}"][data-ready="true"]', timeout=90_000)
    # Every exercise open: run once (its output and verdict shown), a hint and the answer revealed.
    for block in page.locator(".cw-exercise[data-exercise]").all():
        block.scroll_into_view_if_needed()
        ex = f'.cw-exercise[data-exercise="{block.get_attribute("data-exercise")}"]'
        page.wait_for_selector(f'{ex}[data-ready="true"]', timeout=90_000)
        block.locator("button[data-action=run]").click()
        page.wait_for_function(f"""() => {{ const v = document.querySelector('{ex} .cw-exercise__verdict');
            return v.dataset.kind && v.dataset.kind !== 'running'; }}""", timeout=90_000)
        for action, shown in (("hint", "div.cw-exercise__hint"), ("answer", "div.cw-exercise__answer pre")):
            button = block.locator(f"button[data-action={action}]")
            if button.is_enabled():  # (already open when another page of this visit had the exercise)
                button.click()
            page.wait_for_selector(f"{ex} {shown}")


def violations(page):
    # Lay every block out (course.css: blocks far from the screen skip layout, and axe-core cannot
    # measure a contrast it cannot see): what a reader sees of each block once scrolled to it.
    page.evaluate("document.documentElement.classList.add('cw-full-layout')")
    # What rests on the screen, not a colour caught halfway through a button's 125 ms hover transition.
    page.wait_for_timeout(400)
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => JSON.stringify(await axe.run(document, {resultTypes: ['violations']}))")
    found = json.loads(result)["violations"]
    # One line per node: rule, impact, where, and axe's first reason (contrast figures included).
    return [f'{v["id"]} ({v["impact"]}) {" ".join(n["target"])}: {n["failureSummary"].splitlines()[1].strip()}'
            for v in found if v["impact"] in BLOCKING for n in v["nodes"]]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_has_no_serious_or_critical_violation(browser, served_site, scheme):
    site_dir, url = served_site
    pages = built_pages(site_dir)
    assert "c4/l1-ffn" in pages and "." in pages
    report = {}
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900})
    try:
        for rel in pages:
            page = context.new_page()
            page.goto(url + ("" if rel == "." else rel + "/"))
            want = "slate" if scheme == "dark" else "default"
            assert page.get_attribute("body", "data-md-color-scheme") == want
            bring_page_to_life(page)
            found = violations(page)
            if found:
                report[rel] = found
            page.close()
    finally:
        context.close()
    assert report == {}, json.dumps(report, ensure_ascii=False, indent=1)
