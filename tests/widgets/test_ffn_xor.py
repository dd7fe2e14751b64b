"""The ffn-xor model: the lesson's worked numbers, GELU against references, the collapsed line, the bias sweep."""
import math
import random

import pytest

from course.widgets import load_model

model = load_model("ffn-xor")
NAMES = ["好吃", "不好吃", "难吃", "不难吃"]


def state(activation="relu", b2=-1.0, row="不好吃", neuron=2):
    return model.view({"activation": activation, "b2": b2, "row": row, "neuron": neuron})


def yhats(s):
    return [s["rows"][name]["yhat"] for name in NAMES]


def correct(s):
    return [s["rows"][name]["data-correct"] for name in NAMES]


# --- GELU: written once in the model, checked against two independent references ---

@pytest.mark.parametrize("x", [-3.0, -1.5, -1.0, -0.25, 0.0, 0.5, 1.0, 2.0, 3.0])
def test_gelu_is_close_to_the_exact_erf_form(x):
    exact = 0.5 * x * (1 + math.erf(x / math.sqrt(2)))
    assert model.gelu(x) == pytest.approx(exact, abs=1e-3)


def test_gelu_matches_torch_tanh_approximation():
    torch = pytest.importorskip("torch")
    xs = [x / 8 for x in range(-40, 41)]
    expected = torch.nn.functional.gelu(torch.tensor(xs, dtype=torch.float64), approximate="tanh").tolist()
    assert [model.gelu(x) for x in xs] == pytest.approx(expected, abs=1e-12)


def test_gelu_network_matches_torch_on_the_four_reviews():
    """The whole two-neuron FFN in torch (x·W_up + b -> GELU -> ·W_down) against the model's rows."""
    torch = pytest.importorskip("torch")
    x = torch.tensor([[p, n] for _, p, n, _ in model.REVIEWS], dtype=torch.float64)  # (4, 2)
    for b2 in (-1.0, -0.7, -0.35, 0.0):
        w_up = torch.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=torch.float64)           # (2, d_ff)
        w_down = torch.tensor([[1.0], [-2.0]], dtype=torch.float64)                  # (d_ff, 1)
        h = torch.nn.functional.gelu(x @ w_up + torch.tensor([0.0, b2], dtype=torch.float64), approximate="tanh")
        expected = (h @ w_down).squeeze(1).tolist()                                   # (4,)
        assert list(model.predictions("gelu", b2).values()) == pytest.approx(expected, abs=1e-12)


def test_tanh_form_and_erf_form_differ_exactly_where_the_seed_says():
    """The seed's 0.318 for 难吃 comes from the tanh form; the erf form gives 0.317."""
    erf_gelu = lambda x: 0.5 * x * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    assert model.num(-2 * model.gelu(-1.0)) == "0.318"
    assert model.num(-2 * erf_gelu(-1.0)) == "0.317"


# --- The three activations at the designed bias ---

def test_relu_solves_xor_exactly():
    s = state("relu")
    assert yhats(s) == ["1", "0", "0", "1"]
    assert correct(s) == ["true"] * 4
    assert s["out"]["mse"] == "0.000"
    assert s["out"]["summary"] == "四句全对"


def test_gelu_gives_the_seeds_nearby_values_all_still_correct():
    s = state("gelu")
    assert yhats(s) == ["0.841", "0.272", "0.318", "0.841"]
    assert correct(s) == ["true"] * 4
    assert s["out"]["mse"] == "0.056"


def test_gelu_is_labelled_as_gpt2s_tanh_approximation():
    labels = {a["value"]: a["label"] for a in state()["activations"]}
    assert labels == {"relu": "ReLU", "gelu": "GELU（GPT-2 用的 tanh 近似）", "none": "无（去掉）"}


def test_no_activation_collapses_to_one_line_with_mse_one():
    s = state("none")
    assert s["out"]["collapse"] == "ŷ = −p − n + 2"
    assert s["out"]["mse"] == "1.000"
    assert yhats(s) == ["1", "0", "2", "1"]
    assert correct(s) == ["true", "true", "false", "true"]
    assert "多一层也没用" in s["out"]["collapse-tail"]


@pytest.mark.parametrize("b2, formula", [(-1.0, "ŷ = −p − n + 2"), (-0.5, "ŷ = −p − n + 1"),
                                         (-0.75, "ŷ = −p − n + 1.500"), (0.0, "ŷ = −p − n")])
def test_collapsed_formula_follows_the_bias(b2, formula):
    assert state("none", b2)["out"]["collapse"] == formula


@pytest.mark.parametrize("seed", range(10))
def test_collapsed_line_equals_the_identity_network_on_any_input(seed):
    rng = random.Random(seed)
    b2 = rng.choice(model.slider_values())
    (cp, cn), const = model.collapsed(b2)
    for _ in range(5):
        p, n = rng.uniform(-2, 2), rng.uniform(-2, 2)
        assert model.forward("none", b2, p, n)[2] == pytest.approx(cp * p + cn * n + const)


# --- The bias slider ---

@pytest.mark.parametrize("b2, expected, ok, mse", [
    (-1.0, ["1", "0", "0", "1"], ["true"] * 4, "0.000"),
    (-0.8, ["0.600", "−0.400", "0", "0.600"], ["true"] * 4, "0.120"),
    (-0.75, ["0.500", "−0.500", "0", "0.500"], ["false", "true", "true", "false"], "0.188"),
    (-0.5, ["0", "−1", "0", "0"], ["false", "true", "true", "false"], "0.750"),
    (0.0, ["−1", "−2", "0", "−1"], ["false", "true", "true", "false"], "3.000"),
])
def test_relu_rows_and_mse_as_the_bias_moves(b2, expected, ok, mse):
    s = state("relu", b2)
    assert yhats(s) == expected
    assert correct(s) == ok
    assert s["out"]["mse"] == mse


@pytest.mark.parametrize("b2, expected, ok", [
    (-0.7, ["0.470", "−0.393", "0.339", "0.470"], ["false", "true", "true", "false"]),
    (-0.75, ["0.542", "−0.281", "0.340", "0.542"], ["true"] * 4),
])
def test_gelu_rows_as_the_bias_moves(b2, expected, ok):
    s = state("gelu", b2)
    assert yhats(s) == expected and correct(s) == ok


def test_which_review_goes_wrong_first_with_relu():
    """Sweep the slider from −1 to 0 by hand, independently of model.first_wrong."""
    def relu_net(b2, p, n):
        return max(0, p + n) - 2 * max(0, p + n + b2)

    first = None
    for k in range(21):
        b2 = round(-1 + 0.05 * k, 9)
        wrong = [name for name, p, n, y in model.REVIEWS if (relu_net(b2, p, n) > 0.5) != (y == 1)]
        if wrong:
            first = (b2, wrong)
            break
    assert first == (-0.75, ["好吃", "不难吃"])
    assert model.first_wrong("relu") == first
    text = state("relu")["out"]["first-wrong"]
    assert "b₂ = −0.750 时先错的是「好吃」、「不难吃」" in text and "0.500" in text


def test_first_wrong_for_the_other_activations():
    assert model.first_wrong("gelu") == (-0.7, ["好吃", "不难吃"])
    assert model.first_wrong("none") == (-1.0, ["难吃"])
    assert "还没拖就已经有错" in state("none")["out"]["first-wrong"]


def test_slider_runs_from_minus_one_to_zero_and_starts_at_minus_one():
    values = model.slider_values()
    assert values[0] == -1.0 and values[-1] == 0.0 and len(values) == 21
    assert model.PARAMS["b2"] == -1.0 and model.PARAMS["activation"] == "relu"


def test_neuron_two_stops_detecting_only_both_when_the_bias_rises():
    assert state("relu", -1.0)["out"]["fires2"] == "「不好吃」"
    assert state("relu", -1.0)["out"]["meaning2"].startswith("两个特征同时成立")
    assert state("relu", -0.5)["out"]["fires2"] == "「好吃」、「不好吃」、「不难吃」"
    assert state("relu", -1.0)["out"]["meaning1"].startswith("至少一个特征成立")
    assert state("relu", -1.0)["out"]["z2"] == "p + n − 1"
    assert state("relu", 0.0)["out"]["z2"] == "p + n"


# --- Step-by-step arithmetic ---

def test_the_seeds_worked_example_for_bu_hao_chi():
    out = state("relu", -1.0, "不好吃", 2)["out"]
    assert out["step-n2"] == "神经元 2：z₂ = 1 × 1 + 1 × 1 + (−1) = 1 → ReLU → 1 → × (−2) = −2"
    assert out["step-n1"] == "神经元 1：z₁ = 1 × 1 + 1 × 1 + 0 = 2 → ReLU → 2 → × 1 = 2"
    assert out["step-sum"].startswith("合计：ŷ = 2 + (−2) = 0，")


def test_expansion_with_gelu_and_a_fractional_bias():
    out = state("gelu", -0.75, "好吃", 2)["out"]
    assert out["step-n2"] == "神经元 2：z₂ = 1 × 1 + 0 × 1 + (−0.750) = 0.250 → GELU → 0.150 → × (−2) = −0.299"
    assert out["step-sum"].startswith("合计：ŷ = 0.841 + (−0.299) = 0.542，高于 0.5，判为正面")


@pytest.mark.parametrize("activation", ["relu", "gelu", "none"])
@pytest.mark.parametrize("b2", [-1.0, -0.75, -0.35, 0.0])
@pytest.mark.parametrize("row", NAMES)
def test_every_expansion_adds_up_to_the_rows_output(activation, b2, row):
    s = state(activation, b2, row)
    total = s["out"]["step-sum"].split("，")[0].split(" = ")[-1]
    assert total == s["rows"][row]["yhat"]
    assert "-" not in "".join(s["out"][k] for k in ("step-n1", "step-n2", "step-sum")), "hyphen instead of −"


def test_selected_row_and_focused_neuron():
    s = state("relu", -1.0, "难吃", 1)
    assert [s["rows"][n]["data-selected"] for n in NAMES] == ["false", "false", "true", "false"]
    assert s["focus"] == "1"
    assert s["announce_steps"].count("神经元") == 1 and "神经元 1" in s["announce_steps"]
    empty = state(row=None)
    assert empty["out"]["step-n1"] == "" and "点表格" in empty["out"]["step-head"]


def test_first_state_shows_the_seeds_example():
    s = model.view(model.PARAMS)
    assert s["params"]["row"] == "不好吃" and s["focus"] == "2"
    assert "(−1) = 1 → ReLU → 1 → × (−2) = −2" in s["out"]["step-n2"]


@pytest.mark.parametrize("bad", [{"activation": "tanh"}, {"b2": 0.5}, {"row": "好"}, {"neuron": 3}])
def test_bad_params_fail_loudly(bad):
    with pytest.raises(ValueError):
        model.view({**model.PARAMS, **bad})


def test_the_answer_to_the_third_experiment_waits_behind_a_closed_details():
    """The lesson's tip 3 asks which review goes wrong first: the first state must not print the
    answer where it is read, only inside a collapsed 「看答案」."""
    from course.widgets import Renderer
    html = str(Renderer({"num": model.num})("ffn-xor"))
    answer = model.view(model.PARAMS)["out"]["first-wrong"]
    at = html.index(answer)
    opened = html.rindex("<details", 0, at)
    assert "</details>" not in html[opened:at]  # the answer sits inside this details element
    tag = html[opened:html.index(">", opened) + 1]
    assert tag == '<details class="ffn-first-wrong">'  # closed: no `open` attribute
    summary = html[html.index("<summary>", opened):html.index("</summary>", opened)]
    assert "看答案" in summary and "先错的是" not in summary and html.count(answer) == 1
