"""copy-task: the packed maps come back to the export's weights, each head's sentence is computed from the
export's own maps (not the packed ones) and follows them as training goes (a 2-layer model's layer-2 head finds
"the token after the earlier copy" at the end, not at step 0; the 1-layer model never does), the numbers under
the maps are seed 0's at that step, bad params are refused, and the build's first state is in the HTML."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("copy-task")
DATA = json.loads((ROOT / "data/real-model/induction/copy-task.json").read_text(encoding="utf-8"))


def run(variant):
    return next(r for r in DATA["runs"] if r["variant"] == variant and "snapshots" in r)


def share_on_next(head):
    n = len(head)
    half = n // 2
    return sum(head[t][t - half + 1] for t in range(half, n)) / (n - half)


def test_packed_maps_come_back_to_the_exports_weights():
    for r in DATA["runs"]:
        for s in r.get("snapshots", []):
            for layer in s["maps"]:
                for head in layer:
                    back = model.unpack_map(model.pack_map(head), len(head))
                    assert all(abs(a - min(b, 0.99)) <= 0.005 + 1e-9 for ra, rb in zip(back, head) for a, b in zip(ra, rb))


def test_the_sentences_follow_the_maps_as_training_goes():
    params = {"data": DATA}
    two = run("attn_only_2l")
    last = model.view({**params, "snapshot": len(two["snapshots"]) - 1})
    first = model.view({**params, "snapshot": 0})
    assert len(last["heads"]) == 4 and last["heads"][2]["label"] == "第 2 层第 1 个头"
    for state, snap in ((last, two["snapshots"][-1]), (first, two["snapshots"][0])):
        for h, head in zip(state["heads"], [hd for layer in snap["maps"] for hd in layer]):
            shown = int(h["said"].split("平均把 ")[1].split("%")[0])
            assert abs(shown - 100 * share_on_next(head)) <= 1  # two-digit packing moves it by at most a point
    best_end = max(share_on_next(h) for h in two["snapshots"][-1]["maps"][1])
    best_start = max(share_on_next(h) for h in two["snapshots"][0]["maps"][1])
    assert best_end > 0.5 > best_start  # the induction head is there at the end, not at the start
    one = run("attn_only_1l")
    assert max(share_on_next(h) for h in one["snapshots"][-1]["maps"][0]) < 0.3  # one layer never finds it


def test_the_numbers_under_the_maps_are_seed_0s_at_that_step():
    smeared = run("smeared_1l")
    state = model.view({"data": DATA, "arm": "smeared_1l", "snapshot": 3})
    step = smeared["snapshots"][3]["step"]
    point = next(p for p in smeared["points"] if p["step"] == step)
    assert state["out"]["step"] == f"第 {step:,} 步"
    assert f"复制损失 {point['copy_loss']:.2f}" in state["out"]["said"]
    assert f"「找上一遍的下一个」的头 {round(100 * point['prefix_matching']['share'])}%" in state["out"]["said"]
    assert state["chart"]["x"] == model.num(step / 1500 * model.CHART_W, 1)


def test_bad_params_are_refused():
    with pytest.raises(ValueError, match="arm"):
        model.view({"data": DATA, "arm": "three_layers"})
    with pytest.raises(ValueError, match="snapshot"):
        model.view({"data": DATA, "snapshot": 99})
    with pytest.raises(ValueError, match="needs data"):
        model.view({})


def test_the_first_state_is_in_the_html():
    state = model.view({"data": DATA})
    html = str(Renderer({"num": model.num})("copy-task", data=DATA))
    assert 'data-widget="copy-task"' in html and state["out"]["said"] in html
    assert html.count('class="ct-head"') == 4
