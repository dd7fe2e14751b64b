"""token-identity: the pure-Python stack against the same stack written in numpy (cosines, readout,
own-embedding cosine, attention weights), determinism, plain JSON, and what the widget says about
the failure of our own model without skips (it reads at init as the unigram: no position knows
its token)."""
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("token-identity")
MODES = tuple(model.ATTENTION)


def rms_norm(x):
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + model.EPS)


def numpy_stack(seed, attention, skip):
    """The same network in numpy, from the model's weights (stored transposed: W = Wt.T)."""
    w = model.weights(seed)
    emb = np.array(w["emb"])
    tokens = np.array([model.VOCAB.index(c) for c in model.SENTENCE])
    T = len(tokens)
    x = emb[tokens]
    mask = np.tril(np.ones((T, T), dtype=bool))
    states, first_attention = [x], None
    for layer in w["layers"]:
        m = {k: np.array(v).T for k, v in layer.items()}
        h = rms_norm(x)
        if attention == "uniform":
            a = mask / mask.sum(-1, keepdims=True)
        elif attention == "self":
            a = np.eye(T)
        else:
            s = (h @ m["wq"]) @ (h @ m["wk"]).T / math.sqrt(model.DIM)
            s = np.where(mask, s, -np.inf)
            a = np.exp(s - s.max(-1, keepdims=True))
            a = a / a.sum(-1, keepdims=True)
        if first_attention is None:
            first_attention = a
        write = a @ h @ m["wvo"]
        x = x + write if skip else write
        h = rms_norm(x)
        z = h @ m["w1"]
        write = (z / (1 + np.exp(-z)) * (h @ m["w3"])) @ m["w2"]
        x = x + write if skip else write
        states.append(x)
    return states, tokens, emb, first_attention


def numpy_measure(x, tokens, emb):
    u = x / np.linalg.norm(x, axis=-1, keepdims=True)
    T = len(tokens)
    c = u @ u.T
    cosine = (c.sum() - T) / (T * (T - 1))
    e = emb / np.linalg.norm(emb, axis=-1, keepdims=True)
    sims = u @ e.T
    read = sims.argmax(-1)
    return cosine, read, float((read == tokens).mean()), float(sims[np.arange(T), tokens].mean())


@pytest.mark.parametrize("attention", MODES)
@pytest.mark.parametrize("skip", [True, False])
@pytest.mark.parametrize("seed", [0, 2, 7])
def test_every_layer_matches_numpy(seed, skip, attention):
    states, tokens, emb, _ = numpy_stack(seed, attention, skip)
    for k, x in enumerate(states):
        cosine, read, share, own = numpy_measure(x, tokens, emb)
        got = model.summary(k, skip, attention, seed)
        assert got["cosine"] == pytest.approx(cosine, abs=1e-9)
        assert got["own_cosine"] == pytest.approx(own, abs=1e-9)
        assert got["readout"] == share and got["correct"] == round(share * len(tokens))
        assert model.readout(k, skip, attention, seed) == [model.VOCAB[i] for i in read]


@pytest.mark.parametrize("attention", MODES)
def test_first_layer_attention_weights_match_numpy(attention):
    _, _, _, a = numpy_stack(1, attention, True)
    assert model.self_weight(attention, 1) == pytest.approx(float(np.diag(a).mean()), abs=1e-12)
    if attention == "uniform":  # 1/(t+1) on itself at position t: the mean of 1/1 .. 1/8
        assert model.self_weight() == pytest.approx(np.mean(1 / np.arange(1, 9)))


def test_the_embedding_layer_reads_every_token_and_the_vocabulary_is_the_opening_line():
    assert len(model.VOCAB) == 26 and model.chance() == pytest.approx(1 / 26)
    assert all(c in model.VOCAB for c in model.SENTENCE) and len(set(model.SENTENCE)) == len(model.SENTENCE)
    for skip in (True, False):
        first = model.summary(0, skip)
        assert first["readout"] == 1.0 and first["own_cosine"] == pytest.approx(1.0)
    emb = np.array(model.weights(0)["emb"])
    assert np.allclose((emb ** 2).mean(-1), 1.0)  # unit RMS rows: the largest dot is the smallest angle


def test_deterministic_and_independent_of_the_cache():
    a = model.view(model.PARAMS)
    model._runs.clear()
    model._weights.clear()
    assert model.view(model.PARAMS) == a
    assert model.view({**model.PARAMS, "seed": 2}) != a


def test_with_skips_every_position_keeps_its_token_and_without_none_does():
    """The failure of our model without skips, in miniature, for ten seeds: with skips the nearest
    embedding is the position's own token at every layer; without, the readout is at chance level
    from layer 1 on, and the positions' vectors are far more alike."""
    seeds = range(10)
    for k in range(1, model.LAYERS + 1):
        skip = model.over_seeds(k, True, seeds=seeds)
        plain = model.over_seeds(k, False, seeds=seeds)
        assert skip["readout"] == 1.0 and skip["own_cosine"] > 0.7
        assert plain["readout"] < 0.15 and abs(plain["own_cosine"]) < 0.2
        assert plain["cosine"] > skip["cosine"] + 0.3
        for s, p in zip(skip["seeds"], plain["seeds"]):
            assert p["cosine"] > s["cosine"]
    assert model.over_seeds(8, False, seeds=seeds)["cosine"] > 0.8  # towards one vector (rank collapse)


def test_attending_only_to_itself_keeps_positions_apart_but_still_loses_the_token():
    seeds = range(10)
    for k in (2, 4, 8):
        mixed = model.over_seeds(k, False, "uniform", seeds)
        alone = model.over_seeds(k, False, "self", seeds)
        assert alone["cosine"] < mixed["cosine"] - 0.3 and alone["readout"] < 0.2
        assert model.over_seeds(k, True, "self", seeds)["readout"] > 0.95
    assert "只看自己" in model.view({**model.PARAMS, "attention": "self"})["out"]["note"]


def test_view_shows_the_chosen_layer_and_every_layer():
    state = model.view({"layers": 3, "attention": "random", "seed": 2})
    skip, plain = model.summary(3, True, "random", 2), model.summary(3, False, "random", 2)
    assert state["out"]["skip-correct"] == f"{skip['correct']}/8" and state["out"]["plain-cos"] == model.num(plain["cosine"], 2)
    assert state["rows"]["layer-3"]["data-selected"] == "true" and state["rows"]["layer-4"]["data-selected"] == "false"
    for k in range(model.LAYERS + 1):
        assert state["rows"][f"layer-{k}"]["cos-plain"] == model.num(model.summary(k, False, "random", 2)["cosine"], 2)
    read = model.readout(3, False, "random", 2)
    for t, c in enumerate(model.SENTENCE):
        row = state["rows"][f"pos-{t}"]
        assert row["plain"].startswith(read[t]) and row["data-plain-ok"] == ("true" if read[t] == c else "false")
        assert row["plain"].endswith("✓" if read[t] == c else "✗")
    assert f"没有残差时 8 个位置里 {plain['correct']} 个读出自己" in state["announce"]
    assert f"有残差时读出自己的 {skip['correct']} 个" in state["announce"]


def test_every_setting_is_plain_json_and_quick():
    import time
    for attention in MODES:
        for seed in model.SEEDS:
            for layers in (1, 8):
                json.dumps(model.view({"layers": layers, "attention": attention, "seed": seed}), allow_nan=False)
    model._runs.clear()
    start = time.process_time()
    model.view({**model.PARAMS, "attention": "random"})  # the dearest setting, uncached
    assert time.process_time() - start < 0.2  # ~10-20 ms on a laptop; generous for a loaded CI box


def test_bad_params_fail():
    for bad in ({"layers": 0}, {"layers": 9}, {"attention": "learned"}, {"seed": 5}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            model.view({**model.PARAMS, **bad})
    with pytest.raises(ValueError):
        model.summary(9, True)


def test_first_state_is_in_the_html():
    html = str(Renderer({"num": model.num})("token-identity"))
    state = model.view(model.PARAMS)
    assert 'data-widget="token-identity"' in html
    for key in ("skip-correct", "plain-correct", "plain-cos", "self-weight", "note"):
        assert f'data-out="{key}">{state["out"][key]}<' in html
    for t in range(len(model.SENTENCE)):
        assert f'data-out="plain">{state["rows"][f"pos-{t}"]["plain"]}<' in html
    assert 'name="ti-attention" value="uniform" checked' in html and f'name="ti-seed" value="{model.PARAMS["seed"]}" checked' in html
    for label in html.split("<label")[1:]:  # no label wraps both a control and an <output>
        label = label.split("</label>")[0]
        assert not ("<input" in label and "<output" in label)
