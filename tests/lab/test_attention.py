"""The attention export (python -m lab attention) on the tests' tiny corpus: the captured weights are
the model's own (they rebuild its attention output), each measure counts the keys its name says, the
prefix average's figures match a hand count, and the export validates and holds no machine path."""
import json
import tempfile

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tokenizers")

from lab import prepare, schema, train  # noqa: E402
from lab.__main__ import main  # noqa: E402
from lab.experiments import attention  # noqa: E402
from lab.model import GPT, make_config  # noqa: E402
from test_lab_pipeline import make_corpus  # noqa: E402

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("attention")
    make_corpus(root / "tiny.txt")
    work = root / "runs"
    prepare.run(prepare.PrepareConfig(corpus=str(root / "tiny.txt"), work_dir=str(work), vocab_size=500, val_chapters=2))
    for seed in (0, 1):
        train.run(train.TrainConfig(data_dir=str(work / "data"), out_dir=str(work / f"baseline-s{seed}"), seed=seed,
                                    steps=4, batch_size=2, block_size=32, eval_every=2, progress=False, amp="off",
                                    threads=1))
    main(["attention", "--work", str(work), "--out", str(root / "export"), "passages=2", "min_tokens=6",
          "max_tokens=30", "control_seeds=2", "progress=false"])
    return root


def test_the_weights_are_the_models_own():
    torch.manual_seed(0)
    model = GPT(make_config(vocab_size=40, block_size=12)).eval()
    ids = torch.randint(0, 40, (12,))
    w = attention.attention_of(model, ids)  # asserts the recomputed output equals the module's
    assert w.shape == (4, 4, 12, 12)
    assert torch.allclose(w.sum(-1), torch.ones(4, 4, 12))
    assert torch.all(w.triu(1) == 0)  # causal: no weight on a later position


def test_each_measure_marks_the_keys_its_name_says():
    ids = torch.tensor([5, 7, 5, 7])
    m = attention.masks(ids, torch.tensor([False, False, False, True]))
    assert m["same_token"][2].tolist() == [True, False, False, False]
    assert m["same_token"][3].tolist() == [False, True, False, False]
    assert m["induction"][2].tolist() == [False, True, False, False]  # after the earlier 5 came 7
    assert m["induction"][3].tolist() == [False, False, True, False]  # after the earlier 7 came 5
    assert m["previous"][3].tolist() == [False, False, True, False]
    assert m["punctuation"][3].tolist() == [False, False, False, True] and not m["punctuation"][2].any()


def test_the_prefix_average_matches_a_hand_count(exported):
    doc = json.loads((exported / "export" / "attention.json").read_text(encoding="utf-8"))
    blind, windows = doc["measures"]["prefix_average"], doc["measures"]["windows"]
    val = json.loads((exported / "runs" / "data" / "meta.json").read_text())["split"]
    assert blind["self"] == blind["previous"]  # 1/(t+1) on the query and on its predecessor alike
    T = 32  # block_size: every full window contributes queries t = 1..31 with weight 1/(t+1) on t-1
    full = sum(1 / (t + 1) for t in range(1, T)) / (T - 1)
    assert blind["previous"] == pytest.approx(full, abs=0.05)  # the last window may be shorter
    assert windows >= 1 and doc["corpus"]["file"] == "tiny.txt" and val["val_tokens"] == doc["corpus"]["val_tokens"]


def test_the_export_validates_and_is_small(exported):
    path = exported / "export" / "attention.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    schema.validate(schema.ATTENTION_FILE, doc)
    assert len(doc["passages"]) == 2 and path.stat().st_size < 200_000
    for p in doc["passages"]:
        assert 6 <= len(p["tokens"]) <= 30
        assert "".join(t["text"] for t in p["tokens"]) == p["text"]
        assert p["weights"][0][0][0] == [1000]  # the first token can only look at itself
    heads = doc["measures"]["heads"]
    assert len(heads) == 16 and all(0 <= h["previous"] + h["self"] <= 1 for h in heads)


def test_a_broken_row_is_refused(exported):
    doc = json.loads((exported / "export" / "attention.json").read_text(encoding="utf-8"))
    doc["passages"][0]["weights"][1][2][3] = doc["passages"][0]["weights"][1][2][3][:-1]
    with pytest.raises(schema.SchemaError, match="row t must hold"):
        schema.validate(schema.ATTENTION_FILE, doc)


def test_the_export_holds_no_path_of_this_machine(exported):
    text = (exported / "export" / "attention.json").read_text(encoding="utf-8")
    assert str(exported) not in text and tempfile.gettempdir() not in text
    doc = json.loads(text)
    assert doc["command"].startswith("python -m lab attention --work PATH/TO/runs")
    assert not {"work_dir", "out_dir", "command"} & set(doc["export_config"])


def test_an_unfinished_run_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="not finished"):
        attention.export(attention.Config(work_dir=str(tmp_path)), "python -m lab attention")


def test_the_control_is_trained_like_the_baseline_seed_for_seed(exported):
    """The control's seeds run with the baseline's recorded settings (same steps, batches per seed),
    without W_q and W_k, and the export carries both arms' histories for the seeds protocol."""
    doc = json.loads((exported / "export" / "attention.json").read_text(encoding="utf-8"))
    c = doc["control"]
    assert c["baseline"]["seeds"] == [0, 1] and c["control"]["seeds"] == [0, 1]
    assert c["control"]["variant"] == "prefix_mean" and c["control"]["model_config"]["attn_mix"] == "prefix_mean"
    assert [e["step"] for e in c["control"]["histories"][0]] == [e["step"] for e in c["baseline"]["histories"][0]] == [2, 4]
    result = json.loads((exported / "runs" / "prefix_mean-s1" / "result.json").read_text(encoding="utf-8"))
    assert result["config"]["steps"] == 4 and result["config"]["block_size"] == 32 and result["seed"] == 1
    ckpt = torch.load(exported / "runs" / "prefix_mean-s0" / "ckpt.pt", map_location="cpu", weights_only=False)
    assert not any(".qkv." in k for k in ckpt["model"]) and any(".attn.v." in k for k in ckpt["model"])


def test_another_seed_is_written_as_the_failed_run_export_beside_the_lessons(exported):
    """file=failed-run.json writes the same measures of another seed beside attention.json, which stays."""
    before = (exported / "export" / "attention.json").read_text(encoding="utf-8")
    main(["attention", "--work", str(exported / "runs"), "--out", str(exported / "export"), "seed=1", "control=",
          "file=failed-run.json", "passages=1", "min_tokens=6", "max_tokens=30", "progress=false"])
    doc = json.loads((exported / "export" / "failed-run.json").read_text(encoding="utf-8"))
    schema.validate(schema.ATTENTION_FAILED_FILE, doc)
    assert doc["model"]["seed"] == 1 and "control" not in doc
    assert (exported / "export" / "attention.json").read_text(encoding="utf-8") == before
    with pytest.raises(SystemExit, match="file="):
        main(["attention", "--work", str(exported / "runs"), "--out", str(exported / "export"), "file=x.json"])


def test_the_export_holds_the_category_free_measures(exported):
    """content, scores and knockout are in the export, one row per head, and the knockout's intact loss
    is the run's own validation loss on the measured book."""
    doc = json.loads((exported / "export" / "attention.json").read_text(encoding="utf-8"))
    result = json.loads((exported / "runs" / "baseline-s0" / "result.json").read_text(encoding="utf-8"))
    k = doc["knockout"]
    assert k["reported"] == next(iter(result["val_by_book"].values())) and abs(k["val_loss"] - k["reported"]) < 2e-4
    for block in (doc["content"]["heads"], doc["scores"]["trained"]["heads"], doc["scores"]["init"]["unscaled"]["heads"],
                  k["heads"]):
        assert [(h["layer"], h["head"]) for h in block] == [(l, h) for l in range(1, 5) for h in range(1, 5)]
    for h in doc["content"]["heads"]:
        assert 0 <= h["tv_position"] <= 1 and 0 <= h["tv_prefix"] <= 1
    assert doc["content"]["queries"] == doc["measures"]["queries"]["all"]
    ms = doc["measures"]
    for h in ms["heads"] + [ms["prefix_average"]]:  # whole punctuation before the query is a part of both others
        assert h["punctuation_before"] <= h["punctuation"] + 1e-4 and h["punctuation_before"] <= h["with_punctuation"] + 1e-4


def test_control_keep_carries_the_control_of_the_export_it_replaces(exported, tmp_path):
    """control=keep: the control block of the export being replaced stays as it was (its runs need not be in
    the work dir), and only when its baseline arm holds the measured run with the same final losses."""
    out = tmp_path / "export"
    out.mkdir()
    before = json.loads((exported / "export" / "attention.json").read_text(encoding="utf-8"))
    (out / "attention.json").write_text(json.dumps(before, ensure_ascii=False), encoding="utf-8")
    args = ["attention", "--work", str(exported / "runs"), "--out", str(out), "passages=1", "min_tokens=6",
            "max_tokens=30", "control=keep", "progress=false"]
    main(args)
    after = json.loads((out / "attention.json").read_text(encoding="utf-8"))
    assert after["control"] == before["control"] and after["export_config"]["control"] == "keep"
    before["control"]["baseline"]["val_losses"][0] += 0.01  # another model than the one measured
    (out / "attention.json").write_text(json.dumps(before, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError, match="not the same model"):
        main(args)
    (out / "attention.json").unlink()
    with pytest.raises(FileNotFoundError, match="no control block to keep"):
        main(args)
