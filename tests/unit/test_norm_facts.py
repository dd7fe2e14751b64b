"""course/facts/norm.py on the tiny-corpus export fixture (tests/fixtures/lab-exports/norm/): what
lesson c4/l3's 真模型 reads, derived the same way from any export of `python -m lab norm`."""
import json

from support import ROOT

from course.facts import norm

FIXTURE = ROOT / "tests" / "fixtures" / "lab-exports" / "norm" / "norm.json"


def test_every_placement_run_is_a_cell_read_against_the_unigram():
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    f = norm.norm_facts(data)
    assert len(f["rows"]) == len(data["placement"]["runs"]) == len(f["cell"])
    cold = f["cell"]["post-cold-base"]
    assert cold["place"] == "post" and not cold["warmup"] and cold["lr_mult"] == 1.0
    unigram = data["references"]["unigram"]
    for row in f["rows"]:
        assert row["stuck"] == (row["val_loss"] is None or row["val_loss"] > unigram - norm.STUCK)
    assert f["cell"]["pre-warm-high"]["lr_mult"] == data["model_card"]["training"]["high_lr_mult"]


def test_gradients_gains_and_the_baseline_at_the_short_runs_length():
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    f = norm.norm_facts(data)
    g = f["gradients"]
    assert g["depths"] == sorted({m["n_layer"] for m in data["gradients"]["models"]})
    pre = g["by"][f"pre-{g['depths'][0]}"]
    assert pre["last"] == pre["ffn"][-1] and len(pre["ffn"]) == g["depths"][0]
    assert f["gains"]["zero_centred_decay"]["form"] == "1+w" and f["gains"]["gain_decay"]["decay"]
    short = f["short_steps"]
    assert f["baseline_at_short"] == min((h for h in f["runs"]["baseline"]["history"]),
                                         key=lambda h: abs(h["step"] - short))["val_loss"]


def test_no_export_no_facts():
    assert norm.facts({}) == {"norm": None}
