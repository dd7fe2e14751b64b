"""The ffn-shape model: log-scaled edges, equal symbols equal lengths, real numbers on the edges."""
import math
import re

import pytest
from support import ROOT

from course.data import load_data
from course.facts import build_facts
from course.widgets import Renderer, common_module, load_model

model = load_model("ffn-shape")
GPT2 = {"d": 768, "d_ff": 3072}
STATE = model.view({**model.PARAMS, **GPT2})
REAL, SMALL = STATE["figures"]


def block(figure, key):
    return next(b for b in figure["blocks"] if b["key"] == key)


def test_log_length_is_monotone_and_one_unit_per_doubling():
    lengths = [model.log_length(n) for n in range(1, 5000)]
    assert all(a < b for a, b in zip(lengths, lengths[1:]))
    assert model.log_length(1) == 1 and model.log_length(2) == 2 and model.log_length(1024) == 11
    for n in (3, 5, 768, 3072):
        assert model.log_length(2 * n) - model.log_length(n) == pytest.approx(1)
    with pytest.raises(ValueError):
        model.log_length(0)


@pytest.mark.parametrize("figure", [REAL, SMALL], ids=["real", "small"])
def test_edges_are_the_log_of_the_real_sizes(figure):
    for sym, n in figure["dims"].items():
        assert figure["edge"][sym] == pytest.approx(figure["unit"] * (1 + math.log2(n)), abs=0.06)


@pytest.mark.parametrize("figure", [REAL, SMALL], ids=["real", "small"])
def test_the_same_symbol_has_the_same_length_everywhere(figure):
    seen = {}
    for b in figure["blocks"]:
        seen.setdefault(b["rows"], set()).add(b["h"])
        seen.setdefault(b["cols"], set()).add(b["w"])
    assert set(seen) == {"T", "d", "d_ff", "d_out"}
    assert all(len(lengths) == 1 for lengths in seen.values()), seen
    assert {sym: lengths.pop() for sym, lengths in seen.items()} == figure["edge"]


def test_bigger_dimensions_get_longer_edges():
    assert REAL["edge"]["T"] < REAL["edge"]["d"] < REAL["edge"]["d_ff"]
    assert SMALL["edge"]["d"] == SMALL["edge"]["d_ff"] < SMALL["edge"]["T"]  # 2 = 2 < 5


def test_blocks_have_the_shapes_of_the_ffn():
    shapes = {b["key"]: (b["rows"], b["cols"], b["role"]) for b in REAL["blocks"]}
    assert shapes == {"X": ("T", "d", "input"), "W_up": ("d", "d_ff", "param"), "H": ("T", "d_ff", "mid"),
                      "W_down": ("d_ff", "d_out", "param"), "Y": ("T", "d_out", "output")}


@pytest.mark.parametrize("figure", [REAL, SMALL], ids=["real", "small"])
def test_factors_line_up_with_their_products(figure):
    x, w_up, h, w_down, y = (block(figure, k) for k in ("X", "W_up", "H", "W_down", "Y"))
    gap = model.GAP
    assert x["y"] == h["y"] == y["y"]                                        # one band of T rows
    assert w_up["x"] == h["x"] and w_up["w"] == h["w"]                       # W_up stands on H
    assert w_down["x"] == y["x"] and w_down["w"] == y["w"]                   # W_down stands on Y
    assert w_up["y"] + w_up["h"] + gap == pytest.approx(h["y"], abs=0.2)
    assert w_down["y"] + w_down["h"] + gap == pytest.approx(y["y"], abs=0.2)
    assert x["x"] + x["w"] + gap == pytest.approx(h["x"], abs=0.2)
    assert h["x"] + h["w"] + gap == pytest.approx(y["x"], abs=0.2)


@pytest.mark.parametrize("figure", [REAL, SMALL], ids=["real", "small"])
def test_everything_fits_in_the_frame(figure):
    for b in figure["blocks"]:
        assert 0 <= b["x"] and b["x"] + b["w"] <= model.FRAME_W
        assert model.TOP <= b["y"] and b["y"] + b["h"] <= model.FRAME_H - model.BOTTOM
    for label in figure["labels"]:
        assert model.FRAME_W * 0.02 < label["x"] < model.FRAME_W * 0.98
        assert 0 < label["y"] < model.FRAME_H


def test_labels_carry_the_real_numbers():
    texts = {(lab["block"], lab["side"]): (lab["symbol"], lab["text"]) for lab in REAL["labels"]}
    assert texts[("X", "left")] == ("T", "5")
    assert texts[("X", "bottom")] == ("d", "768")
    assert texts[("H", "bottom")] == ("d_ff", "3,072")
    assert texts[("W_up", "top")] == ("d_ff", "3,072")
    assert texts[("W_down", "right")] == ("d_ff", "3,072")
    for lab in REAL["labels"]:
        assert lab["n"] == {"T": 5, "d_out": GPT2["d"], **GPT2}[lab["symbol"]]  # a real FFN writes d back


def test_small_scale_is_the_two_neuron_example():
    assert SMALL["dims"] == {"T": 5, "d": 2, "d_ff": 2, "d_out": 1}  # the toy writes one number
    assert {lab["text"] for lab in SMALL["labels"] if lab["symbol"] in ("d", "d_ff")} == {"2"}
    assert {lab["text"] for lab in SMALL["labels"] if lab["symbol"] == "d_out"} == {"1"}
    assert {lab["text"] for lab in SMALL["labels"] if lab["symbol"] == "T"} == {"5"}
    assert "d = 2，d_ff = 2，d_out = 1" in SMALL["summary"]


def test_grid_shows_the_t_rows_and_small_dimensions_only():
    assert len(block(REAL, "X")["grid"]) == 4                      # 5 rows, 768 columns: rows only
    assert block(REAL, "W_up")["grid"] == []                       # 768 x 3,072: no grid
    assert len(block(SMALL, "X")["grid"]) == 4 + 1                 # 5 x 2 cells
    assert len(block(SMALL, "W_up")["grid"]) == 1 + 1              # 2 x 2 cells


def test_table_has_real_and_small_columns():
    rows = {r["symbol"]: (r["real"], r["small"]) for r in STATE["table"]}
    assert rows == {"T": ("5", "5"), "d": ("768", "2"), "d_ff": ("3,072", "2"), "d_out": ("768", "1")}
    assert "4 × d" in STATE["table"][2]["meaning"]


def test_no_real_size_without_data():
    with pytest.raises(ValueError, match="from data/"):
        model.view(model.PARAMS)
    with pytest.raises(ValueError, match="scale"):
        model.view({**model.PARAMS, **GPT2, "scale": "huge"})


def rendered(**params):
    numfmt = common_module("numfmt")
    return str(Renderer({"num": numfmt.num, "pct": numfmt.pct, "signed": numfmt.signed})("ffn-shape", **params))


def test_the_lesson_embeds_the_real_sizes_from_data():
    facts = build_facts(load_data(ROOT / "data", ROOT))
    html = rendered(d=facts["gpt2"]["d"], d_ff=facts["gpt2"]["d_ff"])
    real, small = re.split(r'<figure class="fshape-fig" data-scale="small"', html)
    assert 'data-scale="real"' in real
    numbers = re.findall(r'<tspan class="fshape-num"[^>]*>([^<]+)</tspan>', real)
    assert sorted(set(numbers)) == ["3,072", "5", "768"]
    assert set(re.findall(r'<tspan class="fshape-num"[^>]*>([^<]+)</tspan>', small)) == {"1", "2", "5"}
    assert re.search(r'<input type="radio" name="scale" value="real" checked>', html)
    assert re.search(r'<input type="radio" name="scale" value="small">', html)
    assert "<svg" in html and "viewBox=\"0 0 640" in html
