"""warmup-curves: every sentence against the numbers it reads (synthetic runs that leave the plateau,
never leave it, never reach it, hold nulls; and random ones checked by an independent reading), the
two windows, the chart's paths, check() refusing bad data with a clear error, and the build's first
state (complete without JavaScript, accessible)."""
import json
import random
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "widgets" / "common")]

from course.widgets import Renderer, load_model  # noqa: E402

model = load_model("warmup-curves")
U, B = 7.0, 5.5  # the synthetic unigram and bigram: leaving the plateau means a mean below 6.95


def series(name, values, steps=None, seed=0):
    return {"name": name, "label": name, "seed": seed, "steps": steps or 10 * len(values), "values": list(values)}


def data(*runs, full=400):
    return {"every": 10, "unigram": U, "bigram": B, "full_steps": full, "series": list(runs)}


LEAVES = series("leaves", [7.6, 7.2, 7.02, 6.98, 6.96, 6.90, 6.5, 6.2, 6.0, 5.9])
STUCK = series("stuck", [7.6, 7.2, 7.02, 7.0, 6.99, 6.97, 6.96, 6.98, 7.0, 6.99])
NULLS = series("nulls", [7.6, None, 7.1, 6.9, None, 6.5, 6.4, None, None, None])
# trained 400 steps: on the plateau through step 100, leaves it at step 300
LONG = series("long", [7.6, 7.2] + [7.0] * 27 + [6.9] + [6.5] * 10)


def sentences(d, **params):
    p = dict(model.PARAMS)
    p.update(params)
    p["data"] = d
    return model.view(p)["sentences"]


def test_a_run_that_leaves_one_that_stays_and_one_with_nulls_read_as_their_numbers_say():
    leaves, stuck, nulls = sentences(data(LEAVES, STUCK, NULLS))
    # 6.90 at step 60 is the first mean below 7.0 - 0.05; 6.96 at step 50 is not
    assert leaves == "leaves：第 60 步前后离开平台；到第 100 步，最后 10 步平均 5.900。"
    # 6.96 is its lowest: on the plateau (within 0.05), never below it
    assert stuck == "stuck：到第 100 步还没有离开平台（最后 10 步平均 6.990）。"
    # nulls are skipped: 6.9 at step 40 leaves; 6.4 at step 70 is its last finite mean, 3 nulls follow, 2 came before
    assert nulls == ("nulls：第 40 步前后离开平台；第 70 步的 10 步平均 6.400 是最后一个有限值，之后 3 个平均都不是有限数；"
                     "其间有 2 个 10 步平均不是有限数。")


def test_the_rarer_cases_say_what_their_numbers_show():
    never = series("never", [7.6, 7.5, 7.4, 7.3, 7.2, 7.1, 7.06, 7.3, 7.4, 7.5])  # never within 0.05 of 7.0
    below = series("below", [6.5, 6.0, 5.8, 5.7, 5.6, 5.6, 5.5, 5.5, 5.5, 5.5])  # below from the first mean
    back = series("back", [7.6, 7.0, 6.9, 6.8, 6.9, 7.0, 7.1, 7.0, 7.0, 6.96])   # leaves at 30, ends above 6.95
    empty = series("empty", [None] * 10)
    part = series("part", [7.6, 7.0, 6.9, 6.8, 6.7, 6.6, 6.5, 6.4, 6.3, 6.2], steps=95)  # its last mean: 5 steps
    got = sentences(data(never, below, back, empty)) + sentences(data(part))  # the short window: the shortest run
    assert got == [
        "never：到第 100 步还没有降到平台（最后 10 步平均 7.500）。",
        "below：头 10 步的平均（6.500）就已低于 6.950，一开始就在平台以下；到第 100 步，最后 10 步平均 5.500。",
        "back：第 30 步前后离开平台，之后又升回 6.950 以上；到第 100 步，最后 10 步平均 6.960。",
        "empty：到第 100 步，每个 10 步的平均都不是有限数。",
        "part：第 30 步前后离开平台；到第 95 步，最后 5 步平均 6.200。",
    ]


def independent(values, steps, end, every=10, unigram=U, margin=0.05):
    """What a reader checking by hand finds: (left step or None, reached, last finite (step, value), nulls after
    it, the window's first step, nulls before it)."""
    pts = [((i + 1) * every if (i + 1) * every < steps else steps, v) for i, v in enumerate(values)]
    pts = [(s, v) for s, v in pts if s <= end]
    fin = [(s, v) for s, v in pts if v is not None]
    left = next((s for s, v in fin if v < unigram - margin), None)
    reached = any(v <= unigram + margin for _, v in fin)
    last = fin[-1] if fin else None
    after = len(pts) - 1 - pts.index(last) if last else len(pts)
    gaps = sum(1 for _, v in pts[:pts.index(last)] if v is None) if last else 0
    return left, reached, last, after, pts[0][0], gaps


def test_random_runs_every_sentence_is_true_of_its_numbers():
    rng = random.Random(7)
    for trial in range(300):
        runs = []
        for k in range(rng.randint(1, 8)):
            steps = rng.choice([100, 200, 200, 400, 395])
            n = (steps + 9) // 10
            level = rng.uniform(6.5, 7.3)
            values = [round(rng.choice([level, level - 0.06 * i / 5, 7.6 - 0.04 * i]) + rng.uniform(-0.04, 0.04), 4)
                      for i in range(n)]
            values = [None if rng.random() < 0.1 else v for v in values]
            runs.append(series("r" + str(k), values, steps=steps))
        d = data(*runs)
        for window in ("short", "full"):
            short = min(r["steps"] for r in runs)
            end = short if window == "short" else 400
            drawn = [r for r in runs if window == "short" or r["steps"] > short]
            said = sentences(d, window=window)
            assert len(said) == len(drawn)
            for r, s in zip(drawn, said):
                left, reached, last, after, first, gaps = independent(r["values"], r["steps"], end)
                assert s.startswith(r["label"] + "：")
                if last is None:
                    assert "都不是有限数" in s and "平台" not in s, s
                    continue
                assert f"{last[1]:.3f}" in s and f"第 {last[0]:,} 步" in s, (s, last)
                if after:
                    assert f"之后 {after} 个平均都不是有限数" in s, s
                else:
                    assert "之后" not in s.replace("之后又升回", ""), s
                assert (f"其间有 {gaps} 个 10 步平均不是有限数" in s) if gaps else "其间" not in s, s
                if left is None:
                    assert ("还没有离开平台" if reached else "还没有降到平台") in s, (s, r["values"])
                    assert "离开平台；" not in s and "平台以下" not in s
                    continue
                if left == first:
                    assert f"头 {first} 步的平均（" in s and "一开始就在平台以下" in s, s
                else:
                    assert f"第 {left:,} 步前后离开平台" in s, s
                assert ("之后又升回 6.950 以上" in s) == (last[1] >= U - 0.05), s


def test_the_short_window_is_the_steps_every_run_has_and_the_full_one_draws_only_longer_runs():
    d = data(LEAVES, STUCK, LONG)
    short = model.view({"data": d, "window": "short", "shown": None})
    assert [w["label"] for w in short["windows"]] == ["前 100 步", "全部 400 步"]
    assert [w["checked"] for w in short["windows"]] == [True, False]
    assert [line["key"] for line in short["chart"]["lines"]] == ["leaves-s0", "stuck-s0", "long-s0"]
    assert short["chart"]["xticks"][-1] == {"x": "600.0", "label": "100"}
    # the long run through step 100 only: still on the plateau there
    assert short["sentences"][2] == "long：到第 100 步还没有离开平台（最后 10 步平均 7.000）。"
    full = model.view({"data": d, "window": "full", "shown": None})
    assert [line["key"] for line in full["chart"]["lines"]] == ["long-s0"]
    assert full["sentences"] == ["long：第 300 步前后离开平台；到第 400 步，最后 10 步平均 6.500。"]
    assert full["chart"]["xticks"][-1] == {"x": "600.0", "label": "400"}
    assert full["out"]["drawn"].startswith("只画训练超过 100 步的运行：long（400 步）")
    assert [s["available"] for s in full["series"]] == [False, False, True]
    assert full["rows"]["leaves-s0"] == {"data-available": "false", "note": "只训练了前 100 步"}
    assert full["rows"]["long-s0"] == {"data-available": "true", "note": ""}
    assert "全部 400 步" in full["out"]["caption"] and "全部 400 步" in full["announce"]
    # the long run unticked: nothing to draw in the full window, and the page says so
    none = model.view({"data": d, "window": "full", "shown": ["leaves-s0"]})
    assert none["chart"]["lines"] == [] and none["sentences"] == []
    assert none["out"]["drawn"].endswith("现在没有勾选任何一条能画的曲线。")
    assert [s["checked"] for s in none["series"]] == [True, False, False]


def test_checkboxes_choose_the_drawn_runs_in_the_datas_order_with_their_own_styles():
    d = data(LEAVES, STUCK, NULLS)
    state = model.view({"data": d, "window": "short", "shown": ["nulls-s0", "leaves-s0"]})
    assert state["params"]["shown"] == ["leaves-s0", "nulls-s0"]
    assert [(l["key"], l["style"]) for l in state["chart"]["lines"]] == [("leaves-s0", 0), ("nulls-s0", 2)]
    assert [s.split("：")[0] for s in state["sentences"]] == ["leaves", "nulls"]


def test_a_null_breaks_the_line_and_a_lone_value_is_a_dot():
    state = model.view({"data": data(NULLS), "window": "short", "shown": None})
    d = state["chart"]["lines"][0]["d"]
    # 7.6 alone (a dot: M then L to the same point), 7.1 to 6.9, 6.5 to 6.4; no point for a null
    parts = re.findall(r"([ML])([\d.]+),([\d.]+)", d)
    assert [p[0] for p in parts] == ["M", "L", "M", "L", "M", "L"]
    assert parts[0][1:] == parts[1][1:]
    xs = [float(p[1]) for p in parts]
    assert xs == [60.0, 60.0, 180.0, 240.0, 360.0, 420.0]  # steps 10, 30, 40, 60, 70 of 100 on 600 units


def test_positions_follow_the_axes_and_both_reference_lines_are_on_them():
    state = model.view({"data": data(LEAVES, STUCK), "window": "short", "shown": None})
    c = state["chart"]
    ticks = [(float(t["y"]), float(t["label"])) for t in c["yticks"]]
    (y0, v0), (y1, v1) = ticks[0], ticks[-1]

    def y_of(v):
        return y0 + (v - v0) * (y1 - y0) / (v1 - v0)

    assert y0 == model.H and y1 == 0.0 and v0 <= B and v1 >= 7.6  # the bigram and the highest value are inside
    refs = {r["key"]: r for r in c["refs"]}
    assert abs(float(refs["unigram"]["y"]) - y_of(U)) < 0.06 and abs(float(refs["bigram"]["y"]) - y_of(B)) < 0.06
    assert refs["unigram"]["label"] == "验证集上只看词频（unigram） 7.000"  # a validation figure on a training chart, said
    assert refs["bigram"]["label"] == "验证集上只看前一个 token（bigram） 5.500"
    first = re.findall(r"[ML]([\d.]+),([\d.]+)", c["lines"][0]["d"])
    assert [(float(x), round(y_of(v), 1)) for (x, _), v in zip(first, LEAVES["values"])] == \
        [(float(x), float(y)) for x, y in first]


def test_seeds_label_the_runs_when_they_differ_and_the_card_says_which():
    same = model.view({"data": data(LEAVES, STUCK), "window": "short", "shown": None})
    assert "都是种子 0" in same["out"]["card"] and "连续 10 步" in same["out"]["card"]
    assert [s["label"] for s in same["series"]] == ["leaves", "stuck"]
    mixed = data(LEAVES, series("leaves", LEAVES["values"], seed=1))
    state = model.view({"data": mixed, "window": "short", "shown": None})
    assert [s["label"] for s in state["series"]] == ["leaves（种子 0）", "leaves（种子 1）"]
    assert [s["key"] for s in state["series"]] == ["leaves-s0", "leaves-s1"]


def bad(**changes):
    d = data(LEAVES, STUCK)
    for k, v in changes.items():
        d[k] = v
    return d


@pytest.mark.parametrize("params, message", [
    ({"data": None}, r"needs data=\.\.\. \(facts\.norm\.curves"),
    ({"data": {"every": 10}}, r"data has no 'unigram'"),
    ({"data": bad(every=0)}, r"data\.every must be a whole number"),
    ({"data": bad(bigram=7.5)}, r"data\.bigram \(7\.5\) must be below data\.unigram"),
    ({"data": bad(unigram=float("nan"))}, r"data\.unigram must be a finite loss"),
    ({"data": bad(series=[])}, r"data\.series must be a non-empty list"),
    ({"data": bad(series=[LEAVES] * 9)}, r"9 series; at most 8"),
    ({"data": bad(series=[LEAVES, LEAVES])}, r"data\.series\[1\] repeats leaves with seed 0"),
    ({"data": bad(series=[series("x", [7.0] * 9, steps=100)])},
     r"data\.series\[0\]\.values \(x\): 9 values, but steps 100 with every 10 needs 10"),
    ({"data": bad(series=[series("x", [7.0] * 50)])}, r"data\.series\[0\]\.steps must be a whole number from 1 to full_steps \(400\)"),
    ({"data": bad(series=[series("x", [7.0, float("inf")])])}, r"data\.series\[0\]\.values\[1\] must be a finite number or null"),
    ({"data": bad(series=[{"name": "x", "seed": 0, "steps": 10, "values": [7.0]}])}, r"data\.series\[0\] has no 'label'"),
    ({"data": data(LEAVES), "window": "all"}, r"window must be one of short, full; got 'all'"),
    ({"data": data(LEAVES), "shown": ["stuck-s0"]}, r"shown must be null or a list of series keys \(leaves-s0\)"),
])
def test_check_refuses_bad_params_saying_what_is_wrong(params, message):
    p = dict(model.PARAMS)
    p.update(params)
    with pytest.raises(ValueError, match=message):
        model.view(p)


def test_the_courses_curves_give_a_complete_json_view(facts):
    example = model.example(facts)
    assert example is not None, "facts.norm has no curves and no runs to show"
    for window in ("short", "full"):
        p = dict(model.PARAMS)
        p.update(example)
        p["window"] = window
        state = model.view(p)
        json.dumps(state, allow_nan=False)
        if window == "short":
            assert len(state["sentences"]) == len(example["data"]["series"])
        for s in state["sentences"]:
            assert "平台" in s or "有限数" in s


def test_the_widget_and_the_lessons_facts_say_the_same_step(facts):
    """facts.norm.left_at (course/facts/norm.py, what the lesson's prose quotes) and the widget's sentences
    apply one rule: the first 10-step mean below unigram - 0.05, at the last step of those 10."""
    norm = facts.get("norm") or {}
    if not norm.get("curves") or "left_at" not in norm:
        return  # not before norm.py has both (CI counts a skip as a failure)
    d = norm["curves"]
    for s in d["series"]:
        if norm["runs"][s["name"]]["seed"] != s["seed"]:
            continue
        r = model.reading(model.points(s, d["every"], s["steps"]), d["unigram"], d["every"])
        assert r["left"] == norm["left_at"][s["name"]], s["name"]


def test_the_gallery_stand_in_has_the_shape_the_widget_checks(facts):
    sample = model.gallery_sample(facts["norm"])
    model.check_data(sample)
    assert sample["every"] == 10 and sample["series"][0]["steps"] == facts["norm"]["card"]["training"]["short_steps"]


def test_the_first_state_reads_whole_without_javascript():
    d = data(LEAVES, STUCK, NULLS)
    html = str(Renderer({})("warmup-curves", data=d))
    first = model.view({"data": d, "window": "short", "shown": None})
    assert 'data-widget="warmup-curves"' in html
    assert html.count('type="checkbox"') == 3 and html.count('type="radio"') == 2
    assert "<legend>画哪几次训练</legend>" in html and "<legend>看多少步</legend>" in html
    assert 'value="short" checked' in html and 'role="img"' in html
    assert f'aria-label="{first["chart"]["summary"]}"' in html
    for s in first["sentences"]:
        assert f"<li>{s}</li>" in html
    for key in ("caption", "drawn", "rule", "card"):
        assert f'data-out="{key}">{first["out"][key]}<' in html
    assert html.count("<path ") == 3 and "验证集上只看词频（unigram） 7.000" in html and "验证集上只看前一个 token（bigram） 5.500" in html
    for k in range(3):  # each series' swatch has the line's own style class
        assert f'class="wc-line wc-s{k}"' in html
    assert "\n\n" not in html
