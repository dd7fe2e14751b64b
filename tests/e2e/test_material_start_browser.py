"""Material's bundle starts at the reader's first interaction, not while a lesson arrives
(theme/assets/javascripts/material_start.js, issue 20), and nothing a reader sees is lost:
the palette and its toggle are there before it, a press made before it runs is handed to it,
and a bundle that cannot load leaves the page readable and is tried again."""
import re

import pytest

from support import scroll_to_read

pytestmark = pytest.mark.e2e

LESSON = "c4/l1-ffn/"
BUNDLE = re.compile(r"/assets/javascripts/bundle\.[0-9a-f]+\.min\.js$")
# What Material's start-up fetches: its bundle, then the search index and the sitemap.
MATERIALS = re.compile(r"/assets/javascripts/bundle\.[0-9a-f]+\.min\.js$|/search/search_index\.json$|/sitemap\.xml$")


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport={"width": 375, "height": 800}, is_mobile=True, has_touch=True)
    yield context
    context.close()


def requested(page, pattern):
    return [url for url in page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
            if pattern.search(url)]


def test_on_a_phone_reading_and_scrolling_fetch_nothing_of_material_and_opening_the_menu_starts_it(phone, served_site):
    page = phone.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(served_site[1] + LESSON, wait_until="load")
    scroll_to_read(page.locator('[data-widget="linear-fit"]'))  # the reader scrolls down to a widget
    page.wait_for_timeout(500)
    assert page.evaluate("window.cwMaterial.state") == "waiting"
    assert requested(page, MATERIALS) == []
    page.locator('label.md-header__button[for="__drawer"]').tap()  # the menu: it opens by CSS
    page.wait_for_function("window.cwMaterial.state === 'started'")
    page.wait_for_function("performance.getEntriesByType('resource').some(e => e.name.endsWith('search_index.json'))")
    assert len(requested(page, BUNDLE)) == 1
    page.wait_for_timeout(300)
    assert page.evaluate("document.getElementById('__drawer').checked"), "Material's start shut the menu"
    assert errors == []


@pytest.mark.parametrize("scheme, shown", [("light", "default"), ("dark", "slate")])
def test_the_palette_and_its_toggle_are_there_before_material_runs(browser, served_site, scheme, shown):
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 800})
    try:
        page = context.new_page()
        page.goto(served_site[1] + LESSON, wait_until="load")
        assert page.evaluate("window.cwMaterial.state") == "waiting"
        assert page.get_attribute("body", "data-md-color-scheme") == shown
        toggles = page.locator('[data-md-component="palette"] label:visible')
        assert toggles.count() == 1
        # The reader clicks it at once: the click starts Material, which is handed the click.
        toggles.first.click()
        other = "slate" if shown == "default" else "default"
        page.wait_for_function("(want) => document.body.dataset.mdColorScheme === want", arg=other)
        assert page.evaluate("window.cwMaterial.state") == "started"
        page.reload(wait_until="load")  # Material kept the choice; the page applies it before it runs
        assert page.evaluate("window.cwMaterial.state") == "waiting"
        assert page.get_attribute("body", "data-md-color-scheme") == other
    finally:
        context.close()


def test_a_bundle_that_cannot_load_leaves_the_page_readable_and_is_tried_again(phone, served_site):
    page = phone.new_page()
    warnings = []
    page.on("console", lambda message: warnings.append(message.text) if message.type == "warning" else None)
    page.route(BUNDLE, lambda route: route.abort())
    page.goto(served_site[1] + LESSON, wait_until="load")
    page.touchscreen.tap(180, 400)
    page.wait_for_function("() => window.cwMaterial.state === 'waiting' && document.querySelectorAll("
                           "'script[src*=\"/bundle.\"]').length === 0")
    assert any("Material's script could not load" in text for text in warnings), warnings
    assert page.locator("h1").first.is_visible()
    page.unroute(BUNDLE)
    page.touchscreen.tap(180, 400)  # the next interaction tries again
    page.wait_for_function("window.cwMaterial.state === 'started'")


def test_a_link_to_a_heading_starts_material_once_loaded_and_a_drawer_opened_after_stays_open(phone, served_site):
    # Material shuts the drawer 125 ms after it first sees an anchor's target: started under the
    # reader's first tap on the menu, it would shut the drawer that tap opened.
    page = phone.new_page()
    page.goto(served_site[1] + LESSON + "#exercise-c4-l1-linear-identity-title", wait_until="load")
    page.wait_for_function("window.cwMaterial.state === 'started'")
    page.wait_for_timeout(300)
    page.locator('label.md-header__button[for="__drawer"]').tap()
    page.wait_for_timeout(600)
    assert page.evaluate("document.getElementById('__drawer').checked")
