"""The norm experiment (python -m lab norm) on the tests' tiny corpus: each norm variant is what its
name says (Post-LN checked structurally, LayerNorm and RMSNorm against torch's own, the gain as
1 + w), the defaults leave the baseline as it was, decay reaches the gains only when asked, and the
export validates against its schema."""
import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tokenizers")

from lab import schema, train  # noqa: E402
from lab.experiments import norm  # noqa: E402
from lab.__main__ import main  # noqa: E402
from lab.model import (GPT, NORM_VARIANTS, Block, LayerNorm, ModelConfig, RMSNorm, make_config,  # noqa: E402
                       recorded_config, rope_tables, variant_overrides)
from test_lab_pipeline import make_corpus  # noqa: E402

pytestmark = pytest.mark.lab

TINY_ARGS = ["vocab_size=300", "val_chapters=2", "steps=6", "batch_size=2", "block_size=32", "eval_every=3",
             "progress=false", "amp=off", "threads=1", "grad_batch=4", "short_steps=3", "short_eval_every=1",
             "curve_every=2", "grad_depths=2,4", "speed_rounds=1", "speed_steps=1", "extra_seeds=1",
             "seeded=pre_ln_no_warmup"]


def test_post_ln_normalises_after_each_addition_and_has_no_final_norm():
    torch.manual_seed(0)
    cfg = make_config(**variant_overrides("post_ln"))
    block = Block(cfg).eval()
    x = torch.randn(2, 5, 256) * 3
    cos, sin = rope_tables(64, 5, 10000.0)
    with torch.no_grad():
        h = block.norm1(x + block.attn(x, cos, sin))  # the sub-layer reads the raw stream
        want = block.norm2(h + block.ffn(h))
        assert torch.allclose(block(x, cos, sin), want, atol=1e-6)
        out = block(x, cos, sin)
        assert torch.allclose(out.pow(2).mean(-1), torch.ones(2, 5), atol=1e-3)  # RMS 1 after every block
    model = GPT(cfg)
    assert isinstance(model.norm_f, torch.nn.Identity)
    assert model.num_params() == GPT(make_config()).num_params() - 256  # the final norm's gain, nothing else


def test_the_norms_against_torch_and_the_zero_centred_gain():
    x = torch.randn(3, 7, 16)
    rms, ln = RMSNorm(16, 1e-5), LayerNorm(16, 1e-5)
    with torch.no_grad():
        rms.weight.uniform_(0.5, 1.5)
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-0.5, 0.5)
    assert torch.allclose(rms(x), torch.nn.functional.rms_norm(x, (16,), rms.weight, 1e-5), atol=1e-5)
    assert torch.allclose(ln(x), torch.nn.functional.layer_norm(x, (16,), ln.weight, ln.bias, 1e-5), atol=1e-5)
    zc = RMSNorm(16, 1e-5, zero_centred=True)
    assert torch.all(zc.weight == 0) and torch.allclose(zc(x), RMSNorm(16, 1e-5)(x))  # the same function at init
    with torch.no_grad():
        zc.weight.copy_(rms.weight - 1)
    assert torch.allclose(zc(x), rms(x), atol=1e-6) and torch.allclose(zc.gain(), rms.weight)


def test_no_norm_has_no_norm_and_defaults_record_nothing_new():
    model = GPT(make_config(**variant_overrides("no_norm")))
    assert not [m for m in model.modules() if isinstance(m, (RMSNorm, LayerNorm))]
    base = recorded_config(ModelConfig())
    assert "norm_place" not in base and recorded_config(make_config(norm_place="post"))["norm_place"] == "post"
    assert "norm_weight_decay" not in train.recorded_train_config(train.TrainConfig())
    for name in NORM_VARIANTS:  # the seed's initial weights are the baseline's wherever the names agree
        torch.manual_seed(0)
        a = GPT(make_config()).state_dict()
        torch.manual_seed(0)
        b = GPT(make_config(**variant_overrides(name))).state_dict()
        shared = [k for k in b if k in a and not k.endswith(("norm1.weight", "norm2.weight", "norm_f.weight"))]
        assert len(shared) > 10 and all(torch.equal(a[k], b[k]) for k in shared), name


def test_decay_reaches_the_gains_only_when_asked():
    model = GPT(make_config(vocab_size=50, block_size=8))
    gains = train.norm_gains(model)
    assert len(gains) == 2 * 4 + 1
    ln = GPT(make_config(vocab_size=50, block_size=8, norm_kind="layer"))
    assert len(train.norm_gains(ln)) == 9 and all(id(m.bias) not in train.norm_gains(ln)
                                                  for m in ln.modules() if isinstance(m, LayerNorm))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("norm")
    make_corpus(root / "tiny.txt")
    main(["norm", "--corpus", str(root / "tiny.txt"), "--out", str(root / "export"), "--work", str(root / "runs"),
          *TINY_ARGS])
    return root


def test_the_export_validates_and_holds_every_run(tiny):
    doc = json.loads((tiny / "export" / "norm.json").read_text(encoding="utf-8"))
    schema.validate(schema.NORM_FILE, doc)
    names = [r["name"] for r in doc["runs"]]
    assert names == ["baseline", *norm.RUNS]
    steps = {r["name"]: r["steps_trained"] for r in doc["runs"]}
    assert steps.pop("baseline") == 6 and steps.pop("layernorm") == 6 and set(steps.values()) == {3}
    runs = {r["name"]: r for r in doc["runs"]}
    assert runs["post_ln_no_warmup"]["norm_place"] == "post" and runs["post_ln_no_warmup"]["warmup_steps"] == 0
    assert runs["pre_ln_warmup_high_lr"]["lr"] == pytest.approx(3 * runs["pre_ln_warmup"]["lr"])
    assert runs["zero_centred_decay"]["gain_form"] == "1+w" and runs["zero_centred_decay"]["decay_on_gains"]
    assert [h["step"] for h in runs["pre_ln_warmup"]["history"]] == [1, 2, 3]
    # The short Pre-LN run is the baseline's first steps (same settings, stop_at), so their step-3 losses agree.
    assert runs["pre_ln_warmup"]["train_curve"][0] == runs["baseline"]["train_curve"][0]
    depths = {(m["norm_place"], m["n_layer"]) for m in doc["gradients"]["models"] if m["init"] == "default"}
    assert depths == {(p, n) for p in ("pre", "post", "none") for n in (2, 4)}
    controls = {(m["norm_place"], m["init"]) for m in doc["gradients"]["models"] if m["init"] != "default"}
    assert controls == {(p, i) for p in ("pre", "post") for i in ("embed_unit", "writes_02", "embed_unit_writes_02", "xavier")}
    # Every run carries the probes train.py logged: step 0, then every evaluation.
    assert [p["step"] for p in runs["post_ln_no_warmup"]["probes"]] == [0, 1, 2, 3]
    # The extra seed trains the short length with its own seed, the rest as its seed-0 row.
    (extra,) = doc["seed_runs"]
    assert (extra["name"], extra["seed"], extra["steps_trained"]) == ("pre_ln_no_warmup", 1, 3)
    assert extra["val_loss"] != runs["pre_ln_no_warmup"]["val_loss"]
    gained = {g["run"] for g in doc["gains"]["models"]}
    assert "no_norm" not in gained and {"baseline", "layernorm", "gain_decay"} <= gained
    assert doc["model_card"]["command"].startswith("python -m lab norm --corpus PATH/TO/tiny.txt")
    assert str(tiny) not in json.dumps(doc)  # no path of this machine: the corpus by name


def test_adams_first_step_moves_every_weight_by_about_the_learning_rate(tiny):
    """Adam's first step is m/sqrt(v) = g/|g|: every weight moves by lr whatever its gradient's size
    (decoupled decay adds lr * wd * |w|, tiny at init), in Pre-LN and Post-LN alike."""
    doc = json.loads((tiny / "export" / "norm.json").read_text(encoding="utf-8"))
    models = doc["first_step"]["models"]
    assert {(m["norm_place"], m["warmup"]) for m in models} == {(p, w) for p in ("pre", "post") for w in (True, False)}
    for m in models:
        assert m["groups"]["gains"]["mean_abs_over_lr"] == pytest.approx(1.0, rel=1e-3)
        assert m["groups"]["write_back"]["mean_abs_over_lr"] == pytest.approx(1.0, rel=1e-2)
    cold = {m["norm_place"]: m for m in models if not m["warmup"]}
    warm = {m["norm_place"]: m for m in models if m["warmup"]}
    # Warm-up's first lr is lr / warmup_steps, so the same step moves each weight that many times less.
    ratio = cold["pre"]["groups"]["write_back"]["relative"] / warm["pre"]["groups"]["write_back"]["relative"]
    assert ratio == pytest.approx(cold["pre"]["lr"] / warm["pre"]["lr"], rel=0.05)


def test_a_rerun_trains_nothing_and_writes_the_same_runs(tiny):
    before = json.loads((tiny / "export" / "norm.json").read_text(encoding="utf-8"))
    main(["norm", "--corpus", str(tiny / "tiny.txt"), "--out", str(tiny / "export"), "--work", str(tiny / "runs"),
          *TINY_ARGS])
    after = json.loads((tiny / "export" / "norm.json").read_text(encoding="utf-8"))
    assert [r["val_loss"] for r in after["runs"]] == [r["val_loss"] for r in before["runs"]]
    assert [r["wall_seconds"] for r in after["runs"]] == [r["wall_seconds"] for r in before["runs"]]  # nothing trained
    assert [r["reused"] for r in after["runs"]] == [True] + [False] * len(norm.RUNS)  # only the shared baseline
    assert [r["wall_seconds"] for r in after["seed_runs"]] == [r["wall_seconds"] for r in before["seed_runs"]]
    assert after["model_card"]["budget"]["new_runs_seconds"] == before["model_card"]["budget"]["new_runs_seconds"]


def test_the_xavier_control_makes_the_writes_grow_the_stream():
    """Towards Xiong et al.'s premise, which our init is not: under `xavier` Pre-LN's stream grows with
    its writes (4 blocks, 8 writes), under `embed_unit_writes_02` it barely moves;
    and Pre-LN's last block then gets a smaller gradient than Post-LN's, the theorem's direction."""
    torch.manual_seed(0)
    idx, tgt = torch.randint(0, 100, (2, 32)), torch.randint(0, 100, (2, 32))
    rms, last = {}, {}
    for init in ("embed_unit_writes_02", "xavier"):
        for place in ("pre", "post"):
            g = norm.step0_gradients(norm.control_model(100, 32, 0.0, 4, place, init, 0), idx, tgt)
            rms[init, place], last[init, place] = g["stream_rms_out"], g["blocks"][-1]["ffn_out_grad_norm"]
    assert rms["embed_unit_writes_02", "pre"] < 1.1 < rms["xavier", "pre"]
    assert rms["xavier", "post"] == pytest.approx(1.0, abs=0.01)  # Post-LN's stream is normed after each write
    assert last["xavier", "pre"] < last["xavier", "post"]
