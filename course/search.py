"""Search: make the parts of long Chinese words findable.

Material's search plugin cuts Chinese text with jieba's default mode and writes
the words into search/search_index.json with a zero-width space (U+200B) between
them; the browser splits on it and matches a query at the start of a word. A long
word stays whole, so its later parts are never found: 视觉编码 is found by 视觉
but not by 编码, 初始状态 not by 状态.

After the plugin has written the index, `split_long_words` cuts each such word
into the shorter words jieba's search mode finds inside it, when they cover it
exactly: 视觉编码 -> 视觉 + 编码. The word itself is still found (by its first
part), and the text shown in the results reads the same, since only zero-width
spaces are added. jieba's search mode as such (cut_for_search) emits the parts
*and* the whole word, which would show every such word twice in the results.
"""
import json
import re
from pathlib import Path

ZWSP = "\u200b"
# A jieba word of four or more Han characters: shorter ones cannot be covered
# by two parts of two characters or more.
LONG_WORD = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{4,}")


def word_parts(word):
    """The fewest words of jieba's search mode (two characters or more) that make
    up `word` exactly, or [word]: '视觉编码' -> ['视觉', '编码'], '神经元' -> ['神经元']."""
    import jieba

    known = {p for p in jieba.cut_for_search(word, HMM=False) if 1 < len(p) < len(word)}
    best = {0: []}  # end offset -> fewest parts covering word[:end]
    for start in range(len(word)):
        if start not in best:
            continue
        for part in known:
            end = start + len(part)
            if word.startswith(part, start) and (end not in best or len(best[start]) + 1 < len(best[end])):
                best[end] = best[start] + [part]
    return best.get(len(word), [word])


def split_long_words(text):
    """Index text with its long Chinese words cut into their parts:
    '\u200b视觉编码\u200b器' -> '\u200b视觉\u200b编码\u200b器'."""
    return LONG_WORD.sub(lambda m: ZWSP.join(word_parts(m.group(0))), text)


def refine_index(site_dir):
    """Rewrite site_dir/search/search_index.json (if search is on) with long words split."""
    path = Path(site_dir) / "search" / "search_index.json"
    if not path.exists():
        return
    index = json.loads(path.read_text(encoding="utf-8"))
    for doc in index["docs"]:
        for field in ("title", "text"):
            if isinstance(doc.get(field), str):
                doc[field] = split_long_words(doc[field])
    path.write_text(json.dumps(index, separators=(",", ":")), encoding="utf-8")
