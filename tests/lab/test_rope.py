"""The positions export (python -m lab rope) on the tests' tiny corpus: moving every position leaves every
attention weight of the RoPE model as it was (to float rounding, and closer in fp64) and changes the
learned-position control's; the long windows' first half is the model's own loss at those positions; the
slow pairs are counted from rope_base and the head size; an unfinished run is refused."""
import json
import math
import tempfile

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tokenizers")

from lab import prepare, schema, train  # noqa: E402
from lab.__main__ import main  # noqa: E402
from lab.experiments import rope  # noqa: E402
from lab.experiments.common import load_model  # noqa: E402
from test_lab_pipeline import make_corpus  # noqa: E402

pytestmark = pytest.mark.lab
SMALL = dict(steps=4, batch_size=2, block_size=32, eval_every=2, progress=False, amp="off", threads=1)
ARGS = ["shift=8", "windows=4", "fp64_windows=2", "long_tokens=64", "threads=1"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("rope")
    make_corpus(root / "tiny.txt")
    work = root / "runs"
    prepare.run(prepare.PrepareConfig(corpus=str(root / "tiny.txt"), work_dir=str(work), vocab_size=500, val_chapters=2))
    train.run(train.TrainConfig(data_dir=str(work / "data"), out_dir=str(work / "baseline-s0"), **SMALL))
    main(["rope", "--work", str(work), "--out", str(root / "export"), *ARGS])
    return root


def read(root, name="export"):
    return json.loads((root / name / "rope.json").read_text(encoding="utf-8"))


def test_a_shift_leaves_every_weight_of_the_rope_model_and_moves_the_controls(tiny):
    doc = read(tiny)
    full, short, control = doc["shift"]["rows"]
    assert (full["tokens"], short["tokens"], control["tokens"]) == (32, 24, 24)
    assert full["positions"] == [[0, 31], [8, 39]]  # past the context of 32: RoPE computes those angles too
    for row in (full, short):
        assert row["max_weight_diff"] < 1e-5 and row["loss_diff"] < 1e-5
        assert row["fp64"]["max_weight_diff"] < 1e-12  # rounding, not the model: in fp64 it shrinks
    assert control["model"] == "abs_pos" and control["max_weight_diff"] > 1e-3 and control["loss_diff"] > 1e-4
    assert doc["shift"]["control"] == {"variant": "abs_pos", "trained": False, "step": 0,
                                       "params": load_model(tiny / "runs" / "baseline-s0").num_params() + 32 * 256}  # block_size x d_model


def test_the_long_windows_first_half_is_the_models_loss_at_those_positions(tiny):
    """Causal attention: positions 0..31 of a 64-token window see what a 32-token window sees."""
    doc = read(tiny)
    long = doc["long"]
    assert long["tokens"] == 64 and len(long["loss_by_position"]) == 64 and long["windows"] >= 1
    model = load_model(tiny / "runs" / "baseline-s0")
    data = tiny / "runs" / "data"
    meta = json.loads((data / "meta.json").read_text())
    val = train.load_tokens(data, "val")
    starts = rope.windows_in([(a, b) for _, a, b in prepare.val_segments(meta)], 64)
    with torch.no_grad():
        losses = torch.stack([torch.nn.functional.cross_entropy(model(val[s:s + 32][None])[0][0], val[s + 1:s + 33],
                                                                reduction="none") for s in starts]).mean(0)
    assert long["loss_by_position"][:32] == pytest.approx(losses.tolist(), abs=2e-4)
    assert long["first_half"] == pytest.approx(float(losses.mean()), abs=2e-4)


def test_the_slow_pairs_are_counted_from_the_base_and_the_head_size():
    """Our model: head size 64, base 10,000, 256 tokens. Pair i turns 10000^(-2i/64) radians a position;
    it completes a turn in the context when 255 of those make 2 pi."""
    want = sum(255 * 10000 ** (-2 * i / 64) < 2 * math.pi for i in range(32))
    pairs = rope.frequency_pairs(64, 10000.0, 256)
    assert pairs["slow"] == want == 19 and pairs["pairs"] == 32
    assert pairs["wavelength"][0] == pytest.approx(2 * math.pi) and pairs["wavelength"][-1] > 47000
    assert rope.frequency_pairs(64, 500000.0, 256)["slow"] > want  # a larger base: more slow pairs


def test_the_export_validates_and_holds_no_path_of_this_machine(tiny):
    text = (tiny / "export" / "rope.json").read_text(encoding="utf-8")
    assert str(tiny) not in text and tempfile.gettempdir() not in text
    doc = json.loads(text)
    schema.validate(schema.ROPE_FILE, doc)
    assert doc["command"].startswith("python -m lab rope --work PATH/TO/runs")
    assert doc["corpus"]["files"][0]["file"] == "tiny.txt" and len(doc["corpus"]["files"][0]["sha256"]) == 64
    assert doc["model"]["variant"] == "baseline" and doc["model_config"]["rope_base"] == 10000.0
    doc["long"]["first_half"] += 0.01
    with pytest.raises(schema.SchemaError, match="long.first_half"):
        schema.validate(schema.ROPE_FILE, doc)


def test_the_trained_control_is_read_when_it_exists(tiny):
    work = tiny / "runs"
    train.run(train.TrainConfig(data_dir=str(work / "data"), out_dir=str(work / "abs_pos-s0"), variant="abs_pos", **SMALL))
    main(["rope", "--work", str(work), "--out", str(tiny / "export2"), *ARGS, "long_windows=1"])
    doc = read(tiny, "export2")
    control = doc["shift"]["control"]
    assert control["trained"] and control["step"] == 4 and doc["shift"]["rows"][2]["trained"]
    assert control["val_loss"] == json.loads((work / "abs_pos-s0" / "result.json").read_text())["val_loss"]
    assert doc["long"]["windows"] == 1


def test_an_unfinished_run_is_refused(tiny, tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        rope.export(rope.Config(work_dir=str(tmp_path)), "python -m lab rope")
    work = tiny / "runs"
    train.run(train.TrainConfig(data_dir=str(work / "data"), out_dir=str(work / "baseline-s1"), seed=1, stop_at=2,
                                **SMALL))
    with pytest.raises(ValueError, match="trained 2 of 4 steps"):
        rope.export(rope.Config(work_dir=str(work), seed=1), "python -m lab rope")
    (work / "baseline-s1" / "result.json").unlink()  # a run still training has a checkpoint and no result
    with pytest.raises(FileNotFoundError, match="not finished"):
        rope.export(rope.Config(work_dir=str(work), seed=1), "python -m lab rope")


def test_bad_settings_are_refused(tiny):
    work = str(tiny / "runs")
    with pytest.raises(ValueError, match="shift=40"):
        rope.export(rope.Config(work_dir=work, shift=40), "python -m lab rope")
    with pytest.raises(ValueError, match="long_tokens=30"):
        rope.export(rope.Config(work_dir=work, shift=8, long_tokens=30), "python -m lab rope")
    with pytest.raises(ValueError, match="not a learned-position model"):
        rope.export(rope.Config(work_dir=work, shift=8, long_tokens=64, control="nope", windows=1), "python -m lab rope")


def test_the_arms_are_read_with_their_declared_comparisons_and_head_measures(tiny):
    """part=arms trains nothing: it reads every finished baseline and arm run, lists the declared arm seeds
    not finished yet, and measures C3 第 1 课's heads for one seed of each (one head of 256: 4 rows)."""
    work = tiny / "runs"
    train.run(train.TrainConfig(data_dir=str(work / "data"), out_dir=str(work / "nope-s0"), variant="nope", **SMALL))
    train.run(train.TrainConfig(data_dir=str(work / "data"), out_dir=str(work / "one_head-s0"), variant="one_head",
                                **SMALL))
    main(["rope", "--work", str(work), "--out", str(tiny / "arms"), "part=arms", "threads=1"])
    doc = json.loads((tiny / "arms" / "arms.json").read_text(encoding="utf-8"))
    schema.validate(schema.ROPE_ARMS_FILE, doc)
    runs = {(r["variant"], r["seed"]) for r in doc["runs"]}
    assert ("baseline", 0) in runs and ("nope", 0) in runs and ("one_head", 0) in runs
    assert ("baseline", 1) not in runs  # stopped early (stop_at) or without result.json: not finished
    assert ["nope", 1] in doc["missing"] and ["abs_pos", 2] in doc["missing"] and ["nope", 0] not in doc["missing"]
    assert doc["primary"]["pairs"] == [["nope", "baseline"], ["one_head", "baseline"], ["abs_pos", "baseline"]]
    assert doc["primary"]["key"] == "val_loss" and doc["primary"]["step"] == 1400
    models = {m["variant"]: m for m in doc["heads"]["models"]}
    assert len(models["baseline"]["heads"]) == 16 and len(models["one_head"]["heads"]) == 4
    assert models["one_head"]["n_head"] == 1 and doc["heads"]["book"] == "sanguo-yanyi.txt"
    nope = json.loads((work / "nope-s0" / "result.json").read_text())
    row = next(r for r in doc["runs"] if r["variant"] == "nope")
    assert row["val_loss"] == nope["val_loss"] and row["model_config"]["pos"] == "none"
    assert doc["command"].startswith("python -m lab rope --work PATH/TO/runs")


def test_an_arm_trained_with_other_settings_is_refused(tiny, tmp_path):
    work = tiny / "runs"
    other = train.TrainConfig(data_dir=str(work / "data"), out_dir=str(work / "abs_pos-s2"), variant="abs_pos", seed=2,
                              **{**SMALL, "steps": 3})
    train.run(other)
    try:
        with pytest.raises(ValueError, match="other settings than the baseline's"):
            main(["rope", "--work", str(work), "--out", str(tmp_path), "part=arms", "threads=1"])
    finally:
        import shutil
        shutil.rmtree(work / "abs_pos-s2")
    with pytest.raises(SystemExit, match="part='x'"):
        main(["rope", "--work", str(work), "--out", str(tmp_path), "part=x"])
