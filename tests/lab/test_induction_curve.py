"""The induction lesson's runs along training (issue 50) on the tests' tiny corpus: the smeared key mixes each key
with the previous position's exactly as written; train keeps weight snapshots at step 0, every snapshot_every and
the last step, and a resumed run keeps them; `python -m lab induction part=curve` reads every snapshot, validates,
and its last point is the finished run's own scan (part=final) on the same sequences; runs without snapshots or
without runs= are refused."""
import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tokenizers")

from lab import prepare, schema, train  # noqa: E402
from lab.__main__ import main  # noqa: E402
from lab.model import GPT, make_config, variant_overrides  # noqa: E402
from test_lab_pipeline import make_corpus  # noqa: E402

pytestmark = pytest.mark.lab
SMALL = dict(steps=4, batch_size=2, block_size=32, eval_every=2, progress=False, amp="off", threads=1)
ARGS = ["sequences=10", "length=8", "icl_windows=4", "curve_icl_windows=4", "early_from=2", "early_to=4",
        "late_from=20", "late_to=30", "threads=1"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """smeared_1l-s0 and attn_only_2l-s0 with snapshots every 2 steps, attn_only_1l-s0 without."""
    root = tmp_path_factory.mktemp("curve")
    make_corpus(root / "tiny.txt")
    work = root / "runs"
    prepare.run(prepare.PrepareConfig(corpus=str(root / "tiny.txt"), work_dir=str(work), vocab_size=500, val_chapters=2))
    data = str(work / "data")
    for variant in ("smeared_1l", "attn_only_2l"):
        train.run(train.TrainConfig(data_dir=data, out_dir=str(work / f"{variant}-s0"), variant=variant,
                                    snapshot_every=2, **SMALL))
    train.run(train.TrainConfig(data_dir=data, out_dir=str(work / "attn_only_1l-s0"), variant="attn_only_1l", **SMALL))
    return root


def test_the_smeared_key_is_the_mix_it_says():
    cfg = make_config(**{**variant_overrides("smeared_1l"), "vocab_size": 50, "block_size": 8})
    attn = GPT(cfg).blocks[0].attn
    with torch.no_grad():
        attn.smear.copy_(torch.tensor([0.0, 2.0, -1.0, 5.0]))
    k = torch.randn(1, 4, 5, 16)
    out = attn.smeared(k)
    a = torch.sigmoid(torch.tensor([0.0, 2.0, -1.0, 5.0])).view(1, 4, 1)
    assert torch.allclose(out[:, :, 0], a * k[:, :, 0])  # nothing before position 0
    assert torch.allclose(out[:, :, 3], a * k[:, :, 3] + (1 - a) * k[:, :, 2])
    plain = GPT(make_config(vocab_size=50, block_size=8)).blocks[0].attn
    assert plain.smear is None and plain.smeared(k) is k  # every other model is untouched


def test_snapshots_are_kept_and_a_resumed_run_keeps_them(runs):
    snaps = runs / "runs" / "smeared_1l-s0" / "snapshots"
    assert sorted(p.name for p in snaps.iterdir()) == ["step00000.pt", "step00002.pt", "step00004.pt"]
    before = {p.name: p.stat().st_mtime_ns for p in snaps.iterdir()}
    result = train.run(train.TrainConfig(data_dir=str(runs / "runs" / "data"), out_dir=str(runs / "runs" / "smeared_1l-s0"),
                                         variant="smeared_1l", snapshot_every=2, **SMALL))
    assert result["steps_trained"] == 4 and {p.name: p.stat().st_mtime_ns for p in snaps.iterdir()} == before
    assert not (runs / "runs" / "attn_only_1l-s0" / "snapshots").exists()
    assert result["config"]["snapshot_every"] == 2  # recorded where it is used, and free to differ on resume


def test_the_curve_reads_every_snapshot_and_ends_at_the_runs_own_scan(runs):
    work, out = runs / "runs", runs / "export"
    main(["induction", "--work", str(work), "--out", str(out), "part=curve", "runs=smeared_1l:0,attn_only_2l:0", *ARGS])
    main(["induction", "--work", str(work), "--out", str(out), "runs=smeared_1l:0,attn_only_2l:0", *ARGS])
    curves = json.loads((out / "curves.json").read_text(encoding="utf-8"))
    final = json.loads((out / "induction.json").read_text(encoding="utf-8"))
    schema.validate(schema.INDUCTION_CURVES_FILE, curves)
    assert str(runs) not in (out / "curves.json").read_text(encoding="utf-8")
    for row, scan in zip(curves["runs"], final["runs"]):
        result = json.loads((work / f"{row['variant']}-s0" / "result.json").read_text())
        assert [p["step"] for p in row["points"]] == [0, 2, 4]
        assert row["points"][0]["train_loss"] is None and row["points"][0]["val_loss"] is None
        assert row["points"][1]["train_loss"] == pytest.approx(sum(result["step_losses"][:2]) / 2, abs=1e-4)
        assert [p["val_loss"] for p in row["points"][1:]] == [e["val_loss"] for e in result["history"]]
        last = row["points"][-1]
        assert last["repeat_gain"] == scan["repeat"]["gain"]
        assert last["prefix_matching"]["share"] == max(h["prefix_matching"] for h in scan["heads"])
    smeared, two = curves["runs"]
    assert smeared["smear_keys"] and len(smeared["final_smear"]) == 1 and len(smeared["final_smear"][0]) == 4
    assert not two["smear_keys"] and two["final_smear"] is None and two["n_layer"] == 2 and two["d_ff"] == 0


def test_a_curve_needs_named_runs_with_snapshots(runs):
    work = str(runs / "runs")
    with pytest.raises(SystemExit, match="name the runs"):
        main(["induction", "--work", work, "--out", str(runs / "x"), "part=curve", *ARGS])
    with pytest.raises(FileNotFoundError, match="snapshot_every"):
        main(["induction", "--work", work, "--out", str(runs / "x"), "part=curve", "runs=attn_only_1l:0", *ARGS])
    with pytest.raises(SystemExit, match="part="):
        main(["induction", "--work", work, "--out", str(runs / "x"), "part=middle", *ARGS])


def test_a_longer_schedule_is_its_own_run_and_its_curve_reads(runs):
    """The lesson's longer baseline-shaped run (steps=5600) must not take the default run's place: the CLI names
    its directory by its schedule, the FFN export's loader leaves it out, and part=curve reads it by that name."""
    from lab.experiments import ffn

    work, out = runs / "runs", runs / "export-long"
    main(["train", "--work", str(work), "variant=attn_only_2l", "seed=0", "steps=6", "batch_size=2", "block_size=32",
          "eval_every=3", "progress=false", "threads=1", "snapshot_every=3"])
    longer = json.loads((work / "attn_only_2l-6steps-s0" / "result.json").read_text())
    assert longer["variant"] == "attn_only_2l" and longer["steps_trained"] == 6
    assert json.loads((work / "attn_only_2l-s0" / "result.json").read_text())["steps_trained"] == 4  # untouched
    loaded = ffn.load_runs(work, variants=("attn_only_2l",))
    assert [r["steps"] for r in loaded["attn_only_2l"]] == [4]
    main(["induction", "--work", str(work), "--out", str(out), "part=curve", "runs=attn_only_2l-6steps:0", *ARGS])
    row = json.loads((out / "curves.json").read_text(encoding="utf-8"))["runs"][0]
    assert row["variant"] == "attn_only_2l-6steps" and row["steps"] == 6
    assert [p["step"] for p in row["points"]] == [0, 3, 6]
