"""widgets/common/stack.py's passes, written out for speed on the phone, against the list-based
passes they replaced (kept here as the reference): the same numbers to the last bit (==, not
approx) for every placement, residual, init, activation, final norm and kind of weight gradient,
whatever the caches already hold."""
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import load_model  # noqa: E402

load_model("norm-placement")
stack = sys.modules["stack"]
vec = sys.modules["vec"]


def reference(depth, residual, place, init, activation, seed, final_norm, weight_grads):
    """simulate() as it was written before: lists, vec.dots and vec.add_outer, every term added."""
    dots, add_outer = vec.dots, vec.add_outer
    n_sub = 2 * depth
    layers = [(w1, vec.transpose(w1), w2, vec.transpose(w2)) for w1, _, w2 in stack.base_layers(n_sub, seed)]
    scale = stack.write_scale(n_sub, init)
    relu = activation == "relu"
    xs, u = stack.inputs()
    R = range(stack.WIDTH)
    passes = []
    for x in xs:
        steps, sizes = [], [stack.size(x)]
        for k in range(n_sub):
            _, w1t, _, w2t = layers[k]
            h, r_in = stack.norm_forward(x) if place == "pre" else (x, 1.0)
            z = dots(h, w1t)
            a = [v if v > 0 else 0.0 for v in z] if relu else [stack.sigmoid(v) for v in z]
            f = dots(a, w2t)
            if scale != 1.0:
                f = [v * scale for v in f]
            fo, r_f = stack.norm_forward(f) if place == "output" else (f, 1.0)
            x_in = x
            x = [x_in[i] + fo[i] for i in R] if residual else fo
            r_s = 1.0
            if place == "post":
                x, r_s = stack.norm_forward(x)
            steps.append((h, r_in, a, fo, r_f, x, r_s))
            sizes.append(stack.size(x))
        passes.append((steps, sizes))
    rms_sum = [0.0] * (n_sub + 1)
    for _, sizes in passes:
        for k in range(n_sub + 1):
            rms_sum[k] += sizes[k]
    grad_sq = [0.0] * (depth + 1)
    wgrad = [[[0.0] * stack.WIDTH for _ in R] for _ in range(n_sub)] if weight_grads else None
    every = 2 if weight_grads == "ffn" else 1
    for steps, _ in passes:
        g = [v / stack.SAMPLES for v in u]
        if final_norm:
            y_final, r_final = stack.norm_forward(steps[n_sub - 1][5])
            g = stack.norm_backward(g, y_final, r_final)
        grad_sq[depth] += sum([v * v for v in g])
        for k in range(n_sub - 1, -1, -1):
            w1, _, w2, _ = layers[k]
            h, r_in, a, fo, r_f, y, r_s = steps[k]
            if place == "post":
                g = stack.norm_backward(g, y, r_s)
            gf = stack.norm_backward(g, fo, r_f) if place == "output" else g
            if weight_grads and k % every == every - 1:
                add_outer(wgrad[k], a, gf)
            ga = dots(gf, w2)
            if scale != 1.0:
                ga = [v * scale for v in ga]
            if relu:
                gz = [ga[i] if a[i] > 0 else 0.0 for i in R]
            else:
                gz = [ga[i] * a[i] * (1 - a[i]) for i in R]
            gh = dots(gz, w1)
            if place == "pre":
                gh = stack.norm_backward(gh, h, r_in)
            g = [g[i] + gh[i] for i in R] if residual else gh
            if k % 2 == 0:
                grad_sq[k // 2] += sum([v * v for v in g])
    out_norm = math.sqrt(grad_sq[depth])
    out = {"rms": [v / stack.SAMPLES for v in rms_sum], "grad": [math.sqrt(v) / out_norm for v in grad_sq]}
    if weight_grads:
        out["wgrad"] = [math.sqrt(sum([v * v for row in m for v in row])) for m in wgrad[every - 1::every]]
    return out


def assert_same(got, want):
    assert sorted(got) == sorted(want)
    for key in want:
        assert got[key] == want[key], key


@pytest.mark.parametrize("place", stack.PLACES)
@pytest.mark.parametrize("activation", ["relu", "sigmoid"])
def test_the_written_out_passes_give_the_same_numbers_as_the_list_based_ones(place, activation):
    for seed in (0, 2):
        for residual in (True, False):
            for init in ("unit", "scaled"):
                for final_norm in (False, True):
                    for weight_grads in (True, "ffn", False):
                        for depth in (4, 1, 3):  # deeper first: the shallower ones read a kept pass's prefix
                            want = reference(depth, residual, place, init, activation, seed, final_norm,
                                             weight_grads)
                            got = stack.simulate(depth, residual, place, init, activation, seed, final_norm,
                                                 weight_grads)
                            assert_same(got, want)
                            if weight_grads:  # without the stream's gradients: the same weight gradients
                                quick = stack.simulate(depth, residual, place, init, activation, seed,
                                                       final_norm, weight_grads, stream_grads=False)
                                assert quick == {"rms": want["rms"], "wgrad": want["wgrad"]}


def test_a_kept_answer_is_a_copy():
    first = stack.simulate(3, True, "post", "unit", "relu", 1, False, "ffn")
    first["rms"][0] = -1.0
    first["wgrad"].clear()
    again = stack.simulate(3, True, "post", "unit", "relu", 1, False, "ffn")
    assert_same(again, reference(3, True, "post", "unit", "relu", 1, False, "ffn"))


def test_a_deep_stack_matches_after_the_caches_are_full():
    """Past FORWARDS kept passes and RESULTS kept answers the oldest are dropped and recomputed."""
    for seed in (0, 1, 2):
        for place in stack.PLACES:
            for residual in (True, False):
                stack.simulate(2, residual, place, "scaled", "relu", seed)
    want = reference(12, True, "pre", "unit", "relu", 0, True, "ffn")
    assert_same(stack.simulate(12, True, "pre", "unit", "relu", 0, True, "ffn"), want)
