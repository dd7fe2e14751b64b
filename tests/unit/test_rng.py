"""widgets/common/rng.py: xorshift32 against an independent numpy computation, pinned first values
(so a change that would move every widget's numbers fails here), and sane distributions."""
import ast
import math

import numpy as np
import pytest
from support import ROOT

import rng


def numpy_xorshift32(seed, n):
    """The same stream with numpy's uint32 arithmetic (wrap-around, no masks)."""
    with np.errstate(over="ignore"):
        x = np.uint32((seed + 0x9E3779B9) % 2 ** 32)
        x ^= x >> np.uint32(16)
        x = np.uint32(x * np.uint32(0x85EBCA6B))
        x ^= x >> np.uint32(13)
        x = np.uint32(x * np.uint32(0xC2B2AE35))
        x ^= x >> np.uint32(16)
        out = []
        for _ in range(n):
            x ^= np.uint32(x << np.uint32(13))
            x ^= x >> np.uint32(17)
            x ^= np.uint32(x << np.uint32(5))
            out.append(int(x))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 2026, 10 ** 6])
def test_integers_match_numpy_uint32(seed):
    r = rng.Rng(seed)
    assert [r.next32() for _ in range(200)] == numpy_xorshift32(seed, 200)


def test_first_values_are_pinned():
    """Every widget's numbers follow from these: changing the generator must be a visible decision."""
    assert rng.Rng(0).next32() == 844830715
    assert rng.Rng(0).random() == pytest.approx(0.1967024791520089, abs=0)
    assert rng.Rng(2026).gauss() == pytest.approx(-0.49953180316992857, rel=1e-15)


def test_same_seed_same_stream_different_seeds_differ():
    a, b = rng.Rng(7), rng.Rng(7)
    assert [a.gauss() for _ in range(50)] == [b.gauss() for _ in range(50)]
    firsts = {rng.Rng(s).next32() for s in range(100)}
    assert len(firsts) == 100


def test_uniform_is_open_and_flat():
    r = rng.Rng(3)
    xs = [r.random() for _ in range(20000)]
    assert 0 < min(xs) and max(xs) < 1
    assert np.mean(xs) == pytest.approx(0.5, abs=0.01)
    counts = np.histogram(xs, bins=10, range=(0, 1))[0]
    assert counts.min() > 1800 and counts.max() < 2200
    u = rng.Rng(3)
    assert all(-2 < u.uniform(-2, 5) < 5 for _ in range(1000))


def test_gauss_has_mean_sd_and_normal_tails():
    r = rng.Rng(11)
    zs = np.array([r.gauss() for _ in range(20000)])
    assert zs.mean() == pytest.approx(0, abs=0.03) and zs.std() == pytest.approx(1, abs=0.03)
    assert np.mean(np.abs(zs) > 1.96) == pytest.approx(0.05, abs=0.008)
    assert np.isfinite(zs).all()
    s = rng.Rng(11)
    assert s.gauss(3.0, 0.5) == pytest.approx(3.0 + 0.5 * zs[0], rel=1e-12)
    m = rng.Rng(4).gauss_matrix(3, 5, 2.0)
    assert len(m) == 3 and all(len(row) == 5 for row in m)


def test_gauss_is_box_muller_on_the_uniform_stream():
    r, u = rng.Rng(5), rng.Rng(5)
    u1, u2 = u.random(), u.random()
    rad = math.sqrt(-2 * math.log(u1))
    assert r.gauss() == rad * math.cos(2 * math.pi * u2) and r.gauss() == rad * math.sin(2 * math.pi * u2)


@pytest.mark.parametrize("seed", [0, 1, 2, 2026])
def test_normals_and_gauss_matrix_are_the_draws_gauss_gives(seed):
    """The batched draws (what the depth stacks use) continue the same stream, spare normal included."""
    one, batch = rng.Rng(seed), rng.Rng(seed)
    for n, sigma in ((1, 1.0), (2, 0.5), (3, 1.0), (16, 0.25), (255, 2.0), (256, 1.0), (0, 1.0), (7, 0.3)):
        assert batch.normals(n, sigma) == [one.gauss(0.0, sigma) for _ in range(n)], (n, sigma)
        assert batch.gauss() == one.gauss()
        assert batch.random() == one.random()
    for rows, cols, sigma in ((16, 16, 0.35), (3, 5, 2.0), (1, 1, 1.0)):
        assert batch.gauss_matrix(rows, cols, sigma) == [[one.gauss(0.0, sigma) for _ in range(cols)]
                                                         for _ in range(rows)]
    assert batch.next32() == one.next32()


def test_only_the_common_subset_of_python():
    """No imports but math, no CPython-only features MicroPython lacks (see DESIGN.md's pitfalls)."""
    source = (ROOT / "widgets" / "common" / "rng.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    imports = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert imports == ["math"] and not any(isinstance(n, ast.ImportFrom) for n in ast.walk(tree))
    assert not any(isinstance(n, ast.Dict) and None in n.keys for n in ast.walk(tree))  # no {**a}
    assert "maketrans" not in source and "translate(" not in source
