"""The attention export (C3 第 1 课, `python -m lab attention`): where each head of a trained model looks.

No training: it reads one finished run (`work/<variant>-s<seed>/ckpt.pt` and `result.json`) and the
work dir's prepared data, and writes `out/attention.json`:

- `measures`: per layer and head, averages over every query of one book's validation tokens (the
  same non-overlapping windows as the val loss) of how much weight the head puts on the previous
  token, on itself, on the window's first token, on earlier occurrences of the query's own token,
  on the token after such an occurrence (induction), on punctuation, and its mean look-back
  distance; beside each, what a content-blind average of the prefix (every earlier position
  weighted 1/(t+1)) would give on the same queries. A head is named on the page by these numbers,
  never by eye.
- `passages`: a few short passages of that book's validation text, picked by a rule (the most
  repeated non-punctuation tokens among sentences of `min_tokens`..`max_tokens` tokens), each run
  through the model on its own, with every layer's and head's full attention matrix (per mille).

The weights are captured with a forward hook on each block's attention module, recomputed from the
module's own input exactly as lab/model.py computes them (q, k with RoPE, q k^T / sqrt(head_dim),
causal mask, softmax); every pass asserts that the recomputed output equals the module's output
and that the hooked model's logits equal the plain forward pass.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from lab import schema, train
from lab.experiments.common import (check_same_settings, git_lab_commit, load_model, portable_config, provenance,
                                    run_dir as run_path, train_runs)
from lab.model import ATTENTION_VARIANTS, GPT
from lab.experiments.ffn import is_fragment, run_record, show
from lab.model import apply_rope

NAME = "attention"
DEFAULT_OUT = "data/real-model/attention"
FILE = "attention/attention.json"
FILES = {"attention.json": FILE, "failed-run.json": "attention/failed-run.json"}  # file= -> the export it writes
PUNCTUATION = "，。：；「」『』！？、（）《》…—,.:;!?"  # a token is punctuation when it has no other character
SENTENCE_END = "。！？\n"  # a sentence ends with a token holding one of these
CLEAN_END = "。！？」』"  # ... and ends cleanly when that token's last character is one of these or a space
MEASURES = ("previous", "self", "first", "same_token", "induction", "punctuation", "punctuation_before", "with_punctuation",
            "distance")


@dataclass
class Config:
    work_dir: str = "lab/runs"  # --work: data/ and the run directories
    out_dir: str = DEFAULT_OUT  # --out
    variant: str = "baseline"  # the run read: work/<variant>-s<seed>/
    seed: int = 0
    book: str = "sanguo-yanyi.txt"  # whose validation tokens are measured and shown (a multi-book work dir's meta.json
    #                                 lists each book's val_token_range; a single-corpus one has only its own)
    passages: int = 3  # how many passages the page shows
    min_tokens: int = 12  # a passage's length in tokens (it is run on its own, from its first token)
    max_tokens: int = 26
    windows: int = 0  # measure over the first N windows of the book's validation tokens (0 = all of them)
    threads: int = 0  # torch's CPU threads (0 = torch's default)
    control: str = "prefix_mean"  # the lesson's control (lab/model.py ATTENTION_VARIANTS); "" = none; "keep" = the
    #                                control block of the export being replaced, checked to pair with this run
    control_seeds: int = 5  # its seeds 0..n-1 (the baseline's five), trained here when missing (resumable)
    progress: bool = True  # the control runs' progress bars
    command: str = ""  # the command to record (default: this process's command line)
    file: str = "attention.json"  # failed-run.json: the same measures of the run v2 flags as failed (seed=4 control=)
    fit_iters: int = 500  # L-BFGS iterations of each head's best position-only weights (content)


def token_texts(pieces: list[bytes], ids: list[int]) -> list[dict]:
    """Each token as it shows alone, whether its bytes are a fragment, whether it is punctuation.

    token_texts([b"a", "\u3002".encode()], [0, 1]) -> [{'text': 'a', 'fragment': False, 'punct': False},
                                                       {'text': '\u3002', 'fragment': False, 'punct': True}]
    """
    out = []
    for i in ids:
        text = show(pieces[i])
        bare = text.strip()
        out.append({"text": text, "fragment": is_fragment(pieces[i]),
                    "punct": bool(bare) and all(c in PUNCTUATION for c in bare)})
    return out


def holds_punctuation(pieces: list[bytes]) -> list[bool]:
    """Whether each token holds a punctuation character, alone or merged with others (「，將」).
    holds_punctuation([b"a", "\uff0c\u5c07".encode()]) -> [False, True]"""
    out = []
    for p in pieces:
        out.append(any(c in PUNCTUATION for c in show(p)))
    return out


def book_range(meta: dict, book: str, n_val: int) -> tuple[int, int]:
    """The book's validation tokens [start, end) in val.bin: meta.json's `val_token_range` in a
    multi-book work dir; the whole validation split when the work dir holds one corpus."""
    books = meta["split"].get("books")
    if not books or len(books) == 1:  # one corpus file: its validation split, whatever its name
        return 0, n_val
    for b in books:
        if b["file"] == book:
            return tuple(b["val_token_range"])
    raise ValueError(f"book {book!r} is not in meta.json; books: {[b['file'] for b in books]}")


class AttentionCapture:
    """Forward hooks on every block's attention: each pass's weights, (n_layer, H, T, T), recomputed from
    the module's input as Attention.forward computes them, and checked against the module's output.

    replace {layer index: [head index, ...]}: those heads' weights become the prefix average (1/(t+1) on
    every key j <= t) and the module's output is recomputed with them (the knockout); keep=False stores
    nothing (a batch of windows); scores=True also stores each pass's scores q.k / sqrt(hs), (H, T, T)."""

    def __init__(self, model, replace=None, keep=True, scores=False):
        self.weights = [None] * len(model.blocks)
        self.scores = [None] * len(model.blocks)
        self.replace, self.keep, self.keep_scores = replace or {}, keep, scores
        self.handles = [b.attn.register_forward_hook(self.hook(i)) for i, b in enumerate(model.blocks)]

    def hook(self, layer):
        def fn(module, args, output):
            x, cos, sin = args
            B, T, C = x.shape
            H = module.n_head
            q, k, v = module.qkv(x).split(C, dim=2)  # (B, T, C) each
            q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))  # (B, H, T, hs)
            k = module.smeared(k)  # the smeared-key model's mix (lab/model.py smear_keys), else k
            if cos is not None:  # None: a model without RoPE (lab/model.py pos="none" or "learned")
                q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)  # (B, H, T, hs)
            scores = q @ k.transpose(-2, -1) / math.sqrt(C // H)  # (B, H, T, T)
            causal = torch.ones(T, T, dtype=torch.bool).tril()  # (T, T) key j <= query t
            w = F.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)  # (B, H, T, T)
            y = (w @ v).transpose(1, 2).reshape(B, T, C)  # (B, T, C)
            assert torch.allclose(module.proj(y), output, atol=1e-5), "recomputed attention differs from the module's"
            if self.keep:
                self.weights[layer] = w[0].detach()  # (H, T, T)
            if self.keep_scores:
                self.scores[layer] = scores[0].detach()  # (H, T, T)
            heads = self.replace.get(layer)
            if not heads:
                return None  # the module's own output
            w = w.clone()
            w[:, heads] = (causal / causal.sum(-1, keepdim=True)).to(w.dtype)  # (T, T) the prefix average
            y = (w @ v).transpose(1, 2).reshape(B, T, C)  # (B, T, C)
            return module.proj(y)  # (B, T, C) replaces the module's output
        return fn

    def remove(self):
        for h in self.handles:
            h.remove()


@torch.no_grad()
def attention_of(model, ids: torch.Tensor) -> torch.Tensor:
    """Every layer's and head's weights for one sequence, (n_layer, H, T, T); the hooked logits must
    equal the plain ones."""
    plain, _ = model(ids[None])  # (1, T, V)
    cap = AttentionCapture(model)
    try:
        hooked, _ = model(ids[None])  # (1, T, V)
    finally:
        cap.remove()
    assert torch.equal(plain, hooked), "the hooked forward pass differs from the plain one"
    return torch.stack(cap.weights)  # (L, H, T, T)


def masks(ids: torch.Tensor, punct: torch.Tensor, with_punct: torch.Tensor | None = None) -> dict:
    """(T, T) key masks of each measure for one window (rows: queries, columns: keys j <= t).
    punct: each token is punctuation alone; with_punct: it holds a punctuation character (default punct).
    punctuation counts keys j <= t (the query itself included), punctuation_before and with_punctuation
    keys j < t.

    For ids [5, 7, 5, 7]: same_token[2] marks key 0 (the earlier 5); induction[2] marks key 1 (the token
    after that 5); induction[3] marks key 2 (after the earlier 7 at 1 comes 5 at 2).
    """
    T = len(ids)
    t = torch.arange(T)
    causal = t[None, :] <= t[:, None]  # (T, T)
    before = t[None, :] < t[:, None]  # (T, T) strictly earlier
    same = (ids[None, :] == ids[:, None]) & before  # (T, T) an earlier occurrence of the query's token
    after_same = torch.zeros(T, T, dtype=torch.bool)
    after_same[:, 1:] = same[:, :-1] & before[:, 1:]  # key j+1 follows an earlier occurrence at j, and j+1 < t
    return {"previous": t[None, :] == t[:, None] - 1, "self": t[None, :] == t[:, None],
            "first": (t[None, :] == 0) & (t[:, None] > 0), "same_token": same, "induction": after_same,
            "punctuation": causal & punct[None, :], "punctuation_before": before & punct[None, :],
            "with_punctuation": before & (punct if with_punct is None else with_punct)[None, :], "causal": causal}


def measure(model, val: torch.Tensor, punct_of: torch.Tensor, windows: list[tuple[int, int]],
            with_punct_of: torch.Tensor | None = None) -> dict:
    """Per-head averages over every query t >= 1 of the windows (t = 0 sees only itself), and the same
    averages for the content-blind prefix average (weight 1/(t+1) on every key j <= t). `same_token`
    and `induction` average over the queries that have such a key only."""
    L, H = len(model.blocks), model.blocks[0].attn.n_head
    sums = {m: torch.zeros(L, H, dtype=torch.float64) for m in MEASURES}
    blind = {m: 0.0 for m in MEASURES}
    counts = {"all": 0, "same_token": 0, "induction": 0}
    for a, b in windows:
        ids = val[a:b]
        T = len(ids)
        w = attention_of(model, ids).double()  # (L, H, T, T)
        mk = masks(ids, punct_of[ids], None if with_punct_of is None else with_punct_of[ids])
        t = torch.arange(T, dtype=torch.float64)
        uniform = mk["causal"].double() / (t + 1)[:, None]  # (T, T) the prefix average
        dist = (t[:, None] - t[None, :]).clamp(min=0)  # (T, T) look-back distance t - j
        rows = {"all": t > 0, "same_token": mk["same_token"].any(-1), "induction": mk["induction"].any(-1)}
        for m in MEASURES:
            key = dist if m == "distance" else mk[m].double()
            sel = rows.get(m, rows["all"])
            sums[m] += (w * key).sum(-1)[:, :, sel].sum(-1)  # (L, H)
            blind[m] += float((uniform * key).sum(-1)[sel].sum())
        for name, sel in rows.items():
            counts[name] += int(sel.sum())
    n = {m: counts.get(m, counts["all"]) for m in MEASURES}
    heads = [{"layer": l + 1, "head": h + 1, **{m: round(float(sums[m][l, h]) / max(n[m], 1), 4) for m in MEASURES}}
             for l in range(L) for h in range(H)]
    return {"heads": heads, "prefix_average": {m: round(blind[m] / max(n[m], 1), 4) for m in MEASURES},
            "queries": counts}


SATURATED = 0.99  # a query whose largest weight is at least this: its softmax is saturated (slope near 0)


def positional_fit(by_distance: torch.Tensor, queries_at: torch.Tensor, iters: int = 500) -> tuple[torch.Tensor, float]:
    """The best position-only weights for each head: one score s(d) per look-back distance d, a query t
    weighting key j by exp(s(t - j)) renormalised over j = 0..t, fitted to minimise the cross-entropy
    (equivalently the KL divergence) from the head's own weights summed over every query.

    That objective needs only two sums: by_distance (..., D), the head's weight at each distance summed
    over the queries, and queries_at (D,), how many queries sit at each position t: it is
    sum_t queries_at[t] * logsumexp(s[0..t]) - sum_d by_distance[d] * s[d], convex in s. Returns the
    scores (..., D) and the largest gradient entry per query at the end (near 0: fitted).

    For weights that are themselves position-only (by_distance = [5, 5], queries_at = [0, 10]: ten
    queries at t = 1, each half on itself), s(0) = s(1): the fit reproduces them.
    """
    W = by_distance.double()
    n = queries_at.double()
    total = float(n.sum())
    s = torch.zeros_like(W, requires_grad=True)
    opt = torch.optim.LBFGS([s], lr=1, max_iter=iters, tolerance_grad=1e-12, tolerance_change=1e-15,
                            history_size=50, line_search_fn="strong_wolfe")

    def objective():
        opt.zero_grad()
        f = ((torch.logcumsumexp(s, dim=-1) * n).sum() - (W * s).sum()) / total
        f.backward()
        return f

    opt.step(objective)
    objective()
    return s.detach(), float(s.grad.abs().max())


def positional_weights(s: torch.Tensor, T: int) -> torch.Tensor:
    """(..., T, T) the weights of position-only scores s (..., D >= T): row t holds exp(s(t - j)) / sum
    over j <= t, zero above the diagonal. positional_weights(torch.zeros(2), 2) -> [[1, 0], [0.5, 0.5]]"""
    t = torch.arange(T)
    dist = (t[:, None] - t[None, :]).clamp(min=0)  # (T, T)
    logits = s[..., dist].masked_fill(t[None, :] > t[:, None], float("-inf"))  # (..., T, T)
    return F.softmax(logits, dim=-1)


def content(model, val: torch.Tensor, windows: list[tuple[int, int]], fit_iters: int = 500) -> dict:
    """How far each head's weights are from position: over every query t >= 1 of the windows, the mean
    total-variation distance (half the summed absolute difference: the share of weight that would have
    to move) between the head's weights and (a) the best position-only weights (positional_fit, over the
    whole of these windows), (b) the prefix average, (c) the head's own weights averaged per (t, j) over
    the windows (the best weights that know only where the query and key sit in the window). Two passes:
    the first sums what the fits need, the second measures."""
    L, H = len(model.blocks), model.blocks[0].attn.n_head
    D = max(b - a for a, b in windows)
    by_distance = torch.zeros(L, H, D, dtype=torch.float64)
    queries_at = torch.zeros(D, dtype=torch.float64)
    by_place = torch.zeros(L, H, D, D, dtype=torch.float64)
    windows_at = torch.zeros(D, dtype=torch.float64)
    t_all = torch.arange(D)
    for a, b in windows:
        w = attention_of(model, val[a:b]).double()  # (L, H, T, T)
        T = b - a
        t = t_all[:T]
        dist = (t[:, None] - t[None, :]).clamp(min=0)  # (T, T)
        below = (t[None, :] <= t[:, None]) & (t[:, None] >= 1)  # (T, T) keys j <= t of queries t >= 1
        by_distance.index_add_(2, dist[below], w[:, :, below])
        queries_at[1:T] += 1
        by_place[:, :, :T, :T] += w
        windows_at[:T] += 1
    s, grad = positional_fit(by_distance, queries_at, fit_iters)
    place = by_place / windows_at.clamp(min=1)[:, None]  # (L, H, D, D) mean weight per (t, j)
    sums = {k: torch.zeros(L, H, dtype=torch.float64) for k in ("position", "prefix", "place", "kl_position")}
    n = 0
    for a, b in windows:
        T = b - a
        w = attention_of(model, val[a:b]).double()[:, :, 1:]  # (L, H, T-1, T) queries t >= 1
        fit = positional_weights(s, T)[:, :, 1:]  # (L, H, T-1, T)
        t = torch.arange(1, T, dtype=torch.float64)
        prefix = (torch.arange(T)[None, :] <= t[:, None]).double() / (t + 1)[:, None]  # (T-1, T)
        sums["position"] += 0.5 * (w - fit).abs().sum(-1).sum(-1)
        sums["prefix"] += 0.5 * (w - prefix).abs().sum(-1).sum(-1)
        sums["place"] += 0.5 * (w - place[:, :, 1:T, :T]).abs().sum(-1).sum(-1)
        sums["kl_position"] += torch.where(w > 0, w * (w.clamp(min=1e-300).log() - fit.clamp(min=1e-300).log()),
                                           torch.zeros_like(w)).sum(-1).sum(-1)
        n += T - 1
    heads = [{"layer": l + 1, "head": h + 1, "tv_position": round(float(sums["position"][l, h]) / n, 4),
              "tv_prefix": round(float(sums["prefix"][l, h]) / n, 4), "tv_place": round(float(sums["place"][l, h]) / n, 4),
              "kl_position": round(float(sums["kl_position"][l, h]) / n, 4)}
             for l in range(L) for h in range(H)]
    fitted = [{"layer": l + 1, "head": h + 1, "scores": [round(float(x), 3) for x in s[l, h] - s[l, h].max()]}
              for l in range(L) for h in range(H)]
    return {"heads": heads, "queries": n, "fit_gradient": float(f"{grad:.2g}"), "fitted": fitted}


def score_stats(model, val: torch.Tensor, windows: list[tuple[int, int]], factor: float = 1.0) -> dict:
    """Per head, over every query t >= 1 of the windows: the standard deviation of its scores
    q.k / sqrt(hs) over the keys it sees (root mean square over queries; a shift common to a row does not
    change its softmax), its largest weight (mean), the share of queries whose largest weight is at least
    SATURATED, and the softmax's slope sum_j p_j (1 - p_j) = 1 - sum_j p_j^2 (mean; 1 - 1/(t+1) when the
    weights are the prefix average, 0 when one key takes everything). factor multiplies the scores first
    (factor = sqrt(hs): what the same model would give without the division)."""
    L, H = len(model.blocks), model.blocks[0].attn.n_head
    sums = {k: torch.zeros(L, H, dtype=torch.float64) for k in ("var", "top", "saturated", "slope")}
    n = 0
    for a, b in windows:
        T = b - a
        cap = AttentionCapture(model, keep=False, scores=True)
        try:
            with torch.no_grad():
                model(val[a:b][None])
        finally:
            cap.remove()
        sc = torch.stack(cap.scores).double()[:, :, 1:] * factor  # (L, H, T-1, T) queries t >= 1
        t = torch.arange(1, T)
        causal = torch.arange(T)[None, :] <= t[:, None]  # (T-1, T)
        k = causal.sum(-1).double()  # (T-1,) keys each query sees
        mean = (sc * causal).sum(-1) / k  # (L, H, T-1)
        sums["var"] += (((sc - mean[..., None]) ** 2 * causal).sum(-1) / k).sum(-1)
        p = F.softmax(sc.masked_fill(~causal, float("-inf")), dim=-1)  # (L, H, T-1, T)
        top = p.max(-1).values
        sums["top"] += top.sum(-1)
        sums["saturated"] += (top >= SATURATED).double().sum(-1)
        sums["slope"] += (1 - (p ** 2).sum(-1)).sum(-1)
        n += T - 1
    heads = [{"layer": l + 1, "head": h + 1, "score_sd": round(math.sqrt(float(sums["var"][l, h]) / n), 4),
              "top_weight": round(float(sums["top"][l, h]) / n, 4), "saturated": round(float(sums["saturated"][l, h]) / n, 4),
              "slope": round(float(sums["slope"][l, h]) / n, 4)}
             for l in range(L) for h in range(H)]
    return {"heads": heads, "queries": n}


def prefix_average_scores(windows: list[tuple[int, int]]) -> dict:
    """score_stats' top weight and slope for the prefix average itself (1/(t+1) on every j <= t)."""
    top = slope = 0.0
    n = 0
    for a, b in windows:
        for t in range(1, b - a):
            top += 1 / (t + 1)
            slope += 1 - 1 / (t + 1)
            n += 1
    return {"top_weight": round(top / n, 4), "slope": round(slope / n, 4)}


def window_losses(model, val: torch.Tensor, segment: tuple[int, int], block_size: int, replace=None,
                  batch_size: int = 32) -> tuple[torch.Tensor, torch.Tensor]:
    """Next-token cross-entropy summed per window, and each window's token count, over the windows
    train.evaluate reads in one segment (consecutive, non-overlapping, block_size tokens, every token but
    the segment's first predicted once); replace: heads given the prefix average (AttentionCapture)."""
    part = val[segment[0]:segment[1]]
    starts = list(range(0, len(part) - 1, block_size))
    sums, counts = torch.zeros(len(starts), dtype=torch.float64), torch.zeros(len(starts), dtype=torch.float64)
    cap = AttentionCapture(model, replace=replace, keep=False) if replace else None
    try:
        with torch.no_grad():
            for i in range(0, len(starts), batch_size):
                chunk = list(range(i, min(i + batch_size, len(starts))))
                lengths = [min(block_size, len(part) - 1 - starts[c]) for c in chunk]
                for length in sorted(set(lengths)):  # the last window may be shorter
                    group = [c for c, n in zip(chunk, lengths) if n == length]
                    idx = torch.stack([part[starts[c]: starts[c] + length] for c in group])  # (b, T)
                    tgt = torch.stack([part[starts[c] + 1: starts[c] + length + 1] for c in group])  # (b, T)
                    logits, _ = model(idx)  # (b, T, V)
                    ce = F.cross_entropy(logits.float().flatten(0, 1), tgt.flatten(), reduction="none")  # (b*T,)
                    sums[group] = ce.view(len(group), length).double().sum(-1)
                    counts[group] = float(length)
    finally:
        if cap:
            cap.remove()
    return sums, counts


def knockout(model, val: torch.Tensor, segment: tuple[int, int], block_size: int) -> dict:
    """The validation loss over one book's validation tokens (the windows of train.evaluate, the loss the
    runs report per book) of the model as trained, with each head in turn given the prefix average's
    weights, and with every head at once; no training. Beside each knockout's loss, the standard error of
    its difference from the intact loss over the windows (the same text both ways: the spread of the
    per-window differences, divided by the square root of the number of windows). 16 heads: 18 passes."""
    L, H = len(model.blocks), model.blocks[0].attn.n_head
    base, counts = window_losses(model, val, segment, block_size)
    n = float(counts.sum())
    check = train.evaluate(model, val, block_size, torch.device("cpu"), segments=[segment])[1][0]
    assert abs(float(base.sum()) / n - check) < 1e-5, "the knockout's windows are not train.evaluate's"

    def row(replace):
        sums, _ = window_losses(model, val, segment, block_size, replace)
        diff = (sums - base) / counts  # (windows,) per-token difference in each window
        return {"val_loss": round(float(sums.sum()) / n, 4), "delta": round(float((sums - base).sum()) / n, 4),
                "se": round(float(diff.std()) / math.sqrt(len(diff)), 4)}

    heads = [{"layer": l + 1, "head": h + 1, **row({l: [h]})} for l in range(L) for h in range(H)]
    return {"val_loss": round(float(base.sum()) / n, 4), "windows": len(base), "heads": heads,
            "all_heads": row({l: list(range(H)) for l in range(L)})}


def sentences(texts: list[str]) -> list[tuple[int, int]]:
    """Token ranges [a, b) of the clean sentences: a sentence ends with a token holding 。！？ or a line
    break; it is kept when that token's last character is one of CLEAN_END or a space and the token
    before the sentence ended the same way (BPE may merge a sentence's end with the next one's first
    character, e.g. 「。孔」: both sentences around such a token are skipped).

    sentences(["a", "\u3002", "b", "c", "\uff01", "d"]) -> [(0, 2), (2, 5), (5, 6)]
    sentences(["a", "\u3002b", "c", "\u3002", "d", "\u3002"]) -> [(4, 6)]
    """
    out, a, clean = [], 0, True
    for i, text in enumerate(texts):
        if any(c in SENTENCE_END for c in text):
            ends = text[-1] in CLEAN_END or text[-1].isspace()
            if clean and ends:
                out.append((a, i + 1))
            a, clean = i + 1, ends
    if a < len(texts) and clean:
        out.append((a, len(texts)))
    return out


def repeats(ids: list[int], punct: list[bool]) -> int:
    """Tokens that repeat an earlier token of the passage, punctuation aside. repeats([1, 2, 1, 1], [False] * 4) -> 2"""
    seen, n = set(), 0
    for i, p in zip(ids, punct):
        if not p:
            n += i in seen
            seen.add(i)
    return n


def pick_passages(ids: list[int], toks: list[dict], cfg: Config) -> tuple[list[tuple[int, int]], int]:
    """The passages: runs of whole consecutive sentences of min..max tokens with no fragment token, the `passages`
    with the most repeated non-punctuation tokens (ties: the earlier), never overlapping."""
    sents = sentences([t["text"] for t in toks])
    cands = []
    for i, (a, _) in enumerate(sents):
        best, end = None, a
        for s, b in sents[i:]:
            if s != end or b - a > cfg.max_tokens:  # a gap: a sentence skipped for its unclean start
                break
            end = b
            if b - a >= cfg.min_tokens:
                best = b
        if best is not None and not any(t["fragment"] for t in toks[a:best]):
            cands.append((a, best))
    ranked = sorted(cands, key=lambda c: (-repeats(ids[c[0]:c[1]], [t["punct"] for t in toks[c[0]:c[1]]]), c[0]))
    chosen = []
    for a, b in ranked:
        if all(b <= c or a >= d for c, d in chosen):
            chosen.append((a, b))
        if len(chosen) == cfg.passages:
            break
    return sorted(chosen), len(cands)


# The control: attention replaced by the plain average of the prefix.


def train_control(cfg: Config) -> list[dict]:
    """Train (or read back) the control's seeds 0..control_seeds-1 in the work dir with the settings
    the baseline's first finished run recorded: the same data, schedule and, seed for seed, batches."""
    if cfg.control not in ATTENTION_VARIANTS:
        raise ValueError(f"control={cfg.control!r}; known: {sorted(ATTENTION_VARIANTS)}")
    work = Path(cfg.work_dir)
    done = sorted(work.glob("baseline-s*/result.json"))
    if not done:
        raise FileNotFoundError(f"{work}: no finished baseline run to take the control's training settings from")
    recorded = json.loads(done[0].read_text())["config"]
    known = {f.name for f in fields(train.TrainConfig)}
    base = train.TrainConfig(**{k: v for k, v in recorded.items() if k in known})
    runs = [replace(base, data_dir=str(work / "data"), out_dir=str(run_path(work, cfg.control, s)), variant=cfg.control,
                    seed=s, threads=cfg.threads, progress=cfg.progress, bar_position=0)
            for s in range(cfg.control_seeds)]
    return train_runs(runs)


def history_rows(r: dict) -> list[dict]:
    return [{k: e[k] for k in ("step", "tokens", "epochs", "train_loss", "val_loss")} for e in r["history"]]


def arm(variant: str, results: list[dict]) -> dict:
    """One arm of the control comparison: its seeds' final losses and histories (seed order)."""
    results = sorted(results, key=lambda r: r["seed"])
    return {"variant": variant, "params": results[0]["params"], "model_config": results[0]["model_config"],
            "seeds": [r["seed"] for r in results], "val_losses": [r["val_loss"] for r in results],
            "train_losses": [r["train_loss"] for r in results], "histories": [history_rows(r) for r in results],
            "wall_seconds": [round(r["wall_seconds"], 1) for r in results]}


def control_section(cfg: Config, control: list[dict]) -> dict:
    """The baseline's seeds in the work dir against the control's: the page reads them by the seeds
    protocol (widgets/common/seeds.py)."""
    work = Path(cfg.work_dir)
    base = [json.loads(p.read_text()) for p in sorted(work.glob("baseline-s*/result.json"))]
    if len(base) < 2:
        raise FileNotFoundError(f"{work}: fewer than 2 finished baseline runs; the seed band needs the baseline's seeds")
    check_same_settings(base + control)
    return {"rule": ("the control: every head's softmax(q k^T / sqrt(hs)) weights replaced by 1/(t+1) on every"
                     " position 0..t (the plain average of the prefix's values; no W_q, W_k); the FFN widened to"
                     f" d_ff={control[0]['model_config']['d_ff']} to give back their weights. Trained with the"
                     " baseline's settings, seed for seed (same batches)."),
            "baseline": arm("baseline", base), "control": arm(cfg.control, control)}


def export(cfg: Config, invoked: str) -> dict:
    work = Path(cfg.work_dir)
    data, run_dir = work / "data", work / f"{cfg.variant}-s{cfg.seed}"
    if not (run_dir / "result.json").exists():
        raise FileNotFoundError(f"{run_dir}/result.json is missing: the run is not finished")
    t0 = time.time()
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    model = load_model(run_dir)
    mc = model.cfg
    meta = json.loads((data / "meta.json").read_text())
    pieces = [bytes.fromhex(h) for h in json.loads((data / "token_bytes.json").read_text())]
    val = torch.from_numpy(np.fromfile(data / "val.bin", dtype=np.uint16).astype(np.int64))  # (N,)
    if cfg.max_tokens > mc.block_size:
        raise ValueError(f"max_tokens={cfg.max_tokens} > the model's context of {mc.block_size} tokens")
    lo, hi = book_range(meta, cfg.book, len(val))
    vocab = token_texts(pieces, range(len(pieces)))
    punct_of = torch.tensor([t["punct"] for t in vocab])  # (V,)

    block = mc.block_size
    windows = [(s, min(s + block, hi)) for s in range(lo, hi, block) if min(s + block, hi) - s > 1]
    if cfg.windows:
        windows = windows[: cfg.windows]
    measured = measure(model, val, punct_of, windows, torch.tensor(holds_punctuation(pieces)))
    contents = content(model, val, windows, cfg.fit_iters)
    trained_scores = score_stats(model, val, windows)
    torch.manual_seed(cfg.seed)  # the run's weights at step 0: train.run seeds torch so before building the model
    init = GPT(mc).eval()
    hd = mc.d_model // mc.n_head
    init_scores = {"scaled": score_stats(init, val, windows), "unscaled": score_stats(init, val, windows, math.sqrt(hd))}
    knock = knockout(model, val, (lo, hi), mc.block_size)
    result = json.loads((run_dir / "result.json").read_text())
    by_book = result.get("val_by_book") or {}
    reported = by_book.get(cfg.book, next(iter(by_book.values())) if len(by_book) == 1 else None)
    if reported is not None and abs(knock["val_loss"] - reported) > 2e-4:
        raise AssertionError(f"the knockout's intact loss {knock['val_loss']} is not the run's own {reported} on {cfg.book}")

    book_ids = val[lo:hi].tolist()
    chosen, n_cands = pick_passages(book_ids, [vocab[i] for i in book_ids], cfg)
    if not chosen:
        raise ValueError(f"no passage of {cfg.min_tokens}-{cfg.max_tokens} tokens without a fragment in the validation"
                         f" text of {cfg.book if meta['split'].get('books') else meta['corpus']['file']}")
    passages = []
    for a, b in chosen:
        ids = val[lo + a: lo + b]
        w = attention_of(model, ids)  # (L, H, T, T)
        permille = (w * 1000).round().to(torch.int64)
        passages.append({
            "val_token_offset": a, "text": b"".join(pieces[i] for i in ids.tolist()).decode("utf-8", errors="replace"),
            "tokens": [vocab[i] for i in ids.tolist()],
            "weights": [[[permille[l, h, t, : t + 1].tolist() for t in range(len(ids))] for h in range(mc.n_head)]
                        for l in range(mc.n_layer)]})

    files = meta["corpus"].get("files", [])
    book_meta = files[0] if len(files) == 1 else next((f for f in files if f["file"] == cfg.book), None)
    corpus = ({"file": book_meta["file"], "sha256": book_meta["sha256"]} if book_meta
              else {"file": meta["corpus"]["file"], "sha256": meta["corpus"]["sha256"]})
    doc = {
        "schema_version": 1,
        "model": run_record(run_dir),
        "model_config": {"n_layer": mc.n_layer, "n_head": mc.n_head, "d_model": mc.d_model,
                         "head_dim": mc.d_model // mc.n_head, "block_size": mc.block_size, "vocab_size": mc.vocab_size},
        "corpus": {**corpus, "books": len(meta["corpus"].get("files", [])) or 1,
                   "val_tokens": hi - lo, "measured_tokens": sum(b - a for a, b in windows)},
        "punctuation": PUNCTUATION,
        "measures": {"rule": ("per head, the mean over every query t >= 1 of the book's validation windows (non-overlapping,"
                              " block_size tokens, as the val loss) of the weight on: the previous token (previous), the"
                              " query itself (self), the window's first token (first), earlier occurrences of the query's"
                              " own token (same_token, over queries that have one), the tokens right after such"
                              " occurrences (induction, over queries that have one), punctuation tokens (punctuation;"
                              " the query itself counted when it is one), punctuation tokens before the query"
                              " (punctuation_before), tokens before the query that hold a punctuation character alone or"
                              " merged with others, such as '，將' (with_punctuation);"
                              " distance: the mean of t - j under the weights. prefix_average: the same for weights"
                              " 1/(t+1) on every j <= t."),
                     "windows": len(windows), **measured},
        "content": {"rule": ("per head, over every query t >= 1 of the same windows, the mean total-variation distance"
                             " (half the summed absolute difference: the share of weight that would have to move) from the"
                             " head's weights to: tv_position, the best position-only weights (one score s(d) per look-back"
                             " distance d, key j of query t weighted exp(s(t - j)) renormalised over j <= t, fitted to the"
                             " head over every query of these windows by minimising the KL divergence from its weights;"
                             " kl_position is that divergence, nats); tv_prefix, the prefix average (1/(t+1) on every j <="
                             " t; itself position-only, so its own tv_position is 0); tv_place, the head's weights averaged"
                             " per (t, j) over the windows (position in the window, not distance). fitted: each head's"
                             " s(d), max 0."),
                    **contents},
        "scores": {"rule": ("per head, over every query t >= 1 of the same windows: score_sd, the standard deviation of"
                            " the scores q.k / sqrt(head_dim) over the keys the query sees (root mean square over"
                            " queries); top_weight, the mean largest weight; saturated, the share of queries whose"
                            f" largest weight is at least {SATURATED}; slope, the mean of sum_j p_j (1 - p_j) = 1 -"
                            " sum_j p_j^2. trained: the run measured; init: the same recipe's weights at step 0 (torch"
                            " seeded with the run's seed, as train.run does), scaled as the model computes them and"
                            " unscaled (the scores times sqrt(head_dim): no division); prefix_average: the same for"
                            " weights 1/(t+1)."),
                   "saturated_at": SATURATED, "trained": trained_scores, "init": init_scores,
                   "prefix_average": prefix_average_scores(windows)},
        "knockout": {"rule": (f"the validation loss over {cfg.book}'s validation tokens (train.evaluate, the run's own"
                              " per-book figure), with one head at a time given the prefix average's weights (1/(t+1) on"
                              " every j <= t; its values and everything else as trained), and with every head at once;"
                              " no training. delta: that loss minus the intact one (val_loss); se: the standard error of"
                              " delta over the windows (the standard deviation of the per-window differences per token,"
                              " over the square root of the number of windows)"), "book": cfg.book, "tokens": hi - lo, "reported": reported, **knock},
        "passages": passages,
        "selection": {"rule": (f"runs of whole consecutive sentences (each ending with a token holding one of 。！？ or a"
                               " line break whose last character is one of 。！？」』 or a space, after a token that ends the"
                               f" same way) of {cfg.min_tokens}-{cfg.max_tokens} tokens without a fragment token, in {cfg.book}'s"
                               " validation tokens; the ones with the most tokens that repeat an earlier token of the"
                               " passage (punctuation aside), earlier first on ties, not overlapping; each run through"
                               " the model on its own"), "candidates": n_cands},
        "weights_unit": "per mille, rounded: row t of a matrix holds query t's weights on keys 0..t",
        "export_config": portable_config(asdict(cfg)),
        "seconds": round(time.time() - t0, 1),
        **provenance(cfg.command or invoked, git_lab_commit()),
    }
    return doc


KEEP = "keep"  # control=keep: the control block of the export this one replaces, as it is


def kept_control(cfg: Config) -> dict:
    """The control block of the export at out_dir that this run replaces (control=keep): its runs need
    not be in the work dir (a later work dir may hold other seeds); read before anything is written."""
    path = Path(cfg.out_dir) / Path(FILES[cfg.file]).name
    if not path.exists():
        raise FileNotFoundError(f"control=keep: {path} does not exist, so there is no control block to keep")
    old = json.loads(path.read_text(encoding="utf-8"))
    if "control" not in old:
        raise ValueError(f"control=keep: {path} has no control block")
    return old["control"]


def check_kept(control: dict, model: dict) -> dict:
    """A kept control block pairs with the run measured: its baseline arm holds this seed with this
    run's final validation and training loss (the same model, trained again bit for bit or read back)."""
    base = control["baseline"]
    if model["variant"] != "baseline" or model["seed"] not in base["seeds"]:
        raise ValueError(f"control=keep: the kept control's baseline seeds {base['seeds']} do not hold"
                         f" {model['variant']} seed {model['seed']}")
    i = base["seeds"].index(model["seed"])
    got = (model["val_loss"], model["train_loss"])
    want = (base["val_losses"][i], base["train_losses"][i])
    if any(abs(a - b) > 1e-9 for a, b in zip(got, want)):
        raise ValueError(f"control=keep: seed {model['seed']} ends at (val, train) {got} here but {want} in the kept"
                         " control: not the same model")
    return control


def run_export(cfg: Config, invoked: str = "python -m lab attention") -> dict:
    print("attention config:", json.dumps(asdict(cfg), ensure_ascii=False))
    if cfg.file not in FILES:
        raise SystemExit(f"file={cfg.file!r}; known: {sorted(FILES)}")
    kept = kept_control(cfg) if cfg.control == KEEP else None
    control = train_control(cfg) if cfg.control and cfg.control != KEEP and cfg.control_seeds else []
    doc = export(cfg, invoked)
    if control:
        doc["control"] = control_section(cfg, control)
    if kept:
        doc["control"] = check_kept(kept, doc["model"])
    path = schema.write_validated(FILES[cfg.file], doc, cfg.out_dir)
    print(f"attention: wrote {path} ({path.stat().st_size:,} B) in {doc['seconds']} s")
    return doc
