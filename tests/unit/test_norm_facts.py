"""course/facts/norm.py on the tiny-corpus export fixture (tests/fixtures/lab-exports/norm/): what
lesson c4/l3's 真模型 reads, derived the same way from any export of `python -m lab norm`."""
import json

import pytest
from support import ROOT

from course.facts import norm

FIXTURE = ROOT / "tests" / "fixtures" / "lab-exports" / "norm" / "norm.json"


def export():
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def ablation(data, losses):
    """An FFN-experiment export whose baseline seeds have `losses[seed]` at the short runs' step."""
    short = data["model_card"]["training"]["short_steps"]
    histories = [[{"step": short, "val_loss": v, "train_loss": v + 0.1}] for v in losses.values()]
    return {"variants": [{"name": "baseline", "seeds": list(losses), "histories": histories}]}


def test_every_placement_run_is_a_cell_read_against_the_unigram():
    data = export()
    f = norm.norm_facts(data, ablation(data, {0: 5.0, 1: 5.1}))
    assert len(f["rows"]) == len(data["placement"]["runs"]) == len(f["cell"])
    cold = f["cell"]["post-cold-base"]
    assert cold["place"] == "post" and not cold["warmup"] and cold["lr_mult"] == 1.0
    unigram = data["references"]["unigram"]
    for row in f["rows"]:
        assert row["stuck"] == (row["at_short"] is None or row["at_short"] > unigram - norm.STUCK)
    assert f["cell"]["pre-warm-high"]["lr_mult"] == data["model_card"]["training"]["high_lr_mult"]


def at(run, step, key="val_loss"):
    return next(h[key] for h in run["history"] if h["step"] == step)


def test_comparisons_read_every_arm_at_the_same_step_by_seeds_v2():
    """One v2 reading at the short step over the baseline's seeds and every run that reached it:
    the baseline's rerun (pre_ln_warmup, the export's baseline) is no arm of its own; the
    placement runs join their seed_runs; a gap is mean minus mean over healthy runs, ± t·s·√(1/n+1/n)."""
    data = export()
    short = data["model_card"]["training"]["short_steps"]
    f = norm.norm_facts(data, ablation(data, {0: 5.0, 1: 5.1, 2: 5.05}))
    v = f["compare"]["val_loss"]
    assert v["arms"]["pre_warm"] == {0: 5.0, 1: 5.1, 2: 5.05}
    assert "pre_ln_warmup" not in v["arms"] and "baseline" not in v["arms"]
    cold = [r for r in [f["runs"]["pre_ln_no_warmup"], *f["seed_runs"]] if r["name"] == "pre_ln_no_warmup"]
    assert v["arms"]["pre_cold"] == {r["seed"]: at(r, short) for r in cold} and len(cold) == 2
    c = v["pre_cold-pre_warm"]
    mean_cold = sum(at(r, short) for r in cold) / 2
    assert c["gap"] == pytest.approx(mean_cold - 5.05)
    assert c["n_a"] == 2 and c["n_b"] == 3
    r = norm.seeds.read(v["arms"])
    assert c["half_width"] == pytest.approx(norm.seeds.t_quantile(r["df"]) * r["sd"] * (1 / 2 + 1 / 3) ** 0.5)
    assert c["say"] == norm.seeds.say(c) and c["say"].endswith(norm.seeds.VERDICT[c["status"]])
    # Post-LN with warm-up has one seed in the fixture: whatever its gap, it never counts as measured.
    one = v["post_warm-pre_warm"]
    assert one["n_a"] == 1 and not one["measured"] and one["status"] in ("one_seed", "within")


def test_the_primary_comparisons_are_holm_corrected_and_the_rest_are_not():
    data = export()
    f = norm.norm_facts(data, ablation(data, {0: 5.0, 1: 5.1, 2: 5.05}))
    v, t = f["compare"]["val_loss"], f["compare"]["train_loss"]
    assert f["compare"]["primary"] == [n for n in norm.PRIMARY if n in v]
    for n in f["compare"]["primary"]:
        assert v[n]["primary"] and "holm" in v[n]
        assert v[n]["say"] == norm.say(v[n])
    assert "holm" not in t["pre_cold-pre_warm"] and "holm" not in v.get("post_cold-pre_cold", {})
    # Holm can only take a measured reading away, never add one.
    for n in f["compare"]["primary"]:
        c = norm.contrast(v["reading"], *norm.PAIRS[n])
        assert v[n]["measured"] <= c["measured"]


def test_a_failed_baseline_run_is_listed_and_left_out():
    """A baseline seed far above the others is a failed run: listed with its loss, out of the mean."""
    data = export()
    losses = {0: 5.00, 1: 5.01, 2: 5.02, 3: 5.015, 4: 5.60}
    f = norm.norm_facts(data, ablation(data, losses))
    v = f["compare"]["val_loss"]
    assert v["failed"]["pre_warm"] == {4: 5.60} and v["base"]["failed"] == {4: 5.60}
    assert v["base"]["healthy_n"] == 4 and v["base"]["healthy_max"] == pytest.approx(5.02)
    c = v["pre_cold-pre_warm"]
    assert c["mean_b"] == pytest.approx(sum([5.00, 5.01, 5.02, 5.015]) / 4) and c["n_b"] == 4


def test_a_split_baseline_is_not_read_and_the_page_names_it():
    data = export()
    f = norm.norm_facts(data, ablation(data, {0: 5.0, 1: 5.3, 2: 5.31, 3: 5.6, 4: 5.32}))
    v = f["compare"]["val_loss"]
    assert v["split"] == {"pre_warm": "low"} and v["base"]["low"] == {0: 5.0}
    c = v["pre_cold-pre_warm"]
    assert c["status"] == "split" and not c["measured"]
    assert c["say"] == "基线的种子在这一步分成了两拨，暂不读"


def test_a_diverged_run_is_no_arm():
    data = export()
    short = data["model_card"]["training"]["short_steps"]
    for r in data["runs"]:
        if r["name"] == "post_ln_warmup":
            r["finite"] = False
    arms = norm.arms_at({r["name"]: r for r in data["runs"]}, data["seed_runs"], ablation(data, {0: 5.0}), short)
    assert "post_warm" not in arms and "post_cold" in arms


def test_a_run_cut_short_is_read_at_its_last_step_against_the_baseline_there():
    data = export()
    short, full = data["model_card"]["training"]["short_steps"], data["model_card"]["training"]["steps"]
    lasts = (4.80, 4.82, 4.81, 5.30)  # seed 3 fails
    base = {"name": "baseline", "seeds": [0, 1, 2, 3],
            "histories": [[{"step": short, "val_loss": 6.0 + i / 100, "train_loss": 6.1},
                           {"step": full, "val_loss": v, "train_loss": v}] for i, v in enumerate(lasts)]}
    f = norm.norm_facts(data, {"variants": [base]})
    ln = f["layernorm"]
    assert ln["steps"] == full and ln["base"]["failed"] == {3: 5.30}  # the fixture trains layernorm the full schedule
    c = ln["compare"]
    assert c["n_a"] == 1 and c["n_b"] == 3 and c["mean_b"] == pytest.approx(4.81)
    assert c["gap"] == pytest.approx(f["runs"]["layernorm"]["val_loss"] - 4.81)
    assert not c["measured"]  # one seed: at most 「一个种子，待第二个种子确认」


def test_the_failed_runs_course_against_the_other_seeds():
    hist = lambda vals: [{"step": s, "val_loss": v, "train_loss": v} for s, v in zip((200, 400, 600), vals)]  # noqa: E731
    ab = {"variants": [{"name": "baseline", "seeds": [0, 1, 2],
                        "histories": [hist((6.0, 5.5, 5.2)), hist((6.1, 5.6, 5.3)), hist((6.2, 6.0, 5.7))]}]}
    fc = norm.failed_course(ab, 2, 600)
    assert [s for s, _ in fc["lags"]] == [200, 400, 600]
    assert fc["lags"][0][1] == pytest.approx(0.15) and fc["lags"][1][1] == pytest.approx(0.45)
    assert (fc["before"], fc["opened"]) == (200, 400)
    assert fc["low"] == pytest.approx(0.45) and fc["high"] == pytest.approx(0.45)


def test_seeds_added_to_the_baseline_join_the_reading():
    """facts() reads the baseline through _baseline.ablation: a later seed joins the baseline arm."""
    data = export()
    short = data["model_card"]["training"]["short_steps"]
    ab = ablation(data, {0: 5.0, 1: 5.1})
    ab["variants"][0].update(val_losses=[5.0, 5.1], train_losses=[5.1, 5.2])
    extra = {"seed_runs": [{"seed": 5, "val_loss": 5.05, "train_loss": 5.15,
                            "history": [{"step": short, "val_loss": 5.05, "train_loss": 5.15}]}]}
    f = norm.facts({norm.KEY: data, "real-model/ablation": ab, "real-model/baseline-seeds": extra})["norm"]
    assert f["compare"]["val_loss"]["arms"]["pre_warm"] == {0: 5.0, 1: 5.1, 5: 5.05}
    assert f["baseline_seed_count"] == 3


def test_a_run_leaves_the_plateau_at_its_first_window_below_the_unigram():
    assert norm.left_plateau([7.5, 7.0, 6.96, 6.9, 6.5], 10, 6.955) == 40
    assert norm.left_plateau([7.5, None, 7.0, 6.95], 10, 6.955) is None


def test_gradients_their_1_over_rms_account_and_the_init_controls():
    data = export()
    g = norm.norm_facts(data, ablation(data, {0: 5.0}))["gradients"]
    assert g["depths"] == sorted({m["n_layer"] for m in data["gradients"]["models"] if m["init"] == "default"})
    d = g["depths"][0]
    pre = g["by"][f"pre-{d}"]
    assert pre["last"] == pre["ffn"][-1] and len(pre["ffn"]) == d
    assert g["predicted_pre_over_post"][d] == pytest.approx(1 / pre["stream_rms_out"])
    assert g["pre_over_post_last"][d] == pytest.approx(pre["last"] / g["by"][f"post-{d}"]["last"])
    assert set(g["controls"]) == {"embed_unit", "writes_02", "embed_unit_writes_02", "xavier"}


def test_adams_first_step_and_the_warm_up_arithmetic():
    data = export()
    f = norm.norm_facts(data, ablation(data, {0: 5.0}))
    ad, t = f["adam"], data["model_card"]["training"]
    assert ad["first_warm_lr"] == pytest.approx(t["lr"] / t["warmup_steps"])
    assert ad["ten_warm_steps"] == pytest.approx(t["lr"] * 55 / t["warmup_steps"])  # (1 + ... + 10) / warmup
    assert ad["write_back_share"] == pytest.approx(t["lr"] / ad["cold"]["groups"]["write_back"]["init_rms"])
    assert set(ad["head_change"]) == {"pre-cold", "pre-warm", "post-cold", "post-warm"}


def test_the_curves_are_the_runs_training_curves():
    data = export()
    f = norm.norm_facts(data, ablation(data, {0: 5.0}))
    runs = {r["name"]: r for r in data["runs"]}
    for s in f["curves"]["series"]:
        assert s["values"] == runs[s["name"]]["train_curve"] and s["label"] == norm.LABELS[s["name"]]
    assert f["curves"]["unigram"] == data["references"]["unigram"]


def test_no_export_no_facts():
    assert norm.facts({}) == {"norm": None}


def test_the_noise_sources_split_plateau_arms_from_moving_ones():
    """Which arms a reading's pooled SD comes from: a split arm is left out, an arm whose median sits
    within STUCK of the unigram is a plateau arm, and the SD pooled over the others alone is kept."""
    unigram = 7.0
    arms = {"pre_warm": {0: 6.0, 1: 6.3, 2: 6.31, 3: 6.32, 4: 6.29},  # seed 0 far below: split
            "post_cold": {0: 6.97, 1: 6.972, 2: 6.971}, "pre_cold": {0: 6.30, 1: 6.33, 2: 6.32}}
    r = norm.seeds.read(arms)
    assert r["split"] == {"pre_warm": "low"}
    ns = norm.noise_sources(r, unigram)
    by = {a["arm"]: a for a in ns["arms"]}
    assert set(by) == {"post_cold", "pre_cold"} and by["post_cold"]["stuck"] and not by["pre_cold"]["stuck"]
    assert ns["stuck_df"] == 2 and ns["moving_df"] == 2 and ns["df"] == r["df"] == 4
    assert ns["stuck_range"] == pytest.approx(0.002) and by["pre_cold"]["range"] == pytest.approx(0.03)
    assert ns["moving_sd"] == pytest.approx(norm.seeds.pooled({"pre_cold": arms["pre_cold"]})[0])
    assert ns["moving_sd"] > ns["sd"]  # the plateau arm's tiny spread pulls the pooled SD down
    big = norm.seeds.contrast(r, "post_cold", "pre_cold")  # 0.65 apart: beyond either noise
    assert big["measured"] and norm.holds_on_moving_noise(big, ns) is True
    small = {**big, "gap": 0.02}  # beyond the pooled noise, not beyond the moving arm's alone
    assert norm.holds_on_moving_noise(small, ns) is False
    assert norm.holds_on_moving_noise({**big, "measured": False}, ns) is None


def test_the_undecayed_references_and_the_block_cosines():
    data = export()
    f = norm.norm_facts(data, ablation(data, {0: 5.0}))
    ref = f["undecayed"]
    assert f["undecayed_others"] and all(not g["decay"] and g["steps"] == ref["steps"] and g["run"] != ref["run"]
                                         for g in f["undecayed_others"])
    probes = {"post_ln_warmup": {0: {"cosine_by_depth": [0.0, 0.5, 1.0]}},
              "post_ln_no_warmup": {0: {"cosine_by_depth": [0.1, 0.9, 0.99]}, 1: {"cosine_by_depth": [0.0, 0.7, 0.98]}}}
    assert norm.block_cosines(probes) == [(0.0, 0.1), (0.5, 0.9), (0.98, 1.0)]
    assert norm.block_cosines({}) == []
    assert f["adam"]["embedding_init_rms"] == data["first_step"]["models"][0]["groups"]["embedding"]["init_rms"]


def test_threshold_sources_own_direction_and_the_gain_reference():
    """The fifth reads: where T comes from (plateau arms, zero residuals, T off the plateau alone),
    how much of its own token block 1 keeps, and the same-schedule gain reference."""
    unigram = 7.0
    arms = {"pre_warm": {0: 5.5, 1: 6.3, 2: 6.5, 3: 6.7, 4: 6.1},
            "post_cold": {0: 6.97, 1: 6.972, 2: 6.971}, "pre_cold": {0: 6.0, 1: 6.3, 2: 6.6}}
    ts = norm.threshold_sources({"arms": arms}, unigram)
    assert ts["n"] == 11 and ts["stuck"] == 3 and ts["zeros"] == 3 and ts["stuck_zeros"] == 1
    assert ts["moving_threshold"] == norm.seeds.health({n: a for n, a in arms.items() if n != "post_cold"})["threshold"]
    assert ts["moving_threshold"] > norm.seeds.read(arms)["threshold"]
    probes = {"post_ln_warmup": {0: {"own_embedding_cosine_by_depth": [1.0, 0.6]}},
              "post_ln_no_warmup": {0: {"own_embedding_cosine_by_depth": [1.0, -0.1]}},
              "baseline": {0: {"own_embedding_cosine_by_depth": [1.0, 0.2]}}}
    od = norm.own_direction(probes)
    assert od["n"] == 2 and od["kept"] == 1 and od["pre_max"] == 0.2 and od["kept_min"] == od["kept_max"] == 0.6
    assert norm.own_direction({"baseline": probes["baseline"]}) is None
    g = lambda *p50: {"median": sorted(p50)[1], "norms": [{"p50": v} for v in p50]}
    gains = {"gain_decay": g(0.9, 0.95, 0.97), "layernorm": g(1.0, 0.99, 1.02)}
    gr = norm.gain_reference(gains, g(1.0, 1.0, 1.0))
    assert gr["decay_lower"] == 3 and gr["decay_min"] == pytest.approx(-0.1) and gr["decay_max"] == pytest.approx(-0.03)
    assert gr["ref_min"] == pytest.approx(-0.01) and gr["ref_max"] == pytest.approx(0.02)
    assert gr["ref_median_gap"] == pytest.approx(0.0) and gr["label"] == norm.LABELS["layernorm"]
    assert norm.gain_reference({}, g(1.0, 1.0, 1.0)) is None
