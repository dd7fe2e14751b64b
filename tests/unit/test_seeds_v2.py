"""Seeds protocol v2 (widgets/common/seeds.py): the health check, the pooled noise, the interval,
Holm's correction, the words a page prints, and the rule's error rates on simulated experiments
(widgets/common/seeds_sim.py, the review's three scenarios)."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "widgets" / "common"))  # as in the browser

import seeds  # noqa: E402
import seeds_sim  # noqa: E402

# Two-sided 95 % quantiles of Student's t, from a printed table.
T_TABLE = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 7: 2.365, 10: 2.228, 14: 2.145, 20: 2.086, 30: 2.042}


@pytest.mark.parametrize("df,t", sorted(T_TABLE.items()))
def test_t_quantile_matches_the_printed_table(df, t):
    assert seeds.t_quantile(df) == pytest.approx(t, abs=6e-4)


def test_t_within_is_a_distribution():
    for df in (1, 2, 3, 8, 15):
        assert seeds.t_within(0.0, df) == 0.0
        assert 0.999 < seeds.t_within(1e4, df) <= 1.0
        assert seeds.t_within(1.0, df) < seeds.t_within(2.0, df)


def test_health_flags_a_run_far_above_its_arm_and_leaves_it_out():
    arms = {"a": {0: 5.00, 1: 5.01, 2: 5.02, 3: 5.60}, "b": {0: 5.10, 1: 5.12, 2: 5.11}}
    r = seeds.read(arms)
    assert r["failed"] == {"a": {3: 5.60}, "b": {}}
    assert r["healthy"]["a"] == {0: 5.00, 1: 5.01, 2: 5.02}
    assert r["threshold"] == pytest.approx(0.1)  # the floor: the robust scale is tiny here
    assert r["df"] == 2 + 2 and r["split"] == {}


def test_an_arm_with_a_run_far_below_or_half_failed_is_split_and_not_read():
    low = seeds.read({"a": {0: 5.0, 1: 5.01, 2: 4.6}, "b": {0: 5.1, 1: 5.11, 2: 5.12}})
    assert low["split"] == {"a": "low"}
    c = seeds.contrast(low, "a", "b")
    assert c["status"] == "split" and not c["measured"] and "暂不读" in seeds.say(c)
    half = seeds.read({"a": {0: 5.0, 1: 5.01, 2: 5.02}, "b": {0: 5.1, 1: 5.6}})
    assert half["failed"]["b"] == {1: 5.6} and half["split"] == {"b": "half_failed"}


def test_contrast_reads_gap_plus_minus_the_t_interval():
    arms = {"a": {0: 5.20, 1: 5.22, 2: 5.21, 3: 5.23}, "b": {0: 5.00, 1: 5.02, 2: 5.01, 3: 5.03}}
    r = seeds.read(arms)
    c = seeds.contrast(r, "a", "b")
    s = (sum((x - 5.215) ** 2 for x in arms["a"].values()) * 2 / 6) ** 0.5  # both arms alike
    assert c["gap"] == pytest.approx(0.2) and r["df"] == 6 and r["sd"] == pytest.approx(s)
    assert c["half_width"] == pytest.approx(2.447 * s * (0.5 ** 0.5), rel=1e-3)
    assert c["measured"] and c["direction"] == 1
    assert seeds.say(c) == "高 0.200 ± 0.022（各 4 个种子）：测到"
    back = seeds.contrast(r, "b", "a")
    assert back["direction"] == -1 and seeds.say(back).startswith("低 0.200 ± 0.022")


def test_a_gap_inside_the_interval_is_not_a_direction():
    r = seeds.read({"a": {0: 5.00, 1: 5.05, 2: 5.02}, "b": {0: 5.01, 1: 5.04, 2: 5.03}})
    c = seeds.contrast(r, "a", "b")
    assert c["status"] == "within" and c["direction"] == 0
    assert seeds.say(c).endswith("在误差之内，分不出")


def test_one_seed_never_carries_a_thesis():
    r = seeds.read({"base": {0: 5.00, 1: 5.02, 2: 5.01, 3: 5.03}, "one": {0: 5.80}})
    c = seeds.contrast(r, "one", "base")
    assert c["status"] == "one_seed" and not c["measured"] and c["direction"] == 0
    assert seeds.say(c).endswith("（1、4 个种子）：一个种子，待第二个种子确认")


def test_no_noise_estimate_means_no_reading():
    c = seeds.contrast(seeds.read({"a": {0: 5.0}, "b": {0: 5.3}}), "a", "b")
    assert c["status"] == "none" and not c["measured"] and "不读" in seeds.say(c)


def test_holm_keeps_only_the_primary_contrasts_that_survive_the_correction():
    def fake(p, measured=True):
        return {"p": p, "measured": measured, "direction": 1 if measured else 0,
                "status": "measured" if measured else "within"}
    kept = seeds.holm([fake(0.001), fake(0.02), fake(0.04)])
    # 0.001 <= 0.05/3; 0.02 <= 0.05/2; 0.04 <= 0.05/1: all three survive
    assert [c["holm"] for c in kept] == [True, True, True]
    cut = seeds.holm([fake(0.001), fake(0.03), fake(0.04)])  # 0.03 > 0.025 stops the steps
    assert [c["measured"] for c in cut] == [True, False, False] and cut[1]["status"] == "holm"
    assert "Holm" in seeds.say({**cut[1], "gap": 0.1, "half_width": 0.05, "n_a": 3, "n_b": 3})


def real_arms(key, step=None):
    ablation = json.loads((ROOT / "data" / "real-model" / "ablation.json").read_text(encoding="utf-8"))
    last = ablation["train_config"]["steps"]
    return {v["name"]: seeds.history_by_seed(v, step or last, key) for v in ablation["variants"]}


@pytest.mark.parametrize("key", ["val_loss", "train_loss"])
def test_on_todays_data_the_health_check_flags_exactly_baseline_seed_4(key):
    r = seeds.read(real_arms(key))
    failed = {(arm, s) for arm, runs in r["failed"].items() for s in runs}
    assert failed == {("baseline", 4)}
    assert r["split"] == {}


def test_on_todays_data_the_linear_ffn_is_measured_higher_once_seed_4_is_out():
    r = seeds.read(real_arms("val_loss"))
    c = seeds.contrast(r, "linear_ffn", "baseline")
    assert c["n_b"] == len(r["healthy"]["baseline"]) and 4 not in r["healthy"]["baseline"]
    assert c["measured"] and c["direction"] == 1  # the old rule read it 「分不出」


# The review's simulation (Part 2): 5 baseline seeds, 4 variant seeds, sd 0.0228, stalls of +0.367.
DRAWS = 3000


@pytest.mark.parametrize("scenario", ["A", "B", "C"])
def test_v2_false_positives_stay_near_five_percent_in_every_scenario(scenario):
    sim = seeds_sim.simulate(0.0, scenario, draws=DRAWS, seed=11)
    assert 0.025 <= sim["v2"] + sim["v2_wrong"] <= 0.075


@pytest.mark.parametrize("scenario,power", [("A", 0.95), ("B", 0.85), ("C", 0.7)])
def test_v2_finds_a_gap_of_0_1_where_the_old_rule_was_capped(scenario, power):
    sim = seeds_sim.simulate(0.1, scenario, draws=DRAWS, seed=12)
    assert sim["v2"] >= power
    if scenario != "A":  # a 1-in-5 stall in the baseline caps the range rule near 0.8^5 = 33 %
        assert sim["v1"] <= 0.4


def test_an_exports_rows_are_read_by_seed_at_a_step():
    variant = {"seeds": [0, 1], "histories": [[{"step": 200, "val_loss": 6.0}, {"step": 400, "val_loss": 5.5}],
                                              [{"step": 200, "val_loss": 6.1}]]}
    assert seeds.history_by_seed(variant, 400, "val_loss") == {0: 5.5}
    assert seeds.history_by_seed(variant, 200, "val_loss") == {0: 6.0, 1: 6.1}
    assert seeds.runs_by_seed([{"seed": 3, "history": [{"step": 2, "val_loss": 5.0}]}], 2, "val_loss") == {3: 5.0}
    assert seeds.at_step(variant["histories"][1], 400, "val_loss") is None


def test_the_old_range_rule_is_kept_only_in_the_simulator_and_is_blinded_by_one_failure():
    base = {0: 5.00, 1: 5.02, 2: 5.01, 3: 5.03}
    worse = {0: 5.10, 1: 5.11, 2: 5.12, 3: 5.13}
    assert seeds_sim.v1_measured(base, worse) == 1
    assert seeds_sim.v1_measured({**base, 4: 5.40}, worse) == 0  # one failed baseline run: band 0.40
    r = seeds.read({"baseline": {**base, 4: 5.40}, "variant": worse})
    assert seeds.contrast(r, "variant", "baseline")["direction"] == 1  # v2 sets the failed run apart
