"""The induction-head scan (python -m lab induction) on the tests' tiny corpus: the export validates and holds no
path of this machine; every head's weights over the keys sum to 1 and its shares lie in [0, 1]; the measures can
fail: hand-built heads (a perfect induction head, a perfect previous-token head, the prefix average) and fake
logits (a perfect copier, a content-blind guesser) get the figures they must, and the content-blind prefix_mean
run gets exactly the reference row; the sequences are the same for the same seed; unfinished runs are left out
or refused."""
import json
import math
import tempfile

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tokenizers")

from lab import prepare, schema, train  # noqa: E402
from lab.__main__ import main  # noqa: E402
from lab.experiments import induction  # noqa: E402
from lab.experiments.common import load_model  # noqa: E402
from test_lab_pipeline import make_corpus  # noqa: E402

pytestmark = pytest.mark.lab
SMALL = dict(steps=4, batch_size=2, block_size=32, eval_every=2, progress=False, amp="off", threads=1)
L = 8  # the tiny context is 32 tokens: 2L = 16 fits
ARGS = ["sequences=20", f"length={L}", "icl_windows=4", "early_from=2", "early_to=4", "late_from=20", "late_to=30",
        "threads=1"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A finished baseline-s0, the content-blind control prefix_mean-s0, and baseline-s1 stopped at step 2."""
    root = tmp_path_factory.mktemp("induction")
    make_corpus(root / "tiny.txt")
    work = root / "runs"
    prepare.run(prepare.PrepareConfig(corpus=str(root / "tiny.txt"), work_dir=str(work), vocab_size=500, val_chapters=2))
    data = str(work / "data")
    train.run(train.TrainConfig(data_dir=data, out_dir=str(work / "baseline-s0"), **SMALL))
    train.run(train.TrainConfig(data_dir=data, out_dir=str(work / "prefix_mean-s0"), variant="prefix_mean", **SMALL))
    train.run(train.TrainConfig(data_dir=data, out_dir=str(work / "baseline-s1"), seed=1, stop_at=2, **SMALL))
    main(["induction", "--work", str(work), "--out", str(root / "export"), *ARGS])
    return root


def read(root):
    return json.loads((root / "export" / "induction.json").read_text(encoding="utf-8"))


def test_the_export_validates_and_holds_no_path_of_this_machine(tiny):
    text = (tiny / "export" / "induction.json").read_text(encoding="utf-8")
    assert str(tiny) not in text and tempfile.gettempdir() not in text
    doc = json.loads(text)
    schema.validate(schema.INDUCTION_FILE, doc)
    assert doc["command"].startswith("python -m lab induction --work PATH/TO/runs")
    assert doc["model_card"]["corpus"]["files"][0]["file"] == "tiny.txt"
    assert [(r["variant"], r["seed"]) for r in doc["runs"]] == [("baseline", 0), ("prefix_mean", 0)]
    assert doc["skipped"] == ["baseline-s1"]  # stopped at step 2 of 4: not finished, left out by default
    base, blind = doc["runs"]
    assert base["val_loss"] == json.loads((tiny / "runs" / "baseline-s0" / "result.json").read_text())["val_loss"]
    assert base["step"] == 4 and len(base["heads"]) == 16 and base["icl"]["windows"] == 4
    assert blind["other_settings"] == {} and "d_ff" not in doc["model_card"]["train_config"]
    bad = json.loads(text)
    bad["runs"][0]["repeat"]["gain"] += 0.01
    with pytest.raises(schema.SchemaError, match=r"runs\[0\].repeat.gain"):
        schema.validate(schema.INDUCTION_FILE, bad)
    bad = json.loads(text)
    bad["runs"][0]["heads"].pop()
    with pytest.raises(schema.SchemaError, match=r"runs\[0\].heads"):
        schema.validate(schema.INDUCTION_FILE, bad)
    bad = json.loads(text)
    bad["reference"]["previous"] = 0.5
    with pytest.raises(schema.SchemaError, match="reference.previous"):
        schema.validate(schema.INDUCTION_FILE, bad)
    bad = json.loads(text)
    bad["text"]["both_right"] = bad["text"]["copy_right"] + 1
    with pytest.raises(schema.SchemaError, match="text"):
        schema.validate(schema.INDUCTION_FILE, bad)


def test_the_text_check_counts_copy_and_bigram_guesses_by_hand():
    """Window 0..4 of [5, 6, 5, 6, 7, 5] (block 5): position 2 (token 5, seen at 0) copies 6, right; position 3
    (6, seen at 1) copies 5, but 7 follows; the training split's bigram says 5 -> 6 and 6 -> 5."""
    train_ids = torch.tensor([5, 6, 5, 6, 5, 6, 5])
    val = torch.tensor([5, 6, 5, 6, 7, 5])
    got = induction.text_repeats(train_ids, val, [0], 5)
    assert got == {"positions": 5, "repeated": 2, "copy_right": 1, "bigram_right": 3, "both_right": 1}


def test_every_heads_weights_sum_to_one_and_its_shares_lie_in_0_1(tiny):
    model = load_model(tiny / "runs" / "baseline-s0")
    seqs = induction.draw_sequences(torch.arange(500), 3, L, 0)
    for ids in seqs:
        w, logits = induction.weights_and_logits(model, ids)
        assert w.shape == (4, 4, 2 * L, 2 * L) and logits.shape == (2 * L, 500)
        assert torch.allclose(w.sum(-1), torch.ones(4, 4, 2 * L), atol=1e-5)
        assert float(w.triu(1).abs().max()) == 0  # causal: no weight on a later key
        assert torch.equal(logits, model(ids[None])[0][0])  # the hooks change nothing
    for run in read(tiny)["runs"]:
        for h in run["heads"]:
            assert 0 <= h["prefix_matching"] <= 1 and 0 <= h["previous"] <= 1
            assert h["prefix_matching"] + h["previous"] <= 1 + 2e-4  # two different keys (L > 2)


def test_hand_built_heads_get_the_figures_they_must():
    """A perfect induction head scores 1 and 0, a perfect previous-token head 0 and 1, the prefix average the
    reference: the measure tells them apart."""
    T = 2 * L
    t = torch.arange(T)
    induct, prev = torch.zeros(T, T), torch.zeros(T, T)
    induct[t[L:], t[L:] - L + 1] = 1  # second half: the token after the earlier copy
    induct[t[:L], t[:L]] = 1  # first half: itself (nothing to copy yet)
    prev[t[1:], t[1:] - 1] = 1
    prev[0, 0] = 1
    pm, pv = induction.head_scores(torch.stack([induct, prev, induction.prefix_average(T).float()]), L)
    want = sum(1 / (k + 1) for k in range(L, T)) / L  # mean over queries L..2L-1 of 1/(t+1)
    assert pm.tolist() == pytest.approx([1, 0, want]) and pv.tolist() == pytest.approx([0, 1, want])


def test_a_perfect_copier_has_a_strongly_negative_repeat_gain_and_a_blind_guesser_none():
    V = 50
    ids = induction.draw_sequences(torch.arange(V), 10, L, 3)  # (10, 2L)
    assert torch.equal(ids[:, :L], ids[:, L:])
    blind = torch.zeros(10, 2 * L, V)  # uniform over the vocabulary everywhere
    first, second = induction.repeat_losses(blind, ids, L)
    assert first == pytest.approx(math.log(V)) and second == pytest.approx(math.log(V))
    copier = blind.clone()
    n = torch.arange(10)[:, None]
    pos = torch.arange(L, 2 * L - 1)[None, :]  # second half: position t predicts token t+1, seen at t+1-L
    copier[n, pos, ids[:, L + 1:]] = 30.0
    first, second = induction.repeat_losses(copier, ids, L)
    assert first == pytest.approx(math.log(V)) and second < 1e-6 and second - first < -3.9


def test_the_content_blind_control_gets_exactly_the_reference(tiny):
    doc = read(tiny)
    ref = doc["reference"]
    want = round(sum(1 / (k + 1) for k in range(L, 2 * L)) / L, 4)
    assert ref["prefix_matching"] == ref["previous"] == want
    blind = next(r for r in doc["runs"] if r["variant"] == "prefix_mean")
    assert all(h["prefix_matching"] == h["previous"] == want for h in blind["heads"])
    base = next(r for r in doc["runs"] if r["variant"] == "baseline")
    assert abs(blind["repeat"]["gain"]) < 0.05 and abs(base["repeat"]["gain"]) < 0.05  # 4 steps: nothing copies
    model = load_model(tiny / "runs" / "prefix_mean-s0")
    w, _ = induction.weights_and_logits(model, torch.arange(2 * L))
    assert torch.equal(w[2, 3], induction.prefix_average(2 * L).float())


def test_the_same_seed_draws_the_same_sequences_and_the_scan_repeats(tiny):
    eligible = torch.arange(3, 500)
    a, b = (induction.draw_sequences(eligible, 20, L, 0) for _ in range(2))
    assert torch.equal(a, b) and not torch.equal(a, induction.draw_sequences(eligible, 20, L, 1))
    assert int(a.min()) >= 3 and torch.equal(a[:, :L], a[:, L:])
    model = load_model(tiny / "runs" / "baseline-s0")
    assert induction.repeat_scan(model, a[:4], L) == induction.repeat_scan(model, b[:4], L)


def test_the_icl_score_is_late_minus_early_of_the_models_own_losses(tiny):
    assert induction.icl_score(torch.arange(32.0), (2, 4), (20, 30)) == {"early": 3.0, "late": 25.0, "score": 22.0}
    model = load_model(tiny / "runs" / "baseline-s0")
    val = train.load_tokens(tiny / "runs" / "data", "val")
    starts = [0, 33, 66]
    by_pos = induction.position_losses(model, val, starts, 32, batch=2)
    with torch.no_grad():
        whole = torch.stack([torch.nn.functional.cross_entropy(model(val[s:s + 32][None])[0][0], val[s + 1:s + 33],
                                                               reduction="none") for s in starts]).mean(0)
    assert by_pos.tolist() == pytest.approx(whole.tolist(), abs=1e-4)


def test_special_tokens_and_fragments_are_left_out_of_the_draw(tmp_path):
    pieces = [b"<s>", "公".encode()[:1], "公".encode(), b"a"]
    (tmp_path / "token_bytes.json").write_text(json.dumps([p.hex() for p in pieces]))
    (tmp_path / "tokenizer.json").write_text(json.dumps({"added_tokens": [{"id": 0, "content": "<s>"}]}))
    ids, special = induction.eligible_tokens(tmp_path, fragments=True)
    assert ids.tolist() == [1, 2, 3] and special == 1
    assert induction.eligible_tokens(tmp_path, fragments=False)[0].tolist() == [2, 3]


def test_named_runs_are_read_and_bad_ones_refused(tiny, tmp_path):
    work = str(tiny / "runs")
    main(["induction", "--work", work, "--out", str(tmp_path), *ARGS, "runs=prefix_mean:0"])
    doc = json.loads((tmp_path / "induction.json").read_text(encoding="utf-8"))
    assert [r["variant"] for r in doc["runs"]] == ["prefix_mean"] and doc["skipped"] == []
    assert doc["runs"][0]["heads"] == read(tiny)["runs"][1]["heads"]  # the same sequences as the full scan
    cfg = dict(work_dir=work, sequences=2, length=L, icl_windows=1, early_from=2, early_to=4, late_from=20, late_to=30)
    with pytest.raises(ValueError, match="trained 2 of 4 steps"):
        induction.export(induction.Config(**{**cfg, "runs": "baseline:1"}), "python -m lab induction")
    with pytest.raises(SystemExit, match="VARIANT:SEED"):
        induction.export(induction.Config(**{**cfg, "runs": "baseline"}), "python -m lab induction")
    with pytest.raises(ValueError, match="length=17"):
        induction.export(induction.Config(**{**cfg, "length": 17}), "python -m lab induction")
    with pytest.raises(ValueError, match="late_to=32"):
        induction.export(induction.Config(**{**cfg, "late_to": 32}), "python -m lab induction")
