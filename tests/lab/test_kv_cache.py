"""The KV-cache export (python -m lab kvcache) on the tests' tiny corpus: the cached step gives the model's
own logits (RoPE, no position, learned positions; past the context with RoPE), greedy generation is the
same text both ways, the RoPE offset bugs change the new tokens' logits, unsupported models
are refused, the prompt rule keeps whole characters, pausing touches only the processes it names, and
the export validates, holds no machine path and agrees with its schema's cross-checks."""
import json
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tokenizers")

from lab import prepare, schema, train  # noqa: E402
from lab.__main__ import main  # noqa: E402
from lab.experiments import kv_cache as kv  # noqa: E402
from lab.model import GPT, make_config  # noqa: E402
from test_lab_pipeline import make_corpus  # noqa: E402

pytestmark = pytest.mark.lab
SMALL = dict(steps=6, batch_size=2, block_size=32, eval_every=3, progress=False, amp="off", threads=1)
ARGS = ["new_tokens=40", "max_prompt_tokens=12", "repeats=2", "threads=1"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("kvcache")
    make_corpus(root / "tiny.txt")
    work = root / "runs"
    prepare.run(prepare.PrepareConfig(corpus=str(root / "tiny.txt"), work_dir=str(work), vocab_size=500, val_chapters=2))
    train.run(train.TrainConfig(data_dir=str(work / "data"), out_dir=str(work / "baseline-s0"), **SMALL))
    main(["kvcache", "--work", str(work), "--out", str(root / "export"), *ARGS])
    return root


def read(root):
    return json.loads((root / "export" / "kv-cache.json").read_text(encoding="utf-8"))


def random_model(seed=0, scale=30.0, **overrides):
    """A model at initialisation with its weights scaled up, so its logits are far from uniform."""
    torch.manual_seed(seed)
    model = GPT(make_config(vocab_size=50, block_size=16, n_layer=2, **overrides)).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" not in name:
                p.mul_(scale)
    return model


def cached_rows(model, ids, prefill=4, rope_at=None):
    cache = kv.KVCache(len(model.blocks))
    with torch.inference_mode():
        rows = [kv.step(model, cache, torch.tensor([ids[:prefill]]), rope_at)[0]]
        rows += [kv.step(model, cache, torch.tensor([[t]]), rope_at)[0] for t in ids[prefill:]]
    return torch.cat(rows), cache


@pytest.mark.parametrize("pos", ["rope", "none", "learned"])
def test_the_cached_step_gives_the_models_own_logits(pos):
    model = random_model(pos=pos)
    ids = torch.randint(0, 50, (16,), generator=torch.Generator().manual_seed(1)).tolist()
    rows, cache = cached_rows(model, ids)
    with torch.inference_mode():
        full, _ = model(torch.tensor([ids]))
    assert cache.n == 16 and cache.k[0].shape == (1, 4, 16, 64)
    assert float((rows - full[0]).abs().max()) < 1e-4 * float(full.abs().max())


def test_past_the_context_rope_runs_both_ways_alike():
    model = random_model()
    ids = torch.randint(0, 50, (24,), generator=torch.Generator().manual_seed(2)).tolist()  # block_size 16
    rows, _ = cached_rows(model, ids)
    with torch.inference_mode():
        full, _ = model(torch.tensor([ids]), extrapolate=True)
    assert float((rows - full[0]).abs().max()) < 1e-4 * float(full.abs().max())
    a, ra = kv.generate_full(model, ids[:3], 20)
    b, rb, _ = kv.generate_cached(model, ids[:3], 20)
    assert a == b and max(kv.row_gaps(ra, rb)) < 1e-4 * float(full.abs().max())


@pytest.mark.parametrize("bug", list(kv.BUGS))
def test_a_wrong_rope_offset_changes_the_logits_of_the_new_tokens(bug):
    model = random_model()
    ids = torch.randint(0, 50, (16,), generator=torch.Generator().manual_seed(3)).tolist()
    good, _ = cached_rows(model, ids)
    bad, _ = cached_rows(model, ids, rope_at=kv.BUGS[bug][0])
    gaps = (good - bad).abs().amax(-1)
    assert float(gaps[:4].max()) == 0.0  # the prefill rotates every prompt token at its own position
    wrong = gaps[4:] > 1e-3 * float(good.abs().max())
    # from the new tokens on the rows are wrong (a saturated softmax of these scaled weights may hide a row)
    assert float(wrong[1:].float().mean()) >= 0.8 and float(gaps[4:].max()) > 0.1 * float(good.abs().max())
    if bug == "position_0":
        assert bool(wrong[0])  # already the first new token


def test_a_model_the_step_does_not_rebuild_is_refused():
    with pytest.raises(ValueError, match="pre-norm softmax attention"):
        kv.check_supported(GPT(make_config(vocab_size=50, block_size=16, norm_place="post")))
    with pytest.raises(ValueError, match="empty cache"):
        model = random_model()
        cache = kv.KVCache(2)
        kv.step(model, cache, torch.tensor([[1, 2]]))
        kv.step(model, cache, torch.tensor([[3, 4]]))


def test_the_prompt_is_the_first_sentence_after_the_title_line_in_whole_characters():
    pieces = [b"\xe7\xac\xac", b"\n", "卻".encode(), "說".encode()[:2], "說".encode()[2:], "。".encode(), "又".encode()]
    offset, ids = kv.pick_prompt([0, 1, 2, 3, 4, 5, 6], pieces, 10)
    assert offset == 2 and ids == [2, 3, 4, 5] and kv.decode(pieces, ids) == "卻說。"
    assert kv.pick_prompt([0, 1, 2, 3, 4, 5, 6], pieces, 3) == (2, [2, 3, 4])  # cut before 。
    pieces[6] = "又".encode()[:1]
    assert kv.pick_prompt([0, 1, 2, 5, 2, 6, 5], pieces, 3) == (2, [2, 5])  # 。 ends it
    assert kv.pick_prompt([0, 1, 2, 2, 6, 2, 5], pieces, 3) == (2, [2, 2])  # the cut fell inside 又: back
    assert kv.decode(pieces, [2, 3]) == "卻"  # a cut character at the end is dropped


def state_of(pid, want, wait=5.0):
    """The process's state letter once it is `want` (a signal is delivered asynchronously), or the last seen."""
    end = time.time() + wait
    while True:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        if state in want or time.time() > end:
            return state
        time.sleep(0.02)


def test_pausing_stops_only_the_processes_it_names_and_lets_them_go():
    with kv.training_paused(False) as stopped:
        assert stopped == []
    tag = f"kvcache-pause-test-{time.time_ns()}"
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", tag])
    try:
        with kv.training_paused(True, pattern=tag) as stopped:
            assert stopped == [child.pid]
            assert state_of(child.pid, "T") == "T"  # stopped
        assert state_of(child.pid, "SR") in "SR"  # running again
    finally:
        child.kill()
        child.wait()


def test_the_export_generates_the_same_text_both_ways_and_validates(tiny):
    doc = read(tiny)
    schema.validate(schema.KV_CACHE_FILE, doc)
    gen = doc["generation"]
    assert doc["same_tokens"] and doc["first_divergence"] is None
    assert doc["full"]["tokens"] == doc["cached"]["tokens"] and len(doc["full"]["tokens"]) == 40
    assert doc["max_abs_logit_diff"] < 1e-4 and doc["prefill_max_abs_logit_diff"] < 1e-5
    assert 2 <= len(doc["prompt"]["tokens"]) <= 12 and gen["positions"] == len(doc["prompt"]["tokens"]) + 40
    assert gen["past_context"] == gen["positions"] - 32  # block_size 32: RoPE computed past it, both ways
    assert doc["cache"]["bytes_per_token"] == 2 * 4 * 256 * 4
    assert doc["speed"]["repeats"] == 2 and not doc["speed"]["training_paused"]
    assert [c["name"] for c in doc["controls"]] == list(kv.BUGS)
    for c in doc["controls"]:
        assert c["forced"]["first_step_diff"] == 0.0 and c["forced"]["max_abs_logit_diff"] > 0
    assert doc["command"].startswith("python -m lab kvcache") and str(tiny) not in json.dumps(doc, ensure_ascii=False)


def test_the_schema_catches_an_export_that_contradicts_itself(tiny):
    doc = read(tiny)
    bad = json.loads(json.dumps(doc))
    bad["first_divergence"] = 3
    with pytest.raises(schema.SchemaError, match="first_divergence"):
        schema.validate(schema.KV_CACHE_FILE, bad)
    bad = json.loads(json.dumps(doc))
    bad["speed"]["speedup"] *= 2
    with pytest.raises(schema.SchemaError, match="speedup"):
        schema.validate(schema.KV_CACHE_FILE, bad)
    bad = json.loads(json.dumps(doc))
    bad["controls"][0]["tokens"] = bad["controls"][0]["tokens"][:-1]
    with pytest.raises(schema.SchemaError, match="controls"):
        schema.validate(schema.KV_CACHE_FILE, bad)


def test_an_unfinished_run_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="train the run first"):
        kv.export(kv.Config(work_dir=str(tmp_path), out_dir=str(tmp_path / "out")), "python -m lab kvcache")
