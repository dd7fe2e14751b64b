"""The lab pipeline on a tiny corpus made here: no real corpus, no GPU, a few seconds."""
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
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


def make_corpus(path: Path, seed: int = 0, unit: str = "回", prologue: str = "") -> str:
    """A tiny book of six chapters titled 第…<unit>; `prologue` goes before the first title."""
    rng = random.Random(seed)
    parts = [prologue] if prologue else []
    for c, numeral in enumerate(NUMERALS):
        parts.append(f"第{numeral}{unit}　{''.join(rng.sample(PHRASES, 3))}\n")
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
def books(tmp_path_factory):
    """A corpus folder of two tiny books: 三國 as the tests' corpus, and a story collection whose
    chapters are 卷 and which opens with a prologue before its first title."""
    folder = tmp_path_factory.mktemp("books")
    texts = {"sanguo-yanyi.txt": make_corpus(folder / "sanguo-yanyi.txt"),
             "stories.txt": make_corpus(folder / "stories.txt", seed=1, unit="卷", prologue="楔子　張飛見關公。\n")}
    return folder, texts


@pytest.fixture(scope="module")
def work(tmp_path_factory, books):
    work = tmp_path_factory.mktemp("work")
    prepare.run(prepare.PrepareConfig(corpus=str(books[0]), work_dir=str(work), **TINY))
    return work


def test_split_is_by_chapter_in_every_book_and_lossless(books, work):
    for text in books[1].values():
        chapters = prepare.split_chapters(text)
        assert "".join(chapters) == text
    assert len(prepare.split_chapters(books[1]["sanguo-yanyi.txt"])) == 6
    assert len(prepare.split_chapters(books[1]["stories.txt"])) == 7  # the prologue is a chapter of its own
    meta = json.loads((work / "data/meta.json").read_text())
    assert [f["file"] for f in meta["corpus"]["files"]] == ["sanguo-yanyi.txt", "stories.txt"]
    assert meta["corpus"]["chapters"] == 13
    sanguo, stories = meta["split"]["books"]
    assert sanguo["train_chapters"] == [1, 4] and sanguo["val_chapters"] == [5, 6]
    assert sanguo["val_first_title"] == "第五回" and stories["val_first_title"] == "第五卷"
    assert stories["train_first_title"] == "楔子" and stories["val_chapters"] == [6, 7]
    # val.bin holds the books one after the other; each book's range decodes to its last chapters
    pieces = [bytes.fromhex(h) for h in json.loads((work / "data/token_bytes.json").read_text())]
    val = np.fromfile(work / "data/val.bin", dtype=np.uint16).tolist()
    for book in meta["split"]["books"]:
        a, b = book["val_token_range"]
        text = b"".join(pieces[i] for i in val[a:b]).decode("utf-8")
        assert books[1][book["file"]].endswith(text) and text.startswith(book["val_first_title"])
    assert stories["val_token_range"][1] == meta["split"]["val_tokens"] == len(val)
    assert prepare.val_segments(meta) == [(b["file"], *b["val_token_range"]) for b in meta["split"]["books"]]


def test_val_fraction_takes_the_last_chapters_of_every_book():
    assert prepare.n_val_chapters(120, 0.08, 0) == 10  # 三國演義: chapters 111-120
    assert prepare.n_val_chapters(40, 0.08, 0) == 3
    assert prepare.n_val_chapters(6, 0.08, 0) == 1  # at least one
    assert prepare.n_val_chapters(6, 0.08, 2) == 2
    with pytest.raises(ValueError):
        prepare.n_val_chapters(2, 0.08, 2)


def test_chapter_titles_of_every_edition():
    """第…回 and 第…卷 in the editions' numerals and spacing; a 第…回 inside running text is no
    title, and a repeated title line with no text of its own joins the next chapter."""
    text = ("第一回　甲乙\n丙丁。第二回了．\n"
            "　　第二回     戊己\n庚辛第四回中。\n"
            "第一○回\u00a0\u00a0壬\n寅卯。\n"
            "第一一回　癸\n------\n\n第一一回　癸\n子丑。\n")
    chapters = prepare.split_chapters(text)
    assert [prepare.chapter_title(c) for c in chapters] == ["第一回", "第二回", "第一○回", "第一一回"]
    assert "".join(chapters) == text
    with pytest.raises(ValueError, match="no chapter-title"):
        prepare.split_chapters("甲乙丙丁。\n")


def test_bad_corpus_files_are_named_and_nothing_is_written(tmp_path):
    good = tmp_path / "good.txt"
    make_corpus(good)
    cases = {"missing.txt": None, "latin1.txt": "第一回 café\n".encode("utf-8") + "é".encode("latin-1"), "empty.txt": b"  \n",
             "untitled.txt": "沒有回目的文字。\n".encode()}
    for name, content in cases.items():
        if content is not None:
            (tmp_path / name).write_bytes(content)
        work = tmp_path / f"work-{name}"
        with pytest.raises(ValueError, match=name):
            prepare.run(prepare.PrepareConfig(corpus=f"{good},{tmp_path / name}", work_dir=str(work), **TINY))
        assert not work.exists()
    with pytest.raises(ValueError, match="two files named good.txt"):
        (tmp_path / "again").mkdir()
        make_corpus(tmp_path / "again" / "good.txt")
        prepare.corpus_files(f"{good},{tmp_path / 'again'}")


def test_a_changed_corpus_file_is_refused_by_its_work_dir(books, work, tmp_path):
    """ensure_data: the same files byte for byte, or a clear error naming the file; nothing rewritten."""
    from lab.experiments import common

    common.ensure_data(prepare.PrepareConfig(corpus=str(books[0]), work_dir=str(work), **TINY))  # same: reused
    changed = tmp_path / "books"
    shutil.copytree(books[0], changed)
    (changed / "stories.txt").write_text(books[1]["stories.txt"] + "又一句。\n", encoding="utf-8")
    before = (work / "data/meta.json").read_bytes()
    with pytest.raises(SystemExit, match="stories.txt: its sha256 differs"):
        common.ensure_data(prepare.PrepareConfig(corpus=str(changed), work_dir=str(work), **TINY))
    assert (work / "data/meta.json").read_bytes() == before


def test_tokenizer_round_trip_preserves_bytes(corpus, work):
    corpus = (None, corpus[1])
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
def exported(tmp_path_factory, books):
    root = tmp_path_factory.mktemp("all")
    main(["all", "--corpus", str(books[0]), "--out", str(root / "export"), "--work", str(root / "runs"),
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
    assert card["corpus"]["chapters"] == 13 and [b["val_chapters"] for b in card["split"]["books"]] == [[5, 6], [6, 7]]
    assert card["schema_version"] == ablation["schema_version"] == 3
    assert card["training"]["dropout"] == 0.0 and card["training"]["precision"] == "fp32"
    final = card["training"]["baseline_final"]
    assert final["seeds"] == [0, 1] and final["train_minus_val"] == pytest.approx(
        final["train_loss"] - final["val_loss"], abs=2e-4)
    assert card["protocol"]["one_seed_factor"] == 5 and card["protocol"]["band_seeds"] == [0, 1]
    # the baseline's band at every evaluation, train and val; every evaluation scores each book
    base = ablation["variants"][0]
    assert [b["step"] for b in ablation["baseline_band"]] == [3, 6]
    for row in ablation["baseline_band"]:
        for key, name in (("train_loss", "train"), ("val_loss", "val")):
            vals = [h[key] for hist in base["histories"] for h in hist if h["step"] == row["step"]]
            assert row[name]["range"] == pytest.approx(max(vals) - min(vals), abs=1e-6)
    last = base["histories"][0][-1]
    assert list(last["val_by_book"]) == ["sanguo-yanyi.txt", "stories.txt"] and last["epochs"] > 0
    assert card["configs"]["train"]["steps"] == 6
    assert re.match(r"python -m lab all --corpus PATH/TO/books\w* --out PATH/TO/export ", card["command"])
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


def test_token_spans_reassemble_the_passage(exported, books):
    corpus = (None, books[1]["sanguo-yanyi.txt"])
    neurons = json.loads((exported / "neurons.json").read_text())
    passage = neurons["passage"]
    assert 40 <= len(passage["text"]) <= 80 and passage["text"] in corpus[1]
    assert "".join(passage["text"][t["start"]:t["end"]] for t in passage["tokens"]) == passage["text"]
    for t in passage["tokens"]:
        if not t["fragment"]:
            assert t["text"] == passage["text"][t["start"]:t["end"]]


def test_neurons_are_chosen_on_some_chapters_and_read_on_the_others(exported, books):
    corpus = (None, books[1]["sanguo-yanyi.txt"])  # the heatmap reads 三國's validation chapters
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
    split = export.split_at_chapter("第五回 甲\n丙。\n第六回 乙\n丁。\n", 5, 1)
    assert split == {"starts": [0, 9], "boundary": 9, "select": [5, 5], "read": [6, 6]}
    assert export.chapter_at(split["starts"], 5, 10) == 6
    with pytest.raises(ValueError, match="select_chapters=2"):
        export.split_at_chapter("第五回 甲\n丙。\n第六回 乙\n丁。\n", 5, 2)


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
    card["corpus"]["files"][0]["sha256"] = "0" * 64
    (out / "model-card.json").write_text(json.dumps(card, ensure_ascii=False))
    kept = (out / "neurons.json").read_bytes()
    with pytest.raises(schema.SchemaError, match="neurons.json: corpus: sanguo-yanyi.txt"):
        main(["neurons", "--work", str(runs), "--out", str(out), "n_top=3", "n_random=3", "context_gap=4",
              "passage_min_chars=40", "passage_max_chars=80"])
    assert (out / "neurons.json").read_bytes() == kept  # nothing replaced


def test_export_holds_no_path_of_this_machine(exported, books):
    corpus = (books[0] / "sanguo-yanyi.txt", None)
    tmp = str(exported.parent)  # the test's corpus, work and output directories all live under it
    for name in schema.FILES:
        text = (exported / name).read_text(encoding="utf-8")
        assert tmp not in text and str(corpus[0].parent) not in text and tempfile.gettempdir() not in text, name
    card = json.loads((exported / "model-card.json").read_text())
    assert [f["file"] for f in card["corpus"]["files"]] == ["sanguo-yanyi.txt", "stories.txt"]
    assert card["configs"]["prepare"]["corpus"] == books[0].name  # the folder as named, no path
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
        pinned = schema.schema_for(name)["properties"]["schema_version"]
        assert pinned == {"const": version} if name == "neurons.json" else max(pinned["enum"]) == version


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
    fails("model-card.json", lambda d: d["corpus"]["files"][1].pop("sha256"),
          r"^model-card.json: corpus.files\[1\].sha256: missing key")
    fails("ablation.json", lambda d: d["baseline_band"][0]["val"].__setitem__("range", 9.0),
          r"^ablation.json: baseline_band\[0\].val: not the spread")
    fails("ablation.json", lambda d: d.pop("baseline_band"), r"^ablation.json: .*baseline_band")
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


def test_the_plan_estimates_the_remaining_runs_at_each_variants_own_pace(tmp_path):
    from lab.experiments.ffn import plan_estimate

    plan = [("baseline", 0), ("no_ffn", 0), ("baseline", 1), ("no_ffn", 1)]
    assert "no finished run in the work dir to time them by yet" in plan_estimate(tmp_path, plan, 100, 1)
    for name, seconds in (("baseline-s0", 600.0), ("no_ffn-s0", 300.0)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(json.dumps(
            {"variant": name.split("-")[0], "wall_seconds": seconds, "steps": 100}))
    # baseline 1 at 6 s a step and no_ffn 1 at 3 s a step: 900 s = 15 min
    assert plan_estimate(tmp_path, plan, 100, 1) == "plan: 2 of 4 runs to train, about 15 min at the pace of the 2 finished runs in the work dir"
    assert "about 8 min" in plan_estimate(tmp_path, plan, 100, 2)  # two at a time


def test_extra_seeds_add_baseline_runs_with_their_step_losses(exported, books, tmp_path):
    """`ffn ... extra_seeds=` trains the baseline's seeds with ablation.json's settings and writes
    baseline-seeds.json beside it: a new seed, and a seed the export has (a rerun, which must land on
    the same evaluations); a later call adds seeds and keeps the earlier rows."""
    import shutil
    out, runs = tmp_path / "export", tmp_path / "runs"
    shutil.copytree(exported, out)
    shutil.copytree(exported.parent / "runs", runs)
    shutil.rmtree(runs / "baseline-s1")  # seed 1 is trained again from nothing
    args = ["ffn", "--corpus", str(books[0]), "--out", str(out), "--work", str(runs), "vocab_size=300",
            "val_chapters=2", "progress=false", "threads=1"]
    main([*args, "extra_seeds=1,2"])
    doc = json.loads((out / "baseline-seeds.json").read_text(encoding="utf-8"))
    rows = {r["seed"]: r for r in doc["seed_runs"]}
    assert sorted(rows) == [1, 2]
    assert rows[1]["rerun"] and rows[1]["rerun_max_diff"] == 0  # the same run, step for step
    assert not rows[2]["rerun"] and rows[2]["rerun_max_diff"] is None
    ablation = json.loads((out / "ablation.json").read_text(encoding="utf-8"))
    assert len(rows[2]["step_losses"]) == ablation["train_config"]["steps"]
    assert doc["model_card"]["earlier"] == []
    main([*args, "extra_seeds=3"])
    later = json.loads((out / "baseline-seeds.json").read_text(encoding="utf-8"))
    assert [r["seed"] for r in later["seed_runs"]] == [1, 2, 3]
    assert later["model_card"]["earlier"][0]["seeds"] == [1, 2]
    with pytest.raises(SystemExit, match="steps"):
        main([*args, "extra_seeds=4", "steps=9"])
