"""The built search index: the words a student types start a word there (the browser matches
a query at the start of a word), and long Chinese words are split without changing the text."""
import json
import re

import pytest

from course.search import ZWSP, split_long_words

WORDS = ["前馈", "网络", "神经元", "残差", "激活", "最小", "线性", "三國", "门控", "GELU", "FFN",
         "编码", "ResNet"]


@pytest.fixture(scope="module")
def index(site_dir):
    return json.loads((site_dir / "search" / "search_index.json").read_text(encoding="utf-8"))


def words_of(index):
    """The index's words as the browser cuts them: markup left out, split on the separator."""
    separator = re.compile(index["config"]["separator"])
    return {w.lower() for doc in index["docs"] for field in ("title", "text")
            for w in separator.split(re.sub(r"<[^>]*>", " ", doc.get(field, ""))) if w}


@pytest.mark.parametrize("word", WORDS)
def test_a_students_word_starts_a_word_in_the_index(index, word):
    assert any(w.startswith(word.lower()) for w in words_of(index)), f"{word} starts no word in the index"


def test_long_words_are_split_into_their_parts():
    assert split_long_words(f"{ZWSP}视觉编码{ZWSP}器") == f"{ZWSP}视觉{ZWSP}编码{ZWSP}器"
    assert split_long_words("神经元") == "神经元"  # no exact cover by shorter words: kept


def test_the_built_index_is_already_split_and_reads_the_same(index):
    for doc in index["docs"]:
        for field in ("title", "text"):
            text = doc.get(field, "")
            assert split_long_words(text) == text, f"{doc['location']} {field} was not split at build time"
    assert f"视觉{ZWSP}编码" in json.dumps(index, ensure_ascii=False)


def test_splitting_only_adds_zero_width_spaces():
    text = f"{ZWSP}从左到右{ZWSP}的{ZWSP}初始状态{ZWSP}，成千上万"
    assert split_long_words(text).replace(ZWSP, "") == text.replace(ZWSP, "")
