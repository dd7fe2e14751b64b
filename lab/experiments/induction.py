"""The induction-head scan (C3 第 3 课, `python -m lab induction`): do our trained models copy? Trains nothing.

It reads finished runs (`work/<variant>-s<seed>/ckpt.pt` and `result.json`, each trained to its last step;
`runs=baseline:0,nope:0` names them, default every finished run in the work dir) and the work dir's prepared
data, and writes `out/induction.json` (next-wave-anchors-2.md §2.5 step A; Olsson et al. 2022):

- `repeat`: `sequences` sequences of `length` (L) random tokens, drawn uniformly from the vocabulary (special
  tokens aside; fragments too unless fragments=false), each followed by the same L tokens, the same sequences
  for every run (seeded). The mean next-token loss of the second half's predictions (positions L..2L-2
  predicting tokens L+1..2L-1) minus the first half's (positions 0..L-2): the repeat gain. A model that copies
  from the first copy has a strongly negative gain; a content-blind one about 0.
- `heads`: per layer and head, over the second half's queries t = L..2L-1 of those sequences, the mean weight
  on key t-L+1 (the token after the earlier copy of the query's token: prefix matching) and on key t-1 (the
  previous token); `reference`: the same two figures for the prefix average (weight 1/(t+1) on every j <= t).
- `text` (no model): how much copying the validation text itself offers. In each of its windows, at every
  position whose token occurred earlier in the window, the copy guess is the token that followed the latest
  earlier occurrence; its share of right guesses over all positions, and how many of those the bigram guess
  (the training split's most frequent next token) gets right too: what an induction head adds over a bigram.
- `icl`: on natural text (the validation split's non-overlapping windows of block_size tokens inside one book,
  `icl_windows` of them spread evenly), the mean loss at positions late_from..late_to minus early_from..early_to
  (Olsson's 500th minus 50th token, scaled to our 256-token window: 200-250 minus 20-30).

The weights are attention.py's AttentionCapture (recomputed from each attention module's input and checked
against its output); a `prefix_mean` run's are 1/(t+1) by construction (its attention has no query or key).
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from lab import schema, train
from lab.experiments.attention import AttentionCapture
from lab.experiments.common import (TRAJECTORY_FREE, finite, git_lab_commit, hardware, load_model, portable_config,
                                    provenance)
from lab.experiments.ffn import is_fragment
from lab.experiments.rope import corpus_block, finished_run, windows_in
from lab.prepare import val_segments

NAME = "induction"
DEFAULT_OUT = "data/real-model/induction"
FILE = "induction/induction.json"
CURVES_FILE = "induction/curves.json"
PARTS = ("final", "curve")
SNAPSHOT = re.compile(r"^step(?P<step>\d+)\.pt$")
RUN_DIR = re.compile(r"^(?P<variant>.+)-s(?P<seed>\d+)$")


@dataclass
class Config:
    work_dir: str = "lab/runs"  # --work: data/ and the run directories
    out_dir: str = DEFAULT_OUT  # --out
    runs: str = ""  # "variant:seed,..." (e.g. baseline:0,baseline:4,nope:0); "" = every finished run in the work dir
    sequences: int = 200  # random sequences, each of `length` tokens followed by the same tokens
    length: int = 64  # L: the sequence is 2L tokens (at most block_size)
    seed: int = 0  # the sequences' generator (the same sequences for every run)
    fragments: bool = True  # draw byte-fragment tokens too (false: whole characters only, as the anchors proposed)
    icl_windows: int = 500  # validation windows for the ICL score, spread evenly (0 = every one)
    early_from: int = 20  # the ICL score's early positions (input positions, 0-based, inclusive)
    early_to: int = 30
    late_from: int = 200  # ... and its late ones
    late_to: int = 250
    threads: int = 0  # torch's CPU threads (0 = torch's default)
    command: str = ""  # the command to record (default: this process's command line)
    part: str = "final"  # "final": induction.json, the finished runs; "curve": curves.json, the same measures on
    #                      every snapshot a run kept while training (train snapshot_every=50), for the runs named
    curve_icl_windows: int = 100  # part=curve: validation windows for each snapshot's ICL score


# --- the measures (pure functions of tensors: the tests feed them hand-built ones) ---------------------------


def draw_sequences(eligible: torch.Tensor, count: int, length: int, seed: int) -> torch.Tensor:
    """(count, 2 * length) token ids: `length` drawn uniformly from `eligible` (with replacement), then the
    same again. The same seed gives the same sequences."""
    gen = torch.Generator().manual_seed(seed)
    half = eligible[torch.randint(len(eligible), (count, length), generator=gen)]  # (N, L)
    return torch.cat([half, half], dim=1)  # (N, 2L)


def repeat_losses(logits: torch.Tensor, ids: torch.Tensor, length: int) -> tuple[float, float]:
    """Mean next-token loss (nats) of the first half's predictions (positions 0..L-2 predicting 1..L-1) and of
    the second half's (positions L..2L-2 predicting L+1..2L-1); position L-1 (predicting the repeat's first
    token, which nothing announces) is in neither. logits (N, 2L, V), ids (N, 2L)."""
    loss = F.cross_entropy(logits[:, :-1].double().flatten(0, 1), ids[:, 1:].flatten(), reduction="none")
    loss = loss.view(ids.shape[0], -1)  # (N, 2L-1): column t is position t's prediction of token t+1
    return float(loss[:, : length - 1].mean()), float(loss[:, length: 2 * length - 1].mean())


def head_scores(weights: torch.Tensor, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per head, the mean over second-half queries t = L..2L-1 of the weight on key t-L+1 (prefix matching:
    the token after the earlier copy of token t) and on key t-1 (the previous token). weights (..., 2L, 2L),
    rows are queries; returns two (...) tensors."""
    t = torch.arange(length, 2 * length)
    return weights[..., t, t - length + 1].mean(-1), weights[..., t, t - 1].mean(-1)


def prefix_average(T: int) -> torch.Tensor:
    """(T, T) the content-blind weights: 1/(t+1) on every key j <= t. prefix_average(2) -> [[1, 0], [.5, .5]]"""
    causal = torch.ones(T, T, dtype=torch.float64).tril()
    return causal / causal.sum(-1, keepdim=True)


@torch.no_grad()
def weights_and_logits(model, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One sequence (T,): every layer's and head's attention weights (n_layer, H, T, T) and the logits (T, V)."""
    T = len(ids)
    if model.cfg.attn_mix == "prefix_mean":  # the control: no query or key, the prefix average in every head
        logits, _ = model(ids[None])
        return prefix_average(T).float().expand(model.cfg.n_layer, model.cfg.n_head, T, T), logits[0]
    cap = AttentionCapture(model)
    try:
        logits, _ = model(ids[None])  # (1, T, V); the hooks only read
    finally:
        cap.remove()
    return torch.stack(cap.weights), logits[0]


@torch.no_grad()
def repeat_scan(model, seqs: torch.Tensor, length: int) -> dict:
    """The repeat gain and each head's prefix-matching and previous-token shares on the sequences (N, 2L)."""
    pm = prev = first = second = 0.0
    for ids in seqs:  # one at a time: AttentionCapture keeps one sequence's weights
        w, logits = weights_and_logits(model, ids)
        p, q = head_scores(w.double(), length)  # (n_layer, H) each
        a, b = repeat_losses(logits[None], ids[None], length)
        pm, prev, first, second = pm + p, prev + q, first + a, second + b
    n = len(seqs)  # every sequence has L-1 predictions in each half: the mean of means is the mean
    pm, prev, first, second = pm / n, prev / n, first / n, second / n
    heads = [{"layer": l + 1, "head": h + 1, "prefix_matching": round(float(pm[l, h]), 4),
              "previous": round(float(prev[l, h]), 4)} for l in range(pm.shape[0]) for h in range(pm.shape[1])]
    return {"repeat": {"first": round(first, 4), "second": round(second, 4), "gain": round(second - first, 4)},
            "heads": heads}


@torch.no_grad()
def position_losses(model, val: torch.Tensor, starts: list[int], T: int, batch: int = 16) -> torch.Tensor:
    """(T,) the mean next-token loss at each input position over windows val[s : s + T + 1]."""
    total = torch.zeros(T, dtype=torch.float64)
    for i in range(0, len(starts), batch):
        win = torch.stack([val[s: s + T + 1] for s in starts[i: i + batch]])  # (B, T+1)
        logits, _ = model(win[:, :-1])  # (B, T, V)
        total += F.cross_entropy(logits.double().transpose(1, 2), win[:, 1:], reduction="none").sum(0)
    return total / len(starts)


def icl_score(by_position: torch.Tensor, early: tuple[int, int], late: tuple[int, int]) -> dict:
    """Mean loss at positions late[0]..late[1] minus early[0]..early[1] (inclusive)."""
    e = float(by_position[early[0]: early[1] + 1].mean())
    lt = float(by_position[late[0]: late[1] + 1].mean())
    return {"early": round(e, 4), "late": round(lt, 4), "score": round(lt - e, 4)}


def text_repeats(train_ids: torch.Tensor, val: torch.Tensor, starts: list[int], block: int) -> dict:
    """What copying earns on the text itself, with no model: over every position t of the windows at `starts`
    (block inputs, +1 target), `repeated` counts those whose token occurred earlier in the window; `copy_right`
    those where the token after its latest earlier occurrence is the next token; `bigram_right` where the
    training split's most frequent successor of the token is; `both_right` where both are."""
    V = int(max(train_ids.max(), val.max())) + 1
    counts = torch.bincount(train_ids[:-1] * V + train_ids[1:], minlength=V * V).view(V, V)
    bigram = counts.argmax(1).tolist()  # each token's most frequent successor in the training split
    n = repeated = copy_right = bigram_right = both_right = 0
    for start in starts:
        w = val[start: start + block + 1].tolist()
        last = {}
        for t in range(block):
            x, target = w[t], w[t + 1]
            b = bigram[x] == target
            n, bigram_right = n + 1, bigram_right + b
            if x in last:
                repeated += 1
                if w[last[x] + 1] == target:
                    copy_right, both_right = copy_right + 1, both_right + b
            last[x] = t
    return {"positions": n, "repeated": repeated, "copy_right": copy_right, "bigram_right": bigram_right,
            "both_right": both_right}


# --- the runs and the export ---------------------------------------------------------------------------------


def chosen_runs(work: Path, runs: str) -> tuple[list[tuple[str, int]], list[str]]:
    """(variant, seed) of the runs to scan, and the run directories left out as not finished. Named runs must
    be finished; by default every finished `<variant>-s<seed>/` of the work dir, sorted."""
    if runs:
        named = []
        for item in filter(None, (x.strip() for x in runs.split(","))):
            variant, _, seed = item.rpartition(":")
            if not variant or not seed.isdigit():
                raise SystemExit(f"runs: expected VARIANT:SEED, got {item!r}")
            named.append((variant, int(seed)))
        return named, []
    found, skipped = [], []
    for d in sorted(p for p in work.iterdir() if p.is_dir()):
        m = RUN_DIR.match(d.name)
        if not m:
            continue
        try:
            finished_run(d)
            found.append((m["variant"], int(m["seed"])))
        except (FileNotFoundError, ValueError):
            skipped.append(d.name)
    return sorted(found), skipped


def eligible_tokens(data: Path, fragments: bool) -> tuple[torch.Tensor, int]:
    """The token ids the sequences draw from (every id but the tokenizer's special tokens, and but byte
    fragments when fragments is false), and how many special tokens were left out."""
    pieces = [bytes.fromhex(h) for h in json.loads((data / "token_bytes.json").read_text())]
    special = {t["id"] for t in json.loads((data / "tokenizer.json").read_text(encoding="utf-8")).get("added_tokens") or []}
    ids = [i for i, p in enumerate(pieces) if i not in special and (fragments or not is_fragment(p))]
    return torch.tensor(ids), len(special)


def check_ranges(cfg: Config, block_size: int) -> None:
    if not (2 <= cfg.length and 2 * cfg.length <= block_size):
        raise ValueError(f"length={cfg.length}: the sequence and its repeat (2 x length) must fit the context of"
                         f" {block_size} tokens")
    for name, a, b in (("early", cfg.early_from, cfg.early_to), ("late", cfg.late_from, cfg.late_to)):
        if not 0 <= a <= b < block_size:
            raise ValueError(f"{name}_from={a}, {name}_to={b}: input positions 0 <= from <= to < block_size"
                             f" ({block_size})")


def shared_settings(results: list[dict]) -> dict:
    """The training settings every run shares (those that change a trajectory), as the export records them."""
    configs = [{k: v for k, v in {**train.LATER_FIELDS, **r["config"]}.items() if k not in TRAJECTORY_FREE}
               for r in results]
    return portable_config({k: v for k, v in configs[0].items() if all(c.get(k) == v for c in configs)})


def scan_inputs(cfg: Config, work: Path, pairs: list[tuple[str, int]]):
    """What both parts read: each run's result (a named run not finished is refused here), the work dir's
    prepared data (meta, validation tokens and their per-book segments) and the random sequences."""
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    results = [finished_run(work / f"{v}-s{s}") for v, s in pairs]
    data = work / "data"
    meta = json.loads((data / "meta.json").read_text())
    val = train.load_tokens(data, "val")
    segments = [(a, b) for _, a, b in val_segments(meta)]
    eligible, n_special = eligible_tokens(data, cfg.fragments)
    seqs = draw_sequences(eligible, cfg.sequences, cfg.length, cfg.seed)
    return results, meta, val, segments, eligible, n_special, seqs


def export(cfg: Config, invoked: str) -> dict:
    work = Path(cfg.work_dir)
    t0 = time.time()
    pairs, skipped = chosen_runs(work, cfg.runs)
    if not pairs:
        raise FileNotFoundError(f"{work}: no finished run to scan")
    results, meta, val, segments, eligible, n_special, seqs = scan_inputs(cfg, work, pairs)
    shared = shared_settings(results)
    rows = []
    for (variant, seed), result in zip(pairs, results):
        t1 = time.time()
        model = load_model(work / f"{variant}-s{seed}")
        mc = model.cfg
        check_ranges(cfg, mc.block_size)
        if mc.vocab_size < int(eligible.max()) + 1:
            raise ValueError(f"{variant}-s{seed}: vocabulary of {mc.vocab_size}, but the work dir's tokenizer has more")
        scan = repeat_scan(model, seqs, cfg.length)
        starts = windows_in(segments, mc.block_size, cfg.icl_windows)
        if not starts:
            raise ValueError(f"the validation split has no window of {mc.block_size + 1} tokens inside a book")
        icl = icl_score(position_losses(model, val, starts, mc.block_size), (cfg.early_from, cfg.early_to),
                        (cfg.late_from, cfg.late_to))
        own = portable_config({k: v for k, v in {**train.LATER_FIELDS, **result["config"]}.items()
                               if k not in TRAJECTORY_FREE})
        rows.append({"variant": variant, "seed": seed, "step": result["steps_trained"], "val_loss": finite(result["val_loss"]),
                     "n_layer": mc.n_layer, "n_head": mc.n_head,
                     "other_settings": {k: v for k, v in own.items() if k not in shared},
                     **scan, "icl": {**icl, "windows": len(starts)}, "seconds": round(time.time() - t1, 1)})
        r = rows[-1]
        print(f"induction: {variant}-s{seed}: repeat gain {r['repeat']['gain']:+.3f} ({r['repeat']['first']:.3f} ->"
              f" {r['repeat']['second']:.3f}); best prefix matching {max(h['prefix_matching'] for h in r['heads']):.3f},"
              f" previous {max(h['previous'] for h in r['heads']):.3f}; ICL {icl['score']:+.3f}; {r['seconds']} s")
    T = 2 * cfg.length
    ref_pm, ref_prev = head_scores(prefix_average(T), cfg.length)
    L = cfg.length
    block = shared.get("block_size") or results[0]["config"]["block_size"]
    text = text_repeats(train.load_tokens(work / "data", "train"), val, windows_in(segments, block), block)
    return {
        "schema_version": 1,
        "sequences": {"count": cfg.sequences, "length": L, "seed": cfg.seed, "drawn_from": len(eligible),
                      "special_excluded": n_special, "fragments": cfg.fragments},
        "measures": {
            "repeat": (f"{cfg.sequences} sequences of L = {L} tokens drawn uniformly (with replacement) from"
                       f" {len(eligible)} token ids (special tokens aside{'' if cfg.fragments else ', and byte fragments'}),"
                       f" each followed by the same L tokens (2L = {T} tokens, run from position 0), the same for every"
                       " run: first, the mean next-token loss (nats) of positions 0..L-2 predicting tokens 1..L-1;"
                       " second, of positions L..2L-2 predicting L+1..2L-1; gain = second - first (negative: the"
                       " model copies from the first copy)."),
            "heads": ("per layer and head, on the same sequences, the mean over the second half's queries t = L..2L-1"
                      " of the attention weight on key t-L+1, the token after the earlier copy of token t"
                      " (prefix_matching), and on key t-1 (previous)."),
            "icl": (f"on the validation split's non-overlapping windows of block_size tokens (+1 target) inside one"
                    f" book, spread evenly: the mean next-token loss at input positions {cfg.late_from}..{cfg.late_to}"
                    f" (late) minus {cfg.early_from}..{cfg.early_to} (early), 0-based, inclusive (Olsson et al. 2022's"
                    " 500th minus 50th token, scaled to a 256-token window)."),
            "early": [cfg.early_from, cfg.early_to], "late": [cfg.late_from, cfg.late_to]},
        "reference": {"rule": ("the prefix average, weight 1/(t+1) on every key j <= t (content-blind), on the same"
                               " queries: both figures are the mean of 1/(t+1) over t = L..2L-1."),
                      "prefix_matching": round(float(ref_pm), 4), "previous": round(float(ref_prev), 4)},
        "text": {"rule": ("no model: in each non-overlapping validation window of block_size tokens inside one book,"
                          " every position t predicting token t+1; repeated: t's token occurred earlier in the window;"
                          " copy_right: the token after its latest earlier occurrence is token t+1 (what an induction"
                          " head would guess); bigram_right: the training split's most frequent successor of t's"
                          " token is; both_right: both are."), "block_size": block, **text},
        "runs": rows,
        "skipped": skipped,
        "model_card": {"hardware": hardware(results[0]), "corpus": corpus_block(meta), "train_config": shared},
        "export_config": portable_config(asdict(cfg)),
        "seconds": round(time.time() - t0, 1),
        **provenance(cfg.command or invoked, git_lab_commit()),
    }


def snapshots_of(run_dir: Path) -> list[tuple[int, Path]]:
    """(step, path) of every weights snapshot a run kept (train snapshot_every), by step."""
    found = [(int(m["step"]), p) for p in (run_dir / "snapshots").glob("step*.pt") if (m := SNAPSHOT.match(p.name))]
    return sorted(found)


def best_head(heads: list[dict], key: str) -> dict:
    h = max(heads, key=lambda h: h[key])
    return {"layer": h["layer"], "head": h["head"], "share": h[key]}


def export_curves(cfg: Config, invoked: str) -> dict:
    """The induction measures along training: every snapshot of each named run (runs= required)."""
    work = Path(cfg.work_dir)
    t0 = time.time()
    pairs, _ = chosen_runs(work, cfg.runs)
    if not cfg.runs or not pairs:
        raise SystemExit("part=curve: name the runs (runs=attn_only_2l:0,...); each must have kept snapshots")
    results, meta, val, segments, eligible, n_special, seqs = scan_inputs(cfg, work, pairs)
    rows = []
    for (variant, seed), result in zip(pairs, results):
        t1 = time.time()
        run_dir = work / f"{variant}-s{seed}"
        snaps = snapshots_of(run_dir)
        if len(snaps) < 2:
            raise FileNotFoundError(f"{run_dir}: no snapshots (train it with snapshot_every=50)")
        model = load_model(run_dir)  # the finished weights; each snapshot's are loaded in turn
        mc = model.cfg
        check_ranges(cfg, mc.block_size)
        starts = windows_in(segments, mc.block_size, cfg.curve_icl_windows)
        evals = {e["step"]: e["val_loss"] for e in result["history"]}
        losses = result["step_losses"]
        points = []
        for step, path in snaps:
            model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
            model.eval()
            scan = repeat_scan(model, seqs, cfg.length)
            icl = icl_score(position_losses(model, val, starts, mc.block_size), (cfg.early_from, cfg.early_to),
                            (cfg.late_from, cfg.late_to))
            recent = losses[max(0, step - 50): step]
            points.append({"step": step, "repeat_gain": scan["repeat"]["gain"],
                           "prefix_matching": best_head(scan["heads"], "prefix_matching"),
                           "previous": best_head(scan["heads"], "previous"), "icl": icl["score"],
                           "train_loss": round(sum(recent) / len(recent), 4) if recent else None,
                           "val_loss": evals.get(step)})
        smear = [[round(float(a), 4) for a in torch.sigmoid(b.attn.smear.detach())] for b in model.blocks
                 if getattr(b.attn, "smear", None) is not None]
        rows.append({"variant": variant, "seed": seed, "n_layer": mc.n_layer, "n_head": mc.n_head,
                     "d_ff": mc.d_ff, "smear_keys": bool(mc.smear_keys), "steps": result["steps_trained"],
                     "val_loss": finite(result["val_loss"]), "points": points,
                     "final_smear": smear or None, "seconds": round(time.time() - t1, 1)})
        last = points[-1]
        print(f"induction curve: {variant}-s{seed}: {len(points)} snapshots; at step {last['step']} repeat gain"
              f" {last['repeat_gain']:+.3f}, prefix matching {last['prefix_matching']['share']:.3f}, ICL {last['icl']:+.3f};"
              f" {rows[-1]['seconds']} s", flush=True)
    ref_pm, ref_prev = head_scores(prefix_average(2 * cfg.length), cfg.length)
    return {
        "schema_version": 1,
        "sequences": {"count": cfg.sequences, "length": cfg.length, "seed": cfg.seed, "drawn_from": len(eligible),
                      "special_excluded": n_special, "fragments": cfg.fragments},
        "measures": ("at every snapshot: the repeat gain, the best head's prefix-matching and previous-token shares"
                     " (as induction.json's, on the same sequences), the ICL score on curve_icl_windows validation"
                     " windows, the mean training loss of the 50 steps before, and the validation loss where the run"
                     " evaluated at that step"),
        "reference": {"prefix_matching": round(float(ref_pm), 4), "previous": round(float(ref_prev), 4)},
        "runs": rows,
        "model_card": {"hardware": hardware(results[0]), "corpus": corpus_block(meta),
                       "train_config": shared_settings(results)},
        "export_config": portable_config(asdict(cfg)),
        "seconds": round(time.time() - t0, 1),
        **provenance(cfg.command or invoked, git_lab_commit()),
    }


def run_export(cfg: Config, invoked: str = "python -m lab induction") -> dict:
    print("induction config:", json.dumps(asdict(cfg), ensure_ascii=False))
    if cfg.part not in PARTS:
        raise SystemExit(f"part={cfg.part!r}; known: {PARTS}")
    if cfg.part == "curve":
        doc = export_curves(cfg, invoked)
        path = schema.write_validated(CURVES_FILE, doc, cfg.out_dir)
        print(f"induction curve: {len(doc['runs'])} runs; wrote {path} ({path.stat().st_size:,} B) in {doc['seconds']} s")
        return doc
    doc = export(cfg, invoked)
    path = schema.write_validated(FILE, doc, cfg.out_dir)
    skipped = f"; not finished, left out: {doc['skipped']}" if doc["skipped"] else ""
    print(f"induction: {len(doc['runs'])} runs{skipped}; wrote {path} ({path.stat().st_size:,} B) in {doc['seconds']} s")
    return doc
