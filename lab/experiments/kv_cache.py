"""The KV-cache export (C3 第 4 课, `python -m lab kvcache`): our trained model generates the same text
with and without a KV cache, and the cache's bug readers hit makes it diverge. No training: it reads
one finished run (`work/<variant>-s<seed>/ckpt.pt` and `result.json`) and the work dir's prepared
data, and writes `out/kv-cache.json`:

- the prompt: a rule picks it from one book's validation text (the first sentence of its first
  validation chapter, after the title line);
- greedy generation of `new_tokens` tokens both ways. Without the cache every step runs the model
  over the whole text so far (lab/model.py's forward, unchanged); with it, the prompt is read once
  (the prefill) and each step runs one new token, whose query attends to the keys and values kept
  from every earlier step, its own appended (this module's `step`, built from the model's own
  modules and weights; lab/model.py is not changed). RoPE rotates the new token's query and key at
  its absolute position, the number of tokens already cached. Whether the tokens are identical (and
  where they first differ), the largest absolute logit difference over every step, tokens per second
  both ways (median of `repeats`, `threads` CPU threads, training paused meanwhile when
  pause_training=true);
- the controls, the RoPE offset bugs: the new token rotated at position 0 (the start offset never
  passed on, as in x-transformers#219 and mlx-lm#1396), and at the cache's length minus one (an off
  by one). Each generates greedily with the bug (the first token that differs, the text) and is also
  run along the correct text (teacher forcing): its logit difference from the correct cache at every step.

Text past the model's context: the prompt and the new tokens together may be longer than
block_size; RoPE computes those positions as it does the others (model.forward(extrapolate=True)),
both ways alike, and the export says how many there are.
"""
from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from lab import schema
from lab.experiments.common import git_lab_commit, hardware, load_model, portable_config, provenance, sig
from lab.experiments.ffn import run_record
from lab.experiments.rope import finished_run
from lab.model import apply_rope

NAME = "kvcache"
DEFAULT_OUT = "data/real-model/kv-cache"
FILE = "kv-cache/kv-cache.json"
SENTENCE_END = "。！？"
# The controls: where the buggy cache rotates the new token, given n tokens already cached.
BUGS = {
    "position_0": (lambda n: 0, "the new token's query and key rotated at position 0 instead of its own, n (the"
                                " offset never passed to RoPE: x-transformers#219, mlx-lm#1396)"),
    "off_by_one": (lambda n: n - 1, "the new token rotated at n - 1, the position of the token before it (an off by"
                                    " one in the offset)"),
}


@dataclass
class Config:
    work_dir: str = "lab/runs"  # --work: data/ and the run directories
    out_dir: str = DEFAULT_OUT  # --out
    variant: str = "baseline"  # the run read: work/<variant>-s<seed>/
    seed: int = 0
    book: str = "sanguo-yanyi.txt"  # whose validation text the prompt is taken from
    max_prompt_tokens: int = 48  # the prompt's first sentence is cut here if it is longer
    new_tokens: int = 256  # greedy tokens generated after the prompt
    repeats: int = 5  # timed generations each way (the median is reported)
    threads: int = 2  # torch's CPU threads for the timed generations (0 = torch's default); the rest runs on one
    pause_training: bool = False  # SIGSTOP every `python -m lab train` process during the timing only (SIGCONT after)
    command: str = ""  # the command to record (default: this process's command line)


# --- the cached forward pass ---------------------------------------------------------------------


class KVCache:
    """Per layer, the keys and values of every token read so far, (1, H, n, hs) each, RoPE applied to
    the keys at their own positions; n: how many tokens that is."""

    def __init__(self, n_layer: int):
        self.k: list[torch.Tensor | None] = [None] * n_layer
        self.v: list[torch.Tensor | None] = [None] * n_layer
        self.n = 0

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.k + self.v if t is not None)


def check_supported(model) -> None:
    """The cached path rebuilds the pre-norm softmax-attention block with both skips (the baseline's
    shape and the position variants'); anything else is refused rather than computed wrongly."""
    c = model.cfg
    if (c.norm_place != "pre" or c.attn_mix != "softmax" or not c.residual or not (c.skip_attn and c.skip_ffn)
            or c.embed_skip):
        raise ValueError("kvcache: the cached step is written for pre-norm softmax attention with both skips"
                         f" (this model: norm_place={c.norm_place}, attn_mix={c.attn_mix}, residual={c.residual})")


def step(model, cache: KVCache, idx: torch.Tensor, rope_at=None) -> torch.Tensor:
    """Run the tokens idx (1, T) at positions cache.n .. cache.n + T - 1 with the cache -> logits (1, T, V),
    appending their keys and values. T > 1 only into an empty cache (the prefill: causal attention among
    the prompt's tokens); after it, one token a step, whose query sees every cached key and its own.
    rope_at(n) -> the position RoPE rotates a new token at, n tokens cached (the controls' bugs); None: n,
    its own."""
    B, T = idx.shape
    start = cache.n
    if T > 1 and start:
        raise ValueError("step: several tokens only into an empty cache (the prefill)")
    cfg = model.cfg
    rot = start if rope_at is None or T > 1 else rope_at(start)  # the prefill is never the bug
    cos, sin = model.rotations(T, rot)  # (T, hs/2) each, None without RoPE
    x = model.embed(idx)  # (1, T, C)
    if cfg.pos == "learned":
        x = x + model.wpe(torch.arange(start, start + T, device=idx.device))
    C, H = cfg.d_model, cfg.n_head
    for l, block in enumerate(model.blocks):
        q, k, v = block.attn.qkv(block.norm1(x)).split(C, dim=2)  # (1, T, C) each
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))  # (1, H, T, hs)
        if cos is not None:
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if cache.k[l] is not None:
            k, v = torch.cat([cache.k[l], k], dim=2), torch.cat([cache.v[l], v], dim=2)  # (1, H, n + 1, hs)
        cache.k[l], cache.v[l] = k, v
        y = F.scaled_dot_product_attention(q, k, v, is_causal=T > 1)  # (1, H, T, hs)
        x = x + block.attn.proj(y.transpose(1, 2).contiguous().view(B, T, C))
        if block.ffn is not None:
            x = x + block.ffn(block.norm2(x))
    cache.n = start + T
    return model.lm_head(model.norm_f(x))  # (1, T, V)


@torch.inference_mode()
def generate_full(model, prompt: list[int], n: int) -> tuple[list[int], list[torch.Tensor]]:
    """Greedy, no cache: every step runs the model over the whole text so far -> (n tokens, n logit rows)."""
    ids, rows = list(prompt), []
    for _ in range(n):
        logits, _ = model(torch.tensor([ids]), extrapolate=True)
        row = logits[0, -1]
        rows.append(row)
        ids.append(int(row.argmax()))
    return ids[len(prompt):], rows


@torch.inference_mode()
def generate_cached(model, prompt: list[int], n: int, rope_at=None, forced: list[int] | None = None):
    """Greedy with the cache: one prefill, then one step a token -> (n tokens, n logit rows, the cache).
    forced: feed these tokens instead of the picks (teacher forcing: the rows along a given text)."""
    cache = KVCache(len(model.blocks))
    row = step(model, cache, torch.tensor([prompt]), rope_at)[0, -1]
    out, rows = [], []
    for i in range(n):
        rows.append(row)
        out.append(int(row.argmax()))
        if i + 1 < n:
            nxt = forced[i] if forced is not None else out[-1]
            row = step(model, cache, torch.tensor([[nxt]]), rope_at)[0, -1]
    return out, rows, cache


def first_difference(a: list, b: list) -> int | None:
    """The first index where two token lists differ (None when equal). first_difference([1, 2], [1, 3]) -> 1"""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def row_gaps(a: list[torch.Tensor], b: list[torch.Tensor]) -> list[float]:
    """The largest |logit difference| of each step."""
    return [float((x - y).abs().max()) for x, y in zip(a, b)]


# --- the text --------------------------------------------------------------------------------------


def decode(pieces: list[bytes], ids: list[int]) -> str:
    """The tokens' bytes as text; a character cut off at the end (a byte-level token's fragment) is dropped.

    decode([b"a", "公".encode()[:2]], [0, 1]) -> 'a'
    """
    raw = b"".join(pieces[i] for i in ids)
    for cut in range(4):
        try:
            return raw[:len(raw) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return raw.decode("utf-8", errors="replace")


def pick_prompt(val_ids: list[int], pieces: list[bytes], max_tokens: int) -> tuple[int, list[int]]:
    """The first sentence after the first line break of a book's validation tokens (its first validation
    chapter's title line skipped): from the token after the break through the first token holding one of
    。！？, cut at max_tokens and then back to a token that ends a whole character -> (offset, ids)."""
    nl = next((i for i, t in enumerate(val_ids[:2000]) if b"\n" in pieces[t]), None)
    a = 0 if nl is None else nl + 1
    end = a
    while end < len(val_ids) and end - a < max_tokens:
        end += 1
        if any(ch.encode() in pieces[val_ids[end - 1]] for ch in SENTENCE_END):
            break
    while end > a + 1 and decode(pieces, val_ids[a:end]).encode() != b"".join(pieces[t] for t in val_ids[a:end]):
        end -= 1  # the cut fell inside a character
    if end - a < 2:
        raise ValueError("kvcache: no prompt of at least 2 tokens at the start of the book's validation text")
    return a, val_ids[a:end]


# --- the timing ------------------------------------------------------------------------------------


@contextmanager
def training_paused(enabled: bool, pattern: str = "python -m lab train", limit_s: int = 900):
    """SIGSTOP every process whose command line holds `pattern` (the lab's training runs) for the block,
    SIGCONT after, by pid, so the timing has the CPU; a detached watchdog sends SIGCONT after limit_s
    whatever happens to this process. Yields the pids stopped."""
    if not enabled:
        yield []
        return
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    pids = [int(p) for p in found if int(p) != os.getpid()]
    if not pids:
        yield []
        return
    dog = subprocess.Popen(["sh", "-c", f"sleep {limit_s}; kill -CONT {' '.join(map(str, pids))}"],
                           start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stopped = []
    try:
        for p in pids:
            try:
                os.kill(p, signal.SIGSTOP)
                stopped.append(p)
            except ProcessLookupError:
                pass
        yield stopped
    finally:
        for p in stopped:
            try:
                os.kill(p, signal.SIGCONT)
            except ProcessLookupError:
                pass
        os.killpg(dog.pid, signal.SIGKILL)  # the watchdog's shell and its sleep (its own session)
        dog.wait()


def timed(model, prompt: list[int], n: int, repeats: int, pause: bool, threads: int) -> tuple[dict, tuple, tuple]:
    """Seconds of `repeats` generations each way, alternating (full, cached), after one untimed warm-up
    each, on `threads` threads -> (the speed block, the last full generation's (tokens, rows), the last
    cached one's). Wall and CPU seconds (time.process_time, every thread's)."""
    full, cached, full_cpu, cached_cpu = [], [], [], []
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    with training_paused(pause) as stopped:
        generate_full(model, prompt, 8)
        generate_cached(model, prompt, 8)
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            f = generate_full(model, prompt, n)
            full.append(time.perf_counter() - t0)
            full_cpu.append(time.process_time() - c0)
            t0, c0 = time.perf_counter(), time.process_time()
            c = generate_cached(model, prompt, n)
            cached.append(time.perf_counter() - t0)
            cached_cpu.append(time.process_time() - c0)
    used = torch.get_num_threads()
    torch.set_num_threads(before)
    fs, cs = statistics.median(full), statistics.median(cached)
    speed = {"repeats": repeats, "threads": used, "clock": "wall (time.perf_counter)",
             "full_seconds": [round(s, 4) for s in full], "cached_seconds": [round(s, 4) for s in cached],
             "full_tokens_per_second": round(n / fs, 1), "cached_tokens_per_second": round(n / cs, 1),
             "speedup": round(fs / cs, 2),
             "full_cpu_seconds": [round(s, 4) for s in full_cpu], "cached_cpu_seconds": [round(s, 4) for s in cached_cpu],
             "cpu_speedup": round(statistics.median(full_cpu) / statistics.median(cached_cpu), 2),
             "training_paused": bool(stopped),
             "load_average_before": [round(x, 2) for x in load] if load else None}
    return speed, f, c


# --- the export ------------------------------------------------------------------------------------


def export(cfg: Config, invoked: str) -> dict:
    work = Path(cfg.work_dir)
    data, run_dir = work / "data", work / f"{cfg.variant}-s{cfg.seed}"
    finished_run(run_dir)  # trained to its last step, or a clear error
    t0 = time.time()
    torch.set_num_threads(1)  # the untimed work (on a machine that trains meanwhile, one thread spins least)
    model = load_model(run_dir)
    check_supported(model)
    mc = model.cfg
    meta = json.loads((data / "meta.json").read_text())
    pieces = [bytes.fromhex(h) for h in json.loads((data / "token_bytes.json").read_text())]
    val = np.fromfile(data / "val.bin", dtype=np.uint16).astype(np.int64)
    books = meta["split"].get("books") or [{"file": meta["corpus"].get("file", "corpus"),
                                            "val_token_range": [0, len(val)]}]
    book = books[0] if len(books) == 1 else next((b for b in books if b["file"] == cfg.book), None)
    if book is None:
        raise ValueError(f"book={cfg.book}: not a corpus file of this data ({[b['file'] for b in books]})")
    lo, hi = book["val_token_range"]
    offset, prompt = pick_prompt(val[lo:hi].tolist(), pieces, cfg.max_prompt_tokens)
    n = cfg.new_tokens
    if mc.pos == "learned" and len(prompt) + n > mc.block_size:
        raise ValueError(f"a learned position table ends at {mc.block_size}: new_tokens + prompt must fit")

    # The prefill is the model's own forward pass, computed with the cache's code.
    with torch.inference_mode():
        ref, _ = model(torch.tensor([prompt]))
        got = step(model, KVCache(mc.n_layer), torch.tensor([prompt]))
    prefill_gap = float((ref - got).abs().max())

    # The timing's last generation each way is the one compared (greedy: every repeat is the same).
    speed, (full_ids, full_rows), (cached_ids, cached_rows, cache) = timed(model, prompt, n, cfg.repeats,
                                                                           cfg.pause_training, cfg.threads)
    diverge = first_difference(full_ids, cached_ids)
    upto = n if diverge is None else diverge + 1  # rows compared: while the texts so far agree
    gaps = row_gaps(full_rows[:upto], cached_rows[:upto])
    top = max(float(r.abs().max()) for r in full_rows)

    controls = []
    _, right_rows, _ = generate_cached(model, prompt, n, forced=full_ids)  # the correct cache, on one thread as the bugs
    for name, (rope_at, rule) in BUGS.items():
        bug_ids, _, _ = generate_cached(model, prompt, n, rope_at)
        _, forced_rows, _ = generate_cached(model, prompt, n, rope_at, forced=full_ids)
        fgaps = row_gaps(right_rows, forced_rows)
        changed = [i for i, (a, b) in enumerate(zip(right_rows, forced_rows)) if int(a.argmax()) != int(b.argmax())]
        d = first_difference(full_ids, bug_ids)
        controls.append({
            "name": name, "rule": rule, "same_tokens": d is None, "first_divergence": d,
            "tokens": bug_ids, "text": decode(pieces, bug_ids),
            "same_prefix_text": decode(pieces, bug_ids[:d]) if d is not None else decode(pieces, bug_ids),
            "forced": {"max_abs_logit_diff": sig(max(fgaps), 3), "first_step_diff": sig(fgaps[0], 3),
                       "second_step_diff": sig(fgaps[1], 3) if n > 1 else None,
                       "argmax_changed_steps": len(changed), "first_argmax_change": changed[0] if changed else None,
                       "logit_diff_by_step": [sig(g, 2) for g in fgaps]}})

    corpus_files = meta["corpus"].get("files") or [meta["corpus"]]
    book_meta = next((f for f in corpus_files if f["file"] == book.get("file")), corpus_files[0])
    hs = mc.d_model // mc.n_head
    total = len(prompt) + n
    return {
        "schema_version": 1,
        "model": run_record(run_dir),
        "model_config": {"n_layer": mc.n_layer, "n_head": mc.n_head, "d_model": mc.d_model, "head_dim": hs,
                         "block_size": mc.block_size, "vocab_size": mc.vocab_size, "pos": mc.pos,
                         "rope_base": mc.rope_base},
        "corpus": {"file": book_meta["file"], "sha256": book_meta["sha256"], "books": len(corpus_files)},
        "prompt": {"rule": ("the first sentence of the book's first validation chapter: from the token after the title"
                            " line's line break through the first token holding one of 。！？ (at most"
                            f" {cfg.max_prompt_tokens} tokens)"),
                   "val_token_offset": offset, "tokens": prompt, "text": decode(pieces, prompt)},
        "generation": {"new_tokens": n, "decoding": "greedy (argmax; the lowest id on a tie)", "positions": total,
                       "past_context": max(0, total - mc.block_size), "dtype": "float32",
                       "full": "lab/model.py's forward over the whole text so far at every step (extrapolate=True)",
                       "cached": "one prefill of the prompt, then one token a step with the keys and values kept"},
        "full": {"tokens": full_ids, "text": decode(pieces, full_ids)},
        "cached": {"tokens": cached_ids, "text": decode(pieces, cached_ids)},
        "same_tokens": diverge is None, "first_divergence": diverge,
        "prefill_max_abs_logit_diff": prefill_gap,
        "max_abs_logit_diff": max(gaps), "max_abs_logit": sig(top, 4),
        "logit_diff_by_step": [sig(g, 2) for g in gaps],
        "cache": {"tokens": cache.n, "bytes": cache.nbytes(), "bytes_per_token": cache.nbytes() // cache.n,
                  "per_token_rule": "2 (key and value) x n_layer x d_model x 4 bytes (float32)",
                  "per_token_formula": 2 * mc.n_layer * mc.d_model * 4},
        "speed": speed,
        "controls": controls,
        "hardware": hardware({"device": "cpu"}, threads=speed["threads"]),
        "export_config": portable_config(asdict(cfg)),
        "seconds": round(time.time() - t0, 1),
        **provenance(cfg.command or invoked, git_lab_commit()),
    }


def run_export(cfg: Config, invoked: str = "python -m lab kvcache") -> dict:
    print("kvcache config:", json.dumps(asdict(cfg), ensure_ascii=False))
    doc = export(cfg, invoked)
    path = schema.write_validated(FILE, doc, cfg.out_dir)
    s = doc["speed"]
    print(f"kvcache: same tokens {doc['same_tokens']}, max |logit diff| {doc['max_abs_logit_diff']:.3g};"
          f" {s['full_tokens_per_second']} -> {s['cached_tokens_per_second']} tokens/s (x{s['speedup']});"
          f" controls first differ at {[c['first_divergence'] for c in doc['controls']]}")
    print(f"kvcache: wrote {path} ({path.stat().st_size:,} B) in {doc['seconds']} s")
    return doc
