"""The export format of data/real-model/, checked with the standard library only.

lab's tests and export use this module (no torch, no numpy); the site, which never imports lab/, checks the same files with data/schemas/real-model/:

    from lab.schema import validate_dir, SchemaError
    data = validate_dir("data/real-model")   # {"model-card.json": {...}, "ablation.json": {...}, "neurons.json": {...}}

Every error names the file and the key path, e.g.
    SchemaError: ablation.json: variants[1].val_losses[0]: expected a number, got 'x'
"""
from __future__ import annotations

import json
from pathlib import Path

SCHEMA_VERSION = 1
FILES = ("model-card.json", "ablation.json", "neurons.json")


class SchemaError(ValueError):
    """An export file breaks its schema; the message starts with 'file: key.path:'."""


# Spec language: a type (int, float = any real number, str, bool, dict = any object),
# a list [spec] (every item), a dict {key: spec} (exactly these keys), Optional(spec),
# OneOf(values...).
class Optional:
    def __init__(self, spec):
        self.spec = spec


class OneOf:
    def __init__(self, *values):
        self.values = values


RUN_HISTORY = [{"step": int, "tokens": int, "train_loss": float, "val_loss": float}]

SPECS = {
    "model-card.json": {
        "schema_version": int,
        "name": str,
        "date": str,  # UTC date of the export, YYYY-MM-DD
        "command": str,  # the command that produced the export
        "code": {"lab_commit": Optional(str), "lab_dirty": Optional(bool)},
        "hardware": {"device": OneOf("cpu", "cuda"), "name": str, "cpu_count": int, "parallel_runs": int,
                     "threads_per_run": int, "bf16_autocast": bool, "torch": str},
        "corpus": {"file": str, "sha256": str, "bytes": int, "chars": int, "chapters": int},
        "split": {"rule": str, "train_chapters": [int], "val_chapters": [int], "train_first_title": str,
                  "val_first_title": str, "train_chars": int, "val_chars": int, "train_tokens": int,
                  "val_tokens": int},
        "tokenizer": {"type": str, "library": str, "pre_tokenizer": str, "vocab_size": int, "trained_on": str,
                      "fragment_tokens": int},
        "architecture": {"type": str, "n_layer": int, "n_head": int, "d_model": int, "d_ff": int,
                         "vocab_size": int, "block_size": int, "position": str, "norm": str, "ffn": str,
                         "bias": bool, "tied_embedding": bool, "init_std": float, "residual_init_std": float},
        "variants": [{"name": str, "description": str, "n_layer": int, "d_ff": int, "params": int}],
        "training": {"steps": int, "batch_size": int, "block_size": int, "tokens_per_step": int,
                     "tokens_seen": int, "epochs": float, "optimizer": str, "lr": float, "min_lr": float,
                     "betas": [float], "weight_decay": float, "grad_clip": float, "warmup_steps": int,
                     "schedule": str, "dropout": float, "precision": str, "seeds": {"baseline": [int],
                     "no_ffn": [int], "attn_only_12l": [int]}},
        "references": {"unigram": float, "bigram": float, "bigram_lambda": float, "note": str},
        "timing": {"wall_seconds": float, "prepare_seconds": float, "train_seconds": float,
                   "export_seconds": float,
                   "runs": [{"variant": str, "seed": int, "wall_seconds": float, "tokens_per_second": float}]},
        "configs": {"prepare": dict, "train": dict, "export": dict, "all": dict},
    },
    "ablation.json": {
        "schema_version": int,
        "metric": str,
        "tokens_per_run": int,
        "variants": [{"name": str, "description": str, "n_layer": int, "d_ff": int, "params": int,
                      "seeds": [int], "val_losses": [float], "train_losses": [float],
                      "histories": [RUN_HISTORY]}],
        "noise_floor": {"variant": str, "seeds": [int], "min": float, "max": float, "range": float},
        "references": {"unigram": float, "bigram": float},
        "train_config": dict,
    },
    "neurons.json": {
        "schema_version": int,
        "model": {"variant": str, "seed": int},
        "layer": {"index": int, "number": int, "n_layer": int, "convention": str},
        "activation": str,
        "d_ff": int,
        "passage": {"text": str, "chapter": int, "val_char_offset": int,
                    "tokens": [{"text": str, "start": int, "end": int, "fragment": bool}]},
        "selection": {"top": int, "random": int, "random_seed": int, "rule": str},
        "neurons": [{"index": int, "kind": OneOf("top", "random"), "max_activation": float,
                     "activations": [float],
                     "top_contexts": [{"activation": float, "before": str, "token": str, "chars": str,
                                       "after": str, "fragment": bool}]}],
        "export_config": dict,
        "model_config": dict,
    },
}


def _check(spec, value, path: str, file: str):
    def fail(msg):
        raise SchemaError(f"{file}: {path or '(top level)'}: {msg}")

    if isinstance(spec, Optional):
        if value is not None:
            _check(spec.spec, value, path, file)
    elif isinstance(spec, OneOf):
        if value not in spec.values:
            fail(f"expected one of {list(spec.values)}, got {value!r}")
    elif spec is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            fail(f"expected a number, got {value!r}")
    elif spec is int:
        if isinstance(value, bool) or not isinstance(value, int):
            fail(f"expected an integer, got {value!r}")
    elif spec in (str, bool, dict):
        if not isinstance(value, spec):
            fail(f"expected {spec.__name__}, got {value!r}")
    elif isinstance(spec, list):
        if not isinstance(value, list):
            fail(f"expected a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            _check(spec[0], item, f"{path}[{i}]", file)
    elif isinstance(spec, dict):
        if not isinstance(value, dict):
            fail(f"expected an object, got {type(value).__name__}")
        missing = [k for k in spec if k not in value]
        extra = [k for k in value if k not in spec]
        if missing:
            raise SchemaError(f"{file}: {_join(path, missing[0])}: missing key")
        if extra:
            raise SchemaError(f"{file}: {_join(path, extra[0])}: unexpected key (not in lab/schema.py)")
        for k, sub in spec.items():
            _check(sub, value[k], _join(path, k), file)
    else:
        raise TypeError(f"bad spec {spec!r}")


def _join(path, key):
    return f"{path}.{key}" if path else key


def _semantic(name: str, data: dict):
    """Checks a type spec cannot express: lengths agree, spans tile the passage, the floor is the range."""

    def fail(path, msg):
        raise SchemaError(f"{name}: {path}: {msg}")

    if data["schema_version"] != SCHEMA_VERSION:
        fail("schema_version", f"expected {SCHEMA_VERSION}, got {data['schema_version']}")
    if name == "ablation.json":
        for i, v in enumerate(data["variants"]):
            for key in ("val_losses", "train_losses", "histories"):
                if len(v[key]) != len(v["seeds"]):
                    fail(f"variants[{i}].{key}", f"{len(v[key])} entries for {len(v['seeds'])} seeds")
            if not v["seeds"]:
                fail(f"variants[{i}].seeds", "no runs")
        floor = data["noise_floor"]
        runs = {v["name"]: v for v in data["variants"]}
        if floor["variant"] not in runs:
            fail("noise_floor.variant", f"{floor['variant']!r} is not a variant")
        losses = runs[floor["variant"]]["val_losses"]
        if len(losses) < 2 or floor["seeds"] != runs[floor["variant"]]["seeds"]:
            fail("noise_floor.seeds", "needs the variant's seeds, at least 2")
        for key, want in (("min", min(losses)), ("max", max(losses)), ("range", max(losses) - min(losses))):
            if abs(floor[key] - want) > 1e-6:
                fail(f"noise_floor.{key}", f"{floor[key]} but the val losses give {want}")
    if name == "neurons.json":
        passage = data["passage"]
        pos = 0
        for i, tok in enumerate(passage["tokens"]):
            if tok["start"] != pos or tok["end"] < tok["start"]:
                fail(f"passage.tokens[{i}]", f"span [{tok['start']}, {tok['end']}) does not continue at {pos}")
            if not tok["fragment"] and passage["text"][tok["start"]:tok["end"]] != tok["text"]:
                fail(f"passage.tokens[{i}].text", f"{tok['text']!r} differs from the passage at its span")
            pos = tok["end"]
        if pos != len(passage["text"]):
            fail("passage.tokens", f"spans cover {pos} of {len(passage['text'])} characters")
        for i, n in enumerate(data["neurons"]):
            if len(n["activations"]) != len(passage["tokens"]):
                fail(f"neurons[{i}].activations", f"{len(n['activations'])} values for {len(passage['tokens'])} tokens")
            if not 0 <= n["index"] < data["d_ff"]:
                fail(f"neurons[{i}].index", f"{n['index']} outside 0..{data['d_ff'] - 1}")
        indices = [n["index"] for n in data["neurons"]]
        if len(set(indices)) != len(indices):
            fail("neurons", "a neuron appears twice")
        layer = data["layer"]
        if layer["number"] != layer["index"] + 1 or not 0 <= layer["index"] < layer["n_layer"]:
            fail("layer", "number must be index + 1 and index within n_layer")


def validate(name: str, data) -> None:
    """Raise SchemaError (naming file and key path) unless data is a valid export file `name`."""
    if name not in SPECS:
        raise SchemaError(f"{name}: not an export file; expected one of {list(FILES)}")
    _check(SPECS[name], data, "", name)
    _semantic(name, data)


def validate_dir(path) -> dict:
    """Load and validate the three export files in `path`; return them by file name."""
    out = {}
    for name in FILES:
        file = Path(path) / name
        if not file.exists():
            raise SchemaError(f"{name}: missing from {path}")
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise SchemaError(f"{name}: line {e.lineno}: invalid JSON: {e.msg}") from None
        validate(name, data)
        out[name] = data
    card, ablation = out["model-card.json"], out["ablation.json"]
    params = {v["name"]: v["params"] for v in card["variants"]}
    for i, v in enumerate(ablation["variants"]):
        if params.get(v["name"]) != v["params"]:
            raise SchemaError(f"ablation.json: variants[{i}].params: {v['params']} but model-card.json says "
                              f"{params.get(v['name'])}")
    return out
