"""What keeps a lesson light on a phone (issue 20), checked where a reader would notice.

A long lesson lays out only the blocks near the screen (course.css, content-visibility), and a
reader still lands where they expect: a contents link, a shared link, a typed address, a reload;
copying the whole page copies every block, and the last widget goes live when scrolled to. The
lesson inlines its widgets' CSS in <head>, and Material's instant navigation swaps it."""
import pytest

from support import scroll_to_read, start_material

LESSON = "c4/l1-ffn/"
HEADER_GAP = 120  # px: a target lands under Material's sticky header, not hundreds of px away


def top_of(page, anchor):
    return page.evaluate(f"document.getElementById({anchor!r}).getBoundingClientRect().top")


def contents_anchors(page):
    """The anchors of the page's contents list, first to last (Material makes the links absolute)."""
    return page.evaluate("""() => [...document.querySelectorAll('.md-sidebar--secondary a.md-nav__link')]
        .map(a => a.hash.slice(1)).filter(Boolean)""")


@pytest.fixture
def desktop(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    yield context
    context.close()


def test_blocks_far_below_the_screen_are_not_laid_out_on_arrival(desktop, served_site):
    _, url = served_site
    page = desktop.new_page()
    page.goto(url + LESSON, wait_until="load")
    shown = page.evaluate("""() => [...document.querySelectorAll('.md-content__inner > .cw-widget')]
        .map(w => w.firstElementChild.checkVisibility({contentVisibilityAuto: true}))""")
    assert len(shown) >= 3 and shown[-1] is False, shown
    assert "cw-full-layout" not in page.evaluate("document.documentElement.className")


@pytest.mark.parametrize("lesson", ["c4/l1-ffn/", "c4/l2-residual/", "c4/l3-norm/", "c4/l4-gating/"])
def test_every_heading_in_the_contents_is_laid_out_on_arrival(browser, served_site, lesson):
    # Material's contents follow the reader by reading each listed heading's offsetTop at every
    # change of the page's height: one inside a skipped block would lay that block out each time.
    _, url = served_site
    context = browser.new_context(viewport={"width": 375, "height": 800}, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.goto(url + lesson, wait_until="load")
        skipped = page.evaluate("""() => [...document.querySelectorAll('.md-sidebar--secondary a.md-nav__link')]
            .map(a => document.getElementById(decodeURIComponent(a.hash.slice(1))))
            .filter(h => !h.checkVisibility({contentVisibilityAuto: true})).map(h => h.id)""")
        exercise_titles = page.locator(".cw-exercise__title").count()
        assert skipped == [] and exercise_titles >= 1, skipped
    finally:
        context.close()


def test_a_wide_table_becomes_a_keyboard_stop_once_near_the_screen(browser, served_site):
    # a11y.js measures a table's scroll box when the reader comes near it, not at arrival: measuring
    # one in a block that skips layout would lay the block out. Until Material's bundle starts (the
    # reader's first interaction) the table itself scrolls; then Material wraps it, and the wrapper
    # takes the keyboard stop over.
    _, url = served_site
    context = browser.new_context(viewport={"width": 375, "height": 800}, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.goto(url + "c4/l4-gating/", wait_until="load")
        skipped = page.evaluate("""() => [...document.querySelectorAll('.md-typeset table:not([class])')]
            .map((box, i) => box.checkVisibility({contentVisibilityAuto: true}) ? -1 : i).filter(i => i >= 0)""")
        page.evaluate("document.documentElement.classList.add('cw-full-layout')")
        wide = page.evaluate("""(skipped) => skipped.filter(i => {
            const box = document.querySelectorAll('.md-typeset table:not([class])')[i];
            return box.scrollWidth > box.clientWidth; })""", skipped)
        assert wide, f"no table of lesson 4 both skipped at arrival and wider than a phone: {skipped}"
        page = context.new_page()  # a new visit, laid out as on arrival
        page.goto(url + "c4/l4-gating/", wait_until="load")
        table = page.locator(".md-typeset table:not([class])").nth(wide[-1])
        assert table.get_attribute("tabindex") is None
        scroll_to_read(table)  # by touch: Material's bundle does not start
        page.wait_for_function("(box) => box.getAttribute('tabindex') === '0'", arg=table.element_handle(), timeout=5000)
        assert table.get_attribute("role") == "region" and table.get_attribute("aria-label")
        assert page.evaluate("window.cwMaterial.state") == "waiting"
        page.touchscreen.tap(200, 400)  # a tap starts it: the table moves into Material's scroll box
        page.wait_for_function("window.cwMaterial.state === 'started'")
        wrap = table.locator("xpath=ancestor::div[contains(@class, 'md-typeset__scrollwrap')]")
        assert wrap.get_attribute("tabindex") == "0" and wrap.get_attribute("role") == "region"
        assert table.get_attribute("tabindex") is None and table.get_attribute("role") is None
    finally:
        context.close()


def test_a_contents_link_lands_its_heading_at_the_top_and_it_stays(desktop, served_site):
    _, url = served_site
    page = desktop.new_page()
    page.goto(url + LESSON, wait_until="load")
    start_material(page)  # the reader moves the mouse to the contents: Material sizes the sidebar
    target = contents_anchors(page)[-2]
    page.locator(f'.md-sidebar--secondary a[href$="#{target}"]').first.click()
    page.wait_for_timeout(300)
    first = top_of(page, target)
    page.wait_for_timeout(1200)  # blocks above render as the page settles: the heading must not move
    assert 0 <= first <= HEADER_GAP and abs(top_of(page, target) - first) < 2, (first, top_of(page, target))


def test_a_shared_link_and_a_typed_address_land_on_their_heading(desktop, served_site):
    _, url = served_site
    page = desktop.new_page()
    page.goto(url + LESSON, wait_until="load")
    anchors = contents_anchors(page)
    page.evaluate(f"location.hash = {'#' + anchors[-4]!r}")  # typed into the address bar
    page.wait_for_timeout(1500)
    assert 0 <= top_of(page, anchors[-4]) <= HEADER_GAP, top_of(page, anchors[-4])
    page.close()
    linked = desktop.new_page()  # a shared link, opened fresh
    linked.goto(url + LESSON + "#" + anchors[-3], wait_until="load")
    linked.wait_for_timeout(1500)
    assert 0 <= top_of(linked, anchors[-3]) <= HEADER_GAP, top_of(linked, anchors[-3])


def test_a_reload_returns_to_the_same_place(desktop, served_site):
    _, url = served_site
    page = desktop.new_page()
    page.goto(url + LESSON, wait_until="load")
    anchors = contents_anchors(page)
    anchor = anchors[len(anchors) // 2]
    page.mouse.move(640, 400)
    for _ in range(60):  # read down to the middle of the page, as a reader scrolls
        if top_of(page, anchor) < 300:
            break
        page.mouse.wheel(0, 600)
        page.wait_for_timeout(50)
    page.wait_for_timeout(800)
    before = top_of(page, anchor)
    page.reload(wait_until="load")
    page.wait_for_timeout(1500)
    assert abs(top_of(page, anchor) - before) < 8, (before, top_of(page, anchor))


def test_copying_the_whole_page_copies_every_block(desktop, served_site):
    _, url = served_site
    page = desktop.new_page()
    page.goto(url + LESSON, wait_until="load")
    # The last block whose content is skipped on arrival, and its text.
    skipped = page.evaluate("""() => [...document.querySelectorAll('.md-content__inner > *')]
        .filter(b => b.firstElementChild && !b.firstElementChild.checkVisibility({contentVisibilityAuto: true}))
        .map(b => b.textContent)""")
    assert skipped, "every block was laid out on arrival: nothing is tested here"
    copied = page.evaluate("""() => { const range = document.createRange();
        range.selectNodeContents(document.querySelector('.md-content__inner'));
        const selection = getSelection(); selection.removeAllRanges(); selection.addRange(range);
        return selection.toString(); }""")
    tail = " ".join(skipped[-1].split())[-20:]
    assert tail and tail in " ".join(copied.split()), tail


def test_on_a_phone_the_last_widget_goes_live_when_scrolled_to(browser, served_site):
    _, url = served_site
    context = browser.new_context(viewport={"width": 375, "height": 800})
    try:
        page = context.new_page()
        page.goto(url + LESSON, wait_until="load")
        last = page.locator(".md-content__inner [data-widget]").last
        name = last.get_attribute("data-widget")
        last.scroll_into_view_if_needed()
        page.wait_for_selector(f'[data-widget="{name}"][data-ready="true"]', timeout=90_000)
    finally:
        context.close()


def inlined_css(page):
    return page.evaluate("() => [...document.head.querySelectorAll('style[data-css]')].map(s => s.dataset.css)")


def test_instant_navigation_swaps_the_inlined_widget_css(desktop, served_site):
    _, url = served_site
    page = desktop.new_page()
    page.goto(url + LESSON, wait_until="load")
    assert "widgets/ffn_xor/style.css" in inlined_css(page)
    start_material(page)  # the reader moves the mouse: Material's instant navigation starts
    page.evaluate("window.sameDocument = true")
    page.click("a.md-footer__link--next")  # 第 2 课, swapped in by Material without a page load
    page.wait_for_selector('[data-widget="depth-signal"]')
    page.wait_for_function("() => document.head.querySelector('style[data-css=\"widgets/depth_signal/style.css\"]')")
    styles = inlined_css(page)
    assert page.evaluate("window.sameDocument") is True, "instant navigation fell back to a full load"
    assert "widgets/ffn_xor/style.css" not in styles and len(styles) == len(set(styles)), styles
    # The swapped-in widget is styled by its own CSS: its controls sit in a row.
    shown = page.evaluate("() => getComputedStyle(document.querySelector('.ds-controls')).display")
    assert shown == "flex", shown
