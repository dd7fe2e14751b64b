"""Does the stream still know which token it is at? Two cheap readings of a model, taken by
train.py before the first step and at every evaluation (the residual lesson's mechanism runs).

- current_token_top1: the share of positions whose top prediction (tied head on the final
  norm) is the token at that position itself. A fresh model with skips predicts its own input
  (the embedding reaches the head almost unchanged); a stack that lost the token cannot.
- modal_top1_share: the share of positions whose top prediction is the most common one; 1.0 =
  the same prediction everywhere (a model stuck at the unigram).
- own_embedding_cosine: the mean cosine between a position's vector and its own token's
  embedding, after the embedding (1.0) and after each block: does the stream still point at
  the token it stands for?
- cosine: the mean cosine similarity between different positions' vectors of one sequence,
  after the embedding and after each block (the stream) and where the final norm reads it.
  Near 1 means every position carries the same vector (rank collapse, Dong et al. 2021).

Eval mode, no gradient, no random numbers drawn: a probe never changes a run's trajectory.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

PROBE_WINDOWS = 8  # the first 8 non-overlapping validation windows: 2,048 positions at block 256


def mean_pairwise_cosine(x: torch.Tensor) -> float:
    """Mean cosine between every two different positions of each sequence, averaged over the batch.
    With unit rows u_i: sum_{i != j} u_i.u_j = |sum_i u_i|^2 - T.

    mean_pairwise_cosine(torch.tensor([[[1.0, 0.0], [2.0, 0.0]]])) -> 1.0
    """
    u = F.normalize(x.double(), dim=-1)  # (B, T, C)
    T = u.shape[1]
    total = u.sum(dim=1).pow(2).sum(dim=-1)  # (B,)
    return ((total - T) / (T * (T - 1))).mean().item()


def probe_batch(val: torch.Tensor, block_size: int, windows: int = PROBE_WINDOWS) -> torch.Tensor:
    """The fixed probe inputs: the first `windows` non-overlapping validation windows, (B, T)."""
    n = min(windows, (len(val) - 1) // block_size)
    if n < 1:
        raise ValueError(f"the validation split has fewer than {block_size + 1} tokens")
    return torch.stack([val[i * block_size:(i + 1) * block_size] for i in range(n)])


@torch.no_grad()
def token_identity(model, idx: torch.Tensor) -> dict:
    """current_token_top1, the final stream's mean pairwise cosine, and the stream's after the
    embedding (index 0) and after each block (1..n_layer)."""
    was_training = model.training
    model.eval()
    streams = []
    handles = [model.embed.register_forward_hook(lambda m, a, o: streams.append(o))]
    handles += [b.register_forward_hook(lambda m, a, o: streams.append(o)) for b in model.blocks]
    final = []
    handles.append(model.norm_f.register_forward_pre_hook(lambda m, a: final.append(a[0])))
    try:
        logits, _ = model(idx)  # (B, T, V)
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    top = logits.argmax(dim=-1)  # (B, T)
    top1 = (top == idx).double().mean().item()
    modal = top.flatten().bincount().max().item() / top.numel()
    own = F.normalize(model.embed.weight[idx].double(), dim=-1)  # (B, T, C)
    own_cos = [(F.normalize(s.double(), dim=-1) * own).sum(-1).mean().item() for s in streams]
    return {"current_token_top1": round(top1, 4), "modal_top1_share": round(modal, 4),
            "cosine_final": round(mean_pairwise_cosine(final[0]), 4),
            "cosine_by_depth": [round(mean_pairwise_cosine(s), 4) for s in streams],
            "own_embedding_cosine_by_depth": [round(c, 4) for c in own_cos]}
