"""The attention export's category-free measures (content, scores, knockout): the best position-only
weights are found, a head that cannot see content measures as position-only and costs nothing to knock
out, the knockout reads the loss the runs report, and the unscaled scores are the scaled ones times
sqrt(head_dim)."""
import math

import pytest

torch = pytest.importorskip("torch")

from lab import train  # noqa: E402
from lab.experiments import attention  # noqa: E402
from lab.model import GPT, make_config  # noqa: E402

pytestmark = pytest.mark.lab


def blind_head(model, layer, head):
    """Zero the head's query rows: every score is 0, so its weights are the prefix average."""
    C = model.cfg.d_model
    hs = C // model.cfg.n_head
    with torch.no_grad():
        model.blocks[layer].attn.qkv.weight[head * hs:(head + 1) * hs] = 0  # W_Q's rows of that head
    return model


@pytest.fixture(scope="module")
def small():
    torch.manual_seed(0)
    model = GPT(make_config(vocab_size=50, block_size=16)).eval()
    val = torch.randint(0, 50, (90,))
    windows = [(s, min(s + 16, 90)) for s in range(0, 90, 16)]
    hs = model.cfg.d_model // model.cfg.n_head
    with torch.no_grad():  # one sharp head (layer 1, head 1: its queries 40 times larger), one blind
        model.blocks[0].attn.qkv.weight[:hs] *= 40
    return blind_head(model, 1, 2), val, windows


def test_the_fit_recovers_weights_that_are_position_only():
    """Weights made from known scores s(d): the fit gives back the same weights (s up to a constant)."""
    D = 12
    gen = torch.Generator().manual_seed(1)
    s = torch.randn(2, D, generator=gen, dtype=torch.float64) * 2  # (heads, D)
    queries_at = torch.tensor([0] + [5.0] * (D - 1), dtype=torch.float64)  # 5 windows of D tokens, t >= 1
    w = attention.positional_weights(s, D)  # (2, D, D)
    t = torch.arange(D)
    by_distance = torch.zeros(2, D, dtype=torch.float64)
    for q in range(1, D):
        for j in range(q + 1):
            by_distance[:, q - j] += 5 * w[:, q, j]
    fit, grad = attention.positional_fit(by_distance, queries_at)
    assert grad < 1e-6
    assert torch.allclose(attention.positional_weights(fit, D)[:, 1:], w[:, 1:], atol=1e-5)
    assert torch.all(attention.positional_weights(fit, D).triu(1) == 0) and t.numel() == D


def test_a_head_that_cannot_see_content_is_position_only(small):
    model, val, windows = small
    c = attention.content(model, val, windows)
    by = {(h["layer"], h["head"]): h for h in c["heads"]}
    blind = by[(2, 3)]
    assert blind["tv_position"] < 1e-4 and blind["tv_prefix"] < 1e-4 and blind["kl_position"] < 1e-6
    others = [h for k, h in by.items() if k != (2, 3)]
    assert by[(1, 1)]["tv_prefix"] > 0.3 and by[(1, 1)]["tv_position"] > 0.1  # the sharp head picks by content
    for h in others:  # the best position-only weights are at least as close as the prefix average, a position-only weighting
        assert h["tv_position"] <= h["tv_prefix"] + 0.01
    assert c["queries"] == sum(b - a - 1 for a, b in windows)
    fitted = {(f["layer"], f["head"]): f["scores"] for f in c["fitted"]}
    assert max(fitted[(2, 3)]) == 0 and min(fitted[(2, 3)]) > -1e-3  # a flat s(d): the prefix average


def test_knocking_out_a_head_that_already_averages_costs_nothing(small):
    model, val, windows = small
    k = attention.knockout(model, val, (0, len(val)), 16)
    by = {(h["layer"], h["head"]): h for h in k["heads"]}
    assert abs(by[(2, 3)]["delta"]) < 1e-4 and by[(2, 3)]["se"] < 1e-4
    assert abs(by[(1, 1)]["delta"]) > 1e-3  # the sharp head does change the loss
    assert k["val_loss"] == pytest.approx(train.evaluate(model, val, 16, torch.device("cpu"))[0], abs=1e-4)
    assert k["windows"] == len(range(0, len(val) - 1, 16)) and len(k["heads"]) == 16
    assert k["all_heads"]["delta"] == pytest.approx(k["all_heads"]["val_loss"] - k["val_loss"], abs=2e-4)


def test_the_knockout_gives_the_head_the_prefix_average():
    """The hook's output with one head replaced equals attention computed by hand with that head's
    weights set to 1/(t+1)."""
    torch.manual_seed(3)
    model = GPT(make_config(vocab_size=30, block_size=8)).eval()
    ids = torch.randint(0, 30, (8,))
    attn = model.blocks[0].attn
    seen = {}
    handle = attn.register_forward_hook(lambda m, a, o: seen.update(x=a[0], cos=a[1], sin=a[2]))
    model(ids[None])
    handle.remove()
    cap = attention.AttentionCapture(model, replace={0: [1]})
    try:
        out = attn(seen["x"], seen["cos"], seen["sin"])
    finally:
        cap.remove()
    w = attention.attention_of(model, ids)[0]  # (H, T, T) as trained
    T, C, H = 8, model.cfg.d_model, model.cfg.n_head
    w[1] = torch.ones(T, T).tril() / torch.arange(1, T + 1)[:, None]
    v = attn.qkv(seen["x"])[0, :, 2 * C:].view(T, H, C // H).transpose(0, 1)  # (H, T, hs)
    y = (w @ v).transpose(0, 1).reshape(T, C)
    assert torch.allclose(out[0], attn.proj(y), atol=1e-5)


def test_unscaled_scores_are_the_scaled_ones_times_sqrt_dk(small):
    model, val, windows = small
    hd = model.cfg.d_model // model.cfg.n_head
    scaled = attention.score_stats(model, val, windows)
    raw = attention.score_stats(model, val, windows, math.sqrt(hd))
    for a, b in zip(scaled["heads"], raw["heads"]):
        assert b["score_sd"] == pytest.approx(a["score_sd"] * math.sqrt(hd), rel=1e-3)
        assert b["top_weight"] >= a["top_weight"] and b["slope"] <= a["slope"]
    blind = next(h for h in scaled["heads"] if (h["layer"], h["head"]) == (2, 3))
    avg = attention.prefix_average_scores(windows)
    assert blind["score_sd"] < 1e-6 and blind["top_weight"] == pytest.approx(avg["top_weight"], abs=1e-4)
    assert blind["slope"] == pytest.approx(avg["slope"], abs=1e-4) and blind["saturated"] == 0


def test_at_init_the_scores_spread_as_the_init_scale_says():
    """RMSNorm'd inputs, N(0, 0.02^2) weights, d = 256: each q or k component has variance 256 * 0.02^2,
    so an unscaled score q.k has standard deviation sqrt(64) * 0.1024 = 0.82 (the page's figure); the
    spread over a query's keys, measured on random tokens, comes out near it."""
    torch.manual_seed(0)
    model = GPT(make_config(vocab_size=500, block_size=64)).eval()
    val = torch.randint(0, 500, (640,))
    raw = attention.score_stats(model, val, [(s, s + 64) for s in range(0, 640, 64)], 8.0)
    sds = [h["score_sd"] for h in raw["heads"] if h["layer"] == 1]
    assert all(0.6 < sd < 1.0 for sd in sds), sds
