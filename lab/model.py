"""The model: a small decoder-only Transformer (RoPE, pre-norm RMSNorm, SwiGLU).

Reads top to bottom in forward order: config -> RMSNorm -> attention -> SwiGLU
-> block -> model. The only lab module the other stages import.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ModelConfig:
    vocab_size: int = 2048  # byte-level BPE vocabulary (prepare.py trains it)
    block_size: int = 256  # context length in tokens
    n_layer: int = 4  # Transformer blocks
    n_head: int = 4  # attention heads; head size = d_model / n_head = 64
    d_model: int = 256  # residual stream width d
    d_ff: int = 688  # FFN intermediate size; 0 = no FFN (attention-only blocks)
    ffn: str = "swiglu"  # "swiglu"; "linear" (down(up(x)), no activation: the non-linearity ablated); the gating
    #                    lesson's "relu" / "gelu" / "silu" (down(act(up(x))), two matrices) and "bilinear" (SwiGLU without SiLU)
    rope_base: float = 10000.0  # RoPE frequency base
    dropout: float = 0.0  # on both residual writes (attention dropout would force SDPA's slow path)
    norm_eps: float = 1e-5  # RMSNorm epsilon
    residual: bool = True  # skip connections: x + sublayer(norm(x)); False = sublayer(norm(x)) (the residual lesson)
    # The residual lesson's mechanism controls (defaults = the baseline; only read when residual is True,
    # except embed_skip and out_init_std):
    skip_attn: bool = True  # False: the attention sub-layer's output replaces the stream
    skip_ffn: bool = True  # False: the FFN sub-layer's output replaces the stream
    skip_grad: bool = True  # False: x.detach() + F(norm(x)): the skip carries the value forward, no gradient back
    embed_skip: bool = False  # True: the embedding is added to the stream once more, before the final norm
    out_init_std: float = 0.0  # > 0: every residual-output projection at this std instead of residual_init_std
    # The norm lesson (`python -m lab norm`); defaults = the baseline. Recorded only when they differ
    # from the default (recorded_config), so earlier runs, checkpoints and exports read as before.
    norm_place: str = "pre"  # "pre": x + F(norm(x)) and a final norm (GPT-2); "post": norm(x + F(x)), no final
    #                          norm (Post-LN, Vaswani et al. 2017); "none": x + F(x), no norm anywhere
    norm_kind: str = "rms"  # "rms": x / rms(x) * gain; "layer": LayerNorm, (x - mean) / std * gain + bias
    norm_gain: str = "g"  # "g": the gain g itself, initialised at 1; "1+w": zero-centred, 1 + w with w initialised at 0
    # The attention lesson's control (C3 第 1 课): "softmax" is attention; "prefix_mean" replaces each head's
    # softmax(q k^T / sqrt(hs)) weights by 1/(t+1) on every position 0..t: the same value and output
    # projections, no query or key, so every position takes the plain average of its prefix (content-blind).
    attn_mix: str = "softmax"
    # The positions lesson (C3 第 2 课): how a token's position reaches attention. "rope": q and k rotated by
    # their positions (the baseline); "none": no position at all (NoPE; only the causal mask orders the tokens);
    # "learned": a learned vector per position (block_size x d_model) added to the token embedding, no rotation.
    pos: str = "rope"
    # The induction lesson (C3 第 3 课): True gives every head a learned mix of each key with the previous
    # position's, k'_j = sigmoid(a) k_j + (1 - sigmoid(a)) k_(j-1), before RoPE (Olsson et al. 2022's
    # smeared key): one layer can then match "the token before key j" without a previous-token head.
    smear_keys: bool = False


VARIANTS = {  # the ablation: name -> overrides of ModelConfig
    "baseline": {},
    # Two matrices of width 1,032 hold exactly SwiGLU's three of 688: 2 x 256 x 1,032 = 3 x 256 x 688.
    "linear_ffn": {"ffn": "linear", "d_ff": 1032},
    "no_ffn": {"d_ff": 0},
    "attn_only_12l": {"d_ff": 0, "n_layer": 12},
}
# The residual lesson (`python -m lab residual`): same names, same lookup, separate list so the
# FFN experiment's runs and export stay as they were.
RESIDUAL_VARIANTS = {
    "no_residual": {"residual": False},  # the baseline with its skip connections removed
    "deep_8l": {"n_layer": 8},
    "deep_8l_no_residual": {"n_layer": 8, "residual": False},
}
# What a skip does, isolated (`python -m lab residual part=mechanism`): the value without its
# gradient, the token's identity given back once, one sub-layer's skip alone, and the no-skip
# model with its output projections at N(0, 0.02).
MECHANISM_VARIANTS = {
    "detached_skip": {"skip_grad": False},
    "embed_readd": {"residual": False, "embed_skip": True},
    "attn_skip_only": {"skip_ffn": False},
    "ffn_skip_only": {"skip_attn": False},
    "no_residual_init02": {"residual": False, "out_init_std": 0.02},
}
# The norm lesson (`python -m lab norm`): where the norm sits, which norm, the gain's form.
NORM_VARIANTS = {
    "post_ln": {"norm_place": "post"},  # norm(x + F(x)) after every addition, no final norm
    "no_norm": {"norm_place": "none"},  # no norm at all (the control)
    "layernorm": {"norm_kind": "layer"},  # Pre-LN with LayerNorm (mean subtracted, bias beta) instead of RMSNorm
    "zero_centred": {"norm_gain": "1+w"},  # RMSNorm's gain as 1 + w, w initialised at 0
}
# The attention lesson's control (`python -m lab train variant=prefix_mean`): attention's content-based
# weights replaced by the plain average of the prefix. Without W_q and W_k a block loses 2 x 256 x 256
# = 131,072 weights; the FFN's width 688 -> 859 gives back 3 x 256 x 171 = 131,328 (+256 a block).
ATTENTION_VARIANTS = {
    "prefix_mean": {"attn_mix": "prefix_mean", "d_ff": 859},
}
# The positions lesson (C3 第 2 课, `python -m lab rope`): no position, one head of 256 (the same
# parameters: W_q, W_k, W_v, W_o do not depend on the head count), learned absolute positions
# (+ block_size x d_model = 256 x 256 = 65,536 weights). Each starts from the baseline's weights of the
# same seed (wpe is drawn after every other weight) and sees its batches.
POSITION_VARIANTS = {
    "nope": {"pos": "none"},
    "one_head": {"n_head": 1},
    "abs_pos": {"pos": "learned"},
}
# The induction lesson (C3 第 3 课, `python -m lab induction`): attention-only models of 1 and 2 layers
# (no FFN), where induction heads are known to form (Olsson et al. 2022), and 1 layer with smeared keys.
INDUCTION_VARIANTS = {
    "attn_only_1l": {"d_ff": 0, "n_layer": 1},
    "attn_only_2l": {"d_ff": 0, "n_layer": 2},
    "smeared_1l": {"d_ff": 0, "n_layer": 1, "smear_keys": True},
}
# The gating lesson (`python -m lab gating`): the FFN's activation and its gate at equal parameters.
GATING_VARIANTS = {
    "gelu_ffn": {"ffn": "gelu", "d_ff": 1032},  # two matrices of 1,032: 2 x 256 x 1,032 = 3 x 256 x 688
    "bilinear_ffn": {"ffn": "bilinear"},  # (x W_gate) * (x W_up), no activation: the gate alone (Shazeer 2020)
    "relu_ffn": {"ffn": "relu", "d_ff": 1032},  # the original Transformer's FFN at the same count
    "silu_ffn": {"ffn": "silu", "d_ff": 1032},  # SwiGLU's activation without its gate: gate vs activation apart
}
FFN_KINDS = ("swiglu", "linear", "relu", "gelu", "bilinear", "silu")
NORM_PLACES = ("pre", "post", "none")
NORM_KINDS = ("rms", "layer")
NORM_GAINS = ("g", "1+w")
ATTN_MIXES = ("softmax", "prefix_mean")
POSITIONS = ("rope", "none", "learned")
# Fields added after the first exports: a config dict records them only when they differ from
# their default, so every earlier variant's recorded config (and every export made from it) is unchanged.
LATER_FIELDS = {"norm_place": "pre", "norm_kind": "rms", "norm_gain": "g", "attn_mix": "softmax", "pos": "rope",
                "smear_keys": False}


def variant_overrides(name: str) -> dict:
    """The ModelConfig overrides of a named variant of either experiment.

    variant_overrides("deep_8l") -> {"n_layer": 8}; variant_overrides("deep") -> ValueError
    """
    known = {**VARIANTS, **RESIDUAL_VARIANTS, **MECHANISM_VARIANTS, **NORM_VARIANTS, **GATING_VARIANTS,
             **ATTENTION_VARIANTS, **POSITION_VARIANTS, **INDUCTION_VARIANTS}
    if name not in known:
        raise ValueError(f"unknown variant {name!r}; known: {sorted(known)}")
    return known[name]


def make_config(**overrides) -> ModelConfig:
    """ModelConfig with overrides checked against field names.

    make_config(n_layer=2).n_layer -> 2; make_config(n_layers=2) -> ValueError
    """
    names = {f.name for f in fields(ModelConfig)}
    unknown = sorted(set(overrides) - names)
    if unknown:
        raise ValueError(f"unknown ModelConfig field(s): {unknown}; known: {sorted(names)}")
    cfg = ModelConfig(**overrides)
    if cfg.ffn not in FFN_KINDS:
        raise ValueError(f"ffn={cfg.ffn!r}; known: {FFN_KINDS}")
    for name, known in (("norm_place", NORM_PLACES), ("norm_kind", NORM_KINDS), ("norm_gain", NORM_GAINS),
                        ("attn_mix", ATTN_MIXES), ("pos", POSITIONS)):
        if getattr(cfg, name) not in known:
            raise ValueError(f"{name}={getattr(cfg, name)!r}; known: {known}")
    if cfg.d_model % cfg.n_head or (cfg.d_model // cfg.n_head) % 2:
        raise ValueError(f"d_model={cfg.d_model} must split into n_head={cfg.n_head} heads of an even size (RoPE pairs)")
    if cfg.norm_place == "post" and not (cfg.residual and cfg.skip_attn and cfg.skip_ffn and not cfg.embed_skip):
        raise ValueError("norm_place='post' is defined for the block with both skips only")
    return cfg


def recorded_config(cfg) -> dict:
    """asdict(cfg) without the later fields that are at their default (LATER_FIELDS).

    recorded_config(ModelConfig()) has no "norm_place"; recorded_config(ModelConfig(norm_place="post"))["norm_place"] -> 'post'
    """
    return {k: v for k, v in asdict(cfg).items() if not (k in LATER_FIELDS and v == LATER_FIELDS[k])}


def residual_init_std(n_layer: int, init_std: float = 0.02) -> float:
    """GPT-2's init for the residual-output projections. residual_init_std(4) -> 0.00707 (0.02 / sqrt(8))"""
    return init_std / math.sqrt(2 * n_layer)


class RMSNorm(nn.Module):
    """x / rms(x) * weight: no mean subtraction, no bias. zero_centred: x / rms(x) * (1 + weight),
    weight initialised at 0 (the same function at init; weight decay pulls the gain toward 1, not 0)."""

    def __init__(self, d: int, eps: float, zero_centred: bool = False):
        super().__init__()
        self.eps = eps
        self.zero_centred = zero_centred
        self.weight = nn.Parameter(torch.zeros(d) if zero_centred else torch.ones(d))

    def gain(self):
        return 1 + self.weight if self.zero_centred else self.weight  # (C,)

    def forward(self, x):
        rms = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)  # (B, T, 1)
        if self.zero_centred:
            return x * rms * (1 + self.weight)  # (B, T, C)
        return x * rms * self.weight  # (B, T, C)


class LayerNorm(nn.Module):
    """(x - mean(x)) / sqrt(var(x) + eps) * gain + bias (Ba et al. 2016), written in the same
    operations as RMSNorm (not torch's fused kernel), so that their speeds compare the arithmetic."""

    def __init__(self, d: int, eps: float, zero_centred: bool = False):
        super().__init__()
        self.eps = eps
        self.zero_centred = zero_centred
        self.weight = nn.Parameter(torch.zeros(d) if zero_centred else torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def gain(self):
        return 1 + self.weight if self.zero_centred else self.weight  # (C,)

    def forward(self, x):
        x = x - x.mean(-1, keepdim=True)  # (B, T, C)
        inv = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)  # (B, T, 1)
        return x * inv * self.gain() + self.bias  # (B, T, C)


NORMS = (RMSNorm, LayerNorm)


def make_norm(cfg: ModelConfig) -> nn.Module:
    """The norm the config asks for; nn.Identity when norm_place is "none"."""
    if cfg.norm_place == "none":
        return nn.Identity()
    cls = RMSNorm if cfg.norm_kind == "rms" else LayerNorm
    return cls(cfg.d_model, cfg.norm_eps, zero_centred=cfg.norm_gain == "1+w")


def rope_frequencies(head_dim: int, base: float, dtype=torch.float32) -> torch.Tensor:
    """theta_i = base^(-2i / head_dim), i = 0 .. head_dim/2 - 1: pair i turns theta_i radians per position.

    rope_frequencies(4, 10000.0) -> tensor([1.0000, 0.0100])
    """
    return base ** (-torch.arange(0, head_dim, 2, dtype=dtype) / head_dim)  # (hs/2,)


def rope_tables(head_dim: int, T: int, base: float, dtype=torch.float32):
    """cos/sin tables for rotary embeddings, each (T, head_dim/2), computed in dtype (the model's: float32).

    rope_tables(2, 3, 10000.0)[0][:, 0] -> tensor([1.0000, 0.5403, -0.4161]) (cos of 0, 1, 2)
    """
    inv_freq = rope_frequencies(head_dim, base, dtype)  # (hs/2,)
    angles = torch.arange(T, dtype=dtype)[:, None] * inv_freq[None, :]  # (T, hs/2)
    return angles.cos(), angles.sin()


def apply_rope(x, cos, sin):
    """Rotate each (even, odd) pair of channels of x by its position's angle."""
    x1, x2 = x[..., 0::2], x[..., 1::2]  # (B, H, T, hs/2) each
    out = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)  # (B, H, T, hs/2, 2)
    return out.flatten(-2)  # (B, H, T, hs)


class Attention(nn.Module):
    """Causal multi-head attention; q and k rotated by RoPE when the block is given cos/sin tables
    (cos=None: no rotation, the NoPE and learned-position models)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        assert cfg.d_model % cfg.n_head == 0
        self.n_head = cfg.n_head
        self.prefix_mean = cfg.attn_mix == "prefix_mean"
        if self.prefix_mean:  # the control: values only, averaged uniformly over the prefix
            self.v = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        else:
            self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model, bias=False)  # residual output
        self.resid_drop = nn.Dropout(cfg.dropout)
        # smear_keys: one mixing logit per head, 0 at init (half the key, half the previous one)
        self.smear = nn.Parameter(torch.zeros(cfg.n_head)) if cfg.smear_keys else None

    def smeared(self, k):
        """k (B, H, T, hs) mixed with the previous position's key per head when smear_keys (position 0 with
        zeros), else k itself. Attention.forward and the experiments' weight capture both call it."""
        if self.smear is None:
            return k
        a = torch.sigmoid(self.smear).view(1, -1, 1, 1)  # (1, H, 1, 1)
        prev = F.pad(k, (0, 0, 1, 0))[:, :, :-1]  # (B, H, T, hs): key j-1 at j, zeros at 0
        return a * k + (1 - a) * prev

    def forward(self, x, cos, sin):
        B, T, C = x.shape
        if self.prefix_mean:  # position t: (v_0 + ... + v_t) / (t + 1), the same in every head
            counts = torch.arange(1, T + 1, device=x.device, dtype=x.dtype).view(1, T, 1)  # (1, T, 1)
            return self.resid_drop(self.proj(self.v(x).cumsum(dim=1) / counts))  # (B, T, C)
        q, k, v = self.qkv(x).split(C, dim=2)  # (B, T, C) each
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, H, T, hs)
        k = self.smeared(k)
        if cos is not None:
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)  # (B, H, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.resid_drop(self.proj(y))  # (B, T, C)


class SwiGLU(nn.Module):
    """down(silu(x W_gate) * (x W_up)). The product is the "neuron" activation the export reads.
    gate_act=None is Shazeer's Bilinear: down((x W_gate) * (x W_up)), a gate with no activation."""

    def __init__(self, cfg: ModelConfig, gate_act=F.silu):
        super().__init__()
        self.gate_act = gate_act
        self.gate = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.up = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.down = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)  # residual output
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        g = self.gate(x)  # (B, T, d_ff)
        h = (self.gate_act(g) if self.gate_act else g) * self.up(x)  # (B, T, d_ff)
        return self.resid_drop(self.down(h))  # (B, T, C)


class LinearFFN(nn.Module):
    """down(act(x W_up)): two matrices. act=None: no activation, so the whole FFN is one linear map
    (the control for SwiGLU); F.relu / F.gelu (exact, erf): the pre-GLU FFNs."""

    def __init__(self, cfg: ModelConfig, act=None):
        super().__init__()
        self.act = act
        self.up = nn.Linear(cfg.d_model, cfg.d_ff, bias=False)
        self.down = nn.Linear(cfg.d_ff, cfg.d_model, bias=False)  # residual output
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        h = self.up(x)  # (B, T, d_ff)
        return self.resid_drop(self.down(self.act(h) if self.act else h))  # (B, T, C)


def make_ffn(cfg: ModelConfig) -> nn.Module | None:
    """The FFN the config asks for (None without one)."""
    if not cfg.d_ff:
        return None
    return {"swiglu": lambda: SwiGLU(cfg), "bilinear": lambda: SwiGLU(cfg, gate_act=None),
            "linear": lambda: LinearFFN(cfg), "relu": lambda: LinearFFN(cfg, F.relu),
            "gelu": lambda: LinearFFN(cfg, F.gelu), "silu": lambda: LinearFFN(cfg, F.silu)}[cfg.ffn]()


def add_write(x, write, skip: bool, grad: bool):
    """The stream after a sub-layer's write: x + write with a skip, write alone without one;
    grad=False keeps the skip's value but cuts its gradient path (x.detach() + write)."""
    if not skip:
        return write
    return (x if grad else x.detach()) + write


class Block(nn.Module):
    """Pre-norm block: x + attn(norm(x)), then x + ffn(norm(x)) when d_ff > 0.
    Without residual: attn(norm(x)), then ffn(norm(.)): the same parameters, no skip.
    skip_attn / skip_ffn / skip_grad remove one skip or its gradient path (the mechanism controls).
    norm_place "post" (Post-LN): the sub-layer reads the stream itself and the norm follows the
    addition, x = norm1(x + attn(x)), then x = norm2(x + ffn(x)); "none": no norm (identities)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.skip_attn = cfg.residual and cfg.skip_attn
        self.skip_ffn = cfg.residual and cfg.skip_ffn
        self.skip_grad = cfg.skip_grad
        self.post = cfg.norm_place == "post"
        self.norm1 = make_norm(cfg)
        self.attn = Attention(cfg)
        self.norm2 = make_norm(cfg) if cfg.d_ff else None
        self.ffn = make_ffn(cfg)

    def forward(self, x, cos, sin):
        if self.post:  # Post-LN: the norm after the addition
            x = self.norm1(add_write(x, self.attn(x, cos, sin), self.skip_attn, self.skip_grad))  # (B, T, C)
            if self.ffn is not None:
                x = self.norm2(add_write(x, self.ffn(x), self.skip_ffn, self.skip_grad))  # (B, T, C)
            return x
        x = add_write(x, self.attn(self.norm1(x), cos, sin), self.skip_attn, self.skip_grad)  # (B, T, C)
        if self.ffn is not None:
            x = add_write(x, self.ffn(self.norm2(x)), self.skip_ffn, self.skip_grad)  # (B, T, C)
        return x


class GPT(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        # Pre-LN's final norm; Post-LN's last block already ends in a norm, and "none" has none.
        self.norm_f = make_norm(cfg) if cfg.norm_place == "pre" else nn.Identity()
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight  # tied input and output embedding
        cos, sin = rope_tables(cfg.d_model // cfg.n_head, cfg.block_size, cfg.rope_base)
        self.register_buffer("rope_cos", cos, persistent=False)  # (block_size, hs/2)
        self.register_buffer("rope_sin", sin, persistent=False)  # (block_size, hs/2)
        self.apply(self._init_weights)
        resid_std = cfg.out_init_std or residual_init_std(cfg.n_layer)  # 0.02 / sqrt(8) = 0.00707 for 4 layers
        for name, p in self.named_parameters():
            if name.endswith("attn.proj.weight") or name.endswith("ffn.down.weight"):
                nn.init.normal_(p, mean=0.0, std=resid_std)
        if cfg.pos == "learned":  # made and drawn last: every other weight is the baseline's of the same seed
            self.wpe = nn.Embedding(cfg.block_size, cfg.d_model)  # (block_size, C) one vector per position
            nn.init.normal_(self.wpe.weight, mean=0.0, std=0.02)

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def num_params(self) -> int:
        """Unique parameters (the tied embedding counted once)."""
        return sum(p.numel() for p in self.parameters())

    def rotations(self, T: int, start: int = 0):
        """RoPE's cos/sin tables, (T, hs/2) each, for positions start .. start+T-1 (None, None without RoPE).
        Positions past the context are computed as the context's are: the same angle, position x theta_i.
        A model cast to float64 (model.double()) computes its tables in float64 too, not from float32 ones."""
        if self.cfg.pos != "rope":
            return None, None
        dtype = self.rope_cos.dtype
        if start + T <= self.cfg.block_size and dtype == torch.float32:
            return self.rope_cos[start:start + T], self.rope_sin[start:start + T]  # (T, hs/2)
        cos, sin = rope_tables(self.cfg.d_model // self.cfg.n_head, start + T, self.cfg.rope_base, dtype)
        return cos[start:].to(self.rope_cos.device), sin[start:].to(self.rope_sin.device)  # (T, hs/2)

    def forward(self, idx, targets=None, start: int = 0, extrapolate: bool = False):
        """Logits (B, T, V) and the mean loss when targets are given. The tokens sit at positions
        start .. start+T-1 (0 .. T-1 in training). Positions past block_size - 1 are refused unless
        extrapolate=True (RoPE and no-position models only: a learned table has no row for them)."""
        B, T = idx.shape
        end = start + T
        if start < 0:
            raise ValueError(f"start={start}: positions start at 0")
        if end > self.cfg.block_size and (not extrapolate or self.cfg.pos == "learned"):
            why = ("a learned position table has no row past it" if self.cfg.pos == "learned"
                   else "pass extrapolate=True to run past the context it was trained on")
            raise ValueError(f"positions {start}..{end - 1} reach past block_size {self.cfg.block_size}: {why}")
        cos, sin = self.rotations(T, start)  # (T, hs/2) each, or None
        x = e = self.embed(idx)  # (B, T, C)
        if self.cfg.pos == "learned":
            x = x + self.wpe(torch.arange(start, end, device=idx.device))  # (B, T, C)
        for block in self.blocks:
            x = block(x, cos, sin)  # (B, T, C)
        if self.cfg.embed_skip:
            x = x + e  # the token's own vector, given back once
        logits = self.lm_head(self.norm_f(x))  # (B, T, V)
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.float().flatten(0, 1), targets.flatten())  # mean nats per token
        return logits, loss
