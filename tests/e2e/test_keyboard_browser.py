"""From the keyboard alone: Tab reaches every control of the lesson's widgets, formula and stepper,
and the focused control shows a visible focus ring, in both palettes."""
import pytest

pytestmark = pytest.mark.e2e
CONTROLS = ":is([data-widget], [data-terms], [data-stepper]) :is(button, input, select, [tabindex='0'])"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_tab_reaches_every_control_and_shows_where_it_is(browser, served_site, scheme):
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(served_site[1] + "c4/l1-ffn/")
    page.click('button[data-step-to="3"]')  # the last step shows every part
    for root in page.locator("[data-widget]").all():
        root.scroll_into_view_if_needed()
        page.wait_for_selector(f'[data-widget="{root.get_attribute("data-widget")}"][data-ready="true"]',
                               timeout=90_000)
    page.evaluate("window.scrollTo(0, 0); document.activeElement.blur()")
    # One id per control; radio groups are one Tab stop (arrows move inside), so count a group once.
    wanted = page.evaluate(f"""() => {{
        const seen = new Set(), out = [];
        document.querySelectorAll("{CONTROLS}").forEach((el, i) => {{
            if (el.disabled || !el.checkVisibility()) return;
            const key = el.type === "radio" ? "radio:" + el.name : "el:" + i;
            el.dataset.kbKey = key;
            if (!seen.has(key)) {{ seen.add(key); out.push(key); }}
        }});
        return out;
    }}""")
    assert len(wanted) > 20 and "radio:activation" in wanted and "radio:scale" in wanted
    reached, unringed = set(), []
    for _ in range(400):
        # An exercise's editor keeps Tab for indenting; Esc then Tab leaves it, as the page says.
        if page.evaluate("() => Boolean(document.activeElement && document.activeElement.closest('.cm-editor'))"):
            page.keyboard.press("Escape")
        page.keyboard.press("Tab")
        info = page.evaluate("""() => {
            const el = document.activeElement;
            if (!el || !el.dataset.kbKey) return null;
            const s = getComputedStyle(el);
            const ring = (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== "none";
            return {key: el.dataset.kbKey, ring, what: el.outerHTML.slice(0, 80)};
        }""")
        if info:
            reached.add(info["key"])
            if not info["ring"]:
                unringed.append(info["what"])
        if reached >= set(wanted):
            break
    context.close()
    assert set(wanted) - reached == set(), "Tab never reached these controls"
    assert unringed == [], f"no visible focus on: {unringed[:5]}"
