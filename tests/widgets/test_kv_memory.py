"""kv-memory: the bill against an independent count, its errors in words, and the build's first state."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("kv-memory")


def shape(**kw):
    base = {"heads": 32, "kv_heads": 8, "head_dim": 128, "layers": 32, "context": 8192, "bits": 16}
    base.update(kw)
    return base


def bytes_by_hand(heads, kv_heads, head_dim, layers, context, bits):
    """Counted another way: one layer's K and V tensors, (context, kv_heads, head_dim) each."""
    per_layer = 0
    for _tensor in ("k", "v"):
        per_layer += context * kv_heads * head_dim * bits // 8
    return layers * per_layer


@pytest.mark.parametrize("s", [shape(), shape(kv_heads=32), shape(kv_heads=1), shape(layers=95, heads=64, context=4096),
                               shape(heads=4, kv_heads=4, head_dim=64, layers=4, context=256, bits=32),
                               shape(heads=24, kv_heads=4, head_dim=256, layers=16, context=262144),
                               shape(bits=6, context=1024)])
def test_the_total_matches_a_count_of_the_tensors(s):
    b = model.bill(s)
    assert b["total"] == bytes_by_hand(**s)
    assert b["per_token"] * s["context"] == b["total"]
    assert b["share_of_mha"] == s["kv_heads"] / s["heads"]


def test_llama3_8b_reads_128_kib_a_token_and_1_gib_at_8192():
    state = model.view(shape())
    assert state["out"]["per-token"].startswith("128 KiB")
    assert state["out"]["total"].startswith("1 GiB")
    assert state["out"]["mha"] == "4 GiB" and state["out"]["share"] == "是 MHA 的 25.0%"
    assert state["out"]["kind"].startswith("GQA（每 4 个查询头")


@pytest.mark.parametrize("n, text", [(1000, "1,000 B"), (131072, "128 KiB"), (1610612736, "1.5 GiB"),
                                     (389120, "380 KiB"), (25920, "25.3 KiB"), (17179869184, "16 GiB")])
def test_sizes_read_in_binary_units(n, text):
    assert model.size(n) == text


@pytest.mark.parametrize("bad, words", [({"kv_heads": 3}, "整除"), ({"kv_heads": 64}, "不能多于"),
                                        ({"layers": 0}, "层数要在")])
def test_a_shape_no_model_has_is_refused_in_words(bad, words):
    state = model.view(shape(**bad))
    assert words in state["out"]["error"] and state["out"]["total"] == "—" and state["announce"] == state["out"]["error"]


def test_a_preset_fills_the_fields_and_an_edit_makes_it_custom():
    presets = [{"key": "a", "name": "A", **shape()}, {"key": "b", "name": "B", **shape(layers=2)}]
    first = model.view({**model.PARAMS, "presets": presets})
    assert first["preset"] == "a" and first["params"]["layers"] == 32
    b = model.view({**model.PARAMS, "presets": presets, "preset": "b"})
    assert b["preset"] == "b" and b["params"]["layers"] == 2
    edited = model.view({**model.PARAMS, "presets": presets, "preset": "b", **shape(layers=3)})
    assert edited["preset"] == "custom" and edited["params"]["layers"] == 3


def test_first_state_is_in_the_html():
    presets = [{"key": "llama", "name": "Llama", **shape()}]
    html = str(Renderer({"num": model.num})("kv-memory", presets=presets))
    state = model.view({**model.PARAMS, "presets": presets})
    assert 'data-widget="kv-memory"' in html
    assert f'data-out="total">{state["out"]["total"]}<' in html and 'value="llama" selected' in html
