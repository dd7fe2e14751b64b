"""The positions lesson's arms in lab/model.py (C3 第 2 课): no position (nope), one head of 256 (one_head),
learned absolute positions (abs_pos). Each has the parameter count the lesson states, starts from the
baseline's weights of the same seed, and the no-position model's attention sees no position at all."""
import pytest

torch = pytest.importorskip("torch")

from lab.experiments.attention import attention_of  # noqa: E402
from lab.model import (GPT, LATER_FIELDS, POSITION_VARIANTS, ModelConfig, make_config, recorded_config,  # noqa: E402
                       variant_overrides)

pytestmark = pytest.mark.lab
BASELINE_PARAMS = 3_688_704  # model-card.json's count for 2,048 tokens, 4 layers, d 256, d_ff 688


def build(name, seed=0, **over):
    torch.manual_seed(seed)
    return GPT(make_config(**{"vocab_size": 2048, **variant_overrides(name), **over})).eval()


def test_parameter_counts():
    assert build("baseline").num_params() == BASELINE_PARAMS
    assert build("nope").num_params() == BASELINE_PARAMS  # RoPE has no weights
    assert build("one_head").num_params() == BASELINE_PARAMS  # W_q, W_k, W_v, W_o do not depend on the head count
    assert build("abs_pos").num_params() == BASELINE_PARAMS + 256 * 256  # block_size x d_model


def test_each_arm_starts_from_the_baselines_weights_of_its_seed():
    base = build("baseline", seed=3).state_dict()
    for name in POSITION_VARIANTS:
        mine = build(name, seed=3).state_dict()
        assert set(mine) - set(base) == ({"wpe.weight"} if name == "abs_pos" else set())
        assert all(torch.equal(mine[k], base[k]) for k in base), name


def test_forward_shapes_and_heads():
    idx = torch.randint(0, 2048, (2, 16))
    for name in ("baseline", *POSITION_VARIANTS):
        logits, loss = build(name)(idx, idx)
        assert logits.shape == (2, 16, 2048) and loss.ndim == 0, name
    assert build("one_head").blocks[0].attn.n_head == 1
    w = attention_of(build("one_head"), idx[0])
    assert w.shape == (4, 1, 16, 16)


def test_the_recorded_config_of_every_earlier_run_is_unchanged():
    assert "pos" not in recorded_config(ModelConfig()) and LATER_FIELDS["pos"] == "rope"
    assert recorded_config(make_config(**variant_overrides("nope")))["pos"] == "none"
    assert "pos" not in recorded_config(make_config(**variant_overrides("one_head")))


def test_the_no_position_model_weights_only_by_content():
    """One token repeated: without positions every key looks the same to every query, so each head of
    every layer gives exactly the prefix average 1/(t+1); RoPE's rotations make the same keys differ."""
    ids = torch.full((12,), 7)
    prefix = torch.ones(12, 12).tril()
    prefix = prefix / prefix.sum(-1, keepdim=True)
    nope = attention_of(build("nope"), ids)  # (L, H, T, T)
    assert torch.allclose(nope, prefix.expand_as(nope), atol=1e-6)
    rope = attention_of(build("baseline"), ids)
    assert (rope - prefix).abs().max() > 1e-3


def test_the_no_position_model_cannot_tell_the_order_of_the_prefix():
    """One layer: the last query's output is a softmax-weighted sum over the prefix, the same for any order
    of the earlier tokens (only the causal mask orders them). RoPE's output changes with the order."""
    ids = torch.randint(0, 2048, (10,))
    shuffled = torch.cat([ids[:-1][torch.randperm(9, generator=torch.Generator().manual_seed(1))], ids[-1:]])
    assert not torch.equal(ids, shuffled)
    for name, invariant in (("nope", True), ("baseline", False)):
        model = build(name, n_layer=1)
        with torch.no_grad():
            a, b = model(ids[None])[0][0, -1], model(shuffled[None])[0][0, -1]
        assert torch.allclose(a, b, atol=1e-5) is invariant, name


def test_positions_past_the_context():
    idx = torch.randint(0, 2048, (1, 200))
    with pytest.raises(ValueError, match="extrapolate=True"):
        build("baseline")(idx, start=100)
    with pytest.raises(ValueError, match="learned position table has no row"):
        build("abs_pos")(idx, start=100, extrapolate=True)
    with pytest.raises(ValueError, match="positions start at 0"):
        build("baseline")(idx, start=-1)
    assert build("baseline")(idx, start=100, extrapolate=True)[0].shape == (1, 200, 2048)


def test_a_shift_leaves_rope_attention_unchanged_and_moves_learned_positions():
    """RoPE: the score of query m and key n depends on m - n only, so moving every position by +50 leaves
    every weight as it was (to float rounding); learned positions add another vector at every place."""
    ids = torch.randint(0, 2048, (1, 40))
    for name, same in (("baseline", True), ("abs_pos", False)):
        model = build(name)
        with torch.no_grad():
            a, b = model(ids)[0], model(ids, start=50)[0]
        assert torch.allclose(a, b, atol=1e-4) is same, name


def test_a_bad_position_kind_is_refused():
    with pytest.raises(ValueError, match="pos='sinus'"):
        make_config(pos="sinus")
    with pytest.raises(ValueError, match="heads of an even size"):
        make_config(n_head=3)
