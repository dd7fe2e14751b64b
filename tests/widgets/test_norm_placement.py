"""norm-placement (and the stack it shares with depth-signal): the hand-written backward pass
against torch's autograd for every placement and init, Xiong et al.'s claims as the widget shows
them (and how GPT-2's init changes them), every sentence the widget prints against its numbers in
every setting, and the exercise's list-based stack (stack_rms) against torch."""
import json
import math
import re
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("norm-placement")
stack = sys.modules["stack"]


def torch_stack(place, depth, seed=0, init="unit"):
    """The same stack in torch (float64): |dL/dW2| of every sub-layer, and the final stream's RMS."""
    where, final, _ = model.PLACES[place]
    layers = [(torch.tensor(w1, dtype=torch.float64), torch.tensor(w2, dtype=torch.float64, requires_grad=True))
              for w1, w2 in stack.weights(2 * depth, init, seed)]
    xs, u = stack.inputs()
    x = torch.tensor(xs, dtype=torch.float64)

    def norm(v):
        return v / torch.sqrt((v ** 2).mean(-1, keepdim=True) + stack.EPS)

    for w1, w2 in layers:
        f = torch.relu((norm(x) if where == "pre" else x) @ w1) @ w2  # rows of W: inputs (vec.dots)
        if where == "output":
            f = norm(f)
        x = norm(x + f) if where == "post" else x + f
    rms_final = torch.sqrt((x ** 2).mean(-1)).mean().item()
    out = norm(x) if final else x
    loss = (out @ torch.tensor(u, dtype=torch.float64)).mean()
    loss.backward()
    return [w2.grad.norm().item() for _, w2 in layers], rms_final


@pytest.mark.parametrize("init", model.INIT_ORDER)
@pytest.mark.parametrize("place", sorted(model.PLACES))
@pytest.mark.parametrize("depth", [1, 3])
def test_the_hand_written_gradients_match_torch_autograd(place, depth, init):
    sim = model.simulate(place, depth, init=init)
    grads, rms_final = torch_stack(place, depth, init=init)
    assert sim["wgrad"] == pytest.approx(grads, rel=1e-9)
    assert sim["rms"][-1] == pytest.approx(rms_final, rel=1e-9)
    assert model.layer_grads(place, depth, 0, init) == pytest.approx(grads[1::2], rel=1e-9)  # the FFNs


def test_post_ln_keeps_a_large_gradient_near_the_output_at_every_depth_and_pre_ln_shrinks_it():
    """Xiong et al. (2020), Theorem 1, as our stack shows it (mean over the widget's seeds)."""
    post = [model.mean_over_seeds(model.last_layer_grad, "post", d) for d in (2, 8, 32)]
    pre = [model.mean_over_seeds(model.last_layer_grad, "pre", d) for d in (2, 8, 32)]
    assert max(post) / min(post) < 1.5  # about independent of depth
    assert pre[0] > pre[1] > pre[2] and pre[2] < pre[0] / 3  # shrinks with depth (1/sqrt(16) = 1/4)
    assert all(p > q for p, q in zip(post, pre))
    # and Post-LN's gradient falls off towards the input
    assert model.mean_over_seeds(model.first_layer_grad, "post", 32) < post[2] / 20
    # while Pre-LN's front layers get more than its last (its layers' gradients are not alike)
    assert model.mean_over_seeds(model.first_layer_grad, "pre", 32) > 2 * pre[2]


def test_under_gpt2s_scaled_init_both_effects_mostly_vanish():
    """Each write about 1/sqrt(2L) of the stream: Pre-LN's last layer no longer shrinks like
    1/sqrt(L), and Post-LN's first layer is no longer starved."""
    pre = [model.mean_over_seeds(model.last_layer_grad, "pre", d, "scaled") for d in (2, 32)]
    assert pre[1] > pre[0] / 2  # unit: a quarter
    post_last = model.mean_over_seeds(model.last_layer_grad, "post", 32, "scaled")
    post_first = model.mean_over_seeds(model.first_layer_grad, "post", 32, "scaled")
    assert post_first > post_last / 2  # unit: under a twentieth
    assert post_last > pre[1]  # Post-LN's last layer still gets more than Pre-LN's


def test_post_ln_last_layer_is_larger_at_every_depth_and_seed_under_gpt2s_writes():
    """The lesson's range (l2-l3-review-2, 3-3): GPT-2's write scaling removes the depth trends, not
    the direction; post_over_pre_range is the min and max of the torch stack's own ratio."""
    ratios = []
    for d in (1, 2, 7, 32):
        for s in model.SEEDS:
            post, pre = torch_stack("post", d, s, "scaled")[0], torch_stack("pre", d, s, "scaled")[0]
            ratios.append(post[-1] / pre[-1])
            assert math.isclose(model.post_over_pre(d, s, "scaled"), post[-1] / pre[-1], rel_tol=1e-9)
    lo, hi = model.post_over_pre_range("scaled")
    assert 1 < lo <= min(ratios) and max(ratios) <= hi < 2
    assert model.post_over_pre_range("unit")[1] > 10  # Xiong's setting: the gap grows with depth


def test_final_rms_is_the_streams_rms_after_the_last_write():
    for place in ("pre", "post"):
        assert math.isclose(model.final_rms(place, 5, 1), torch_stack(place, 5, 1)[1], rel_tol=1e-9)


def test_profile_and_largest_layer_are_the_seed_means_of_the_stack():
    for init in model.INIT_ORDER:
        for place in model.ORDER:
            runs = [torch_stack(place, 5, s, init)[0][1::2] for s in model.SEEDS]
            mean = [sum(r[k] for r in runs) / len(runs) for k in range(5)]
            assert model.profile(place, 5, init) == pytest.approx(mean, rel=1e-9)
            assert model.largest_layer(place, 5, None, init) == mean.index(max(mean)) + 1
            for s, r in zip(model.SEEDS, runs):
                assert model.largest_layer(place, 5, s, init) == r.index(max(r)) + 1
            assert model.mean_over_seeds(model.last_layer_grad, place, 5, init) == pytest.approx(mean[-1], rel=1e-12)


def test_post_ln_holds_the_stream_at_unit_rms_and_the_others_let_it_grow():
    state = model.view({"depth": 12, "place": "post", "seed": 0})
    assert state["rows"]["post"]["rms"] == "1.00"
    assert float(state["rows"]["pre"]["rms"]) > 3 and float(state["rows"]["output"]["rms"]) > 3
    scaled = model.view({"depth": 12, "place": "post", "seed": 0, "init": "scaled"})
    assert scaled["rows"]["post"]["rms"] == "1.00"
    assert 1 < float(scaled["rows"]["pre"]["rms"]) < float(state["rows"]["pre"]["rms"])


def number(text):
    return float(text.replace(",", "").replace("\u2212", "-"))


def check_reading(p, grads):
    """Every claim of the reading for one setting, read back from its text and checked against
    the numbers (computed here, not by the model's helpers)."""
    text = model.reading(p, grads)["text"]
    g = grads[p["place"]]
    depth = len(g)
    assert text.startswith(model.INITS[p["init"]][1] + "：")
    top = max(range(depth), key=lambda k: g[k])
    if depth == 1:
        assert "只有 1 层" in text and f"梯度是 {model.num(g[0], 2)}。" in text
    else:
        m = re.search(r"梯度最大的是(最后一层|第 (\d+) 层)（([\d.,]+)）", text)
        assert m, text
        k = depth if m.group(1) == "最后一层" else int(m.group(2))
        assert k == top + 1, (p, text)
        assert number(m.group(3)) == pytest.approx(g[top], abs=0.005)
        if k not in (1, depth):
            assert f"不是最后一层（{model.num(g[-1], 2)}）" in text
        rises = all(b > a for a, b in zip(g, g[1:]))
        falls = all(b < a for a, b in zip(g, g[1:]))
        assert ("一路变大" in text) == (rises and depth >= 3)
        assert ("一路变小" in text) == (falls and depth >= 3)
        assert "越往前越小" not in text
        for name in ("post", "pre") + (("output",) if p["place"] == "output" else ()):
            m = re.search(model.SHORT[name] + r" ([\d.,]+) 倍", text)
            r = grads[name][-1] / grads[name][0]
            assert m and number(m.group(1)) == pytest.approx(r, rel=0.01, abs=0.005), (p, name, text)
    q = grads["post"][-1] / grads["pre"][-1]
    m = re.search(r"Post-LN 是 Pre-LN 的 ([\d.,]+) 倍，(Post-LN 的更大|Pre-LN 的更大|两者差不多)。", text)
    assert m and number(m.group(1)) == pytest.approx(q, rel=0.01, abs=0.005), (p, text)
    said = {"Post-LN 的更大": 1, "Pre-LN 的更大": -1, "两者差不多": 0}[m.group(2)]
    assert said == (0 if abs(q - 1) < 0.005 else 1 if q > 1 else -1), (p, text)
    if said == 1:  # what the table shows agrees, to its two decimals
        assert number(model.num(grads["post"][-1], 2)) >= number(model.num(grads["pre"][-1], 2))
    if said == -1:
        assert number(model.num(grads["post"][-1], 2)) <= number(model.num(grads["pre"][-1], 2))
    return text


def test_every_sentence_the_widget_prints_holds_in_every_setting():
    """Depths 1-32, every seed, both inits, every placement: which layer is largest, the shape,
    the ratios and the comparison are read back from the text and checked against the numbers."""
    seen = set()
    for init in model.INIT_ORDER:
        for seed in model.SEEDS:
            for depth in range(1, 33):
                grads = {name: model.layer_grads(name, depth, seed, init) for name in model.ORDER}
                for place in model.ORDER:
                    text = check_reading({"depth": depth, "place": place, "seed": seed, "init": init}, grads)
                    seen.add(("last" if "最大的是最后一层" in text else "first" if "最大的是第 1 层" in text
                              else "middle" if "不是最后一层" in text else "one", place))
    # the sweep meets each kind of sentence for Post-LN, a largest layer before the last included
    assert {("last", "post"), ("middle", "post"), ("one", "post"), ("first", "pre")} <= seen


def test_the_output_norm_sentence_under_scaled_init_holds():
    """Under output normalisation the write-back matrix's scale cancels in the forward pass, and its
    gradient (taken with respect to the scaled W2) is sqrt(2L) times the unit init's."""
    for depth in (1, 4, 12, 32):
        for seed in model.SEEDS:
            unit = model.simulate("output", depth, seed, "ffn", False, "unit")
            scaled = model.simulate("output", depth, seed, "ffn", False, "scaled")
            assert scaled["rms"] == pytest.approx(unit["rms"], rel=1e-9)
            assert scaled["wgrad"] == pytest.approx([math.sqrt(2 * depth) * v for v in unit["wgrad"]], rel=1e-9)
        text = model.view({"depth": depth, "place": "output", "seed": 0, "init": "scaled"})["out"]["reading"]
        assert f"√(2L) = {model.num(math.sqrt(2 * depth), 2)} 倍" in text
        assert "√(2L)" not in model.view({"depth": depth, "place": "output", "seed": 0, "init": "unit"})["out"]["reading"]


def test_the_table_names_each_placements_largest_layer():
    for init in model.INIT_ORDER:
        state = model.view({"depth": 12, "place": "post", "seed": 0, "init": init})
        for name in model.ORDER:
            assert state["rows"][name]["top"] == str(model.largest_layer(name, 12, 0, init))
    assert model.view(model.PARAMS)["rows"]["post"]["top"] == "9"  # the review's example: not the last


def torch_stack_rms(x, w1, w2, n, place):
    x = torch.tensor(x, dtype=torch.float64)
    w1, w2 = torch.tensor(w1, dtype=torch.float64), torch.tensor(w2, dtype=torch.float64)

    def norm(v):
        return v / torch.sqrt((v ** 2).mean() + 1e-5)

    out = []
    for _ in range(n):
        x = x + torch.relu(norm(x) @ w1) @ w2 if place == "pre" else norm(x + torch.relu(x @ w1) @ w2)
        out.append(torch.sqrt((x ** 2).mean()).item())
    return out


def test_the_exercises_stack_matches_torch_and_makes_the_lessons_point():
    ex = model.STACK_EXAMPLE
    f = model.sublayer(ex["w1"], ex["w2"])
    for place in ("pre", "post"):
        got = model.stack_rms(ex["x"], f, ex["n"], place)
        assert got == pytest.approx(torch_stack_rms(ex["x"], ex["w1"], ex["w2"], ex["n"], place), rel=1e-12)
    pre = model.stack_rms(ex["x"], f, ex["n"], "pre")
    post = model.stack_rms(ex["x"], f, ex["n"], "post")
    assert model.rms(ex["x"]) < pre[0] and all(b > a for a, b in zip(pre, pre[1:]))  # Pre-LN's stream grows
    assert all(abs(v - 1) < 1e-5 for v in post) and abs(model.rms(ex["x"]) - 1) > 0.5  # Post-LN's sits at 1
    zero = model.sublayer(ex["w1"], [[0.0] * 4 for _ in range(4)])
    assert model.stack_rms(ex["x"], zero, 3, "pre") == pytest.approx([model.rms(ex["x"])] * 3)
    with pytest.raises(ValueError):
        model.stack_rms(ex["x"], f, 2, "output")


def test_every_setting_gives_plain_json_and_the_first_state_is_in_the_html():
    for place in model.PLACES:
        for seed in model.SEEDS:
            for init in model.INIT_ORDER:
                json.dumps(model.view({"depth": 5, "place": place, "seed": seed, "init": init}), allow_nan=False)
    html = str(Renderer({"num": model.num})("norm-placement"))
    state = model.view(model.PARAMS)
    assert state["out"]["last"] in html and state["out"]["reading"] in html
    with pytest.raises(ValueError):
        model.view({"depth": 12, "place": "sideways", "seed": 0})
    with pytest.raises(ValueError):
        model.view({"depth": 12, "place": "post", "seed": 0, "init": "xavier"})
    assert model.view({"depth": 12, "place": "post", "seed": 0})["params"]["init"] == "unit"  # the default
