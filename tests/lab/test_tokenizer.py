"""The tokenizer experiment (python -m lab tokenizer) on the tests' tiny corpus: the sweep retrains the
lab's own tokenizer at its size merge for merge, its figures match a count made here, the page's
standard-library encoder gives the lab's ids, a second call reuses the cached sizes, and the exports
validate and hold no machine path."""
import json
import re

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tokenizers")

from tokenizers import Tokenizer  # noqa: E402

from lab import prepare, schema, train  # noqa: E402
from lab.__main__ import main  # noqa: E402
from lab.experiments import tokenizer as sweep  # noqa: E402
from test_lab_pipeline import RARE, make_corpus  # noqa: E402

pytestmark = pytest.mark.lab
SIZES = "256,280,300"


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("tokenizer")
    books = root / "books"
    books.mkdir()
    make_corpus(books / "sanguo-yanyi.txt")
    make_corpus(books / "stories.txt", seed=1, unit="卷")
    work = root / "runs"
    prepare.run(prepare.PrepareConfig(corpus=str(books), work_dir=str(work), vocab_size=300, val_chapters=2))
    train.run(train.TrainConfig(data_dir=str(work / "data"), out_dir=str(work / "baseline-s0"), seed=0, steps=3,
                                batch_size=2, block_size=32, eval_every=3, progress=False, amp="off", threads=1))
    args = ["tokenizer", "--corpus", str(books), "--work", str(work), "--out", str(root / "export"), f"sizes={SIZES}",
            "run_seed=0", "neighbours=玄德,曰," + RARE[0], "k=3", "vocab_size=300", "val_chapters=2"]
    main(args)
    return {"root": root, "books": books, "work": work, "args": args}


def load(exported, name):
    return json.loads((exported["root"] / "export" / name).read_text(encoding="utf-8"))


def test_the_sweep_reproduces_the_labs_tokenizer_at_its_size(exported):
    doc = load(exported, "sweep.json")
    assert [r["vocab_size"] for r in doc["rows"]] == [256, 280, 300]
    ours = [r for r in doc["rows"] if r["is_ours"]]
    assert [r["vocab_size"] for r in ours] == [300]
    meta = json.loads((exported["work"] / "data" / "meta.json").read_text())
    assert ours[0]["val_tokens"] == meta["split"]["val_tokens"]
    assert ours[0]["fragment_tokens"] == meta["tokenizer"]["fragment_tokens"]
    assert doc["rows"][0]["merges"] == 0 and doc["rows"][0]["val_tokens"] == sum(
        len(b["val"].encode("utf-8")) for b in sweep.split_books(prepare.PrepareConfig(corpus=str(exported["books"])), meta))


def test_the_figures_match_a_count_made_here(exported):
    doc = load(exported, "sweep.json")
    meta = json.loads((exported["work"] / "data" / "meta.json").read_text())
    books = sweep.split_books(prepare.PrepareConfig(corpus=str(exported["books"])), meta)
    val = "".join(b["val"] for b in books)
    tok = Tokenizer.from_file(str(exported["work"] / "tokenizer" / "bpe-280.json"))
    pieces = prepare.token_bytes(tok)
    row = next(r for r in doc["rows"] if r["vocab_size"] == 280)
    tokens = sum(len(tok.encode(b["val"]).ids) for b in books)
    assert row["val_tokens"] == tokens and row["val_chars"] == len(val)
    assert row["tokens_per_char"] == pytest.approx(tokens / len(val))
    assert row["chars_per_window"] == pytest.approx(doc["window"] * len(val) / tokens)
    assert row["fragment_tokens"] == sum(1 for p in pieces if not prepare._is_text(p))
    distinct = set(val)
    single = {c for c in distinct if c.encode("utf-8") in set(pieces)}
    assert row["distinct_chars"] == len(distinct) and row["single_token_chars"] == len(single)
    assert RARE[0] in distinct and RARE[0] not in single  # seen once: stays bytes
    assert row["single_token_occurrence_share"] == pytest.approx(sum(val.count(c) for c in single) / len(val))
    # more merges, fewer tokens per character
    per_char = [r["tokens_per_char"] for r in doc["rows"]]
    assert per_char == sorted(per_char, reverse=True)
    full = next(c for c in doc["characters"] if c["name"] == "all_train")
    train_chars = {c for b in books for ch in b["train"] for c in ch}
    assert full["vocab_size"] == len(train_chars) + 1
    assert full["unk_share"] == pytest.approx(sum(1 for c in val if c not in train_chars) / len(val))


def test_the_pages_encoder_gives_the_labs_ids(exported):
    doc = load(exported, "tokenizer.json")
    page = sweep.load_encoder()
    lab = Tokenizer.from_file(str(exported["work"] / "data" / "tokenizer.json"))
    assert doc["check"]["identical"] and doc["check"]["tokens"] == json.loads(
        (exported["work"] / "data" / "meta.json").read_text())["split"]["val_tokens"]
    for text in ["玄德曰：「" + RARE + "」", "關公大喜😀", "", "abc 張飛", "\n\n第一回"]:
        assert page.encode(doc, text) == lab.encode(text).ids, text
    for s in doc["samples"]:
        assert page.encode(doc, s["text"]) == s["ids"]


def test_neighbours_read_the_tied_table_and_its_untrained_control(exported):
    doc = load(exported, "neighbours.json")
    assert doc["run"]["seed"] == 0 and doc["run"]["tied"] and doc["k"] == 3
    by = {q["text"]: q for q in doc["queries"]}
    assert by["曰"]["single"] and len(by["曰"]["neighbours"]) == 3 and len(by["曰"]["init_neighbours"]) == 3
    assert not by[RARE[0]]["single"] and "neighbours" not in by[RARE[0]]
    cos = [n["cosine"] for n in by["曰"]["neighbours"]]
    assert cos == sorted(cos, reverse=True) and by["曰"]["ids"][0] not in [n["id"] for n in by["曰"]["neighbours"]]
    model = torch.load(exported["work"] / "baseline-s0" / "ckpt.pt", map_location="cpu", weights_only=False)["model"]
    w = model["embed.weight"].double()
    w = w / w.norm(dim=1, keepdim=True)
    first = by["曰"]["neighbours"][0]
    assert float(w[by["曰"]["ids"][0]] @ w[first["id"]]) == pytest.approx(first["cosine"], abs=1e-4)
    # a token's book: where it is most frequent per training token of the book (counted here)
    import numpy as np
    meta = json.loads((exported["work"] / "data" / "meta.json").read_text())
    train_ids = np.fromfile(exported["work"] / "data" / "train.bin", dtype=np.uint16)
    for n in by["曰"]["neighbours"]:
        at, rates = 0, []
        for b in meta["split"]["books"]:
            part = train_ids[at:at + b["train_tokens"]].tolist()
            rates.append((b["file"], part.count(n["id"]) / len(part)))
            at += b["train_tokens"]
        best = max(rates, key=lambda r: r[1])
        if best[1] == 0:  # never in the training text (a byte the tiny corpus lacks)
            assert n["book"] is None
        else:
            assert n["book"] == best[0] and n["book_share"] == pytest.approx(best[1] / sum(r for _, r in rates), abs=1e-3)


def test_a_second_call_reuses_the_sizes_and_writes_the_same(exported, capsys):
    before = load(exported, "sweep.json")
    main(exported["args"])
    assert "reusing bpe-280.result.json" in capsys.readouterr().out
    after = load(exported, "sweep.json")
    assert after["rows"] == before["rows"]


def test_the_exports_validate_and_name_no_machine_path(exported):
    for name in (schema.TOKENIZER_SWEEP_FILE, schema.TOKENIZER_FILE, schema.TOKENIZER_NEIGHBOURS_FILE):
        text = (exported["root"] / "export" / name.split("/")[1]).read_text(encoding="utf-8")
        schema.validate(name, json.loads(text))
        assert str(exported["root"]) not in text and not re.search(r"/(tmp|home|root|work)/", text)
    card = load(exported, "sweep.json")["model_card"]
    assert [f["file"] for f in card["corpus"]["files"]] == ["sanguo-yanyi.txt", "stories.txt"]
    assert card["command"].startswith("python -m lab tokenizer --corpus PATH/TO/books")


def test_a_size_measured_otherwise_is_measured_again_not_retrained(exported, capsys):
    res_file = exported["work"] / "tokenizer" / "bpe-280.result.json"
    res = json.loads(res_file.read_text())
    seconds = res["row"]["train_seconds"]
    res["version"] = 0
    res["row"]["top_han_words"] = "stale"
    res_file.write_text(json.dumps(res, ensure_ascii=False))
    main(exported["args"])
    out = capsys.readouterr().out
    assert "size 280: reusing bpe-280.json" in out and "measuring again" in out
    row = next(r for r in load(exported, "sweep.json")["rows"] if r["vocab_size"] == 280)
    assert row["train_seconds"] == seconds and isinstance(row["top_han_words"], list)
    for w in row["top_han_words"]:
        assert len(w["text"]) >= 2 and all("\u4e00" <= c <= "\u9fff" for c in w["text"])
