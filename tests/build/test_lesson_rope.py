"""C3 第 2 课 (多头与位置：RoPE): the page's paper figures come from data/papers.json's checked rows."""
import html as htmllib
import json
import re

import numfmt
from support import ROOT


def text_of(site_dir):
    body = (site_dir / "c3" / "l2-heads-rope" / "index.html").read_text(encoding="utf-8")
    body = re.sub(r'<span class="katex-mathml">.*?</span>', "", body, flags=re.S)
    return htmllib.unescape(re.sub(r"<[^>]+>", "", body))


def test_llama_3s_base_is_the_reports_and_the_widgets_largest(site_dir):
    row = json.loads((ROOT / "data" / "papers.json").read_text(encoding="utf-8"))["llama3_2024_rope"]["rows"][0]
    assert f"{row['rope_theta']:,}" in row["quote"] and f"{row['context_cited']:,}" in row["quote"]  # the quote says them
    text = text_of(site_dir)
    assert f"Llama 3 把 base 提到了 {numfmt.num(row['rope_theta'])}（小部件里最大的那个 base）" in text
    assert f"最长 {numfmt.num(row['context_cited'])} 个 token 的上下文上有效" in text
