"""attention-toy: the three weightings against an independent numpy computation, the lesson's
claims about them (the fixed positional weights lose 小明 when 「昨天」 is inserted, the query-key
weights do not), the causal mask, the hand computation of ⑤ and the head the exercise checks."""
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import load_model  # noqa: E402

model = load_model("attention-toy")


def np_head(Q, K, V, mask=True):
    Q, K, V = (np.asarray(m, dtype=np.float64) for m in (Q, K, V))
    s = Q @ K.T / np.sqrt(K.shape[1])
    if mask:
        s = np.where(np.tril(np.ones_like(s)) > 0, s, -np.inf)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    return w, w @ V


@pytest.mark.parametrize("sentence", ["plain", "inserted"])
@pytest.mark.parametrize("mask", [True, False])
def test_query_key_weights_match_numpy(sentence, mask):
    m = model.matrices(sentence)
    w, out = np_head(m["Q"], m["K"], m["V"], mask)
    for t in range(len(m["tokens"])):
        _, mine = model.weights(m["tokens"], t, "qk", mask)
        assert np.allclose(mine, w[t])
    if mask:
        assert np.allclose(model.head(m["Q"], m["K"], m["V"]), out)


def test_the_cheap_fixes_fail_as_the_lesson_says():
    _, plain = model.sentence_tokens("plain")
    _, ins = model.sentence_tokens("inserted")
    give_p, give_i = plain.index("给了"), ins.index("给了")
    assert model.weights(plain, give_p, "average")[1][:give_p + 1] == [0.25] * 4
    assert model.weights(ins, give_i, "average")[1][0] == pytest.approx(0.2)
    pos_p = model.weights(plain, give_p, "position")[1]
    pos_i = model.weights(ins, give_i, "position")[1]
    assert max(range(5), key=lambda j: pos_p[j]) == plain.index("小明")
    assert max(range(6), key=lambda j: pos_i[j]) == ins.index("昨天") and pos_i[0] == 0.0
    for tokens, t in ((plain, give_p), (ins, give_i)):
        w = model.weights(tokens, t, "qk")[1]
        assert max(range(len(tokens)), key=lambda j: w[j]) == 0 and w[0] > 0.8  # 小明, wherever it stands
    open_w = model.weights(plain, give_p, "qk", False)[1]
    assert open_w[4] == pytest.approx(open_w[0]) and open_w[4] > 0.4  # without the mask it sees 小王


def test_the_hand_computation():
    wk = model.worked("plain", "给了")
    assert wk["dots"] == [4.0, 0.0, 0.0, 0.0]
    assert wk["scores"][0] == pytest.approx(2 * np.sqrt(2))
    assert wk["total"] == pytest.approx(np.exp(2 * np.sqrt(2)) + 3)
    assert wk["out"] == pytest.approx([np.exp(2 * np.sqrt(2)) / wk["total"], 1 / wk["total"], 0.0])


def test_view_and_its_text():
    s = model.view(model.PARAMS)
    assert [r["token"] for r in s["table"]] == ["小明", "把", "苹果", "给了", "小王"]
    assert s["table"][4]["weight"] == "看不见" and s["out"]["said"].startswith("「给了」的权重最大的一格是「小明」（0.849）")
    avg = model.view({**model.PARAMS, "mode": "average"})
    assert "一视同仁，每个 0.250" in avg["out"]["said"]
    with pytest.raises(ValueError):
        model.view({**model.PARAMS, "query": "昨天"})  # not in the plain sentence


def test_the_mask_box_shows_the_mask_that_applies():
    """Only 查询 · 键 can drop the mask: in the other modes the box shows ticked (and the page disables
    it), whatever was unticked under 查询 · 键, because those modes still hide the later tokens."""
    for mode in ("average", "position"):
        state = model.view({**model.PARAMS, "mode": mode, "mask": False})
        assert state["mask_on"] is True and not state["qk"]
        assert any(r["hidden"] for r in state["table"])  # the later tokens stay 「看不见」
    assert model.view({**model.PARAMS, "mode": "qk", "mask": False})["mask_on"] is False
    assert model.view({**model.PARAMS, "mode": "qk", "mask": True})["mask_on"] is True


def test_query_key_weights_dilute_too_but_less_than_the_average():
    toy = load_model("attention-toy")
    _, tokens = toy.sentence_tokens("plain")
    assert toy.share_among(4) == pytest.approx(toy.weights(tokens, 3, "qk")[1][0])
    shares = [toy.share_among(n) for n in (4, 31, 101)]
    assert shares[0] > shares[1] > shares[2] > 1 / 101 and shares[2] < 0.2
