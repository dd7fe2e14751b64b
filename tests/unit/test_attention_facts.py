"""course/facts/attention.py's control reading (C3 第 1 课 真模型): the control against the baseline by
seeds protocol v2, recomputed here by hand (median, pooled SD, a printed t table) on the real export
and on small made-up exports: failed runs come from the health check, not from a seed number; seeds
trained later for the baseline (baseline-seeds.json) join its arm."""
import json
import statistics
from pathlib import Path

import pytest

from course.facts import attention

ROOT = Path(__file__).resolve().parents[2]
T975 = {7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160}  # printed table


def row(per_seed, d_ff=688, params=1000):
    """An export row {seed: [(step, val, train), ...]} in attention.json's shape."""
    seeds = sorted(per_seed)
    hist = [[{"step": s, "tokens": s * 10, "val_loss": v, "train_loss": t} for s, v, t in per_seed[x]] for x in seeds]
    return {"variant": "x", "params": params, "model_config": {"d_ff": d_ff}, "seeds": seeds,
            "val_losses": [h[-1]["val_loss"] for h in hist], "train_losses": [h[-1]["train_loss"] for h in hist],
            "histories": hist, "wall_seconds": [60.0] * len(seeds)}


def healthy(loss, k):
    return [(200, loss + 1.0 + 0.01 * k, loss + 0.8 + 0.01 * k), (400, loss + 0.2 + 0.01 * k, loss + 0.1 + 0.01 * k),
            (600, loss + 0.01 * k, loss - 0.1 + 0.01 * k)]


def by_hand(arms):
    """v2 written out again: arms {name: {seed: loss}} -> failed {name: {seed}}, pooled sd, df."""
    med = {n: statistics.median(a.values()) for n, a in arms.items()}
    res = [v - med[n] for n, a in arms.items() if len(a) >= 3 for v in a.values()]
    t = max(6 * 1.4826 * statistics.median(abs(r) for r in res), 0.1)
    failed = {n: {s for s, v in a.items() if v - med[n] > t} for n, a in arms.items()}
    ok = {n: [v for s, v in a.items() if s not in failed[n]] for n, a in arms.items()}
    ss = sum(sum((x - statistics.fmean(v)) ** 2 for x in v) for v in ok.values())
    df = sum(len(v) - 1 for v in ok.values())
    return failed, ok, (ss / df) ** 0.5, df


def test_the_real_control_is_read_by_v2():
    """Both losses at the last step: the failed runs, gap and half-width agree with the rule done by hand."""
    doc = json.loads((ROOT / "data" / "real-model" / "attention" / "attention.json").read_text(encoding="utf-8"))
    if "control" not in doc:
        pytest.skip("no control in the export")
    c = attention.control_facts(doc)
    base, ctl = doc["control"]["baseline"], doc["control"]["control"]
    for loss, key, got in (("val_losses", "val_loss", c["final"]), ("train_losses", "train_loss", c["final_train"])):
        arms = {"baseline": dict(zip(base["seeds"], base[loss])), "control": dict(zip(ctl["seeds"], ctl[loss]))}
        failed, ok, sd, df = by_hand(arms)
        gap = statistics.fmean(ok["control"]) - statistics.fmean(ok["baseline"])
        h = T975[df] * sd * (1 / len(ok["control"]) + 1 / len(ok["baseline"])) ** 0.5
        assert got["gap"] == pytest.approx(gap) and got["half_width"] == pytest.approx(h, rel=1e-3)
        assert (got["n_a"], got["n_b"]) == (len(ok["control"]), len(ok["baseline"]))
        assert got["measured"] == (abs(gap) > h)
        listed = {(f["arm"], f["seed"]) for f in c["failed"] if f[key] is not None}
        assert listed == {(n, s) for n, ss in failed.items() for s in ss}
    assert c["primary"]["holm"] is True and c["primary"]["measured"] == c["final"]["measured"]  # one primary: Holm = plain
    assert c["primary"]["gap"] == c["final"]["gap"]
    assert attention.seeds.say(c["primary"]).endswith("：测到")


def made_up(extra=None):
    """Baseline seeds 0-3, seed 1 failed from step 400 on (behind every control run throughout);
    control seeds 0-3 a little worse than the healthy baseline."""
    base = {k: healthy(4.8, k) for k in (0, 2, 3)}
    base[1] = [(200, 6.1, 5.9), (400, 5.6, 5.5), (600, 5.3, 5.2)]
    ctl = {k: healthy(4.95, k) for k in range(4)}
    doc = {"control": {"rule": "prefix average", "baseline": row(base), "control": row(ctl, d_ff=859)}}
    return attention.control_facts(doc, extra)


def test_a_failed_run_is_found_by_the_health_check_not_by_its_seed():
    c = made_up()
    assert [(f["arm"], f["seed"]) for f in c["failed"]] == [("baseline", 1)]
    assert c["failed"][0]["val_loss"] == 5.3 and c["failed"][0]["train_loss"] == 5.2
    assert c["runs"]["baseline"] == {"trained": 4, "failed": 1, "name": "基线"}
    assert c["runs"]["control"]["failed"] == 0
    assert (c["final"]["n_a"], c["final"]["n_b"]) == (4, 3)  # control 4, baseline 3 healthy
    k = c["failed"][0]["course"]
    assert k["since"] == 200 and k["before"] is None  # flagged at every evaluation
    assert k["worse_than_other_before_last"] and not k["within_other"]
    assert attention.seeds.say(c["primary"]) == attention.seeds.say(c["final"])
    for old in ("far", "pairs", "ahead_at", "band"):
        assert old not in c


def test_the_failed_runs_story_starts_where_it_is_first_flagged_for_good():
    base = {k: healthy(4.8, k) for k in (0, 2, 3, 4)}
    base[4] = [(200, 5.88, 5.62), (400, 5.6, 5.5), (600, 5.3, 5.2)]  # 0.025 behind the arm's median at 200: within the line
    base[0] = [(200, 6.6, 6.4), (400, 5.0, 4.9), (600, 4.8, 4.7)]  # a slow start that catches up
    ctl = {k: healthy(4.95, k) for k in range(4)}
    doc = {"control": {"rule": "", "baseline": row(base), "control": row(ctl)}}
    c = attention.control_facts(doc)
    f = next(f for f in c["failed"] if f["seed"] == 4)
    k = f["course"]
    assert 200 not in k["flagged"] and k["since"] == 400 and k["before"] == 200
    # the health check's yardstick: the arm's median with the run itself in it
    assert k["lag_before"] == pytest.approx(5.88 - statistics.median([6.6, 5.82, 5.83, 5.88]))
    assert k["threshold_before"] > k["lag_before"]
    assert [s for s in (f["seed"] for f in c["failed"])] == [4]


def test_baseline_seeds_trained_later_join_the_baseline_arm():
    extra = {"seed_runs": [
        {"seed": s, "val_loss": 4.8 + 0.01 * (s - 4), "train_loss": 4.7 + 0.01 * (s - 4),
         "history": [{"step": st, "tokens": st * 10, "val_loss": v, "train_loss": t} for st, v, t in healthy(4.8, s - 4)]}
        for s in (5, 6, 7)]}
    before, after = made_up(), made_up(extra)
    assert after["base_seeds"] == 7 and after["runs"]["baseline"]["trained"] == 7
    assert (after["final"]["n_a"], after["final"]["n_b"]) == (4, 6)
    assert [(f["arm"], f["seed"]) for f in after["failed"]] == [("baseline", 1)]
    assert after["final"]["df"] == before["final"]["df"] + 3
    assert after["final"]["half_width"] < before["final"]["half_width"]  # more seeds, a narrower interval


def test_the_primary_comparison_is_declared_in_the_module():
    assert attention.PRIMARY == ({"a": "control", "b": "baseline", "loss": "val_loss", "step": None},)


def test_later_baseline_seeds_join_only_ablations_baseline():
    """baseline-seeds.json adds seeds to ablation.json's baseline: a control exported against another
    baseline is refused by name, never silently mixed."""
    from course.errors import CourseError
    base = {k: healthy(4.8, k) for k in range(3)}
    doc = {"control": {"rule": "", "baseline": row(base), "control": row({k: healthy(4.95, k) for k in range(3)})}}
    extra = {"seed_runs": [{"seed": 5, "val_loss": 4.8, "train_loss": 4.7,
                            "history": [{"step": st, "tokens": st * 10, "val_loss": v, "train_loss": t}
                                        for st, v, t in healthy(4.8, 1)]}]}
    same = {"variants": [{**row(base), "name": "baseline"}]}
    data = {attention.KEY: doc, "real-model/ablation": same, "real-model/baseline-seeds": extra}
    assert attention.baseline_extra(doc, data) is extra
    assert attention.baseline_extra(doc, {attention.KEY: doc, "real-model/ablation": same}) is None
    other = {"variants": [{**row({k: healthy(4.9, k) for k in range(3)}), "name": "baseline"}]}
    with pytest.raises(CourseError, match="baseline-seeds.json cannot join"):
        attention.baseline_extra(doc, {**data, "real-model/ablation": other})


def test_a_failed_runs_own_head_measures_are_read_only_for_a_run_the_health_check_failed():
    doc = json.loads((ROOT / "data" / "real-model" / "attention" / "attention.json").read_text(encoding="utf-8"))
    if "control" not in doc:
        pytest.skip("no control in the export")
    control = attention.control_facts(doc)
    seed = control["failed"][0]["seed"]
    blind = doc["measures"]["prefix_average"]
    flat = {**blind, "induction": blind.get("induction", 0.0), "self": blind.get("self", 0.0)}
    heads = [{"layer": 1, "head": h, **flat} for h in (1, 2)] + [{"layer": 2, "head": 1, **flat, "previous": 0.9}]
    content = {"heads": [{"layer": h["layer"], "head": h["head"], "tv_position": tv, "tv_prefix": 0.9}
                         for h, tv in zip(heads, (0.1, 0.2, 0.5))]}
    knockout = {"all_heads": {"delta": 2.0}, "heads": [{"layer": h["layer"], "head": h["head"], "delta": d}
                                                      for h, d in zip(heads, (0.5, 0.6, 0.01))]}
    other = {"export_config": {"variant": "baseline", "seed": seed}, "content": content, "knockout": knockout,
             "measures": {"heads": heads, "prefix_average": blind}}
    got = attention.failed_run_heads(control, other)
    assert got["seed"] == seed and got["heads"] == 3 and got["near"] == [(1, 1), (1, 2)] and got["named_count"] == 1
    assert [(h["layer"], h["head"]) for h in got["picking"]] == [(2, 1)]
    assert got["knock_all"] == 2.0 and got["first_layer_knock"] == [0.5, 0.6]
    healthy_seed = next(s for s in doc["control"]["baseline"]["seeds"] if s != seed)
    assert attention.failed_run_heads(control, {**other, "export_config": {"variant": "baseline", "seed": healthy_seed}}) is None
    assert attention.failed_run_heads(control, None) is None


def test_the_category_free_facts_read_the_export_by_their_rules():
    """content: heads at 30 % or more of weight off their best position-only weights, strongest first;
    knockout: a rise counts beyond t(0.975, windows - 1) * se (t written from a printed table for df 9);
    scores: the spread's range and the sharpest head by saturated share."""
    heads = [{"layer": 1, "head": h} for h in (1, 2, 3)]
    doc = {"content": {"queries": 100, "heads": [
               {**heads[0], "tv_position": 0.45, "tv_prefix": 0.6, "tv_place": 0.44, "kl_position": 0.5},
               {**heads[1], "tv_position": 0.1, "tv_prefix": 0.7, "tv_place": 0.1, "kl_position": 0.1},
               {**heads[2], "tv_position": 0.3, "tv_prefix": 0.31, "tv_place": 0.29, "kl_position": 0.3}]},
           "knockout": {"windows": 10, "val_loss": 5.0, "book": "b.txt", "tokens": 2560,
                        "all_heads": {"val_loss": 6.0, "delta": 1.0, "se": 0.01},
                        "heads": [{**heads[0], "val_loss": 5.03, "delta": 0.03, "se": 0.01},
                                  {**heads[1], "val_loss": 5.02, "delta": 0.02, "se": 0.01},
                                  {**heads[2], "val_loss": 4.97, "delta": -0.03, "se": 0.01}]},
           "scores": {"saturated_at": 0.99, "prefix_average": {"top_weight": 0.02, "slope": 0.98},
                      "trained": {"queries": 100, "heads": [
                          {**heads[0], "score_sd": 1.5, "top_weight": 0.3, "saturated": 0.0, "slope": 0.8},
                          {**heads[1], "score_sd": 4.0, "top_weight": 0.8, "saturated": 0.2, "slope": 0.2},
                          {**heads[2], "score_sd": 0.8, "top_weight": 0.1, "saturated": 0.0, "slope": 0.95}]},
                      "init": {k: {"queries": 100, "heads": [{**h, "score_sd": sd, "top_weight": 0.03, "saturated": 0.0,
                                                               "slope": 0.97} for h in heads]}
                               for k, sd in (("scaled", 0.1), ("unscaled", 0.8))}}}
    c = attention.content_facts(doc, {"layer": 1, "head": 2})
    assert [(h["layer"], h["head"]) for h in c["picking"]] == [(1, 1), (1, 3)] and c["previous"]["tv_position"] == 0.1
    assert c["prefix_closer"] == []
    near = attention.content_facts({"content": {**doc["content"], "heads": [
        {**doc["content"]["heads"][0], "tv_position": 0.35, "tv_prefix": 0.29}]}}, {"layer": 1, "head": 1})
    assert near["picking"] == [] and near["previous"]["off"] == 0.29 and len(near["prefix_closer"]) == 1
    k = attention.knockout_facts(doc)
    h = 2.262 * 0.01  # t(0.975, 9) * se
    assert k["by_head"][(1, 1)]["h"] == pytest.approx(h, abs=1e-3)
    assert [(r["layer"], r["head"]) for r in k["rises"]] == [(1, 1)]  # 0.02 < h: within
    assert [(r["layer"], r["head"]) for r in k["within"]] == [(1, 2)] and [(r["layer"], r["head"]) for r in k["falls"]] == [(1, 3)]
    s = attention.score_facts(doc, 64)
    assert (s["sd_min"], s["sd_max"]) == (0.8, 4.0) and (s["sharpest"]["layer"], s["sharpest"]["head"]) == (1, 2)
    assert s["init"]["unscaled"]["sd"] == pytest.approx(0.8) and s["sqrt_dk"] == 8.0
    assert [(r["layer"], r["head"]) for r in s["saturating"]] == [(1, 2)]


@pytest.mark.parametrize("name", ["attention.json", "failed-run.json"])
def test_an_export_with_the_category_free_measures_is_consistent(name):
    """Both committed attention exports hold the category-free blocks (the schema requires them): the knockout's intact loss is the run's own
    per-book figure, each head's best position-only weights are no farther than the prefix average (itself
    position-only), and the unscaled scores at init spread sqrt(d_k) times the scaled ones."""
    doc = json.loads((ROOT / "data" / "real-model" / "attention" / name).read_text(encoding="utf-8"))
    k = doc["knockout"]
    assert k["reported"] is not None and abs(k["val_loss"] - k["reported"]) <= 2e-4
    # The fit minimises cross-entropy, not this distance: it may sit farther than the prefix average
    # (which the facts then take, with_off), but never much farther on a trained head.
    for h in doc["content"]["heads"]:
        assert h["tv_position"] <= h["tv_prefix"] + 0.1, h
    hd = doc["model_config"]["head_dim"]
    for a, b in zip(doc["scores"]["init"]["scaled"]["heads"], doc["scores"]["init"]["unscaled"]["heads"]):
        assert b["score_sd"] == pytest.approx(a["score_sd"] * hd ** 0.5, rel=2e-3)
    assert doc["content"]["fit_gradient"] < 1e-4
