"""Material's search in Chromium: a student opens it with "/", types a word, and a lesson is listed."""
import pytest

pytestmark = pytest.mark.e2e

# Words a student types. 三國 is Traditional, as in the corpus name 《三國演義》; 编码 is the
# second half of 视觉编码器 and ResNet is written （ResNet, both unfindable before course/search.py
# and the search separator in mkdocs.yml.
WORDS = ["前馈", "网络", "神经元", "残差", "激活", "最小二乘", "线性", "三國", "门控", "GELU", "FFN",
         "编码", "ResNet"]

RESULTS = ".md-search-result__list li"
LESSON_LINK = r"/course/c\d+/l\d+[^/]*/"  # a lesson page (c4/l1-ffn/), not the home page


@pytest.fixture(scope="module")
def search(browser, served_site):
    context = browser.new_context()
    page = context.new_page()
    page.goto(served_site[1])
    # Material's shortcut, pressed at once: the key starts Material's bundle (material_start.js),
    # which then opens search and focuses the query box.
    page.keyboard.press("/")
    page.wait_for_function("document.activeElement.matches('input.md-search__input')")
    yield page
    context.close()


def type_like_a_student(page, word):
    """Latin letters go key by key. Chinese arrives as an input method commits it: the text at
    once, then the key-up of the key that chose it (Material reads the query on key-up)."""
    if word.isascii():
        page.keyboard.type(word)
    else:
        page.keyboard.insert_text(word)
        page.keyboard.up("Space")


@pytest.mark.parametrize("word", WORDS)
def test_typing_a_word_lists_a_lesson(search, word):
    search.keyboard.press("Control+A")
    search.keyboard.press("Backspace")
    search.wait_for_selector(RESULTS, state="detached")  # the previous word's results are gone
    type_like_a_student(search, word)
    try:
        search.wait_for_function(
            """pattern => [...document.querySelectorAll(".md-search-result__list a")]
                           .some(a => new RegExp(pattern).test(new URL(a.href).pathname))""",
            arg=LESSON_LINK, timeout=15_000)
    except Exception:
        said = search.locator(".md-search-result__meta").inner_text()
        pytest.fail(f"searching {word!r} lists no lesson (search says: {said})")
