"""kv-generate: the cached run gives the full recomputation's tokens and logits, the planted bug
diverges, the work counted from the shapes matches a count of every product, and the first state."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("kv-generate")
VOCAB = json.loads((ROOT / "data" / "tiny-gpt.json").read_text(encoding="utf-8"))["vocab"]


def generate(n, engine=None, monkeypatch=None):
    if engine is not None:
        monkeypatch.setattr(model, "ENGINE", engine)
        for k in ("key", "model", "runs"):  # weights in the engine's form, and the old ones back afterwards
            monkeypatch.setitem(model.SESSION, k, None)
    model.start({"vocab": VOCAB, "n": n})
    calls = {}
    for m in model.METHODS:
        calls[m] = 0
        while not model.run({"method": m})["done"]:
            calls[m] += 1
    return model.compare({}), calls


@pytest.mark.parametrize("n", [8, 16])
def test_the_cached_run_is_the_full_recomputation_bit_for_bit(n):
    c, _ = generate(n)
    runs = model.SESSION["runs"]
    assert runs["cached"].seq == runs["full"].seq and len(runs["full"].rows) == n
    assert runs["cached"].rows == runs["full"].rows  # the same floats, not merely close
    assert c["numbers"]["cached"] == {"same": True, "first": None, "largest": 0.0, "steps": n}
    assert c["verdicts"]["cached"].startswith("和整段重算逐个 token 相同（" + str(n) + " 个）") and "0（一位不差）" in c["verdicts"]["cached"]
    assert c["texts"]["cached"] == c["texts"]["full"]


def test_the_wrong_position_diverges():
    c, _ = generate(16)
    d = c["numbers"]["wrong"]
    assert not d["same"] and d["largest"] > 0.01
    runs = model.SESSION["runs"]
    # The prompt's prefill is right: the first generated token agrees, the bug starts with the second.
    assert runs["wrong"].rows[0] == runs["full"].rows[0] and runs["wrong"].rows[1] != runs["full"].rows[1]
    assert c["verdicts"]["wrong"].startswith("从第 " + str(d["first"] + 1) + " 个生成的 token 起和整段重算不同")


def test_the_ulab_engine_agrees_to_rounding(monkeypatch):
    tinygpt_ulab = model.tinygpt_ulab  # the model's own import
    if tinygpt_ulab.np is None:
        pytest.skip("numpy stands in for ulab in CPython")
    c, _ = generate(16, tinygpt_ulab, monkeypatch)
    assert c["numbers"]["cached"]["same"] and c["numbers"]["cached"]["largest"] < 1e-12
    assert not c["numbers"]["wrong"]["same"]


def count_by_hand(n, V, t0, L=model.N_LAYER, d=model.N_EMBD):
    """Every product the engine's loops make, counted one matrix at a time."""
    def rows_through(rows):  # and lm_head on the last row only: generation reads no other
        per_layer = rows * (d * d * 3 + d * d + d * 4 * d + 4 * d * d)  # q, k, v; o; w1; w2
        return L * per_layer + V * d

    def attention(query_positions):  # a query at position p reads p + 1 keys and values, d numbers each
        return L * sum(2 * d * (p + 1) for p in query_positions)

    full = sum(rows_through(t) + attention(range(t)) for t in range(t0, t0 + n))
    cached = rows_through(t0) + attention(range(t0)) + sum(rows_through(1) + attention([t - 1]) for t in range(t0 + 1, t0 + n))
    return full, cached


@pytest.mark.parametrize("n", [8, 16, 60])
def test_the_work_matches_a_count_of_every_product(n):
    w = model.work(n, len(VOCAB))
    full, cached = count_by_hand(n, len(VOCAB), len(model.PROMPT))
    assert (w["full"], w["cached"]) == (full, cached) and w["ratio"] == full / cached


def test_a_call_of_the_full_run_stays_within_its_budget():
    model.start({"vocab": VOCAB, "n": 60})
    r = model.SESSION["runs"]["full"]
    made = 0
    while not r.done():
        before = len(r.rows)
        model.run({"method": "full"})
        spent = sum(model.forward_cost(len(r.m.prompt) + i, len(VOCAB)) for i in range(before, len(r.rows)))
        assert len(r.rows) - before == 1 or spent <= model.MAX_CALL_COST
        made += 1
    assert made > 1 and model.run({"method": "cached"})["done"]  # the cached run in one call


def test_the_report_says_the_students_times_and_the_ratio():
    rep = model.report({"ms": {"full": 1200.4, "cached": 80.0, "wrong": 79.0}, "n": 16})
    assert rep["out"]["speedup"] == "在你的设备上，用缓存快了 15.0 倍。"  # 1200.4 / 80
    assert rep["out"]["time-full"] == "1,200 ms（每个 token 75.0 ms）"
    slow = model.report({"ms": {"full": 40.0, "cached": 50.0}, "n": 16})["out"]["speedup"]
    assert "反而更慢" in slow and "0.8 倍" in slow and "快了" not in slow  # never "faster 0.8 times"


def test_n_outside_the_choices_is_refused():
    with pytest.raises(ValueError, match="n must be one of 8, 16, 32, 60"):
        model.start({"vocab": VOCAB, "n": 61})


def test_first_state_is_in_the_html():
    html = str(Renderer({"num": model.num})("kv-generate", vocab=VOCAB))
    state = model.view({"vocab": VOCAB, "n": 16})
    assert 'data-widget="kv-generate"' in html
    assert f'data-out="work-full">{state["out"]["work-full"]}<' in html and "生成并计时" in html
