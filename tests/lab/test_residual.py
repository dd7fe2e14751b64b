"""The residual experiment (python -m lab residual) on the tests' tiny corpus: no real corpus, no GPU, seconds."""
import json
import math
import shutil
import tempfile

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tokenizers")

from lab import prepare, schema, train  # noqa: E402
from lab.experiments import residual  # noqa: E402
from lab.__main__ import main  # noqa: E402
from lab.model import GPT, RESIDUAL_VARIANTS, VARIANTS, Block, make_config, rope_tables, variant_overrides  # noqa: E402
from test_lab_pipeline import ROOT, count_params, make_corpus  # noqa: E402

pytestmark = pytest.mark.lab

TINY_ARGS = ["vocab_size=300", "val_chapters=2", "baseline_seeds=2", "no_residual_seeds=2", "deep_seeds=1", "steps=6",
             "batch_size=2", "block_size=32", "eval_every=3", "progress=false", "amp=off", "threads=1", "grad_batch=4"]


def test_without_residual_the_block_has_no_skip():
    """Zero what the sublayers write: with skips the block returns its input, without them it returns zero."""
    torch.manual_seed(0)
    x = torch.randn(2, 5, 256)  # (B, T, C)
    cos, sin = rope_tables(64, 5, 10000.0)
    with torch.no_grad():
        for skip in (True, False):
            block = Block(make_config(residual=skip)).eval()
            a = block.attn(block.norm1(x), cos, sin)
            if skip:
                want = x + a + block.ffn(block.norm2(x + a))
            else:
                want = block.ffn(block.norm2(a))
            assert torch.allclose(block(x, cos, sin), want, atol=1e-6)
            block.attn.proj.weight.zero_()
            block.ffn.down.weight.zero_()
            assert torch.equal(block(x, cos, sin), x if skip else torch.zeros_like(x))


@pytest.mark.parametrize("variant,expected", [("baseline", 3_688_704), ("no_residual", 3_688_704),
                                              ("deep_8l", 6_852_864), ("deep_8l_no_residual", 6_852_864)])
def test_removing_the_skips_removes_no_parameter(variant, expected):
    cfg = make_config(**variant_overrides(variant))
    assert GPT(cfg).num_params() == expected == count_params(cfg.n_layer, cfg.d_model, cfg.d_ff, cfg.vocab_size)


def test_same_seed_same_initial_weights_with_and_without_skips():
    torch.manual_seed(0)
    with_skips = GPT(make_config()).state_dict()
    torch.manual_seed(0)
    without = GPT(make_config(residual=False)).state_dict()
    assert with_skips.keys() == without.keys() and all(torch.equal(with_skips[k], without[k]) for k in with_skips)


def test_the_ffn_experiment_keeps_its_variants():
    assert list(VARIANTS) == ["baseline", "linear_ffn", "no_ffn", "attn_only_12l"]
    assert all(make_config(**VARIANTS[v]).residual for v in VARIANTS)
    assert not set(VARIANTS) & set(RESIDUAL_VARIANTS)
    assert residual.VARIANT_NAMES == ("baseline", "no_residual", "deep_8l", "deep_8l_no_residual")
    with pytest.raises(ValueError, match="no_residual"):  # the one lookup names every variant
        main(["train", "variant=no_such_variant"])


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("residual")
    (root / "books").mkdir()  # two books, as the seven-book corpus is a folder of books
    make_corpus(root / "books" / "tiny.txt")
    make_corpus(root / "books" / "other.txt", seed=1)
    main(["residual", "--corpus", str(root / "books"), "--out", str(root / "export"), "--work", str(root / "runs"),
          *TINY_ARGS])
    return root


def load(root, name="export"):
    return json.loads((root / name / "residual.json").read_text(encoding="utf-8"))


def test_the_export_validates_and_holds_every_run(tiny):
    doc = load(tiny)
    schema.validate(schema.RESIDUAL_FILE, doc)
    assert [v["name"] for v in doc["variants"]] == ["baseline", "no_residual", "deep_8l", "deep_8l_no_residual"]
    assert [v["seeds"] for v in doc["variants"]] == [[0, 1], [0, 1], [0], [0]]
    assert [(v["n_layer"], v["residual"]) for v in doc["variants"]] == [(4, True), (4, False), (8, True), (8, False)]
    params = [v["params"] for v in doc["variants"]]
    assert params[0] == params[1] and params[2] == params[3]
    for v in doc["variants"]:  # each run's val loss is the one its own training recorded
        for seed, loss in zip(v["seeds"], v["val_losses"]):
            result = json.loads((tiny / "runs" / f"{v['name']}-s{seed}" / "result.json").read_text())
            assert result["val_loss"] == loss and result["config"]["steps"] == 6
    band = doc["baseline_band"]
    assert (band["min"], band["max"]) == (min(doc["variants"][0]["val_losses"]), max(doc["variants"][0]["val_losses"]))
    card = doc["model_card"]
    assert doc["tokens_per_run"] == card["training"]["tokens_per_run"] == 6 * 2 * 32
    assert card["training"]["seeds"] == {"baseline": [0, 1], "no_residual": [0, 1], "deep_8l": [0],
                                         "deep_8l_no_residual": [0]}
    assert card["architecture"]["residual_init_std"] == {"4": 0.02 / 8 ** 0.5, "8": 0.02 / 16 ** 0.5}
    new = [r for r in card["timing"]["runs"] if r["variant"] != "baseline"]
    assert len(new) == 4 and card["budget"]["new_runs_seconds"] == pytest.approx(sum(r["wall_seconds"] for r in new), abs=0.2)
    assert card["budget"]["limit_seconds"] == 3600


def test_the_export_holds_no_path_of_this_machine(tiny):
    text = (tiny / "export" / "residual.json").read_text(encoding="utf-8")
    assert str(tiny) not in text and tempfile.gettempdir() not in text
    card = load(tiny)["model_card"]
    assert card["command"].startswith("python -m lab residual --corpus PATH/TO/books --out PATH/TO/export ")
    assert card["configs"]["prepare"]["corpus"] == "books"


def test_the_model_card_names_every_book_and_its_split(tiny):
    card = load(tiny)["model_card"]
    assert card["name"] == "mingqing2-residual-d256"
    assert [f["file"] for f in card["corpus"]["files"]] == ["other.txt", "tiny.txt"]
    assert all(len(f["sha256"]) == 64 for f in card["corpus"]["files"])
    books = card["split"]["books"]
    assert [b["file"] for b in books] == ["other.txt", "tiny.txt"] and all(b["val_chapters"] == [5, 6] for b in books)
    assert card["split"]["val_tokens"] == sum(b["val_tokens"] for b in books)
    assert not {"work_dir", "out_dir", "data_dir", "command"} & {k for c in card["configs"].values() for k in c}


def test_running_again_resumes_and_records_the_command_override(tiny):
    stamps = {p: p.stat().st_mtime_ns for p in (tiny / "runs").glob("*/result.json")}
    main(["residual", "--corpus", str(tiny / "books"), "--out", str(tiny / "again"), "--work", str(tiny / "runs"),
          *TINY_ARGS, "command=python make_it.py"])
    assert {p: p.stat().st_mtime_ns for p in (tiny / "runs").glob("*/result.json")} == stamps  # nothing retrained
    first, again = load(tiny), load(tiny, "again")
    assert again["model_card"]["command"] == "python make_it.py"
    for key in ("variants", "baseline_band", "stream", "gradients"):
        assert again[key] == first[key], key


def test_the_command_refuses_other_data_and_its_own_settings(tiny):
    args = ["residual", "--corpus", str(tiny / "books"), "--out", str(tiny / "x"), "--work", str(tiny / "runs")]
    with pytest.raises(SystemExit, match="other settings"):
        main([*args, *TINY_ARGS[1:], "vocab_size=280"])
    with pytest.raises(SystemExit, match="seed"):
        main([*args, *TINY_ARGS, "seed=1"])


def independent_stream_rms(model, val, block, segments):
    """The stream after each write, by the block formula itself, over the val loss's windows (per book)."""
    sq, n = None, 0
    windows = [val[first:end][s:s + min(block, end - first - 1 - s)] for first, end in segments
               for s in range(0, end - first - 1, block)]
    with torch.no_grad():
        for window in windows:
            idx = window[None]  # (1, T)
            cos, sin = model.rope_cos[:idx.shape[1]], model.rope_sin[:idx.shape[1]]
            x = model.embed(idx)  # (1, T, C)
            states = [x]
            for b in model.blocks:
                x = x + b.attn(b.norm1(x), cos, sin)
                states.append(x)
                x = x + b.ffn(b.norm2(x))
                states.append(x)
            batch = torch.tensor([t.double().pow(2).sum().item() for t in states])
            sq = batch if sq is None else sq + batch
            n += x.numel()
    return (sq / n).sqrt().tolist()


def test_stream_rms_from_hooks_equals_the_block_formula(tiny):
    val = train.load_tokens(tiny / "runs" / "data", "val")
    meta = json.loads((tiny / "runs" / "data" / "meta.json").read_text(encoding="utf-8"))
    segments = [b[1:] for b in prepare.val_segments(meta)]
    assert len(segments) == 2  # two books: no window crosses from one into the other
    model = residual.load_model(tiny / "runs" / "baseline-s0")
    points, loss = residual.stream_points(model, val, segments)
    assert loss == train.evaluate(model, val, 32, "cpu", segments=segments)[0]
    assert loss == pytest.approx(load(tiny)["variants"][0]["val_losses"][0], abs=1e-3)  # what the run recorded
    assert [p["stream_rms"] for p in points] == pytest.approx(independent_stream_rms(model, val, 32, segments), rel=1e-5)
    assert [(p["writes"], p["write"], p["block"]) for p in points[:3]] == [
        (0, "embedding", None), (1, "attention", 1), (2, "ffn", 1)]
    assert points[0]["stream_rms"] == points[0]["write_rms"] == points[0]["rms_if_independent"]
    for p in points:
        want = math.sqrt(sum(q["write_rms"] ** 2 for q in points[: p["writes"] + 1]))
        assert p["rms_if_independent"] == pytest.approx(want)
    exported = load(tiny)["stream"]["models"][0]
    assert (exported["variant"], exported["state"]) == ("baseline", "trained")
    assert [p["stream_rms"] for p in exported["points"]] == pytest.approx([p["stream_rms"] for p in points], rel=1e-3)


def test_without_skips_the_stream_is_the_last_write(tiny):
    for m in load(tiny)["stream"]["models"]:
        if m["variant"].endswith("no_residual"):
            assert all(p["stream_rms"] == p["write_rms"] for p in m["points"])
    assert {(m["variant"], m["state"]) for m in load(tiny)["stream"]["models"]} == {
        (v, s) for v in residual.VARIANT_NAMES for s in ("trained", "init")}


def test_step0_gradients_without_skips_grow_toward_the_input(tiny):
    """What the measurement shows at init (fixed batch, seed 0): without skips the gradient does not
    vanish toward the input, it grows (each RMSNorm divides by the small RMS of the write before
    it), so the 8-layer model's block 1 gets several times block 8's gradient; with skips the
    blocks' gradients stay within a factor of 3."""
    grads = {g["variant"]: g for g in load(tiny)["gradients"]["models"]}
    assert list(grads) == list(residual.VARIANT_NAMES)
    for g in grads.values():
        assert math.isfinite(g["loss"]) and g["loss"] == pytest.approx(math.log(300), abs=0.5)  # about uniform
        values = [b[k] for b in g["blocks"] for k in ("stream_grad_norm", "param_grad_norm")]
        assert all(math.isfinite(v) and v > 0 for v in values)

    def spread(name):
        norms = [b["param_grad_norm"] for b in grads[name]["blocks"]]
        return norms[0] / norms[-1]

    assert spread("deep_8l") < 3 and spread("deep_8l_no_residual") > 5
    assert spread("deep_8l_no_residual") > 2 * spread("deep_8l")
    for deep in (False, True):
        skip, no_skip = ("deep_8l", "deep_8l_no_residual") if deep else ("baseline", "no_residual")
        assert grads[no_skip]["blocks"][0]["param_grad_norm"] > grads[skip]["blocks"][0]["param_grad_norm"]


def test_step0_gradients_hook_equals_the_plain_pass():
    torch.manual_seed(0)
    model = GPT(make_config(vocab_size=64, block_size=16, n_layer=2))
    idx = torch.randint(0, 64, (2, 16))  # (B, T)
    g = residual.step0_gradients(model, idx, idx)
    model.zero_grad()
    _, loss = model(idx, idx)
    loss.backward()
    assert g["loss"] == loss.item()
    block0 = math.sqrt(sum(p.grad.pow(2).sum().item() for p in model.blocks[0].parameters()))
    assert g["blocks"][0]["param_grad_norm"] == pytest.approx(block0)


def test_residual_schema_errors_name_the_key_path(tiny):
    def fails(change, match):
        doc = load(tiny)
        change(doc)
        with pytest.raises(schema.SchemaError, match=match):
            schema.validate(schema.RESIDUAL_FILE, doc)

    fails(lambda d: d["variants"][1]["val_losses"].append(5.0),
          r"^residual/residual.json: variants\[1\].val_losses: 3 entries for 2 seeds")
    fails(lambda d: d["stream"]["models"][0]["points"].pop(), r"^residual/residual.json: stream.models\[0\].points: ")
    fails(lambda d: d["gradients"]["models"][2]["blocks"].pop(0), r"gradients.models\[2\].blocks: must be blocks 1..8")
    fails(lambda d: d["baseline_band"].__setitem__("max", 9.0), r"baseline_band.max: ")
    fails(lambda d: d["model_card"]["budget"].__setitem__("note", "x"), r"model_card.budget.note: unexpected key")
    fails(lambda d: d["model_card"].__setitem__("command", "python -m lab residual --corpus /home/me/s.txt"),
          r"model_card.command: ")
    fails(lambda d: d.__setitem__("schema_version", 3), r"schema_version: ")


def test_the_site_loads_the_export_by_its_path(tiny, tmp_path):
    """course/data.py pairs data/real-model/residual/residual.json with
    data/schemas/real-model/residual/residual.schema.json: the file the lab validates with."""
    from course.data import load_data

    assert schema.schema_for(schema.RESIDUAL_FILE) == json.loads(
        (ROOT / "data/schemas/real-model/residual/residual.schema.json").read_text(encoding="utf-8"))
    data = tmp_path / "data"
    shutil.copytree(ROOT / "data/schemas/real-model", data / "schemas/real-model")
    shutil.copytree(tiny / "export", data / "real-model/residual")
    shutil.copy(ROOT / "tests/fixtures/real-model/residual/residual.json", data / "real-model/residual/fixture.json")
    (data / "schemas/real-model/residual/fixture.schema.json").write_text(
        (data / "schemas/real-model/residual/residual.schema.json").read_text(encoding="utf-8"), encoding="utf-8")
    loaded = load_data(data, tmp_path)
    assert loaded["real-model/residual/residual"]["variants"][0]["name"] == "baseline"
    assert loaded["real-model/residual/fixture"]["model_card"]["command"] == "python tests/fixtures/make_residual_fixture.py"


def test_a_deep_run_stopped_early_ends_its_history_there(tiny):
    """stop_early=deep_8l:3 trains the schedule's first 3 steps (resuming the same run again stops
    there too); the export's history for it ends at step 3 and the card says it was cut short."""
    work = tiny / "runs-stopped"
    shutil.copytree(tiny / "runs", work, ignore=shutil.ignore_patterns("deep_8l-s*"))
    main(["residual", "--corpus", str(tiny / "books"), "--out", str(tiny / "export-stopped"), "--work", str(work),
          *TINY_ARGS, "stop_early=deep_8l:3"])
    doc = load(tiny, "export-stopped")
    deep = next(v for v in doc["variants"] if v["name"] == "deep_8l")
    assert [h["step"] for h in deep["histories"][0]] == [3]
    assert deep["val_losses"][0] == deep["histories"][0][-1]["val_loss"]
    others = [v for v in doc["variants"] if v["name"] != "deep_8l"]
    assert all(h[-1]["step"] == 6 for v in others for h in v["histories"])
    assert "stopped early" in doc["model_card"]["budget"]["choice"] and "deep_8l:3" in doc["model_card"]["budget"]["choice"]
    with pytest.raises(SystemExit, match="stop_early"):
        residual.stops_of(residual.Config(stop_early="nope:3"))
