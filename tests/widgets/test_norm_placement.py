"""norm-placement (and the stack it shares with depth-signal): the hand-written backward pass
against torch's autograd for every placement, and Xiong et al.'s claims as the widget shows them."""
import json
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("norm-placement")
stack = sys.modules["stack"]


def torch_stack(place, depth, seed=0):
    """The same stack in torch (float64): |dL/dW2| of every sub-layer, and the final stream's RMS."""
    where, final, _ = model.PLACES[place]
    layers = [(torch.tensor(w1, dtype=torch.float64), torch.tensor(w2, dtype=torch.float64, requires_grad=True))
              for w1, w2 in stack.weights(2 * depth, "unit", seed)]
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


@pytest.mark.parametrize("place", sorted(model.PLACES))
@pytest.mark.parametrize("depth", [1, 3])
def test_the_hand_written_gradients_match_torch_autograd(place, depth):
    sim = model.simulate(place, depth)
    grads, rms_final = torch_stack(place, depth)
    assert sim["wgrad"] == pytest.approx(grads, rel=1e-9)
    assert sim["rms"][-1] == pytest.approx(rms_final, rel=1e-9)


def test_post_ln_keeps_a_large_gradient_near_the_output_at_every_depth_and_pre_ln_shrinks_it():
    """Xiong et al. (2020), Theorem 1, as our stack shows it (mean over the widget's seeds)."""
    post = [model.mean_over_seeds(model.last_layer_grad, "post", d) for d in (2, 8, 32)]
    pre = [model.mean_over_seeds(model.last_layer_grad, "pre", d) for d in (2, 8, 32)]
    assert max(post) / min(post) < 1.5  # about independent of depth
    assert pre[0] > pre[1] > pre[2] and pre[2] < pre[0] / 3  # shrinks with depth (1/sqrt(16) = 1/4)
    assert all(p > q for p, q in zip(post, pre))
    # and Post-LN's gradient falls off towards the input
    assert model.mean_over_seeds(model.first_layer_grad, "post", 32) < post[2] / 20


def test_post_ln_holds_the_stream_at_unit_rms_and_the_others_let_it_grow():
    state = model.view({"depth": 12, "place": "post", "seed": 0})
    assert state["rows"]["post"]["rms"] == "1.00"
    assert float(state["rows"]["pre"]["rms"]) > 3 and float(state["rows"]["output"]["rms"]) > 3


def test_every_setting_gives_plain_json_and_the_first_state_is_in_the_html():
    for place in model.PLACES:
        for seed in model.SEEDS:
            json.dumps(model.view({"depth": 5, "place": place, "seed": seed}), allow_nan=False)
    html = str(Renderer({"num": model.num})("norm-placement"))
    state = model.view(model.PARAMS)
    assert state["out"]["last"] in html and state["out"]["reading"] in html
    with pytest.raises(ValueError):
        model.view({"depth": 12, "place": "sideways", "seed": 0})
