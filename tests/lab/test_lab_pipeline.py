"""The lab pipeline on a tiny corpus made here: no real corpus, no GPU, a few seconds."""
import json
import random
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tokenizers")

from lab import prepare, schema, train  # noqa: E402
from lab.experiments import ffn as export  # noqa: E402  (the FFN experiment: its export and neurons)
from lab.__main__ import main  # noqa: E402
from lab.model import GPT, VARIANTS, LinearFFN, make_config, residual_init_std  # noqa: E402

pytestmark = pytest.mark.lab

ROOT = Path(__file__).resolve().parents[2]
PHRASES = ["玄德曰", "孔明笑曰", "曹操大怒", "引兵五千", "殺奔", "荊州", "關公", "張飛", "趙雲", "丞相",
           "將軍", "不可", "於是", "只見", "大喜", "次日", "城中", "回寨", "魏延", "司馬懿"]
RARE = "龘䶮𠀀鱻"  # each once: stays split into byte fragments
NUMERALS = "一二三四五六"


def make_corpus(path: Path) -> str:
    rng = random.Random(0)
    parts = []
    for c, numeral in enumerate(NUMERALS):
        parts.append(f"第{numeral}回　{''.join(rng.sample(PHRASES, 3))}\n")
        for _ in range(10):
            line = "，".join("".join(rng.choice(PHRASES) for _ in range(rng.randint(2, 4)))
                            for _ in range(rng.randint(4, 12))) + "。"
            parts.append(line + "\n")
    parts.insert(-3, "張飛見" + RARE + "大驚，" + "".join(rng.choice(PHRASES) for _ in range(12)) + "。\n")
    text = "".join(parts)
    path.write_text(text, encoding="utf-8")
    return text


TINY = {"vocab_size": 300, "val_chapters": 2}
TINY_TRAIN = {"batch_size": 4, "block_size": 32, "lr": 3e-3, "warmup_steps": 2, "dropout": 0.0,
              "eval_every": 1000, "progress": False, "amp": "off", "threads": 1}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "tiny.txt"
    return path, make_corpus(path)


@pytest.fixture(scope="module")
def work(tmp_path_factory, corpus):
    work = tmp_path_factory.mktemp("work")
    prepare.run(prepare.PrepareConfig(corpus=str(corpus[0]), work_dir=str(work), **TINY))
    return work


def test_split_is_by_chapter_and_lossless(corpus, work):
    text = corpus[1]
    chapters = prepare.split_chapters(text)
    assert len(chapters) == 6 and "".join(chapters) == text
    meta = json.loads((work / "data/meta.json").read_text())
    assert meta["split"]["train_chapters"] == [1, 4] and meta["split"]["val_chapters"] == [5, 6]
    assert meta["split"]["val_first_title"] == "第五回"


def test_tokenizer_round_trip_preserves_bytes(corpus, work):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(work / "data/tokenizer.json"))
    pieces = [bytes.fromhex(h) for h in json.loads((work / "data/token_bytes.json").read_text())]
    for text in (corpus[1], "未見之字：𪚥龘，é and ASCII\n", RARE):
        ids = tok.encode(text).ids
        assert b"".join(pieces[i] for i in ids) == text.encode("utf-8")
        assert tok.decode(ids) == text
    rare_pieces = [pieces[i] for i in tok.encode(RARE).ids]
    assert any(export.is_fragment(p) for p in rare_pieces)
    assert "\ufffd" in export.show(rare_pieces[0]) or not export.is_fragment(rare_pieces[0])
    val = (work / "data/val.bin").read_bytes()
    assert len(val) // 2 == json.loads((work / "data/meta.json").read_text())["split"]["val_tokens"]


def count_params(n_layer, d, d_ff, vocab, ffn="swiglu"):
    """Independent count: tied embedding + per block (qkv + out, the FFN's matrices, norms) + final norm."""
    attn = 4 * d * d
    ffn = {"swiglu": 3, "linear": 2}[ffn] * d * d_ff  # gate, up, down / up, down
    norms = d * (2 if d_ff else 1)
    return vocab * d + n_layer * (attn + ffn + norms) + d


@pytest.mark.parametrize("variant,expected", [("baseline", 3_688_704), ("linear_ffn", 3_688_704),
                                              ("no_ffn", 1_574_144), ("attn_only_12l", 3_673_344)])
def test_exact_parameter_counts(variant, expected):
    cfg = make_config(**VARIANTS[variant])
    model = GPT(cfg)
    assert model.num_params() == expected
    assert count_params(cfg.n_layer, cfg.d_model, cfg.d_ff, cfg.vocab_size, cfg.ffn) == expected
    assert model.lm_head.weight is model.embed.weight
    assert not any(name.endswith("bias") for name, _ in model.named_parameters())


def test_the_linear_ffn_is_linear():
    """f(a x + b y) = a f(x) + b f(y): no activation anywhere in the control's FFN."""
    torch.manual_seed(0)
    model = GPT(make_config(**VARIANTS["linear_ffn"])).eval()
    ffn = model.blocks[0].ffn
    assert isinstance(ffn, LinearFFN) and ffn.up.out_features == 1032
    x, y = torch.randn(2, 5, 256), torch.randn(2, 5, 256)  # (B, T, C) each
    a, b = 1.7, -0.6
    with torch.no_grad():
        assert torch.allclose(ffn(a * x + b * y), a * ffn(x) + b * ffn(y), atol=1e-6)
        baseline = GPT(make_config()).eval().blocks[0].ffn
        assert not torch.allclose(baseline(a * x + b * y), a * baseline(x) + b * baseline(y), atol=1e-6)


def test_parameter_matched_within_042_percent():
    base = GPT(make_config(**VARIANTS["baseline"])).num_params()
    deep = GPT(make_config(**VARIANTS["attn_only_12l"])).num_params()
    assert abs(base - deep) / base < 0.0042


def test_residual_projection_init_std():
    torch.manual_seed(0)
    model = GPT(make_config())
    assert round(residual_init_std(4), 5) == 0.00707 and residual_init_std(4) == 0.02 / 8 ** 0.5
    assert model.blocks[0].ffn.down.weight.std().item() == pytest.approx(0.00707, rel=0.02)
    assert model.blocks[0].attn.proj.weight.std().item() == pytest.approx(0.00707, rel=0.02)
    assert model.blocks[0].ffn.up.weight.std().item() == pytest.approx(0.02, rel=0.02)


def test_unknown_override_is_rejected():
    with pytest.raises(ValueError, match="n_layers"):
        make_config(n_layers=2)
    with pytest.raises(SystemExit, match="stepz"):
        main(["train", "stepz=3"])


def test_loss_falls(work):
    cfg = train.TrainConfig(data_dir=str(work / "data"), out_dir=str(work / "falls"), steps=40, **TINY_TRAIN)
    result = train.run(cfg)
    losses = torch.load(work / "falls/ckpt.pt", weights_only=False)["state"]["losses"]
    assert sum(losses[-5:]) / 5 < losses[0] - 1.0
    assert result["val_loss"] < losses[0]


def test_resume_continues_the_same_run(work, monkeypatch):
    base = dict(data_dir=str(work / "data"), steps=12, ckpt_every=4, **{**TINY_TRAIN, "dropout": 0.1})
    whole = train.run(train.TrainConfig(out_dir=str(work / "whole"), **base))

    real_get_batch, calls = train.get_batch, {"n": 0}

    def killed_at_step_7(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 7:
            raise KeyboardInterrupt  # as if the process were killed mid-run (last checkpoint: step 4)
        return real_get_batch(*args, **kwargs)

    monkeypatch.setattr(train, "get_batch", killed_at_step_7)
    cut = train.TrainConfig(out_dir=str(work / "cut"), **base)
    with pytest.raises(KeyboardInterrupt):
        train.run(cut)
    assert torch.load(work / "cut/ckpt.pt", weights_only=False)["state"]["step"] == 4
    monkeypatch.setattr(train, "get_batch", real_get_batch)
    resumed = train.run(cut)

    def trajectory(name):
        return torch.load(work / name / "ckpt.pt", weights_only=False)["state"]["losses"]

    assert len(trajectory("whole")) == 12
    assert trajectory("cut") == trajectory("whole")
    assert resumed["val_loss"] == whole["val_loss"]
    with pytest.raises(ValueError, match="other settings"):
        train.run(replace(cut, lr=1e-3))


def test_lr_schedule():
    cfg = train.TrainConfig(lr=1.0, min_lr=0.0, warmup_steps=10, steps=110)
    assert train.lr_at(0, cfg) == pytest.approx(0.1)
    assert train.lr_at(60, cfg) == pytest.approx(0.5)
    assert train.lr_at(110, cfg) == pytest.approx(0.0)


def test_char_spans_give_fragments_empty_or_whole_spans():
    pieces = [b"a", "公".encode()[:2], "公".encode()[2:] + b"b"]
    assert export.char_spans(pieces, "a公b") == [(0, 1), (1, 1), (1, 3)]
    assert [export.is_fragment(p) for p in pieces] == [False, True, True]
    assert export.show(pieces[1]) == "\ufffd"
    assert export.touched_chars(pieces, "a公b") == [(0, 1), (1, 2), (1, 3)]
    assert export.context_windows(5, 3) == [(0, 3, 3), (1, 4, 1), (2, 5, 1)]


@pytest.fixture(scope="module")
def exported(tmp_path_factory, corpus):
    root = tmp_path_factory.mktemp("all")
    main(["all", "--corpus", str(corpus[0]), "--out", str(root / "export"), "--work", str(root / "runs"),
          "vocab_size=300", "val_chapters=2", "seeds=2", "variant_seeds=1", "jobs=1", "steps=6", "batch_size=2",
          "block_size=32",
          "eval_every=3", "progress=false", "amp=off", "threads=1", "passage_min_chars=40", "passage_max_chars=80",
          "n_top=3", "n_random=3", "context_gap=4"])
    return root / "export"


def test_export_validates_against_its_schema(exported):
    files = schema.validate_dir(exported)
    assert sum((exported / n).stat().st_size for n in schema.FILES) < 1_000_000
    ablation = files["ablation.json"]
    assert [v["name"] for v in ablation["variants"]] == list(VARIANTS) == list(export.DESCRIPTIONS)
    assert [v["seeds"] for v in ablation["variants"]] == [[0, 1], [0], [0], [0]]
    params = {v["name"]: v["params"] for v in ablation["variants"]}
    assert params["linear_ffn"] == params["baseline"] != params["no_ffn"]
    assert [v["ffn"] for v in ablation["variants"]] == ["swiglu", "linear", "none", "none"]
    card = files["model-card.json"]
    assert card["training"]["seeds"] == {"baseline": [0, 1], "linear_ffn": [0], "no_ffn": [0], "attn_only_12l": [0]}
    arch = card["architecture"]
    assert arch["residual_init_rule"] == "init_std / sqrt(2 * n_layer)"
    assert arch["residual_init_std"] == arch["init_std"] / (2 * arch["n_layer"]) ** 0.5 == residual_init_std(4)
    assert card["training"]["tokens_seen"] == 6 * 2 * 32 == ablation["tokens_per_run"]
    assert card["corpus"]["chapters"] == 6 and card["split"]["val_chapters"] == [5, 6]
    assert card["configs"]["train"]["steps"] == 6
    assert card["command"].startswith("python -m lab all --corpus PATH/TO/tiny.txt --out PATH/TO/export ")
    timing = json.loads((exported.parent / "runs/timing.json").read_text())
    assert card["code"] == {"lab_commit": timing["lab_commit"], "lab_dirty": timing["lab_dirty"]}
    neurons = files["neurons.json"]
    assert [n["kind"] for n in neurons["neurons"]] == ["top"] * 3 + ["random"] * 3
    assert neurons["command"] == card["command"] and neurons["code"] == card["code"]
    assert neurons["model"]["val_loss"] == ablation["variants"][0]["val_losses"][0]  # baseline seed 0
    assert neurons["model"]["precision"] == "fp32" == card["training"]["precision"]
    assert neurons["layer"] == {"index": 1, "number": 2, "n_layer": 4,
                                "convention": "0-based block index 1 = block 2 of 4 (第 2 层)"}
    for n in neurons["neurons"]:
        assert n["top_contexts"] and all(c["chars"] for c in n["top_contexts"])
        assert all(c["token"] == c["chars"] for c in n["top_contexts"] if not c["fragment"])
    peaks = [n["select_max"] for n in neurons["neurons"] if n["kind"] == "top"]
    assert peaks == sorted(peaks, reverse=True)


def test_token_spans_reassemble_the_passage(exported, corpus):
    neurons = json.loads((exported / "neurons.json").read_text())
    passage = neurons["passage"]
    assert 40 <= len(passage["text"]) <= 80 and passage["text"] in corpus[1]
    assert "".join(passage["text"][t["start"]:t["end"]] for t in passage["tokens"]) == passage["text"]
    for t in passage["tokens"]:
        if not t["fragment"]:
            assert t["text"] == passage["text"][t["start"]:t["end"]]


def test_neurons_are_chosen_on_some_chapters_and_read_on_the_others(exported, corpus):
    """Chosen on the first validation chapter (5), shown and read on the other (6): the reading never
    uses the text the choice was made on."""
    neurons = json.loads((exported / "neurons.json").read_text())
    split = neurons["split"]
    assert split["select_chapters"] == [5, 5] and split["read_chapters"] == [6, 6]
    assert neurons["passage"]["chapter"] == 6
    text = corpus[1]
    chapter_6 = text[text.index("第六回"):]
    assert neurons["passage"]["text"] in chapter_6
    for n in neurons["neurons"]:
        assert all(c["chapter"] == 6 for c in n["top_contexts"])
        assert n["read_max"] == n["top_contexts"][0]["activation"]
    assert 0 <= neurons["passage"]["visibility"] <= 1 and neurons["passage"]["candidates"] >= 1


def test_the_passage_is_where_the_chosen_neurons_show_most():
    p_acts = torch.tensor([[0.5, 2.0, -1.0], [1.0, -1.0, 3.0]])  # (tokens, neurons)
    scales = torch.tensor([2.0, 4.0, 1.0])
    assert export.visibility(p_acts, [0, 1], scales) == pytest.approx((1.0 / 2 + 2.0 / 4) / 2)
    assert export.visibility(p_acts, [2], scales) == 1.0  # capped at the scale
    assert export.visibility(torch.tensor([[-1.0]]), [0], torch.tensor([1.0])) == 0.0
    assert export.candidate_lines("甲乙。\n丙丁戊。己\n", 0, 12, 3, 4) == [(0, "甲乙。"), (4, "丙丁戊。")]
    assert export.candidate_lines("甲乙。\n丙丁戊。己\n", 4, 12, 3, 4) == [(4, "丙丁戊。")]
    split = export.split_at_chapter("第五回 甲\n第六回 乙\n", 5, 1)
    assert split == {"starts": [0, 6], "boundary": 6, "select": [5, 5], "read": [6, 6]}
    assert export.chapter_at(split["starts"], 5, 7) == 6
    with pytest.raises(ValueError, match="select_chapters=2"):
        export.split_at_chapter("第五回 甲\n第六回 乙\n", 5, 2)


def test_the_neurons_stage_rewrites_only_neurons_json(exported, tmp_path):
    """`python -m lab neurons` re-exports the neurons from one checkpoint beside a kept export."""
    runs, out = exported.parent / "runs", tmp_path / "kept"
    shutil.copytree(exported, out)
    before = {n: (out / n).read_bytes() for n in ("model-card.json", "ablation.json")}
    main(["neurons", "--work", str(runs), "--out", str(out), "n_top=2", "n_random=2", "context_gap=4",
          "passage_min_chars=40", "passage_max_chars=80"])
    assert {n: (out / n).read_bytes() for n in before} == before
    files = schema.validate_dir(out)
    neurons = files["neurons.json"]
    assert [n["kind"] for n in neurons["neurons"]] == ["top"] * 2 + ["random"] * 2
    assert neurons["command"].startswith("python -m lab neurons --work PATH/TO/runs --out PATH/TO/kept ")
    assert neurons["model"]["seed"] == 0 and neurons["export_config"]["n_top"] == 2
    assert str(tmp_path) not in (out / "neurons.json").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="at least as many"):
        main(["neurons", "--work", str(runs), "--out", str(out), "n_top=3", "n_random=2"])


def test_the_neurons_stage_refuses_another_models_export(exported, tmp_path):
    runs, out = exported.parent / "runs", tmp_path / "other"
    shutil.copytree(exported, out)
    card = json.loads((out / "model-card.json").read_text())
    card["corpus"]["sha256"] = "0" * 64
    (out / "model-card.json").write_text(json.dumps(card, ensure_ascii=False))
    kept = (out / "neurons.json").read_bytes()
    with pytest.raises(schema.SchemaError, match="neurons.json: corpus.sha256"):
        main(["neurons", "--work", str(runs), "--out", str(out), "n_top=3", "n_random=3", "context_gap=4",
              "passage_min_chars=40", "passage_max_chars=80"])
    assert (out / "neurons.json").read_bytes() == kept  # nothing replaced


def test_export_holds_no_path_of_this_machine(exported, corpus):
    tmp = str(exported.parent)  # the test's corpus, work and output directories all live under it
    for name in schema.FILES:
        text = (exported / name).read_text(encoding="utf-8")
        assert tmp not in text and str(corpus[0].parent) not in text and tempfile.gettempdir() not in text, name
    card = json.loads((exported / "model-card.json").read_text())
    assert card["corpus"]["file"] == card["configs"]["prepare"]["corpus"] == "tiny.txt"
    for config in (*card["configs"].values(), json.loads((exported / "neurons.json").read_text())["export_config"]):
        assert not {"work_dir", "out_dir", "data_dir", "command"} & set(config)


def test_export_records_the_command_override(exported, tmp_path):
    runs = exported.parent / "runs"
    main(["export", "--work", str(runs), "--out", str(tmp_path / "a"), "n_top=3", "n_random=3", "context_gap=4",
          "passage_min_chars=40", "passage_max_chars=80", "command=python make_it.py"])
    assert json.loads((tmp_path / "a/model-card.json").read_text())["command"] == "python make_it.py"
    main(["export", "--work", str(runs), "--out", str(tmp_path / "b"), "n_top=3", "n_random=3", "context_gap=4",
          "passage_min_chars=40", "passage_max_chars=80"])
    recorded = json.loads((runs / "timing.json").read_text())["command"]  # what `all` recorded
    assert json.loads((tmp_path / "b/model-card.json").read_text())["command"] == recorded


def test_the_contract_is_the_sites_json_schemas():
    assert schema.SCHEMA_DIR == ROOT / "data" / "schemas" / "real-model"
    for name in schema.FILES:
        assert schema.schema_for(name) == json.loads((ROOT / "data/schemas/real-model" / name.replace(
            ".json", ".schema.json")).read_text(encoding="utf-8"))
        version = schema.NEURONS_SCHEMA_VERSION if name == "neurons.json" else schema.SCHEMA_VERSION
        assert schema.schema_for(name)["properties"]["schema_version"] == {"const": version}


def test_schema_errors_name_file_and_key_path(exported):
    def fails(name, change, match):
        data = json.loads((exported / name).read_text())
        change(data)
        with pytest.raises(schema.SchemaError, match=match):
            schema.validate(name, data)

    fails("ablation.json", lambda d: d["variants"][1]["val_losses"].__setitem__(0, "x"),
          r"^ablation.json: variants\[1\].val_losses\[0\]: 'x' is not of type 'number'")
    fails("ablation.json", lambda d: d["variants"][1]["val_losses"].append(5.0),
          r"^ablation.json: variants\[1\].val_losses: 2 entries for 1 seeds")
    fails("neurons.json", lambda d: d["passage"]["tokens"][1].__setitem__("start", d["passage"]["tokens"][1]["start"] + 1),
          r"^neurons.json: passage.tokens\[1\]")
    fails("neurons.json", lambda d: d["neurons"][0]["top_contexts"][0].pop("chars"),
          r"^neurons.json: neurons\[0\].top_contexts\[0\].chars: missing key")
    fails("neurons.json", lambda d: d["neurons"][0].__setitem__("note", "hand-written"),
          r"^neurons.json: neurons\[0\].note: unexpected key")
    fails("model-card.json", lambda d: d["corpus"].pop("sha256"), r"^model-card.json: corpus.sha256: missing key")
    fails("model-card.json", lambda d: d["configs"]["prepare"].__setitem__("corpus", "/data/x/tiny.txt"),
          r"^model-card.json: configs.prepare.corpus: ")
    fails("model-card.json", lambda d: d["configs"]["train"].__setitem__("data_dir", "runs/data"),
          r"^model-card.json: configs.train.data_dir: a key the schema forbids")
    fails("model-card.json", lambda d: d.__setitem__("command", "python -m lab all --corpus /home/me/sanguo.txt"),
          r"^model-card.json: command: ")
    fails("model-card.json", lambda d: d.__setitem__("schema_version", 1), r"^model-card.json: schema_version: ")


def test_schema_imports_without_torch():
    code = "import sys; sys.modules['torch'] = None; sys.modules['numpy'] = None; import lab.schema"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_run_plan_takes_seed_counts_per_variant():
    from lab.experiments.ffn import run_plan
    plan = run_plan(3, 3, "no_ffn:1,attn_only_12l:1")
    assert sorted(plan) == sorted([("baseline", s) for s in range(3)] + [("linear_ffn", s) for s in range(3)]
                                  + [("no_ffn", 0), ("attn_only_12l", 0)])
    assert plan[:4] == [(v, 0) for v in VARIANTS]  # every variant's seed 0 first
    with pytest.raises(SystemExit, match="per_variant"):
        run_plan(3, 3, "nope:2")
