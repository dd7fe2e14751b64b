"""The FFN experiment (C4 第 1 课): what the FFN does in our model, and which of its neurons fire where.

    python -m lab ffn --corpus PATH --out data/real-model [key=value ...]     (`all` is the same command)

prepare -> every run of run_plan (the baseline's seeds 0..seeds-1, every other variant of
model.VARIANTS with variant_seeds seeds; seed 0 of every variant first) -> export (`run_export`:
the model card, the ablation, the neurons of one model), or rewrite only neurons.json from one
checkpoint (`run_neurons`, `python -m lab neurons`).

Reads work_dir/data (prepare's output) and work_dir/<variant>-s<seed>/ (train's
result.json, and the checkpoint of the neuron model); writes compact JSON and
validates it with the contract, data/schemas/real-model/*.schema.json (lab/schema.py
runs it), before anything is replaced. No export holds a path of the machine that
made it: the corpus is named by file name and sha256, path settings are left out.
"""
from __future__ import annotations

import bisect
import datetime as dt
import inspect
import json
import os
import random
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer

from lab import prepare, schema, train
from lab.experiments.common import (check_same_settings, estimate_seconds, config_from, cpu_name, git_lab_commit, portable_config,
                                    round_robin, sig, split_overrides, train_runs, ensure_data)
from lab.model import GPT, VARIANTS, ModelConfig, recorded_config, residual_init_std

NAME = "ffn"  # python -m lab ffn (alias: all)
DEFAULT_OUT = "data/real-model"

# One line per variant of model.VARIANTS (the one list of names), in its order.
DESCRIPTIONS = {
    "baseline": "4 layers, attention + SwiGLU FFN",
    "linear_ffn": f"the baseline with a linear FFN: two matrices of width {VARIANTS['linear_ffn']['d_ff']:,}, no"
                  " activation, exactly the baseline's FFN parameter count",
    "no_ffn": "the baseline without its FFNs (attention only, 4 layers)",
    "attn_only_12l": f"attention only, {VARIANTS['attn_only_12l']['n_layer']} layers: parameter-matched to the baseline",
}
assert list(DESCRIPTIONS) == list(VARIANTS), f"DESCRIPTIONS {list(DESCRIPTIONS)} != VARIANTS {list(VARIANTS)}"
FFN_NAMES = {"swiglu": "SwiGLU", "linear": "linear (two matrices, no activation)"}


@dataclass
class ExportConfig:
    work_dir: str = "lab/runs"  # prepare's data/ and the run directories
    out_dir: str = "data/real-model"  # where the three JSON files go
    variant: str = "baseline"  # the model whose neurons are shown
    seed: int = 0  # ... and its seed
    layer: int = 1  # 0-based block index: 1 = the 2nd of 4 blocks (第 2 层)
    n_top: int = 8  # neurons with the largest maximum activation over the selection chapters
    n_random: int = 8  # random control neurons (from the rest): at least as many as n_top
    random_seed: int = 0  # picks the random controls
    select_chapters: int = 0  # the first N validation chapters choose the neurons, the rest read them (0 = half)
    passage_min_chars: int = 300  # the passage: a line of the reading chapters of this length ...
    passage_max_chars: int = 500  # ... or shorter (a longer line is cut at a full stop)
    n_contexts: int = 5  # top activating contexts per neuron
    context_gap: int = 16  # two contexts of one neuron are at least this many tokens apart
    chars_before: int = 8  # characters shown before a context's peak token
    chars_after: int = 4  # characters shown after it
    book: str = "sanguo-yanyi.txt"  # the corpus file whose validation chapters the heatmap reads (a one-book corpus: that book)
    digits: int = 4  # significant digits of exported activations and losses
    command: str = ""  # the command the model card records; "" = the one `all` recorded, else this process's


def ffn_kind(model_config: dict) -> str:
    """ffn_kind({"d_ff": 0}) -> 'none'; ffn_kind({"d_ff": 688, "ffn": "swiglu"}) -> 'swiglu'"""
    return model_config.get("ffn", "swiglu") if model_config["d_ff"] else "none"


def char_spans(pieces: list[bytes], text: str) -> list[tuple[int, int]]:
    """Character span of each token: a character belongs to the token holding its last
    byte, so the spans tile the text and a token that only starts a character has an
    empty span.

    char_spans([b"a", "公".encode()[:2], "公".encode()[2:] + b"b"], "a公b") -> [(0, 1), (1, 1), (1, 3)]
    """
    ends, total = [], 0
    for ch in text:
        total += len(ch.encode("utf-8"))
        ends.append(total)
    spans, pos = [], 0
    for p in pieces:
        a, b = pos, pos + len(p)
        spans.append((bisect.bisect_right(ends, a), bisect.bisect_right(ends, b)))
        pos = b
    assert pos == total, "token bytes do not add up to the text"
    return spans


def touched_chars(pieces: list[bytes], text: str) -> list[tuple[int, int]]:
    """Character range each token has at least one byte of: a fragment shows the
    character it is part of.

    touched_chars([b"a", "公".encode()[:2], "公".encode()[2:] + b"b"], "a公b") -> [(0, 1), (1, 2), (1, 3)]
    """
    ends, total = [], 0
    for ch in text:
        total += len(ch.encode("utf-8"))
        ends.append(total)
    out, pos = [], 0
    for p in pieces:
        a, b = pos, pos + len(p)
        out.append((bisect.bisect_right(ends, a), bisect.bisect_left(ends, b) + 1))
        pos = b
    return out


def is_fragment(piece: bytes) -> bool:
    """True when a token's bytes are not whole UTF-8 characters. is_fragment("公".encode()[:1]) -> True"""
    try:
        piece.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True


def show(piece: bytes) -> str:
    """What a token looks like on its own: broken characters become U+FFFD. show(b"\\xe5\\x85") -> '\\ufffd'"""
    return piece.decode("utf-8", errors="replace")


class Capture:
    """Forward pre-hook on the FFN's down-projection: its input is the SwiGLU hidden
    value silu(x W_gate) * (x W_up), one activation per neuron and token."""

    def __init__(self, module: torch.nn.Module):
        self.value = None
        self.handle = module.register_forward_pre_hook(self.hook)

    def hook(self, module, args):
        self.value = args[0].detach()  # (B, T, d_ff)

    def remove(self):
        self.handle.remove()


@torch.no_grad()
def hidden_over_windows(model: GPT, tokens: torch.Tensor, layer: int, windows) -> torch.Tensor:
    """SwiGLU hidden values of `layer` for the last `keep` positions of each (start, end, keep)
    window of `tokens`; checks that hooking leaves the logits unchanged."""
    ffn = model.blocks[layer].ffn
    outs = []
    for start, end, keep in windows:
        idx = tokens[start:end][None]  # (1, T)
        plain, _ = model(idx)  # (1, T, V)
        cap, down_out = Capture(ffn.down), {}
        h2 = ffn.register_forward_hook(lambda m, a, o: down_out.setdefault("y", o))
        try:
            hooked, _ = model(idx)  # (1, T, V)
        finally:
            cap.remove()
            h2.remove()
        assert torch.equal(plain, hooked), "the hooked forward pass differs from the plain one"
        assert torch.allclose(ffn.down(cap.value), down_out["y"]), "captured hidden does not give the FFN output"
        outs.append(cap.value[0, -keep:])  # (keep, d_ff)
    return torch.cat(outs)  # (N, d_ff)


def context_windows(n: int, block: int):
    """Windows so every position sees up to `block` tokens of context, in few passes.

    context_windows(5, 3) -> [(0, 3, 3), (1, 4, 1), (2, 5, 1)]
    """
    windows = [(0, min(n, block), min(n, block))]
    windows += [(t - block + 1, t + 1, 1) for t in range(block, n)]
    return windows


def load_runs(work: Path, variants=tuple(VARIANTS)) -> dict:
    """{variant: [result, ...] ordered by seed} from every finished run directory of `variants`
    (another experiment's runs in the same work dir are left alone, and so is a run on another schedule:
    only `<variant>-s<seed>/` is that variant's run)."""
    runs = {}
    for f in sorted(work.glob("*/result.json")):
        r = json.loads(f.read_text())
        if r["variant"] in variants and f.parent.name == f"{r['variant']}-s{r['seed']}":
            runs.setdefault(r["variant"], []).append(r)
    for v in runs.values():
        v.sort(key=lambda r: r["seed"])
    missing = [v for v in variants if v not in runs]
    if missing:
        raise FileNotFoundError(f"no finished run for variant(s) {missing} under {work}")
    check_same_settings([r for v in runs.values() for r in v])
    return runs


def split_at_chapter(val_text: str, first_chapter: int, select_chapters: int) -> dict:
    """Where the validation text's chapters start, and the character offset at which the reading
    part begins: the first `select_chapters` chapters choose the neurons, the rest show and read them.

    split_at_chapter("第五回 甲\\n丙。\\n第六回 乙\\n丁。\\n", 5, 1) -> {"starts": [0, 9], "boundary": 9, "select": [5, 5], "read": [6, 6]}
    """
    first = prepare.CHAPTER_RE.match(val_text)
    if not first:
        raise ValueError("the validation text does not start at a chapter title")
    starts, at = [], 0
    for chapter in prepare.split_chapters(val_text):  # the chapters as prepare counted them
        starts.append(at)
        at += len(chapter)
    if not 1 <= select_chapters < len(starts):
        raise ValueError(f"select_chapters={select_chapters}: the validation split has {len(starts)} chapters;"
                         " at least one must choose the neurons and one must read them")
    last = first_chapter + len(starts) - 1
    return {"starts": starts, "boundary": starts[select_chapters],
            "select": [first_chapter, first_chapter + select_chapters - 1],
            "read": [first_chapter + select_chapters, last]}


def chapter_at(starts: list[int], first_chapter: int, offset: int) -> int:
    """The chapter number of a character offset. chapter_at([0, 6], 5, 7) -> 6"""
    return first_chapter + bisect.bisect_right(starts, offset) - 1


def candidate_lines(val_text: str, lo: int, hi: int, min_chars: int, max_chars: int) -> list[tuple[int, str]]:
    """(offset, text) of every line starting in val_text[lo:hi] that has min_chars..max_chars
    characters; a longer line is cut after its last 。 within max_chars.

    candidate_lines("甲乙。\\n丙丁戊。己\\n", 0, 12, 3, 4) -> [(0, "甲乙。"), (4, "丙丁戊。")]
    """
    out, offset = [], 0
    for line in val_text.split("\n"):
        text = line
        if len(text) > max_chars:
            cut = text.rfind("。", 0, max_chars)
            text = text[: cut + 1] if cut >= 0 else ""
        if lo <= offset and offset + len(text) <= hi and len(text) >= min_chars:
            out.append((offset, text))
        offset += len(line) + 1
    return out


def visibility(p_acts: torch.Tensor, neurons: list[int], scales: torch.Tensor) -> float:
    """How visible `neurons` are in a passage: the mean over them of their largest value in the
    passage as a share of their scale (capped at 1; a neuron never above 0 there counts 0).

    visibility(torch.tensor([[0.5, 2.0], [1.0, -1.0]]), [0, 1], torch.tensor([2.0, 4.0])) -> 0.5
    """
    peaks = p_acts[:, neurons].max(dim=0).values.clamp(min=0)  # (k,)
    return (peaks / scales[neurons]).clamp(max=1).mean().item()


def run_record(run_dir: Path) -> dict:
    """The neuron model as its own run recorded it: its losses, its precision, its training settings."""
    r = json.loads((run_dir / "result.json").read_text())
    return {"variant": r["variant"], "seed": r["seed"], "val_loss": r["val_loss"], "train_loss": r["train_loss"],
            "steps": r["config"]["steps"], "tokens": r["tokens"],
            "precision": "bf16 autocast, fp32 weights; evaluation in fp32" if r["bf16_autocast"] else "fp32",
            "train_config": portable_config({k: v for k, v in r["config"].items()
                                             if k not in ("variant", "seed", "bar_position")})}


def book_split(meta: dict, file: str) -> dict:
    """A book's entry of the split (its chapters and its tokens' [first, end) in val.bin); for a
    one-book corpus, that book whatever its name."""
    books = meta["split"]["books"]
    if len(books) == 1:
        return books[0]
    for b in books:
        if b["file"] == file:
            return b
    raise ValueError(f"book={file}: not a corpus file of this data ({[b['file'] for b in books]})")


def book_sha(meta: dict, file: str) -> str:
    return next(f["sha256"] for f in meta["corpus"]["files"] if f["file"] == file)


def neurons_export(cfg: ExportConfig, data: Path, run_dir: Path) -> dict:
    """neurons.json without its provenance (command, date, code): the caller adds those.

    The neurons are chosen on the first validation chapters and shown and read on the rest,
    so what the page reads about a neuron comes from text its choice never saw."""
    if cfg.n_random < cfg.n_top:
        raise ValueError(f"n_random={cfg.n_random} < n_top={cfg.n_top}: the random controls must be at least"
                         " as many as the chosen neurons")
    ckpt = torch.load(run_dir / "ckpt.pt", map_location="cpu", weights_only=False)
    mcfg = ModelConfig(**ckpt["model_config"])
    model = GPT(mcfg)
    model.load_state_dict(ckpt["model"])
    model.eval()
    assert mcfg.d_ff and 0 <= cfg.layer < mcfg.n_layer, f"layer {cfg.layer} has no FFN in {mcfg}"
    meta = json.loads((data / "meta.json").read_text())
    pieces = [bytes.fromhex(h) for h in json.loads((data / "token_bytes.json").read_text())]
    book = book_split(meta, cfg.book)
    lo_tok, hi_tok = book["val_token_range"]
    val = torch.from_numpy(np.fromfile(data / "val.bin", dtype=np.uint16).astype(np.int64))[lo_tok:hi_tok]  # (N,)
    val_text = b"".join(pieces[i] for i in val.tolist()).decode("utf-8")
    val_touched = touched_chars([pieces[i] for i in val.tolist()], val_text)
    first_val_chapter = book["val_chapters"][0]
    n_val_chapters = book["val_chapters"][1] - first_val_chapter + 1
    split = split_at_chapter(val_text, first_val_chapter, cfg.select_chapters or n_val_chapters // 2)
    starts, boundary = split["starts"], split["boundary"]
    in_read = torch.tensor([a >= boundary for a, _ in val_touched])  # (N,) token t is in the reading part

    # Every validation token in the same non-overlapping windows as the val loss.
    block = mcfg.block_size
    windows = [(s, min(s + block, len(val)), min(s + block, len(val)) - s) for s in range(0, len(val), block)]
    acts = hidden_over_windows(model, val, cfg.layer, windows)  # (N, d_ff)
    select_max = acts[~in_read].max(dim=0).values  # (d_ff,) chooses the top neurons
    read_acts = acts.masked_fill(~in_read[:, None], float("-inf"))  # (N, d_ff) only the reading part counts
    read_max = read_acts.max(dim=0).values  # (d_ff,) the colour scale and the reading
    top = select_max.argsort(descending=True)[: cfg.n_top].tolist()
    rest = sorted(set(range(mcfg.d_ff)) - set(top))
    controls = random.Random(cfg.random_seed).sample(rest, cfg.n_random)

    # The passage: of the reading chapters' lines of min..max characters, the one where the chosen
    # neurons are most visible in the validation pass; then tokenized on its own, as the page shows it.
    tok = Tokenizer.from_file(str(data / "tokenizer.json"))
    candidates = candidate_lines(val_text, boundary, len(val_text), cfg.passage_min_chars, cfg.passage_max_chars)
    if not candidates:
        raise ValueError(f"no line of {cfg.passage_min_chars}-{cfg.passage_max_chars} characters in chapters"
                         f" {split['read'][0]}-{split['read'][1]}")
    scales = read_max.clamp(min=1e-9)  # (d_ff,)
    token_starts = [a for a, _ in val_touched]

    def line_score(offset: int, text: str) -> float:
        lo = bisect.bisect_left(token_starts, offset)
        hi = bisect.bisect_left(token_starts, offset + len(text))
        return visibility(acts[lo:hi], top, scales) if hi > lo else 0.0

    scores = [line_score(o, t) for o, t in candidates]
    offset, passage = candidates[max(range(len(candidates)), key=scores.__getitem__)]  # the first of a tie
    ids = tok.encode(passage).ids
    p_acts = hidden_over_windows(model, torch.tensor(ids), cfg.layer, context_windows(len(ids), block))  # (n, d_ff)
    score = visibility(p_acts, top, scales)
    p_pieces = [pieces[i] for i in ids]
    spans = char_spans(p_pieces, passage)

    def contexts(n: int) -> list[dict]:
        order = read_acts[:, n].argsort(descending=True).tolist()
        chosen = []
        for t in order:
            if not in_read[t]:
                break  # -inf: the selection part, never read
            if all(abs(t - c) >= cfg.context_gap for c in chosen):
                chosen.append(t)
            if len(chosen) == cfg.n_contexts:
                break
        out = []
        for t in chosen:
            a, b = val_touched[t]
            piece = pieces[int(val[t])]
            out.append({"activation": sig(acts[t, n].item(), cfg.digits), "chapter": chapter_at(starts, first_val_chapter, a),
                        "before": val_text[max(0, a - cfg.chars_before):a].replace("\n", " "),
                        "token": show(piece), "chars": val_text[a:b].replace("\n", " "),
                        "after": val_text[b:b + cfg.chars_after].replace("\n", " "),
                        "fragment": is_fragment(piece)})
        return out

    neurons = [{"index": n, "kind": kind, "select_max": sig(select_max[n].item(), cfg.digits),
                "read_max": sig(read_max[n].item(), cfg.digits),
                "activations": [sig(x, cfg.digits) for x in p_acts[:, n].tolist()], "top_contexts": contexts(n)}
               for kind, group in (("top", top), ("random", controls)) for n in group]
    n_select = int((~in_read).sum())
    return {
        "schema_version": schema.NEURONS_SCHEMA_VERSION,
        "model": run_record(run_dir),
        "corpus": {"file": book["file"], "sha256": book_sha(meta, book["file"])},
        "layer": {"index": cfg.layer, "number": cfg.layer + 1, "n_layer": mcfg.n_layer,
                  "convention": f"0-based block index {cfg.layer} = block {cfg.layer + 1} of {mcfg.n_layer}"
                                f" (第 {cfg.layer + 1} 层)"},
        "activation": "SwiGLU hidden value silu(x·W_gate)·(x·W_up), the input of the FFN down-projection;"
                      " x is the RMS-normed residual stream at the FFN entry",
        "d_ff": mcfg.d_ff,
        "split": {"select_chapters": split["select"], "read_chapters": split["read"],
                  "select_tokens": n_select, "read_tokens": len(val) - n_select,
                  "rule": "validation tokens by chapter (a token belongs to the chapter of its first character):"
                          " the first chapters choose the top neurons, the rest give every neuron's read_max,"
                          " top contexts and passage"},
        "passage": {"text": passage, "chapter": chapter_at(starts, first_val_chapter, offset), "val_char_offset": offset,
                    "candidates": len(candidates), "visibility": round(score, 4),
                    "rule": f"of the {len(candidates)} lines of {cfg.passage_min_chars}-{cfg.passage_max_chars}"
                            f" characters in the reading chapters (a longer line cut after its last 。), the one"
                            f" where the top neurons are most visible in the validation pass: the mean over them of"
                            f" their largest value in the line as a share of their read_max (capped at 1). Then"
                            f" tokenized on its own, each token seeing up to {block} preceding passage tokens;"
                            f" visibility is that score on these activations",
                    "tokens": [{"text": show(p), "start": a, "end": b, "fragment": is_fragment(p)}
                               for p, (a, b) in zip(p_pieces, spans)]},
        "selection": {"top": cfg.n_top, "random": cfg.n_random, "random_seed": cfg.random_seed,
                      "rule": f"top: the {cfg.n_top} neurons with the largest maximum activation over the selection"
                              f" chapters (the val loss's non-overlapping {block}-token windows), in descending order;"
                              f" random: random.Random({cfg.random_seed}).sample of the other neurons"},
        "neurons": neurons,
        "export_config": portable_config(asdict(cfg)),
        "model_config": portable_config(recorded_config(mcfg)),
    }


def run_export(cfg: ExportConfig, invoked: str = "python -m lab export") -> dict:
    """Write the three export files; `invoked` is this process's command line (without machine paths),
    recorded when neither cfg.command nor `all` (in work_dir/timing.json) gives one."""
    t0 = time.time()
    print("export config:", json.dumps(asdict(cfg), ensure_ascii=False))
    work, out = Path(cfg.work_dir), Path(cfg.out_dir)
    data = work / "data"
    meta = json.loads((data / "meta.json").read_text())
    ngram = json.loads((data / "ngram.json").read_text())
    runs = load_runs(work)
    timing = json.loads((work / "timing.json").read_text()) if (work / "timing.json").exists() else {}
    all_config = timing.get("config", {})

    variants = []
    for name, results in ((v, runs[v]) for v in VARIANTS):
        mc = results[0]["model_config"]
        variants.append({"name": name, "description": DESCRIPTIONS[name], "n_layer": mc["n_layer"],
                         "d_ff": mc["d_ff"], "ffn": ffn_kind(mc), "params": results[0]["params"],
                         "seeds": [r["seed"] for r in results],
                         "val_losses": [r["val_loss"] for r in results],
                         "train_losses": [r["train_loss"] for r in results],
                         "histories": [r["history"] for r in results]})
    floor_losses = runs["baseline"]
    baseline_band = band_per_step(floor_losses)
    vl = [r["val_loss"] for r in floor_losses]
    first = runs["baseline"][0]
    tc = first["config"]
    shared_train = portable_config({k: v for k, v in tc.items() if k not in ("variant", "seed", "bar_position")})
    ablation = {
        "schema_version": schema.SCHEMA_VERSION,
        "metric": "validation cross-entropy in nats per token over the full validation split",
        "tokens_per_run": first["tokens"],
        "variants": variants,
        "noise_floor": {"variant": "baseline", "seeds": [r["seed"] for r in floor_losses],
                        "min": min(vl), "max": max(vl), "range": round(max(vl) - min(vl), 6)},
        "baseline_band": baseline_band,
        "references": {"unigram": round(ngram["unigram"], 4), "bigram": round(ngram["bigram"], 4)},
        "train_config": shared_train,
    }

    neurons = neurons_export(cfg, data, work / f"{cfg.variant}-s{cfg.seed}")

    mc = first["model_config"]
    all_runs = [r for v in VARIANTS for r in runs[v]]
    device = first["device"].split(":")[0]
    # The code that trained: recorded by `all` when it started; else the code exporting now.
    commit, dirty = (timing["lab_commit"], timing["lab_dirty"]) if "lab_commit" in timing else git_lab_commit()
    tokens_per_step = tc["batch_size"] * tc["block_size"]
    init_std = inspect.signature(residual_init_std).parameters["init_std"].default  # the model's N(0, init_std)
    card = {
        "schema_version": schema.SCHEMA_VERSION,
        "name": "mingqing7-baseline-4l-d256",
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"),
        "command": cfg.command or timing.get("command") or invoked,
        "code": {"lab_commit": commit, "lab_dirty": dirty},
        "hardware": {"device": device,
                     "name": torch.cuda.get_device_name(0) if device == "cuda" and torch.cuda.is_available() else cpu_name(),
                     "cpu_count": os.cpu_count() or 1, "parallel_runs": int(all_config.get("jobs_resolved", 1)),
                     "threads_per_run": first["threads"], "bf16_autocast": first["bf16_autocast"],
                     "torch": torch.__version__},
        "corpus": meta["corpus"],
        "split": meta["split"],
        "tokenizer": {"type": meta["tokenizer"]["type"],
                      "library": f"tokenizers {__import__('tokenizers').__version__}",
                      "pre_tokenizer": "ByteLevel, no regex pre-split (merges may cross punctuation)",
                      "vocab_size": meta["tokenizer"]["vocab_size"], "trained_on": meta["tokenizer"]["trained_on"],
                      "fragment_tokens": meta["tokenizer"]["fragment_tokens"]},
        "architecture": {"type": "decoder-only Transformer", "n_layer": mc["n_layer"], "n_head": mc["n_head"],
                         "d_model": mc["d_model"], "d_ff": mc["d_ff"], "vocab_size": mc["vocab_size"],
                         "block_size": mc["block_size"], "position": f"RoPE (base {mc['rope_base']:g})",
                         "norm": "pre-norm RMSNorm with a weight, no bias", "ffn": FFN_NAMES[mc.get("ffn", "swiglu")],
                         "bias": False, "tied_embedding": True, "init_std": init_std,
                         "residual_init_std": residual_init_std(mc["n_layer"], init_std),
                         "residual_init_rule": "init_std / sqrt(2 * n_layer)"},
        "variants": [{k: v[k] for k in ("name", "description", "n_layer", "d_ff", "ffn", "params")} for v in variants],
        "training": {"steps": tc["steps"], "batch_size": tc["batch_size"], "block_size": tc["block_size"],
                     "tokens_per_step": tokens_per_step, "tokens_seen": first["tokens"],
                     "epochs": round(first["tokens"] / meta["split"]["train_tokens"], 2),
                     "optimizer": "AdamW", "lr": tc["lr"], "min_lr": tc["min_lr"],
                     "betas": [tc["beta1"], tc["beta2"]], "weight_decay": tc["weight_decay"],
                     "grad_clip": tc["grad_clip"], "warmup_steps": tc["warmup_steps"],
                     "schedule": "linear warmup, then cosine decay to min_lr", "dropout": tc["dropout"],
                     "precision": "bf16 autocast, fp32 weights; evaluation in fp32" if first["bf16_autocast"]
                     else "fp32",
                     "seeds": {v: [r["seed"] for r in runs[v]] for v in VARIANTS},
                     "baseline_final": {"seeds": [r["seed"] for r in floor_losses],
                                        "train_loss": round(mean([r["train_loss"] for r in floor_losses]), 4),
                                        "val_loss": round(mean(vl), 4),
                                        "train_minus_val": round(mean([r["train_loss"] for r in floor_losses])
                                                                 - mean(vl), 4)}},
        "protocol": {"band_variant": "baseline", "band_seeds": [r["seed"] for r in floor_losses],
                     "rule": PROTOCOL_RULE, "one_seed_factor": ONE_SEED_FACTOR},
        "references": {"unigram": round(ngram["unigram"], 4), "bigram": round(ngram["bigram"], 4),
                       "bigram_lambda": ngram["bigram_lambda"],
                       "note": f"same tokenizer and split; unigram {ngram['unigram_smoothing']}-smoothed, bigram"
                               f" linearly interpolated with it, weight picked on the"
                               f" {ngram['bigram_lambda_picked_on']}"},
        "timing": {"wall_seconds": 0.0, "prepare_seconds": round(timing.get("prepare_seconds", 0.0), 1),
                   "train_seconds": round(timing.get("train_seconds", 0.0), 1), "export_seconds": 0.0,
                   "runs": [{"variant": r["variant"], "seed": r["seed"], "wall_seconds": r["wall_seconds"],
                             "tokens_per_second": r["train_tokens_per_second"]} for r in all_runs]},
        "configs": {"prepare": portable_config(meta["config"]), "train": shared_train,
                    "export": portable_config(asdict(cfg)), "all": portable_config(all_config)},
    }
    export_s = time.time() - t0
    card["timing"]["export_seconds"] = round(export_s, 1)
    card["timing"]["wall_seconds"] = round(card["timing"]["prepare_seconds"] + card["timing"]["train_seconds"]
                                           + export_s, 1)

    neurons = {**neurons, "command": card["command"], "date": card["date"], "code": card["code"]}
    files = {"model-card.json": card, "ablation.json": ablation, "neurons.json": neurons}
    # Validate exactly the text that will be written (allow_nan=False: JSON has no NaN), all
    # three files before any is replaced.
    write_validated(out, files, lambda parsed: schema.validate_files(parsed))
    schema.validate_dir(out)
    return files


# The seeds protocol as the site applies it (widgets/common/seeds.py); the card records it in words.
ONE_SEED_FACTOR = 5
PROTOCOL_RULE = ("band: the baseline's max - min over its seeds at the same step, for the same loss; a variant is"
                 " paired with the baseline seed for seed (same batches, same init where shapes match); with two"
                 " or more pairs a difference counts when every paired difference has the same sign and their"
                 f" mean exceeds the band; with one pair, when the gap is at least {ONE_SEED_FACTOR} bands")


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


def band_per_step(results: list[dict]) -> list[dict]:
    """The baseline's spread over its seeds at every evaluation step all of them reached."""
    steps = sorted(set.intersection(*({h["step"] for h in r["history"]} for r in results)))
    out = []
    for step in steps:
        row = {"step": step}
        for key, name in (("train_loss", "train"), ("val_loss", "val")):
            vals = [next(h[key] for h in r["history"] if h["step"] == step) for r in results]
            row[name] = {"min": min(vals), "max": max(vals), "range": round(max(vals) - min(vals), 6)}
        out.append(row)
    return out


def write_validated(out: Path, files: dict, check) -> None:
    """Write {file name: object} as compact JSON into `out`, after `check` has accepted exactly the
    text that will be written (allow_nan=False: JSON has no NaN); nothing is replaced before that."""
    texts = {n: json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
             for n, obj in files.items()}
    check({n: json.loads(t) for n, t in texts.items()})
    out.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        tmp = out / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out / name)
    sizes = {n: (out / n).stat().st_size for n in files}
    print(f"export: wrote {', '.join(f'{n} ({s:,} B)' for n, s in sizes.items())} to {out}")


def run_neurons(cfg: ExportConfig, invoked: str = "python -m lab neurons") -> dict:
    """Rewrite only neurons.json from one trained checkpoint (work_dir/<variant>-s<seed>/), leaving the
    model card and the ablation as they are. The new file must agree with them (same corpus, same
    architecture: schema.validate_files), so it is checked against the two files already in out_dir.
    The command recorded is cfg.command or this process's command line (`invoked`)."""
    print("neurons config:", json.dumps(asdict(cfg), ensure_ascii=False))
    work, out = Path(cfg.work_dir), Path(cfg.out_dir)
    commit, dirty = git_lab_commit()
    neurons = neurons_export(cfg, work / "data", work / f"{cfg.variant}-s{cfg.seed}")
    neurons = {**neurons, "command": cfg.command or invoked,
               "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"),
               "code": {"lab_commit": commit, "lab_dirty": dirty}}
    others = {}
    for name in ("model-card.json", "ablation.json"):
        if not (out / name).exists():
            raise FileNotFoundError(f"{out / name} is missing: `neurons` rewrites neurons.json beside an existing"
                                    " export (run `all` or `export` first)")
        others[name] = json.loads((out / name).read_text(encoding="utf-8"))
    write_validated(out, {"neurons.json": neurons},
                    lambda parsed: schema.validate_files({**others, **parsed}))
    schema.validate_dir(out)
    return neurons


# --- the command: prepare -> train -> export -------------------------------------------------------


@dataclass
class AllConfig:
    seeds: int = 5  # the baseline runs seeds 0..seeds-1 (their spread is the noise floor)
    variant_seeds: int = 3  # every other variant runs seeds 0..variant_seeds-1
    per_variant: str = ""  # seed counts that differ from variant_seeds, e.g. "no_ffn:1,attn_only_12l:1"
    # Parallel training processes. 1 = one run at a time with every core: on 2 CPU cores one
    # 2-thread run did 11,800 tok/s, two 1-thread runs side by side 3,300-4,200 each.
    jobs: int = 1
    # "5,6,7": train these seeds of the baseline alone (the full schedule, ablation.json's settings) and
    # write baseline-seeds.json only; a seed ablation.json has is rerun for its per-step losses.
    extra_seeds: str = ""


def plan_estimate(work_dir: Path, plan: list[tuple[str, int]], steps: int, jobs: int) -> str:
    """The plan's remaining runs and their time at the pace of the finished runs in the work dir
    (each variant at its own pace where it has one: a model without an FFN trains faster)."""
    done = {}
    for p in Path(work_dir).glob("*-s*/result.json"):
        r = json.loads(p.read_text())
        done.setdefault(r["variant"], []).append(r)
    todo = [(v, s) for v, s in plan if not (Path(work_dir) / f"{v}-s{s}" / "result.json").exists()]
    if not todo:
        return "plan: every run is finished; exporting"
    if not done:
        return f"plan: {len(todo)} runs to train; no finished run in the work dir to time them by yet"
    every = [r for rs in done.values() for r in rs]
    seconds = sum(estimate_seconds({str(i): r for i, r in enumerate(done.get(v, every))}, steps) for v, _ in todo)
    return (f"plan: {len(todo)} of {len(plan)} runs to train, about {seconds / 60 / jobs:.0f} min at the pace of the"
            f" {len(every)} finished runs in the work dir")


def run_plan(seeds: int, variant_seeds: int, per_variant: str = "") -> list[tuple[str, int]]:
    """(variant, seed) in training order: seed 0 of every variant first, then round by round,
    so an interrupted `all` has a comparable set early.

    run_plan(2, 1) -> [("baseline", 0), ("linear_ffn", 0), ("no_ffn", 0), ("attn_only_12l", 0), ("baseline", 1)]
    run_plan(1, 2, "no_ffn:1,attn_only_12l:1") -> [("baseline", 0), ..., ("attn_only_12l", 0), ("linear_ffn", 1)]
    """
    counts = {v: variant_seeds for v in VARIANTS}
    counts["baseline"] = seeds
    for item in filter(None, per_variant.split(",")):
        name, _, n = item.partition(":")
        if name not in VARIANTS or not n.isdigit():
            raise SystemExit(f"per_variant: expected VARIANT:COUNT with a variant of {list(VARIANTS)}, got {item!r}")
        counts[name] = int(n)
    return round_robin(counts)


def run_command(corpus: str, out: str, work: str, overrides: list[str], command: str) -> None:
    """prepare -> every run of run_plan -> export; `command` is this command line (portable_command)."""
    a, p, t, e = split_overrides(overrides, [AllConfig, prepare.PrepareConfig, train.TrainConfig, ExportConfig])
    for forbidden in ("variant", "seed", "out_dir", "data_dir", "corpus", "work_dir"):
        if forbidden in t or forbidden in p or forbidden in e:
            raise SystemExit(f"`all` sets {forbidden} itself; use the single-step commands to choose it")
    all_cfg = config_from(AllConfig, a)
    if all_cfg.extra_seeds:
        run_extra_seeds(all_cfg, corpus, out, work, p, t, e.get("command") or command)
        return
    # A command= override is what the model card records (as `lab export` honours it), else
    # this command line with its absolute paths cut to file names.
    command = e.get("command") or command
    work_dir = Path(work)
    timing_file = work_dir / "timing.json"
    timing = json.loads(timing_file.read_text()) if timing_file.exists() else {}

    cuda = torch.cuda.is_available() and t.get("device", "auto") in ("auto", "cuda")
    plan = run_plan(all_cfg.seeds, all_cfg.variant_seeds, all_cfg.per_variant)
    n_runs = len(plan)
    jobs = 1 if cuda else max(1, min(all_cfg.jobs, n_runs))
    threads = max(1, (os.cpu_count() or 1) // jobs) if not cuda else 0
    # extra_seeds never reaches here (it returns above), so the card records the settings a full run used.
    full = {k: v for k, v in asdict(all_cfg).items() if k != "extra_seeds"}
    timing["config"] = {**full, "jobs_resolved": jobs, "threads_per_run": threads}
    # Provenance as of now, when this process has loaded lab/: a commit made while the
    # runs train must not be credited with them.
    timing["command"] = command
    timing["lab_commit"], timing["lab_dirty"] = git_lab_commit()
    print(f"all: {n_runs} runs, {jobs} at a time, {threads or 'default'} threads each; work dir {work_dir}")
    print(plan_estimate(work_dir, plan, t.get("steps", train.TrainConfig.steps), jobs))

    t0 = time.time()
    ensure_data(config_from(prepare.PrepareConfig, {**p, "corpus": corpus, "work_dir": str(work_dir)}))
    timing["prepare_seconds"] = time.time() - t0
    timing_file.write_text(json.dumps(timing, indent=1))

    runs = [config_from(train.TrainConfig, {**t, "variant": v, "seed": s, "data_dir": str(work_dir / "data"),
                                            "out_dir": str(work_dir / f"{v}-s{s}"),
                                            "threads": t.get("threads", threads)}) for v, s in plan]
    t1 = time.time()
    results = train_runs(runs, jobs)
    timing["train_seconds"] = timing.get("train_seconds", 0.0) + time.time() - t1
    timing_file.write_text(json.dumps(timing, indent=1))
    for r in results:
        print(f"  {r['variant']:>14} seed {r['seed']}: val {r['val_loss']:.4f}  ({r['wall_seconds']:.0f} s,"
              f" {r['train_tokens_per_second']:,.0f} tok/s)")

    run_export(config_from(ExportConfig, {**e, "work_dir": str(work_dir), "out_dir": out}), invoked=command)
    print(f"all: done in {time.time() - t0:.0f} s this invocation")


# --- later seeds of the baseline (baseline-seeds.json) ----------------------------------------

EXTRA_FILE = "baseline-seeds.json"


def extra_seed_list(text: str) -> list[int]:
    """extra_seed_list("5,6") -> [5, 6]"""
    try:
        seeds = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise SystemExit(f"extra_seeds: expected seeds such as 5,6,7, got {text!r}") from None
    if not seeds or min(seeds) < 0:
        raise SystemExit(f"extra_seeds: expected seeds such as 5,6,7, got {text!r}")
    return seeds


def step_losses(run_dir: Path, result: dict) -> list[float]:
    """Every optimizer step's training loss: result.json's, or (a run finished before it kept them)
    the checkpoint's state, which always has them."""
    if result.get("step_losses"):
        return result["step_losses"]
    ckpt = torch.load(run_dir / "ckpt.pt", map_location="cpu", weights_only=False)
    return ckpt["state"]["losses"]


def extra_row(run_dir: Path, result: dict, earlier_history) -> dict:
    """One baseline-seeds.json row; earlier_history is ablation.json's history of the seed (a rerun) or None."""
    history = [{k: h[k] for k in ("step", "tokens", "epochs", "train_loss", "val_loss", "val_by_book", "wall_seconds")
                if k in h} for h in result["history"]]
    diff = None
    if earlier_history is not None:
        mine = {h["step"]: h for h in history}
        diff = max(abs(mine[h["step"]][k] - h[k]) for h in earlier_history for k in ("train_loss", "val_loss"))
    return {"seed": result["seed"], "rerun": earlier_history is not None, "val_loss": result["val_loss"],
            "train_loss": result["train_loss"], "history": history,
            "step_losses": [round(x, 5) for x in step_losses(run_dir, result)],
            "wall_seconds": result["wall_seconds"], "tokens_per_second": result["train_tokens_per_second"],
            "threads": result["threads"], "rerun_max_diff": None if diff is None else round(diff, 6)}


def run_extra_seeds(all_cfg: AllConfig, corpus: str, out: str, work: str, p: dict, t: dict, command: str) -> dict:
    """Train the baseline's extra seeds with ablation.json's settings and write baseline-seeds.json
    beside it, keeping the rows of an earlier one that pairs with the same export."""
    seeds = extra_seed_list(all_cfg.extra_seeds)
    out_dir, work_dir = Path(out), Path(work)
    changed = sorted(k for k in t if k not in train.RESUMABLE_DIFFERENCES)
    if changed:
        raise SystemExit(f"extra_seeds: the runs take ablation.json's training settings; {changed} cannot be set")
    card = json.loads((out_dir / "model-card.json").read_text(encoding="utf-8"))
    ablation = json.loads((out_dir / "ablation.json").read_text(encoding="utf-8"))
    ensure_data(config_from(prepare.PrepareConfig, {**p, "corpus": corpus, "work_dir": str(work_dir)}))
    meta = json.loads((work_dir / "data" / "meta.json").read_text())
    if meta["corpus"] != card["corpus"]:
        raise SystemExit(f"extra_seeds: the work dir's corpus is not the one of {out_dir / 'model-card.json'}")
    commit, dirty = git_lab_commit()  # the code as this process loaded it
    fields = {f for f in train.TrainConfig.__dataclass_fields__}
    shared = {k: v for k, v in ablation["train_config"].items() if k in fields}
    base = next(v for v in ablation["variants"] if v["name"] == "baseline")
    histories = dict(zip(base["seeds"], base["histories"]))
    rows = {}
    for s in seeds:
        run_dir = work_dir / f"baseline-s{s}"
        cfg = config_from(train.TrainConfig, {**shared, **t, "variant": "baseline", "seed": s,
                                              "data_dir": str(work_dir / "data"), "out_dir": str(run_dir)})
        result = train.run(cfg)
        rows[s] = extra_row(run_dir, result, histories.get(s))
    earlier = []
    old_file = out_dir / EXTRA_FILE
    if old_file.exists():
        old = json.loads(old_file.read_text(encoding="utf-8"))
        kept = [r for r in old["seed_runs"] if r["seed"] not in rows]
        if old["pairs_with"]["date"] == card["date"] and kept:  # another export's rows are replaced
            kept_seeds = {r["seed"] for r in kept}
            for r in kept:
                rows[r["seed"]] = r
            earlier = [e for e in old["model_card"]["earlier"] if set(e["seeds"]) <= kept_seeds]
            mine = sorted(s for s in kept_seeds if not any(s in e["seeds"] for e in earlier))
            if mine:
                mc = old["model_card"]
                earlier.append({"date": mc["date"], "command": mc["command"], "code": mc["code"], "seeds": mine})
    first = rows[seeds[0]]
    device = "cuda" if torch.cuda.is_available() and t.get("device", "auto") in ("auto", "cuda") else "cpu"
    doc = {
        "schema_version": 1,
        "metric": ablation["metric"],
        "pairs_with": {"file": "ablation.json", "date": card["date"], "variant": "baseline"},
        "seed_runs": [rows[s] for s in sorted(rows)],
        "model_card": {
            "name": card["name"], "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d"),
            "command": command, "code": {"lab_commit": commit, "lab_dirty": dirty},
            "hardware": {"device": device, "name": cpu_name() if device == "cpu" else torch.cuda.get_device_name(0),
                         "cpu_count": os.cpu_count() or 1, "parallel_runs": 1, "threads_per_run": first["threads"],
                         "bf16_autocast": False, "torch": torch.__version__},
            "corpus": card["corpus"], "train_config": ablation["train_config"], "earlier": earlier},
    }
    write_validated(out_dir, {EXTRA_FILE: doc}, lambda parsed: schema.validate(EXTRA_FILE, parsed[EXTRA_FILE]))
    for r in doc["seed_runs"]:
        note = f" (rerun: largest difference from ablation.json {r['rerun_max_diff']})" if r["rerun"] else ""
        print(f"  baseline seed {r['seed']}: val {r['val_loss']:.4f}, train {r['train_loss']:.4f}{note}")
    return doc
