"""The position-wise model: a shuffle moves the FFN's output rows and changes no value."""
import itertools

import numpy as np
import pytest

from course.widgets import load_model

model = load_model("position-wise")
IDENTITY = list(range(len(model.TOKENS)))
NAMES = [name for name, _ in model.TOKENS]


def numpy_ffn(rows):
    """The same FFN, independently: ReLU(X @ W_up) @ W_down."""
    x = np.array(rows, dtype=float)
    return np.maximum(x @ np.array(model.W_UP), 0) @ np.array(model.W_DOWN)


def parse_row(text):
    """'(1.50, −0.50)' -> [1.5, -0.5]"""
    return [float(v.replace("\u2212", "-")) for v in text.strip("()").split(", ")]


@pytest.mark.parametrize("seed", range(50))
def test_a_shuffle_is_a_new_permutation_and_deterministic(seed):
    order = model.permutation(seed, avoid=[IDENTITY])
    assert sorted(order) == IDENTITY and order != IDENTITY
    assert model.permutation(seed, avoid=[IDENTITY]) == order


@pytest.mark.parametrize("seed", range(30))
def test_shuffle_changes_the_current_order(seed):
    current = model.permutation(seed + 100, avoid=[IDENTITY])
    state = model.shuffle({"order": current, "seed": seed})
    assert state["params"]["order"] not in (current, IDENTITY)
    assert state["params"]["seed"] == seed + 1
    assert state["order"] == [NAMES[i] for i in state["params"]["order"]]


@pytest.mark.parametrize("order", list(itertools.permutations(IDENTITY)))
def test_each_token_keeps_its_output_in_every_order(order):
    before, _ = model.run(IDENTITY)
    after, same = model.run(list(order))
    assert same is True
    assert after == before  # exact: each row goes through the same arithmetic


def test_outputs_equal_the_formula_row_by_row():
    expected = numpy_ffn([x for _, x in model.TOKENS])
    state = model.view({"order": IDENTITY, "seed": 0})
    for (name, _), want in zip(model.TOKENS, expected):
        assert parse_row(state["rows"][name]["output"]) == pytest.approx(want.tolist())
    assert state["rows"]["小明"]["output"] == "(1.50, \u22120.50)"  # ReLU zeroes neuron 2 here


def test_rows_are_distinct_so_a_move_is_visible():
    outputs = [tuple(row) for row in numpy_ffn([x for _, x in model.TOKENS])]
    assert len(set(outputs)) == len(outputs)
    assert (np.array(model.ffn([x for _, x in model.TOKENS])) == numpy_ffn([x for _, x in model.TOKENS])).all()


def test_view_after_a_shuffle_shows_positions_and_the_check():
    state = model.shuffle({**model.PARAMS})
    order = state["order"]
    assert [state["rows"][name]["position"] for name in order] == ["1", "2", "3", "4", "5"]
    assert state["out"]["check"] == "是" and state["out"]["data-shuffled"] == "true"
    assert state["out"]["sequence"] == " ".join(order)
    first = model.view(model.PARAMS)
    for name in NAMES:
        assert state["rows"][name]["output"] == first["rows"][name]["output"]
    assert "是" in state["announce"] and "、".join(order) in state["announce"]


def test_reset_restores_the_sentence():
    state = model.reset({"order": [4, 3, 2, 1, 0], "seed": 7})
    assert state["order"] == NAMES and state["params"]["order"] == IDENTITY
    assert state["out"]["data-shuffled"] == "false"


def test_first_state_is_the_sentence_in_order():
    state = model.view(model.PARAMS)
    assert state["order"] == ["小明", "把", "苹果", "给了", "小王"]
    assert state["out"]["check"] == "是"


@pytest.mark.parametrize("bad", [[0, 1, 2, 3], [0, 0, 1, 2, 3], [1, 2, 3, 4, 5]])
def test_a_bad_order_is_refused(bad):
    with pytest.raises(ValueError, match="permutation"):
        model.view({"order": bad, "seed": 0})
