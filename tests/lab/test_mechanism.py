"""The residual mechanism experiment (python -m lab mechanism) on the tests' tiny corpus: its
variants do what their names say (checked with autograd and structurally), probes never change a
trajectory, and the export validates."""
import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tokenizers")

from lab import schema, train  # noqa: E402
from lab.experiments import mechanism  # noqa: E402
from lab.__main__ import main  # noqa: E402
from lab.model import GPT, MECHANISM_VARIANTS, Block, add_write, make_config, rope_tables, variant_overrides  # noqa: E402
from lab.probe import mean_pairwise_cosine, token_identity  # noqa: E402
from test_lab_pipeline import count_params, make_corpus  # noqa: E402

pytestmark = pytest.mark.lab

TINY_ARGS = ["vocab_size=300", "val_chapters=2", "steps=6", "batch_size=2", "block_size=32", "eval_every=3",
             "progress=false", "amp=off", "threads=1", "grad_batch=4", "stop_early=no_residual_init02:3"]


def test_the_detached_skip_passes_the_value_and_blocks_the_gradient():
    x = torch.randn(2, 3, requires_grad=True)
    w = torch.randn(2, 3, requires_grad=True)
    kept = add_write(x, w * x, skip=True, grad=True)
    cut = add_write(x, w * x, skip=True, grad=False)
    assert torch.equal(kept, cut)  # the same forward value
    (gk,) = torch.autograd.grad(kept.sum(), x)
    (gc,) = torch.autograd.grad(cut.sum(), x)
    assert torch.allclose(gk, 1 + w) and torch.allclose(gc, w)  # the skip's "1" is gone, F's path stays


def test_each_variant_changes_one_thing_in_the_block():
    """Zero both writes: a kept skip returns its input, a removed one zero; the detached block's
    stream has no gradient path back to x except through the sub-layers."""
    torch.manual_seed(0)
    x = torch.randn(2, 5, 256)
    cos, sin = rope_tables(64, 5, 10000.0)
    with torch.no_grad():
        for zeroed, name in (("attn", "ffn_skip_only"), ("ffn", "attn_skip_only")):
            # Zero one sub-layer's write: the variant whose skip goes round the other one loses x entirely.
            block = Block(make_config(**variant_overrides(name))).eval()
            (block.attn.proj if zeroed == "attn" else block.ffn.down).weight.zero_()
            other = block.ffn(block.norm2(x)) if zeroed == "attn" else block.attn(block.norm1(x), cos, sin)
            kept = Block(make_config()).eval()
            kept.load_state_dict(block.state_dict())
            # ffn_skip_only: attention's 0 replaces x, then 0 + ffn(norm(0)) = 0;
            # attn_skip_only: x + attn(...), then the FFN's 0 replaces the stream.
            assert torch.equal(block(x, cos, sin), torch.zeros_like(x)), name
            assert torch.allclose(kept(x, cos, sin), x + other, atol=1e-6)  # the baseline keeps x
    for name, want in (("baseline", 1.0), ("detached_skip", 0.0)):  # with the writes zeroed, only the skip is left
        torch.manual_seed(0)
        block = Block(make_config(**variant_overrides(name)))
        with torch.no_grad():
            block.attn.proj.weight.zero_()
            block.ffn.down.weight.zero_()
        xg = x.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(block(xg, cos, sin).sum(), xg)
        assert torch.all(g == want), name


def test_embed_readd_adds_the_embedding_once_and_init02_scales_the_outputs():
    torch.manual_seed(0)
    model = GPT(make_config(vocab_size=50, block_size=8, **variant_overrides("embed_readd"))).eval()
    idx = torch.randint(50, (1, 8))
    seen = {}
    model.norm_f.register_forward_pre_hook(lambda m, a: seen.setdefault("final", a[0]))
    model.blocks[-1].register_forward_hook(lambda m, a, o: seen.setdefault("last", o))
    model(idx)
    assert torch.allclose(seen["final"], seen["last"] + model.embed(idx))
    init02 = GPT(make_config(**variant_overrides("no_residual_init02")))
    assert abs(init02.blocks[0].attn.proj.weight.std().item() - 0.02) < 0.001
    assert abs(GPT(make_config(residual=False)).blocks[0].attn.proj.weight.std().item() - 0.00707) < 0.0005


@pytest.mark.parametrize("variant", list(MECHANISM_VARIANTS))
def test_no_variant_adds_or_removes_a_parameter(variant):
    cfg = make_config(**variant_overrides(variant))
    assert GPT(cfg).num_params() == 3_688_704 == count_params(cfg.n_layer, cfg.d_model, cfg.d_ff, cfg.vocab_size)


def test_probes_at_init_tell_the_skip_from_no_skip():
    """At init the skip carries the embedding to the head (the top prediction is the token itself);
    without a skip attention's prefix average replaces it."""
    idx = torch.randint(2048, (2, 64), generator=torch.Generator().manual_seed(1))
    torch.manual_seed(0)
    skip = token_identity(GPT(make_config()), idx)
    torch.manual_seed(0)
    plain = token_identity(GPT(make_config(residual=False)), idx)
    assert skip["current_token_top1"] > 0.95 and plain["current_token_top1"] < 0.05
    assert skip["own_embedding_cosine_by_depth"][1] > 0.5 > abs(plain["own_embedding_cosine_by_depth"][1])
    assert len(skip["cosine_by_depth"]) == 5 and skip["own_embedding_cosine_by_depth"][0] == pytest.approx(1.0)


def test_mean_pairwise_cosine_against_a_direct_loop():
    x = torch.randn(3, 6, 4, dtype=torch.float64)
    u = torch.nn.functional.normalize(x, dim=-1)
    want = sum((u[b, i] @ u[b, j]).item() for b in range(3) for i in range(6) for j in range(6) if i != j) / (3 * 30)
    assert mean_pairwise_cosine(x) == pytest.approx(want, abs=1e-9)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("mechanism")
    make_corpus(root / "tiny.txt")
    main(["mechanism", "--corpus", str(root / "tiny.txt"), "--out", str(root / "export"), "--work", str(root / "runs"),
          *TINY_ARGS])
    return root


def test_the_export_validates_and_holds_every_variant(tiny):
    doc = json.loads((tiny / "export" / "mechanism.json").read_text(encoding="utf-8"))
    schema.validate(schema.MECHANISM_FILE, doc)
    assert [v["name"] for v in doc["variants"]] == list(mechanism.VARIANT_NAMES)
    stopped = {v["name"]: v["steps_trained"] for v in doc["variants"]}
    assert stopped.pop("no_residual_init02") == 3 and set(stopped.values()) == {6}
    for v in doc["variants"]:
        assert [p["step"] for p in v["probes"]] == [0] + [h["step"] for h in v["history"]]
    # The no-skip model is residual.py's run; its step-0 probe is the one train.py would log for it.
    base_init = doc["variants"][0]["probes"][0]
    assert doc["no_skip_init"]["probe"]["current_token_top1"] < 0.05 < 0.95 < base_init["current_token_top1"]
    assert doc["model_card"]["command"].startswith("python -m lab mechanism --corpus PATH/TO/tiny.txt")


def test_probes_and_early_stops_do_not_change_a_trajectory(tiny):
    """A run stopped at step 3 of a 6-step schedule is the full run's first 3 steps; probes draw no
    random numbers, so the history matches a run trained alone (a second work dir)."""
    done = json.loads((tiny / "runs" / "no_residual_init02-s0" / "result.json").read_text())
    cfg = train.TrainConfig(**{**done["config"], "out_dir": str(tiny / "again"), "stop_at": 0})
    full = train.run(cfg)
    def trajectory(row):  # an evaluation without its wall time, which no rerun repeats
        return {k: v for k, v in row.items() if k != "wall_seconds"}

    assert trajectory(full["history"][0]) == trajectory(done["history"][0]) and full["steps_trained"] == 6


def test_a_rerun_resumes_and_refuses_a_clashing_setting(tiny):
    with pytest.raises(SystemExit, match="sets stop_at itself"):
        main(["mechanism", "--corpus", str(tiny / "tiny.txt"), "--work", str(tiny / "runs"), "stop_at=3"])
    with pytest.raises(SystemExit, match="--work"):
        main(["prepare", "--corpus", str(tiny / "tiny.txt"), f"work_dir={tiny / 'elsewhere'}"])
    assert not (tiny / "elsewhere").exists()
