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


def test_comparisons_pair_seeds_against_the_baselines_band_at_the_same_step():
    data = export()
    short = data["model_card"]["training"]["short_steps"]
    f = norm.norm_facts(data, ablation(data, {0: 5.0, 1: 5.1, 2: 5.05}))
    c = f["compare"]["val_loss"]
    assert c["band"] == pytest.approx(0.1)
    # The fixture trains pre_ln_no_warmup at seeds 0 and 1: two pairs with the baseline's seeds.
    pre_cold = {r["seed"]: r for r in [f["runs"]["pre_ln_no_warmup"], *f["seed_runs"]] if r["name"] == "pre_ln_no_warmup"}
    assert sorted(pre_cold) == [0, 1] and c["pre_cold-pre_warm"]["pairs"] == 2
    at = {s: next(h["val_loss"] for h in r["history"] if h["step"] == short) for s, r in pre_cold.items()}
    assert c["pre_cold-pre_warm"]["gap"] == pytest.approx(((at[0] - 5.0) + (at[1] - 5.1)) / 2)
    assert c["pre_cold-pre_warm"]["say"].startswith("2 个种子配对")
    # Post-LN with warm-up has one seed in the fixture: the one-seed rule reads it.
    assert c["post_warm-pre_warm"]["rule"] == "one_seed"


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
