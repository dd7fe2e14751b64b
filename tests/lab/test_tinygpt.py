"""widgets/common/tinygpt.py, the browser's pure-Python GPT, against PyTorch: every backward
pass against autograd on a tiny configuration, and a short training run against a PyTorch copy
of the same model with torch.optim.AdamW, all in float64."""
import math
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "widgets" / "common"))
import tinygpt as tg  # noqa: E402
from rng import Rng  # noqa: E402

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True)
def float64():
    """float64 for this file's tests only: the default dtype is global, and the lab's other tests
    (run after these) train and compare exports in float32."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


def rand(rows, cols, seed):
    return Rng(seed).gauss_matrix(rows, cols)


def leaf(M):
    return torch.tensor(M, requires_grad=True)


def close(ours, theirs, tol=1e-10):
    theirs = theirs.detach()
    ours = torch.tensor(ours)
    assert ours.shape == theirs.shape
    assert torch.allclose(ours, theirs, rtol=tol, atol=tol), (ours - theirs).abs().max()


def test_linear_backward():
    X, W, dY = rand(5, 4, 1), rand(3, 4, 2), rand(5, 3, 3)
    dW = tg.zeros(3, 4)
    dX = tg.linear_back(dY, X, W, dW)
    x, w = leaf(X), leaf(W)
    y = x @ w.T
    close(tg.linear(X, W), y)
    y.backward(torch.tensor(dY))
    close(dX, x.grad)
    close(dW, w.grad)


def test_rmsnorm_backward():
    X, dY = rand(4, 6, 4), rand(4, 6, 5)
    Y, R = tg.rmsnorm(X)
    x = leaf(X)
    y = x / torch.sqrt((x * x).mean(-1, keepdim=True) + tg.EPS)
    close(Y, y)
    y.backward(torch.tensor(dY))
    close(tg.rmsnorm_back(dY, Y, R), x.grad)


@pytest.mark.parametrize("n_head", [1, 2])
def test_attention_backward(n_head):
    B, T, d = 2, 5, 4
    Q, K, V, dO = (rand(B * T, d, s) for s in (6, 7, 8, 9))
    out, P = tg.attention(Q, K, V, n_head, T)
    dq, dk, dv = tg.attention_back(dO, Q, K, V, P, n_head, T)
    q, k, v = leaf(Q), leaf(K), leaf(V)
    hs = d // n_head
    split = lambda m: m.view(B, T, n_head, hs).transpose(1, 2)  # noqa: E731
    y = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
    y = y.transpose(1, 2).reshape(B * T, d)
    close(out, y)
    y.backward(torch.tensor(dO))
    close(dq, q.grad)
    close(dk, k.grad)
    close(dv, v.grad)


def test_relu_and_cross_entropy_backward():
    X = rand(6, 5, 10)
    targets = [0, 4, 2, 2, 1, 3]
    x = leaf(X)
    loss_t = F.cross_entropy(torch.relu(x), torch.tensor(targets))
    loss_t.backward()
    H = tg.relu(X)
    loss, dH = tg.cross_entropy(H, targets)
    assert loss == pytest.approx(loss_t.item(), rel=1e-12)
    close(tg.relu_back(dH, H), x.grad)


class TorchGPT:
    """The same model, written with torch ops on a copy of tinygpt's weights."""

    def __init__(self, cfg, W):
        self.cfg = cfg
        self.names = tg.weight_names(cfg)
        self.p = {name: torch.tensor(W[name], requires_grad=True) for name in self.names}

    def loss(self, xs, ys):
        cfg, p = self.cfg, self.p
        B, T = len(xs), len(xs[0])
        d, nh = cfg.n_embd, cfg.n_head
        rms = lambda x: x / torch.sqrt((x * x).mean(-1, keepdim=True) + tg.EPS)  # noqa: E731
        x = p["wte"][torch.tensor(xs)] + p["wpe"][:T]  # (B, T, d)
        for l in range(cfg.n_layer):
            w = lambda n: p[f"h{l}.{n}"]  # noqa: E731
            n1 = rms(x)
            split = lambda m: m.view(B, T, nh, d // nh).transpose(1, 2)  # noqa: E731
            att = F.scaled_dot_product_attention(split(n1 @ w("wq").T), split(n1 @ w("wk").T),
                                                 split(n1 @ w("wv").T), is_causal=True)
            x = x + att.transpose(1, 2).reshape(B, T, d) @ w("wo").T
            x = x + torch.relu(rms(x) @ w("w1").T) @ w("w2").T
        logits = rms(x) @ p["lm_head"].T
        return F.cross_entropy(logits.view(B * T, -1), torch.tensor(ys).view(-1))


def tiny(n_layer=2):
    cfg = tg.Config(vocab_size=11, n_layer=n_layer, n_embd=8, n_head=2, block_size=6)
    return cfg, tg.init_weights(cfg, seed=3)


@pytest.mark.parametrize("n_layer", [1, 2])
def test_model_gradients_match_autograd(n_layer):
    cfg, W = tiny(n_layer)
    rng = Rng(5)
    tokens = [rng.below(cfg.vocab_size) for _ in range(60)]
    xs, ys = tg.get_batch(tokens, 3, cfg.block_size, rng)
    loss, cache = tg.forward(cfg, W, xs, ys)
    G = tg.backward(cfg, W, cache)
    ref = TorchGPT(cfg, W)
    loss_t = ref.loss(xs, ys)
    loss_t.backward()
    assert loss == pytest.approx(loss_t.item(), rel=1e-12)
    for name in tg.weight_names(cfg):
        close(G[name], ref.p[name].grad)


def test_shorter_context_than_block_size():
    """Sampling runs the model on fewer than T tokens: positions 0..t-1 only."""
    cfg, W = tiny(1)
    xs, ys = [[1, 2, 3]], [[2, 3, 4]]
    loss, cache = tg.forward(cfg, W, xs, ys)
    G = tg.backward(cfg, W, cache)
    ref = TorchGPT(cfg, W)
    ref.loss(xs, ys).backward()
    close(G["wpe"], ref.p["wpe"].grad)
    assert loss == pytest.approx(ref.loss(xs, ys).item(), rel=1e-12)


def test_training_run_matches_torch():
    """30 AdamW steps on the same batches: the same losses, step by step, and the same weights."""
    cfg, W = tiny(2)
    ref = TorchGPT(cfg, W)
    opt = tg.AdamW(W, tg.weight_names(cfg), lr=0.01, weight_decay=0.01)
    opt_t = torch.optim.AdamW([ref.p[n] for n in ref.names], lr=0.01, betas=(0.9, 0.99), eps=1e-8,
                              weight_decay=0.01)
    text = "滾滾長江東逝水，浪花淘盡英雄。是非成敗轉頭空。青山依舊在，幾度夕陽紅。" * 3
    tok = tg.Tokenizer(tg.build_vocab(text, cfg.vocab_size))
    tokens = tok.encode(text)
    rng = Rng(9)
    ours, theirs = [], []
    for _ in range(30):
        xs, ys = tg.get_batch(tokens, 4, cfg.block_size, rng)
        ours.append(tg.train_step(cfg, W, opt, xs, ys))
        opt_t.zero_grad()
        loss = ref.loss(xs, ys)
        loss.backward()
        opt_t.step()
        theirs.append(loss.item())
    assert ours == pytest.approx(theirs, rel=1e-9)
    assert ours[-1] < ours[0] - 0.5  # it learned something
    for name in ref.names:
        close(W[name], ref.p[name], tol=1e-8)


def test_tokenizer_folds_rare_characters():
    vocab = tg.build_vocab("曹操曹操劉備孫權", 3)
    assert vocab == [tg.UNK, "操", "曹"]  # a tie in count goes to the lower code point
    tok = tg.Tokenizer(vocab)
    assert tok.encode("曹劉操") == [2, 0, 1]
    assert tok.decode([2, 0, 1]) == "曹" + tg.UNK + "操"


def test_sample_with_low_temperature_is_the_argmax():
    cfg, W = tiny(1)
    ids = tg.sample(cfg, W, [1, 2], 4, 1e-3, Rng(1))
    window = [1, 2]
    for t in ids:
        logits, _ = tg.forward(cfg, W, [window[-cfg.block_size:]])
        row = logits[-1]
        assert t == row.index(max(row))
        window.append(t)
    assert math.isfinite(tg.loss_of(cfg, W, [[1, 2, 3]], [[2, 3, 4]]))


def torch_logits(cfg, W, tokens, cached):
    """The model's logits over one sequence in torch: in one pass (is_causal), or token by token
    with a torch KV cache (each new token's query against the keys and values kept so far)."""
    p = {name: torch.tensor(W[name]) for name in tg.weight_names(cfg)}
    d, nh = cfg.n_embd, cfg.n_head
    rms = lambda x: x / torch.sqrt((x * x).mean(-1, keepdim=True) + tg.EPS)  # noqa: E731
    heads = lambda m: m.view(m.shape[0], nh, d // nh).transpose(0, 1)  # (t, d) -> (nh, t, hs)  # noqa: E731

    def block(x, l, kv):
        w = lambda n: p[f"h{l}.{n}"]  # noqa: E731
        n1 = rms(x)
        k, v = n1 @ w("wk").T, n1 @ w("wv").T
        if kv is not None:
            kv[l] = (torch.cat([kv[l][0], k]), torch.cat([kv[l][1], v])) if l in kv else (k, v)
            k, v = kv[l]
        att = F.scaled_dot_product_attention(heads(n1 @ w("wq").T), heads(k), heads(v), is_causal=kv is None)
        x = x + att.transpose(0, 1).reshape(x.shape[0], d) @ w("wo").T
        return x + torch.relu(rms(x) @ w("w1").T) @ w("w2").T

    def run(toks, start, kv):
        x = p["wte"][torch.tensor(toks)] + p["wpe"][start:start + len(toks)]
        for l in range(cfg.n_layer):
            x = block(x, l, kv)
        return rms(x) @ p["lm_head"].T

    if not cached:
        return run(tokens, 0, None)
    kv = {}
    return torch.cat([run([t], i, kv) for i, t in enumerate(tokens)])


@pytest.mark.parametrize("n_layer", [1, 2])
def test_the_cached_step_matches_torch(n_layer):
    """forward_step token by token (issue 51) against torch's one-pass logits and a torch KV cache:
    every row the same to float64 rounding (and the engine's own full forward, bit for bit)."""
    cfg, W = tiny(n_layer)
    rng = Rng(11)
    tokens = [rng.below(cfg.vocab_size) for _ in range(cfg.block_size)]
    cache = tg.new_cache(cfg)
    rows = [tg.forward_step(cfg, W, cache, t, i) for i, t in enumerate(tokens)]
    close(rows, torch_logits(cfg, W, tokens, cached=False), tol=1e-12)
    close(rows, torch_logits(cfg, W, tokens, cached=True), tol=1e-12)
    assert rows == tg.forward(cfg, W, [tokens])[0]
