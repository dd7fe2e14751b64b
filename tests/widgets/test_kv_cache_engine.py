"""The engines' KV cache (issue 51): widgets/common/tinygpt.py's forward_step, one new token with the
cached keys and values, gives the same logits as the last row of forward() over the whole prefix —
bit for bit in the pure engine (the same arithmetic in the same order), to float rounding in the
ulab engine (numpy here; MicroPython's ulab build in Node below) — on random weights and several
configs; sample_cached draws the same tokens as sample; the wrong position (wpe[0] for the new
token, the bug readers hit) makes the logits diverge; and the errors are said in words."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

import tinygpt as tg  # noqa: E402
from rng import Rng  # noqa: E402

CONFIGS = [  # (vocab, layers, d, heads, block)
    (40, 1, 32, 2, 16),  # the page's small model
    (40, 2, 16, 4, 32),
    (29, 3, 12, 3, 9),
    (17, 1, 8, 1, 5),
]


def setup(cfg_args, seed=3):
    cfg = tg.Config(*cfg_args)
    W = tg.init_weights(cfg, seed)
    r = Rng(seed + 100)
    tokens = [r.below(cfg.vocab_size) for _ in range(cfg.block_size)]
    return cfg, W, tokens


def numpy_or_skip():
    try:
        import numpy  # noqa: F401
    except ImportError:
        pytest.skip("numpy (a dependency in pyproject.toml) is not installed: it stands in for ulab here")


def engines():
    yield "pure", tg, (lambda W: W)
    try:
        import numpy  # noqa: F401
    except ImportError:
        return
    import tinygpt_ulab
    yield "ulab", tinygpt_ulab, tinygpt_ulab.to_arrays


def worst_step_gap(eng, cfg, W, tokens, prefill_n=0):
    """Steps through tokens with the cache (the first prefill_n read by prefill) -> the largest
    |logit| difference from forward()'s last row over the same prefix."""
    cache = eng.new_cache(cfg)
    worst = 0.0
    if prefill_n:
        rows = eng.prefill(cfg, W, cache, tokens[:prefill_n])
        full = eng.forward(cfg, W, [tokens[:prefill_n]])[0]
        worst = max(abs(a - b) for r, f in zip(rows, full) for a, b in zip(list(r), list(f)))
    for pos in range(prefill_n, len(tokens)):
        row = eng.forward_step(cfg, W, cache, tokens[pos], pos)
        assert isinstance(row, list) and len(row) == cfg.vocab_size
        full = list(eng.forward(cfg, W, [tokens[:pos + 1]])[0][-1])
        worst = max(worst, max(abs(a - b) for a, b in zip(row, full)))
    assert cache["n"] == len(tokens)
    return worst


@pytest.mark.parametrize("cfg_args", CONFIGS)
def test_the_pure_engines_cached_step_is_its_full_forward_bit_for_bit(cfg_args):
    cfg, W, tokens = setup(cfg_args)
    assert worst_step_gap(tg, cfg, W, tokens) == 0.0
    assert worst_step_gap(tg, cfg, W, tokens, prefill_n=cfg.block_size // 2) == 0.0


@pytest.mark.parametrize("cfg_args", CONFIGS)
def test_the_ulab_engines_cached_step_is_its_full_forward_to_rounding(cfg_args):
    """numpy's dot products over n cached rows and over the masked (T, T) block add in another
    order: measured up to 2e-16 on these configs."""
    numpy_or_skip()
    import tinygpt_ulab as tu
    cfg, W, tokens = setup(cfg_args)
    A = tu.to_arrays(W)
    assert worst_step_gap(tu, cfg, A, tokens) < 1e-13
    assert worst_step_gap(tu, cfg, A, tokens, prefill_n=cfg.block_size // 2) < 1e-13
    cache = tu.new_cache(cfg)  # and the pure engine's logits
    for pos, tok in enumerate(tokens):
        got = tu.forward_step(cfg, A, cache, tok, pos)
    want = tg.forward(cfg, W, [tokens])[0][-1]
    assert max(abs(a - b) for a, b in zip(got, want)) < 1e-13


@pytest.mark.parametrize("cfg_args", CONFIGS[::2] + CONFIGS[3:])
def test_sampling_with_the_cache_draws_the_same_tokens(cfg_args):
    """With a context, without one (sample starts from token 0 it does not keep), and past
    block_size, where the window slides and each step reads the window again."""
    cfg, W, _ = setup(cfg_args)
    for name, eng, conv in engines():
        A = conv(W)
        for context, n in (([1, 2, 3], cfg.block_size - 3), ([], cfg.block_size), ([5], 2 * cfg.block_size + 3)):
            for seed in (1, 2):
                want = eng.sample(cfg, A, context, n, 0.8, Rng(seed), never=0)
                got = eng.sample_cached(cfg, A, context, n, 0.8, Rng(seed), never=0)
                assert got == want and len(got) == n, (name, context)


def test_the_cached_forward_pass_reads_each_token_once_while_the_window_grows():
    cfg, W, _ = setup(CONFIGS[0])
    calls = {"prefill": 0, "step": 0}

    def prefill(*a):
        calls["prefill"] += 1
        return tg.prefill(*a)

    def step(*a):
        calls["step"] += 1
        return tg.forward_step(*a)

    out = tg.sample(cfg, W, [1, 2, 3, 4], cfg.block_size - 4, 1.0, Rng(4),
                    forward_pass=tg.cached_forward_pass(tg.new_cache, prefill, step))
    assert len(out) == cfg.block_size - 4 and calls == {"prefill": 1, "step": cfg.block_size - 5}


@pytest.mark.parametrize("cfg_args", CONFIGS[:3])
def test_the_new_token_at_the_wrong_position_diverges(cfg_args):
    """The control: the new token embedded with wpe[0] instead of wpe[pos] (the x-transformers and
    mlx-lm bug) -> its logits differ from the full forward's; the right position -> none do."""
    cfg, W, tokens = setup(cfg_args)
    for name, eng, conv in engines():
        A = conv(W)
        right, wrong = eng.new_cache(cfg), eng.new_cache(cfg)
        gaps = []
        for pos, tok in enumerate(tokens):
            full = list(eng.forward(cfg, A, [tokens[:pos + 1]])[0][-1])
            ok = eng.forward_step(cfg, A, right, tok, pos)
            bad = eng.step_embedded(cfg, A, wrong, eng.embed(A, tok, 0))
            assert max(abs(a - b) for a, b in zip(ok, full)) < 1e-13
            gaps.append(max(abs(a - b) for a, b in zip(bad, full)))
        assert gaps[0] < 1e-13  # position 0 is the right one for the first token
        assert min(gaps[1:]) > 1e-3, (name, gaps)  # every later token is wrong


def test_the_errors_are_said_in_words():
    cfg, W, tokens = setup(CONFIGS[3])
    for name, eng, conv in engines():
        A = conv(W)
        cache = eng.new_cache(cfg)
        with pytest.raises(ValueError, match="the number of tokens before it"):
            eng.forward_step(cfg, A, cache, 1, 1)  # the first token is at 0
        eng.forward_step(cfg, A, cache, 1, 0)
        with pytest.raises(ValueError, match="the cache holds 1 tokens"):
            eng.forward_step(cfg, A, cache, 1, 0)  # the same position twice
        for pos in range(1, cfg.block_size):
            eng.forward_step(cfg, A, cache, tokens[pos], pos)
        with pytest.raises(ValueError, match="past the last one"):
            eng.forward_step(cfg, A, cache, 1, cfg.block_size)
        with pytest.raises(ValueError, match="the cache is full"):
            eng.step_embedded(cfg, A, cache, eng.embed(A, 1, 0))
        with pytest.raises(ValueError, match="prefill starts an empty cache"):
            eng.prefill(cfg, A, cache, [1, 2])
        with pytest.raises(ValueError, match="1 to block_size"):
            eng.prefill(cfg, A, eng.new_cache(cfg), list(range(cfg.block_size + 1)))
        assert cache["n"] == cfg.block_size


# ---------------------------------------------------------------- on MicroPython (Node)

PROBE = '''
import tinygpt as tg
try:
    import tinygpt_ulab as tu
    ENG = tu if tu.ULAB else tg
except ImportError:
    ENG = tg
from rng import Rng


def run(p):
    cfg = tg.Config(p["vocab"], p["layers"], p["d"], p["heads"], p["block"])
    W = tg.init_weights(cfg, 3)
    A = tu.to_arrays(W) if ENG is not tg else W
    r = Rng(103)
    tokens = [r.below(cfg.vocab_size) for _ in range(cfg.block_size)]
    cache = ENG.new_cache(cfg)
    wrong = ENG.new_cache(cfg)
    worst, bad = 0.0, 0.0
    for pos in range(len(tokens)):
        row = ENG.forward_step(cfg, A, cache, tokens[pos], pos)
        off = ENG.step_embedded(cfg, A, wrong, ENG.embed(A, tokens[pos], 0))
        full = list(ENG.forward(cfg, A, [tokens[:pos + 1]])[0][-1])
        for a, b, c in zip(row, full, off):
            worst = max(worst, abs(a - b))
            bad = max(bad, abs(c - b))
    try:
        ENG.forward_step(cfg, A, cache, 1, cfg.block_size)
        said = ""
    except ValueError as e:
        said = str(e)
    same = ENG.sample(cfg, A, [1], 2 * cfg.block_size, 0.8, Rng(1), 0) == \\
        ENG.sample_cached(cfg, A, [1], 2 * cfg.block_size, 0.8, Rng(1), 0)
    return {"engine": "ulab" if ENG is not tg else "pure", "worst": worst, "bad": bad, "said": said,
            "same": same, "last": list(row)}
'''

ULAB_WASM = ROOT / "node_modules" / "@micropython" / "micropython-webassembly-pyscript" / "micropython-ulab.wasm"


def micropython(calls, build=None):
    from course.widgets import COMMON
    job = {"common": {p.stem: p.read_text(encoding="utf-8") for p in COMMON.glob("*.py")},
           "models": {"kv_probe": PROBE}, "calls": [["kv_probe", params, "run"] for params in calls]}
    if build:
        job["build"] = build
    done = subprocess.run(["node", str(ROOT / "tests" / "widgets" / "micropython_views.mjs")], input=json.dumps(job),
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not shutil.which("node") or not ULAB_WASM.exists(), reason="needs node and `npm ci`")
@pytest.mark.parametrize("build", [None, "ulab"])
def test_on_micropython_the_cached_step_is_the_full_forward(build):
    """MicroPython's plain build runs the pure engine (bit for bit), its ulab build the ulab engine
    (to rounding); both give CPython's pure engine's logits to rounding."""
    params = [dict(zip(("vocab", "layers", "d", "heads", "block"), c)) for c in CONFIGS[2:]]
    got = micropython(params, build)
    for p, g in zip(params, got):
        assert g["engine"] == ("ulab" if build else "pure")
        assert g["worst"] == 0.0 if not build else g["worst"] < 1e-13
        assert g["bad"] > 1e-3 and "past the last one" in g["said"] and g["same"]
        cfg, W, tokens = setup((p["vocab"], p["layers"], p["d"], p["heads"], p["block"]))
        want = tg.forward(cfg, W, [tokens])[0][-1]
        assert max(abs(a - b) for a, b in zip(g["last"], want)) < 1e-12
