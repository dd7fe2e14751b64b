"""heads-split: cutting the same 4 x 4 projections into heads is a regrouping (the heads' scores and
outputs against one matrix product per head written here), one head's single row cannot be sharp on
both 小明 and 苹果 while two heads can, and the build's first state is in the HTML."""
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("heads-split")


def by_hand(heads, sharpness):
    """Attention for 「给了」 written out per head with explicit channel ranges."""
    d_k = model.D_MODEL // heads
    q = [sharpness * x for x in model.QUERY_DIRECTION]
    seen = model.TOKENS[:model.QUERY + 1]
    out = []
    for h in range(heads):
        lo, hi = h * d_k, (h + 1) * d_k
        s = [sum(q[c] * model.KEYS[t][c] for c in range(lo, hi)) / math.sqrt(d_k) for t in seen]
        e = [math.exp(x) for x in s]
        w = [x / sum(e) for x in e]
        out += [sum(w[j] * model.VALUES[t][c] for j, t in enumerate(seen)) for c in range(lo, hi)]
    return out


@pytest.mark.parametrize("heads", model.HEADS)
def test_each_head_reads_its_own_channels_of_the_same_projections(heads):
    for sharpness in (0.5, 3.0, 6.0):
        _, out = model.attend(heads, sharpness)
        assert out == pytest.approx(by_hand(heads, sharpness), abs=1e-12)


def test_one_head_cannot_hold_both_but_two_heads_can():
    for sharpness in (0.5, 3.0, 6.0):
        person, thing = model.fetched(model.attend(1, sharpness)[1])
        assert person + thing <= 1.0 + 1e-12
    # sharpening the single row pushes 小明 out (苹果's key is longer); two heads keep both
    one = [model.fetched(model.attend(1, s)[1])[0] for s in (3.0, 6.0)]
    assert one[1] < one[0] < 0.5
    two = model.view({"heads": 2, "sharpness": 6.0})["out"]
    assert float(two["person"]) > 0.99 and float(two["thing"]) > 0.99
    four = model.view({"heads": 4, "sharpness": 3.0})
    assert [h["said"] for h in four["heads"]][1::2] == ["平均看每个位置"] * 2, "the zero-query heads average"


def test_bad_params_are_refused():
    with pytest.raises(ValueError, match="heads"):
        model.view({"heads": 3, "sharpness": 1.0})
    with pytest.raises(ValueError, match="sharpness"):
        model.view({"heads": 1, "sharpness": 9.0})


def test_first_state_is_in_the_html():
    html = str(Renderer({"num": model.num})("heads-split"))
    state = model.view(model.PARAMS)
    assert 'data-widget="heads-split"' in html and f'data-out="person">{state["out"]["person"]}<' in html
    assert html.count('class="hs-head"') == model.PARAMS["heads"]
