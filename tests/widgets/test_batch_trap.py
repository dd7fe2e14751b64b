"""batch-trap: batch and per-token statistics against numpy and torch, the numbers the lesson quotes
(A's outputs in two batches, alone, per token), the announcement and the build's first state."""
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("batch-trap")
A = model.rows_of("A")
BATCH1 = A + model.rows_of("B")
BATCH2 = A + model.rows_of("C")


def np_batch_norm(rows, eps=model.EPS):
    x = np.asarray(rows, dtype=np.float64)
    return (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + eps)  # biased variance, as BatchNorm while training


def np_token_norm(rows, eps=model.EPS):
    x = np.asarray(rows, dtype=np.float64)
    return (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + eps)


@pytest.mark.parametrize("rows", [A, BATCH1, BATCH2, [A[0]], [[1.0, 2.0], [3.0, 2.0], [0.5, -4.0]]])
@pytest.mark.parametrize("eps", [1e-5, 1e-2, 1.0])
def test_batch_and_token_statistics_match_numpy(rows, eps):
    bn = model.batch_norm(rows, eps)
    np.testing.assert_allclose(bn["mean"], np.mean(rows, axis=0), atol=1e-12)
    np.testing.assert_allclose(bn["var"], np.var(rows, axis=0), atol=1e-12)
    np.testing.assert_allclose(bn["out"], np_batch_norm(rows, eps), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.token_norm(rows, eps)["out"], np_token_norm(rows, eps), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sentences", [("A",), ("A", "B"), ("A", "C")])
def test_batch_and_token_statistics_match_torch(sentences):
    torch = pytest.importorskip("torch")
    padded = [model.rows_of(s) for s in sentences]
    rows = [r for s in padded for r in s]
    # BatchNorm1d over (batch, features, positions) in training mode: statistics over batch x positions.
    # The sentences differ in length, so torch gets the flat (tokens, features) view, the same statistics.
    t = torch.tensor(rows, dtype=torch.float64)
    bn = torch.nn.functional.batch_norm(t, None, None, training=True, eps=model.EPS)
    np.testing.assert_allclose(model.batch_norm(rows)["out"], bn.numpy(), rtol=1e-10, atol=1e-12)
    module = torch.nn.BatchNorm1d(3, eps=model.EPS, affine=False, dtype=torch.float64).train()
    np.testing.assert_allclose(model.batch_norm(rows)["out"], module(t).detach().numpy(), rtol=1e-10, atol=1e-12)
    ln = torch.nn.functional.layer_norm(t, (3,), eps=model.EPS)
    np.testing.assert_allclose(model.token_norm(rows)["out"], ln.numpy(), rtol=1e-10, atol=1e-12)


def test_compare_the_numbers_the_lesson_quotes():
    c = model.compare()
    np.testing.assert_allclose(c["batch1"], np_batch_norm(BATCH1)[:3], atol=1e-12)
    np.testing.assert_allclose(c["batch2"], np_batch_norm(BATCH2)[:3], atol=1e-12)
    assert c["max_diff"] == pytest.approx(np.abs(np_batch_norm(BATCH1)[:3] - np_batch_norm(BATCH2)[:3]).max())
    assert model.num(c["max_diff"], 3) == "2.066" and c["max_diff_at"] == {"token": "天下", "dim": 2}
    assert c["single"] == [[0.0, 0.0, 0.0]] * 3  # a batch of one token: variance 0, 0/sqrt(eps) = 0
    np.testing.assert_allclose(c["token"], np_token_norm(A), atol=1e-12)
    assert c["token_max_diff"] == 0.0
    np.testing.assert_allclose(model.token_norm(BATCH2)["out"][:3], model.token_norm(BATCH1)["out"][:3], atol=0)
    assert len({tuple(r) for r in c["token"]}) == 3  # per token: A's three tokens stay distinct


def test_each_batch_shows_its_tokens_statistics_and_outputs():
    one = model.view({"batch": "batch1"})
    assert [k for k, r in one["rows"].items() if r.get("data-in") == "true"] == ["A0", "A1", "A2", "B0", "B1"]
    assert list(one["rows"]["mean"].values()) == ["1.400", "0.800", "1.200"]
    assert list(one["rows"]["bn0"].values()) == ["−0.392", "1.604", "−1.604"]
    assert list(one["rows"]["ln0"].values()) == ["0.000", "1.225", "−1.225"]
    two = model.view({"batch": "batch2"})
    assert [k for k, r in two["rows"].items() if r.get("data-in") == "true"] == ["A0", "A1", "A2", "C0", "C1", "C2"]
    assert two["rows"]["bn0"]["d1"] == "−0.463" and all(two["rows"][f"ln{i}"] == one["rows"][f"ln{i}"] for i in range(3))
    assert "最多差 2.066（「天下」的第 2 维）" in one["out"]["verdict"] and "完全相同（差 0）" in one["out"]["verdict"]
    single = model.view({"batch": "single"})
    assert [k for k, r in single["rows"].items() if r.get("data-in") == "true"] == ["A0"]
    assert list(single["rows"]["var"].values()) == ["0.000"] * 3
    assert all(single["rows"][f"bn{i}"][f"d{j}"] == "0.000" for i in range(3) for j in range(3))
    assert "输入的信息全丢了" in single["out"]["verdict"]
    with pytest.raises(ValueError):
        model.view({"batch": "batch3"})


def test_announce_reads_the_batch_and_a_outputs():
    assert model.view({"batch": "batch2"})["announce"].startswith(
        "批次 2：A 和 C「周末七国分争」。A 的批归一化输出：天下 [−1.389，−0.463，−1.389]；")
    assert "天下 [0.000，0.000，0.000]" in model.view({"batch": "single"})["announce"]


def test_first_state_is_in_the_html():
    html = str(Renderer({"num": model.num})("batch-trap"))
    assert 'data-widget="batch-trap"' in html and 'value="batch1" checked' in html
    assert 'data-row="C0" data-in="false"' in html and 'data-row="B0" data-in="true"' in html
    assert re.search(r'data-row="bn0">\s*<th scope="row">天下</th><td data-out="d0">−0.392<', html)
    assert re.search(r'data-row="ln0">\s*<th scope="row">天下</th><td data-out="d0">0.000<', html) and "最多差 2.066" in html
