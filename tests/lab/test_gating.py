"""The gating experiment (python -m lab gating) on the tests' tiny corpus: each FFN kind computes
what its name says, the FFNs hold equal parameters by an independent count, the readings rebuild
the FFN's output, and the export validates against its schema."""
import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tokenizers")

import torch.nn.functional as F  # noqa: E402

from lab import schema  # noqa: E402
from lab.__main__ import main  # noqa: E402
from lab.experiments import gating  # noqa: E402
from lab.model import GATING_VARIANTS, GPT, make_config, variant_overrides  # noqa: E402
from test_lab_pipeline import make_corpus  # noqa: E402

pytestmark = pytest.mark.lab

TINY_ARGS = ["vocab_size=300", "val_chapters=2", "steps=4", "batch_size=2", "block_size=32", "eval_every=2",
             "progress=false", "amp=off", "threads=1"]


def test_each_ffn_computes_its_formula():
    torch.manual_seed(0)
    x = torch.randn(3, 256)
    for name, act in (("gelu_ffn", lambda u: 0.5 * u * (1 + torch.erf(u / 2 ** 0.5))), ("relu_ffn", F.relu),
                      ("silu_ffn", lambda u: u * torch.sigmoid(u))):
        ffn = GPT(make_config(**variant_overrides(name))).blocks[0].ffn
        with torch.no_grad():
            assert torch.allclose(ffn(x), act(x @ ffn.up.weight.T) @ ffn.down.weight.T, atol=1e-6), name
    bil = GPT(make_config(**variant_overrides("bilinear_ffn"))).blocks[0].ffn
    with torch.no_grad():
        want = ((x @ bil.gate.weight.T) * (x @ bil.up.weight.T)) @ bil.down.weight.T
        assert torch.allclose(bil(x), want, atol=1e-6)


def test_equal_parameters_by_an_independent_count():
    d = 256
    swiglu = 3 * d * make_config().d_ff  # gate, up, down: three d x d_ff matrices
    assert swiglu == 528_384
    for name, over in GATING_VARIANTS.items():
        ffn = GPT(make_config(**over)).blocks[0].ffn
        mats = 3 if over["ffn"] == "bilinear" else 2
        assert mats * d * ffn.up.out_features == swiglu, name
        assert sum(p.numel() for p in ffn.parameters()) == swiglu, name


def test_the_readings_rebuild_the_output_and_count_clamps():
    torch.manual_seed(0)
    model = GPT(make_config(vocab_size=50, block_size=8)).eval()
    with torch.no_grad():
        model.blocks[0].ffn.gate.weight.mul_(400)  # push some gate pre-activations past 7
    val = torch.randint(0, 50, (20,))
    rows = gating.ffn_ranges(model, val, {"m7": 7.0}, share=0.01, digits=6)
    assert [r["block"] for r in rows] == [1, 2, 3, 4] and rows[0]["tokens"] == 20
    assert rows[0]["gate"]["max"] > 7 and rows[0]["clamped_share"]["m7"]["gate"] > 0
    assert rows[1]["clamped_share"]["m7"]["gate"] == 0  # untouched layers stay inside
    assert rows[0]["gate"]["top_abs"] <= rows[0]["gate"]["max_abs"]


def test_the_configs_clamps_are_read_from_the_frontier_file():
    assert gating.clamp_limits() == {"gpt-oss-120b": 7.0, "DeepSeek-V4": 10.0}


def test_the_budget_cuts_a_run_to_whole_evaluation_intervals():
    from lab.train import TrainConfig
    tc = TrainConfig(steps=1400, eval_every=200)
    assert gating.budget_stop(tc, 700.0, 1.0) == 600  # 700 steps fit: three intervals of 200
    assert gating.budget_stop(tc, 2000.0, 1.0) == 0  # the whole schedule fits
    assert gating.budget_stop(tc, 150.0, 1.0) is None and gating.budget_stop(tc, -5.0, 1.0) is None
    assert gating.budget_stop(tc, 1.0, 0.0) == 0  # no pace yet: the first run trains in full


def test_a_run_the_budget_has_no_room_for_is_said(tmp_path):
    make_corpus(tmp_path / "tiny.txt")
    main(["gating", "--corpus", str(tmp_path / "tiny.txt"), "--out", str(tmp_path / "export"), "--work",
          str(tmp_path / "runs"), *TINY_ARGS, "budget_minutes=0", "runs=gelu_ffn,relu_ffn"])
    doc = json.loads((tmp_path / "export" / "gating.json").read_text(encoding="utf-8"))
    assert [r["name"] for r in doc["runs"]] == ["baseline", "gelu_ffn"]
    said = " ".join(doc["model_card"]["not_tested"])
    assert "relu_ffn" in said and "the budget had no room" in said and "bilinear_ffn" in said


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("gating")
    make_corpus(root / "tiny.txt")
    main(["gating", "--corpus", str(root / "tiny.txt"), "--out", str(root / "export"), "--work", str(root / "runs"),
          *TINY_ARGS])
    return root


def test_the_export_validates_and_holds_every_run(tiny):
    doc = json.loads((tiny / "export" / "gating.json").read_text(encoding="utf-8"))
    schema.validate(schema.GATING_FILE, doc)
    assert [r["name"] for r in doc["runs"]] == ["baseline", *GATING_VARIANTS]
    assert {r["ffn_params_per_layer"] for r in doc["runs"]} == {3 * 256 * 688}
    assert {r["steps_trained"] for r in doc["runs"]} == {4}
    ffns = {m["run"]: m["ffn"] for m in doc["ranges"]["models"]}
    assert ffns == {"baseline": "swiglu", "gelu_ffn": "gelu", "bilinear_ffn": "bilinear", "relu_ffn": "relu",
                    "silu_ffn": "silu"}
    relu = next(m for m in doc["ranges"]["models"] if m["run"] == "relu_ffn")
    assert all(layer["hidden"]["min"] >= 0 and "gate" not in layer for layer in relu["layers"])
    assert doc["ranges"]["fp16_max"] == 65504
    assert doc["model_card"]["command"].startswith("python -m lab gating --corpus PATH/TO/tiny.txt")
    assert str(tiny) not in json.dumps(doc)  # no path of this machine: the corpus by name


def test_the_ranges_read_window_by_window_equal_all_entries_at_once():
    """ffn_ranges gathers its statistics window by window; they are those of every entry at once."""
    torch.manual_seed(1)
    model = GPT(make_config(vocab_size=50, block_size=8, **variant_overrides("bilinear_ffn"))).eval()
    val = torch.randint(0, 50, (150,))
    segments = [(0, 61), (61, 150)]  # two books: windows stop at the border
    share, limits = 0.003, {"lo": 0.5, "hi": 2.0}
    rows = gating.ffn_ranges(model, val, limits, share=share, digits=12, segments=segments)
    inputs = {i: [] for i in range(len(model.blocks))}
    hooks = [b.ffn.register_forward_pre_hook(lambda m, a, i=i: inputs[i].append(a[0][0].float()))
             for i, b in enumerate(model.blocks)]
    with torch.no_grad():
        for first, end in segments:
            for s in range(first, end, 8):
                model(val[s:min(s + 8, end)][None])
    for h in hooks:
        h.remove()
    for i, b in enumerate(model.blocks):
        with torch.no_grad():
            r = gating.ffn_readings(b.ffn, torch.cat(inputs[i]))
        assert rows[i]["tokens"] == 150
        for name, v in r.items():
            a = v.abs().flatten()
            k = max(1, int(round(a.numel() * share)))
            assert rows[i][name] == pytest.approx({"max_abs": a.max().item(), "max": v.max().item(), "min": v.min().item(),
                                                   "top_abs": a.topk(k).values[-1].item()}, rel=1e-9), (i, name)
        for lim_name, lim in limits.items():
            assert rows[i]["clamped_share"][lim_name]["gate"] == pytest.approx((r["gate"] > lim).double().mean().item())
            assert rows[i]["clamped_share"][lim_name]["up"] == pytest.approx((r["up"].abs() > lim).double().mean().item())


def test_a_broken_export_names_the_key(tiny):
    doc = json.loads((tiny / "export" / "gating.json").read_text(encoding="utf-8"))
    doc["runs"][1]["ffn_params_per_layer"] += 1
    with pytest.raises(schema.SchemaError, match="equal parameters"):
        schema.validate(schema.GATING_FILE, doc)


def test_a_rerun_trains_nothing(tiny):
    before = json.loads((tiny / "export" / "gating.json").read_text(encoding="utf-8"))
    main(["gating", "--corpus", str(tiny / "tiny.txt"), "--out", str(tiny / "export"), "--work", str(tiny / "runs"),
          *TINY_ARGS])
    after = json.loads((tiny / "export" / "gating.json").read_text(encoding="utf-8"))
    assert [r["wall_seconds"] for r in after["runs"]] == [r["wall_seconds"] for r in before["runs"]]
    assert [r["val_loss"] for r in after["runs"]] == [r["val_loss"] for r in before["runs"]]


def test_extra_seeds_are_their_own_export_beside_seed_0(tmp_path):
    make_corpus(tmp_path / "tiny.txt")
    args = ["gating", "--corpus", str(tmp_path / "tiny.txt"), "--out", str(tmp_path / "export"), "--work",
            str(tmp_path / "runs"), *TINY_ARGS]
    with pytest.raises(SystemExit, match="export seed 0 first"):
        main([*args, "extra_seeds=1,2"])
    main([*args, "runs=relu_ffn", "budget_minutes=0"])
    first = (tmp_path / "export" / "gating.json").read_bytes()
    main([*args, "extra_seeds=1,2"])
    assert (tmp_path / "export" / "gating.json").read_bytes() == first  # seed 0's export is left as it was
    doc = json.loads((tmp_path / "export" / "seeds.json").read_text(encoding="utf-8"))
    schema.validate(schema.GATING_SEEDS_FILE, doc)
    assert [(r["name"], r["seed"], r["steps_trained"]) for r in doc["seed_runs"]] == [("relu_ffn", 1, 4), ("relu_ffn", 2, 4)]
    assert doc["pairs_with"] == {"file": "gating.json", "date": json.loads(first)["model_card"]["date"], "run_seed": 0}
    assert str(tmp_path) not in json.dumps(doc)
    # The export reads each run as trained in its own directory.
    alone = json.loads((tmp_path / "runs" / "relu_ffn-s1" / "result.json").read_text(encoding="utf-8"))
    assert doc["seed_runs"][0]["val_loss"] == alone["val_loss"]
    doc["seed_runs"][1]["seed"] = 0  # gating.json's own seed
    with pytest.raises(schema.SchemaError, match="gating.json's own"):
        schema.validate(schema.GATING_SEEDS_FILE, doc)


def test_extra_seeds_refuse_other_training_settings(tmp_path):
    make_corpus(tmp_path / "tiny.txt")
    args = ["gating", "--corpus", str(tmp_path / "tiny.txt"), "--out", str(tmp_path / "export"), "--work",
            str(tmp_path / "runs"), *TINY_ARGS]
    main([*args, "runs=relu_ffn", "budget_minutes=0"])
    with pytest.raises(SystemExit, match=r"differ from .*'lr': \(0.001, 0.002\)"):
        main([*args, "extra_seeds=1", "lr=0.002"])
    assert not (tmp_path / "runs" / "relu_ffn-s1").exists()  # refused before training
    with pytest.raises(SystemExit, match="runs= leaves out relu_ffn"):  # a partial seeds.json the site would refuse
        main([*args, "extra_seeds=1", "runs=gelu_ffn"])
    assert not (tmp_path / "runs" / "gelu_ffn-s1").exists()


def test_extra_seeds_add_to_an_earlier_seeds_json(tmp_path):
    make_corpus(tmp_path / "tiny.txt")
    args = ["gating", "--corpus", str(tmp_path / "tiny.txt"), "--out", str(tmp_path / "export"), "--work",
            str(tmp_path / "runs"), *TINY_ARGS]
    path = tmp_path / "export" / "seeds.json"
    main([*args, "runs=relu_ffn", "budget_minutes=0"])
    main([*args, "extra_seeds=1"])
    one = json.loads(path.read_text(encoding="utf-8"))
    main([*args, "extra_seeds=2"])
    both = json.loads(path.read_text(encoding="utf-8"))
    schema.validate(schema.GATING_SEEDS_FILE, both)
    assert [(r["name"], r["seed"]) for r in both["seed_runs"]] == [("relu_ffn", 1), ("relu_ffn", 2)]
    assert both["seed_runs"][0] == one["seed_runs"][0]  # kept as the earlier export wrote it
    card, first = both["model_card"], one["model_card"]
    assert card["earlier"] == [{"date": first["date"], "command": first["command"], "code": first["code"],
                                "seeds": [1], "runs_seconds": one["seed_runs"][0]["wall_seconds"]}]
    assert card["command"].endswith("extra_seeds=2") and first["command"].endswith("extra_seeds=1")
    assert card["budget"]["new_runs_seconds"] == both["seed_runs"][1]["wall_seconds"]  # this command's runs only
    assert [(t["run"], t["seed"]) for t in card["timing"]["runs"]] == [("relu_ffn", 1), ("relu_ffn", 2)]
    assert str(tmp_path) not in json.dumps(both)
    # Training seed 1 again (reused from the work dir) makes it this command's; seed 2 is now the earlier one.
    main([*args, "extra_seeds=1"])
    again = json.loads(path.read_text(encoding="utf-8"))
    assert [e["seeds"] for e in again["model_card"]["earlier"]] == [[2]]
    assert [r["seed"] for r in again["seed_runs"]] == [1, 2]
    # A seeds.json paired with another gating.json is replaced, not added to.
    stale = {**again, "pairs_with": {**again["pairs_with"], "date": "2000-01-01"}}
    path.write_text(json.dumps(stale, ensure_ascii=False), encoding="utf-8")
    main([*args, "extra_seeds=2"])
    fresh = json.loads(path.read_text(encoding="utf-8"))
    assert [r["seed"] for r in fresh["seed_runs"]] == [2] and "earlier" not in fresh["model_card"]
    # The schema refuses an `earlier` that claims every seed (then no run is this command's) or a seed twice.
    for seeds in ([1, 2], [1, 1]):
        bad = {**both, "model_card": {**card, "earlier": [{**card["earlier"][0], "seeds": seeds}]}}
        with pytest.raises(schema.SchemaError, match="model_card.earlier"):
            schema.validate(schema.GATING_SEEDS_FILE, bad)


def test_a_later_arm_is_its_own_export_of_every_seed(tmp_path):
    make_corpus(tmp_path / "tiny.txt")
    args = ["gating", "--corpus", str(tmp_path / "tiny.txt"), "--out", str(tmp_path / "export"), "--work",
            str(tmp_path / "runs"), *TINY_ARGS]
    with pytest.raises(SystemExit, match="gating.json is missing"):
        main([*args, "arm=silu_ffn", "arm_seeds=0,1"])
    main([*args, "runs=relu_ffn", "budget_minutes=0"])
    first = (tmp_path / "export" / "gating.json").read_bytes()
    with pytest.raises(SystemExit, match="holds relu_ffn already"):
        main([*args, "arm=relu_ffn"])
    with pytest.raises(SystemExit, match=r"differ from .*'lr': \(0.001, 0.002\)"):
        main([*args, "arm=silu_ffn", "arm_seeds=0", "lr=0.002"])
    assert not (tmp_path / "runs" / "silu_ffn-s0").exists()  # refused before training
    main([*args, "arm=silu_ffn", "arm_seeds=1"])
    one = json.loads((tmp_path / "export" / "arms.json").read_text(encoding="utf-8"))
    main([*args, "arm=silu_ffn", "arm_seeds=0"])
    assert (tmp_path / "export" / "gating.json").read_bytes() == first  # seed 0's export is left as it was
    doc = json.loads((tmp_path / "export" / "arms.json").read_text(encoding="utf-8"))
    schema.validate(schema.GATING_ARMS_FILE, doc)
    assert [(r["name"], r["seed"], r["ffn"], r["steps_trained"]) for r in doc["seed_runs"]] == [
        ("silu_ffn", 0, "silu", 4), ("silu_ffn", 1, "silu", 4)]
    assert doc["seed_runs"][1] == one["seed_runs"][0]  # seed 1 kept as the earlier export wrote it
    assert [e["runs"] for e in doc["model_card"]["earlier"]] == [[{"name": "silu_ffn", "seed": 1}]]
    assert doc["pairs_with"] == {"file": "gating.json", "date": json.loads(first)["model_card"]["date"], "run_seed": 0}
    alone = json.loads((tmp_path / "runs" / "silu_ffn-s0" / "result.json").read_text(encoding="utf-8"))
    assert doc["seed_runs"][0]["val_loss"] == alone["val_loss"]
    assert str(tmp_path) not in json.dumps(doc)
