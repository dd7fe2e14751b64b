"""Check an export against its contract: the JSON Schemas in data/schemas/real-model/.

Those schema files are the one definition of the export format: the lab validates
what it writes with them, and the site (course/data.py) validates what it reads
with the same files. This module only loads them, runs jsonschema, and adds the
checks a JSON Schema cannot express (lengths that must agree, spans that must tile
the passage, the noise floor that must be the range, one file agreeing with another).
No torch, no numpy:

    from lab.schema import validate_dir, SchemaError
    data = validate_dir("data/real-model")   # {"model-card.json": {...}, "ablation.json": {...}, "neurons.json": {...}}
    validate(RESIDUAL_FILE, json.load(open("data/real-model/residual/residual.json")))  # the residual experiment

Every error names the file and the key path, e.g.
    SchemaError: ablation.json: variants[1].val_losses[0]: 'x' is not of type 'number'
    SchemaError: model-card.json: corpus.sha256: missing key
"""
from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

import jsonschema
from referencing import Registry

from course.data import sibling_registry

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "data" / "schemas" / "real-model"
FILES = ("model-card.json", "ablation.json", "neurons.json")  # the FFN experiment, data/real-model/
RESIDUAL_FILE = "residual/residual.json"  # the residual experiment, data/real-model/residual/ (lab/residual.py)
MECHANISM_FILE = "residual/mechanism.json"  # its mechanism runs, beside it (lab/mechanism.py)
NORM_FILE = "norm/norm.json"  # the norm experiment, data/real-model/norm/ (lab/norm.py)
GATING_FILE = "gating/gating.json"  # the gating experiment, data/real-model/gating/ (lab/experiments/gating.py)
GATING_SEEDS_FILE = "gating/seeds.json"  # its extra seeds, beside it (the same module, extra_seeds=)
GATING_ARMS_FILE = "gating/arms.json"  # variants added after it, every seed (the same module, arm=)
ATTENTION_FILE = "attention/attention.json"  # the attention export, data/real-model/attention/ (lab/experiments/attention.py)
ATTENTION_FAILED_FILE = "attention/failed-run.json"  # the same measures of the run v2's health check flags (seed=4 file=failed-run.json)
BASELINE_SEEDS_FILE = "baseline-seeds.json"  # the baseline's later seeds, beside ablation.json (ffn, extra_seeds=)
TOKENIZER_SWEEP_FILE = "tokenizer/sweep.json"  # the vocabulary sweep, data/real-model/tokenizer/ (lab/experiments/tokenizer.py)
TOKENIZER_FILE = "tokenizer/tokenizer.json"  # our tokenizer in compact form, for the page's encoder (the same module)
TOKENIZER_NEIGHBOURS_FILE = "tokenizer/neighbours.json"  # a trained run's embedding neighbours (the same module)
ROPE_FILE = "rope/rope.json"  # RoPE's shift test and long windows on a trained run (lab/experiments/rope.py)
ROPE_ARMS_FILE = "rope/arms.json"  # the positions lesson's training arms, read (lab/experiments/rope_arms.py)
KV_CACHE_FILE = "kv-cache/kv-cache.json"  # generation with and without a KV cache on a trained run (lab/experiments/kv_cache.py)
INDUCTION_FILE = "induction/induction.json"  # the induction-head scan of finished runs (lab/experiments/induction.py)
INDUCTION_CURVES_FILE = "induction/curves.json"  # the same measures along training, on snapshots (the same module, part=curve)
COPY_TASK_FILE = "induction/copy-task.json"  # the synthetic copy task's arms along training (lab/experiments/copy_task.py)
EXPORTS = (*FILES, RESIDUAL_FILE, MECHANISM_FILE, NORM_FILE, GATING_FILE, GATING_SEEDS_FILE, GATING_ARMS_FILE,
           ATTENTION_FILE, ATTENTION_FAILED_FILE, BASELINE_SEEDS_FILE, TOKENIZER_SWEEP_FILE, TOKENIZER_FILE, TOKENIZER_NEIGHBOURS_FILE,
           ROPE_FILE, ROPE_ARMS_FILE, KV_CACHE_FILE, INDUCTION_FILE, INDUCTION_CURVES_FILE, COPY_TASK_FILE)


class SchemaError(ValueError):
    """An export file breaks its schema; the message starts with 'file: key.path:'."""


@cache
def schema_for(name: str) -> dict:
    """The JSON Schema of export file `name`. schema_for("ablation.json")["title"] -> 'Validation losses ...'"""
    if name not in EXPORTS:
        raise SchemaError(f"{name}: not an export file; expected one of {list(EXPORTS)}")
    return json.loads((SCHEMA_DIR / name.replace(".json", ".schema.json")).read_text(encoding="utf-8"))


@cache
def registry_for(name: str) -> Registry:
    """The schemas export `name`'s schema may $ref: the site's own lookup (course/data.py), so both
    sides resolve a reference alike."""
    return sibling_registry(SCHEMA_DIR / name.replace(".json", ".schema.json"), SCHEMA_DIR.parent.parent)


# The version the model card's and the ablation's schemas pin with {"const": N}: bump it there, in both.
# The model card and the ablation: the lab writes the newest version their schemas list (3, the
# seven-book edition); the site still reads 2, the 三國-only export, until the new runs replace it.
SCHEMA_VERSION = max(schema_for(FILES[0])["properties"]["schema_version"]["enum"])
assert max(schema_for("ablation.json")["properties"]["schema_version"]["enum"]) == SCHEMA_VERSION
# neurons.json has its own version: `python -m lab neurons` rewrites it alone, beside the other two.
NEURONS_SCHEMA_VERSION = schema_for("neurons.json")["properties"]["schema_version"]["const"]
# Each experiment versions its own format; the lab writes the newest (2: the seven-book edition's
# corpus and split blocks), the site still reads 1 until each experiment runs again.
RESIDUAL_SCHEMA_VERSION = max(schema_for(RESIDUAL_FILE)["properties"]["schema_version"]["enum"])
MECHANISM_SCHEMA_VERSION = max(schema_for(MECHANISM_FILE)["properties"]["schema_version"]["enum"])
NORM_SCHEMA_VERSION = max(schema_for(NORM_FILE)["properties"]["schema_version"]["enum"])
GATING_SCHEMA_VERSION = max(schema_for(GATING_FILE)["properties"]["schema_version"]["enum"])
GATING_SEEDS_SCHEMA_VERSION = schema_for(GATING_SEEDS_FILE)["properties"]["schema_version"]["const"]
GATING_ARMS_SCHEMA_VERSION = schema_for(GATING_ARMS_FILE)["properties"]["schema_version"]["const"]


def key_path(parts) -> str:
    """key_path(["variants", 1, "val_losses", 0]) -> 'variants[1].val_losses[0]'"""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _describe(err: jsonschema.ValidationError) -> tuple[str, str]:
    """(key path, message) of one violation; a missing or unexpected key is named in the path."""
    parts = list(err.absolute_path)
    if err.validator == "required":
        missing = [k for k in err.validator_value if k not in err.instance]
        return key_path(parts + missing[:1]), "missing key"
    if err.validator == "additionalProperties" and err.validator_value is False:
        extra = [k for k in err.instance if k not in err.schema.get("properties", {})]
        return key_path(parts + extra[:1]), "unexpected key (not in the schema)"
    if "propertyNames" in err.relative_schema_path:  # the error is about a key, not its value
        return key_path(parts + [err.instance]), "a key the schema forbids here"
    return key_path(parts), err.message


def validate(name: str, data) -> None:
    """Raise SchemaError (naming file and key path) unless data is a valid export file `name`."""
    validator = jsonschema.Draft202012Validator(schema_for(name), registry=registry_for(name))
    # A wrong schema_version first: it explains the rest (the other version's shape is checked).
    errors = sorted(validator.iter_errors(data),
                    key=lambda e: (list(e.absolute_path)[:1] != ["schema_version"], [str(p) for p in e.absolute_path]))
    if errors:
        path, msg = _describe(errors[0])
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise SchemaError(f"{name}: {path or '(top level)'}: {msg}{more}")
    _semantic(name, data)


def _semantic(name: str, data: dict):
    """Checks a JSON Schema cannot express: lengths agree, spans tile the passage, the floor is the range."""

    def fail(path, msg):
        raise SchemaError(f"{name}: {path}: {msg}")

    if name == "ablation.json":
        for i, v in enumerate(data["variants"]):
            for key in ("val_losses", "train_losses", "histories"):
                if len(v[key]) != len(v["seeds"]):
                    fail(f"variants[{i}].{key}", f"{len(v[key])} entries for {len(v['seeds'])} seeds")
        names = [v["name"] for v in data["variants"]]
        if len(set(names)) != len(names):
            fail("variants", f"a variant appears twice: {names}")
        floor = data["noise_floor"]
        runs = {v["name"]: v for v in data["variants"]}
        if floor["variant"] not in runs:
            fail("noise_floor.variant", f"{floor['variant']!r} is not a variant")
        losses = runs[floor["variant"]]["val_losses"]
        if floor["seeds"] != runs[floor["variant"]]["seeds"]:
            fail("noise_floor.seeds", "must be the seeds of the noise floor's variant")
        for key, want in (("min", min(losses)), ("max", max(losses)), ("range", max(losses) - min(losses))):
            if abs(floor[key] - want) > 1e-6:
                fail(f"noise_floor.{key}", f"{floor[key]} but the val losses give {want}")
        histories = runs[floor["variant"]]["histories"]
        for i, row in enumerate(data.get("baseline_band", [])):
            for key, part in (("train_loss", "train"), ("val_loss", "val")):
                vals = [h[key] for hist in histories for h in hist if h["step"] == row["step"]]
                if len(vals) != len(histories) or abs(row[part]["range"] - (max(vals) - min(vals))) > 1e-6:
                    fail(f"baseline_band[{i}].{part}", f"not the spread of the baseline's {key} at step {row['step']}")
    if name == RESIDUAL_FILE:
        _semantic_residual(data, fail)
    if name == MECHANISM_FILE:
        _semantic_mechanism(data, fail)
    if name == NORM_FILE:
        _semantic_norm(data, fail)
    if name == GATING_FILE:
        _semantic_gating(data, fail)
    if name == GATING_SEEDS_FILE:
        _semantic_gating_seeds(data, fail)
    if name == GATING_ARMS_FILE:
        _semantic_gating_arms(data, fail)
    if name in (ATTENTION_FILE, ATTENTION_FAILED_FILE):
        _semantic_attention(data, fail)
    if name == ROPE_FILE:
        _semantic_rope(data, fail)
    if name == ROPE_ARMS_FILE:
        _semantic_rope_arms(data, fail)
    if name == KV_CACHE_FILE:
        _semantic_kv_cache(data, fail)
    if name == INDUCTION_FILE:
        _semantic_induction(data, fail)
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
        kinds = [n["kind"] for n in data["neurons"]]
        sel = data["selection"]
        if kinds != ["top"] * sel["top"] + ["random"] * sel["random"]:
            fail("neurons", f"kinds {kinds} but selection asks for {sel['top']} top, then {sel['random']} random")
        tops = [n["select_max"] for n in data["neurons"] if n["kind"] == "top"]
        if tops != sorted(tops, reverse=True):
            fail("neurons", "top neurons must be in descending order of select_max")
        split = data["split"]
        if split["select_chapters"][1] + 1 != split["read_chapters"][0]:
            fail("split", "the reading chapters must follow the selection chapters")
        lo, hi = split["read_chapters"]
        if not lo <= passage["chapter"] <= hi:
            fail("passage.chapter", f"{passage['chapter']} is not a reading chapter ({lo}-{hi})")
        for i, n in enumerate(data["neurons"]):
            for k, c in enumerate(n["top_contexts"]):
                if not lo <= c["chapter"] <= hi:
                    fail(f"neurons[{i}].top_contexts[{k}].chapter", f"{c['chapter']} is not a reading chapter ({lo}-{hi})")
            if n["top_contexts"] and abs(n["top_contexts"][0]["activation"] - n["read_max"]) > 1e-3 * max(1.0, abs(n["read_max"])):
                fail(f"neurons[{i}].read_max", "must be the strongest top context's activation")
        layer = data["layer"]
        if layer["number"] != layer["index"] + 1 or not 0 <= layer["index"] < layer["n_layer"]:
            fail("layer", "number must be index + 1 and index within n_layer")


def _semantic_attention(data: dict, fail):
    mc = data["model_config"]
    heads = [(h["layer"], h["head"]) for h in data["measures"]["heads"]]
    want = [(l, h) for l in range(1, mc["n_layer"] + 1) for h in range(1, mc["n_head"] + 1)]
    if heads != want:
        fail("measures.heads", f"heads {heads}, want every (layer, head) in order")
    for i, p in enumerate(data["passages"]):
        T = len(p["tokens"])
        if len(p["weights"]) != mc["n_layer"] or any(len(layer) != mc["n_head"] for layer in p["weights"]):
            fail(f"passages[{i}].weights", "one matrix per layer and head")
        for layer in p["weights"]:
            for rows in layer:
                if [len(r) for r in rows] != list(range(1, T + 1)):
                    fail(f"passages[{i}].weights", "row t must hold t + 1 weights (keys 0..t)")
                if any(abs(sum(r) - 1000) > len(r) for r in rows):
                    fail(f"passages[{i}].weights", "a row's per mille weights must sum to 1000 (within rounding)")


def _semantic_rope(data: dict, fail):
    mc, shift, long, pairs = data["model_config"], data["shift"], data["long"], data["pairs"]
    if mc["head_dim"] * mc["n_head"] != mc["d_model"]:
        fail("model_config.head_dim", "head_dim x n_head must be d_model")
    for i, row in enumerate(shift["rows"]):
        T = row["tokens"]
        if row["positions"] != [[0, T - 1], [shift["shift"], shift["shift"] + T - 1]]:
            fail(f"shift.rows[{i}].positions", f"want 0..{T - 1} and then every position + {shift['shift']}")
    if shift["rows"][2]["model"] != shift["control"]["variant"] or shift["rows"][2]["trained"] != shift["control"]["trained"]:
        fail("shift.rows[2]", "the third row is the control")
    half = long["tokens"] // 2
    if len(long["loss_by_position"]) != long["tokens"] or len(long["alone_by_position"]) != half:
        fail("long", f"loss_by_position holds {long['tokens']} positions, alone_by_position {half}")
    for key, part in (("first_half", long["loss_by_position"][:half]), ("second_half", long["loss_by_position"][half:]),
                      ("second_half_alone", long["alone_by_position"])):
        if abs(sum(part) / len(part) - long[key]) > 1e-3:
            fail(f"long.{key}", "must be the mean of its positions")
    if (pairs["head_dim"], pairs["base"], pairs["context"]) != (mc["head_dim"], mc["rope_base"], mc["block_size"]):
        fail("pairs", "head_dim, base and context must be the model's")
    if not len(pairs["theta"]) == len(pairs["wavelength"]) == len(pairs["turns"]) == pairs["pairs"] == mc["head_dim"] // 2:
        fail("pairs", "one theta, wavelength and turns per pair, head_dim / 2 pairs")
    if pairs["slow"] != sum(t < 1 for t in pairs["turns"]):
        fail("pairs.slow", "must count the pairs that turn less than once")


def _first_difference(a: list, b: list):
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None if len(a) == len(b) else min(len(a), len(b)))


def _median(xs: list) -> float:
    s, n = sorted(xs), len(xs)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def _semantic_kv_cache(data: dict, fail):
    mc, gen, n = data["model_config"], data["generation"], data["generation"]["new_tokens"]
    if mc["head_dim"] * mc["n_head"] != mc["d_model"]:
        fail("model_config.head_dim", "head_dim x n_head must be d_model")
    if gen["positions"] != len(data["prompt"]["tokens"]) + n or gen["past_context"] != max(0, gen["positions"] - mc["block_size"]):
        fail("generation", "positions must be the prompt's tokens + new_tokens, past_context those past block_size")
    full, cached = data["full"]["tokens"], data["cached"]["tokens"]
    if len(full) != n or len(cached) != n:
        fail("full.tokens", f"the full and cached generations hold new_tokens = {n} tokens each")
    d = _first_difference(full, cached)
    if data["first_divergence"] != d or data["same_tokens"] != (d is None):
        fail("first_divergence", f"the tokens first differ at {d}: first_divergence and same_tokens must say so")
    steps = data["logit_diff_by_step"]
    if len(steps) != (n if d is None else d + 1):
        fail("logit_diff_by_step", "one value per step while the texts agree (and the step where they part)")
    if abs(max(steps) - data["max_abs_logit_diff"]) > 0.05 * data["max_abs_logit_diff"] + 1e-12:
        fail("max_abs_logit_diff", "must be the largest of logit_diff_by_step (to its rounding)")
    cache = data["cache"]
    if cache["tokens"] != gen["positions"] - 1 or cache["bytes_per_token"] != cache["per_token_formula"] \
            or cache["per_token_formula"] != 2 * mc["n_layer"] * mc["d_model"] * 4:
        fail("cache", "the cache holds every position but the last token's, 2 x n_layer x d_model x 4 bytes each")
    sp = data["speed"]
    if not len(sp["full_seconds"]) == len(sp["cached_seconds"]) == len(sp["full_cpu_seconds"]) \
            == len(sp["cached_cpu_seconds"]) == sp["repeats"]:
        fail("speed", "one time per repeat each way")
    for way in ("full", "cached"):
        want = n / _median(sp[f"{way}_seconds"])
        if abs(sp[f"{way}_tokens_per_second"] - want) > 0.01 * want + 0.1:
            fail(f"speed.{way}_tokens_per_second", f"must be new_tokens / the median time ({want:.1f})")
    if abs(sp["speedup"] - _median(sp["full_seconds"]) / _median(sp["cached_seconds"])) > 0.01 * sp["speedup"] + 0.01:
        fail("speed.speedup", "must be the median full time over the median cached time")
    names = [c["name"] for c in data["controls"]]
    if len(set(names)) != len(names):
        fail("controls", f"a control appears twice: {names}")
    for i, c in enumerate(data["controls"]):
        cd = _first_difference(full, c["tokens"])
        if len(c["tokens"]) != n or c["first_divergence"] != cd or c["same_tokens"] != (cd is None):
            fail(f"controls[{i}]", f"new_tokens tokens, first differing from the full generation's at {cd}")
        if len(c["forced"]["logit_diff_by_step"]) != n:
            fail(f"controls[{i}].forced.logit_diff_by_step", "one value per step")


def _semantic_induction(data: dict, fail):
    t = data["text"]
    if not (t["both_right"] <= min(t["copy_right"], t["bigram_right"]) and t["copy_right"] <= t["repeated"] <= t["positions"]
            and t["bigram_right"] <= t["positions"]):
        fail("text", "counts out of order: both_right <= copy_right <= repeated <= positions, both_right <= bigram_right <= positions")
    m = data["measures"]
    for key in ("early", "late"):
        if m[key][0] > m[key][1]:
            fail(f"measures.{key}", "a range [from, to] with from <= to")
    L = data["sequences"]["length"]
    want = sum(1 / (t + 1) for t in range(L, 2 * L)) / L  # the prefix average's weight on any one key, averaged
    for key in ("prefix_matching", "previous"):
        if abs(data["reference"][key] - want) > 1e-4:
            fail(f"reference.{key}", f"the prefix average gives {want:.4f} over queries {L}..{2 * L - 1}")
    pairs = [(r["variant"], r["seed"]) for r in data["runs"]]
    if len(set(pairs)) != len(pairs):
        fail("runs", "a (variant, seed) appears twice")
    for i, r in enumerate(data["runs"]):
        grid = [(h["layer"], h["head"]) for h in r["heads"]]
        if grid != [(a, b) for a in range(1, r["n_layer"] + 1) for b in range(1, r["n_head"] + 1)]:
            fail(f"runs[{i}].heads", "one row per layer and head, layer by layer")
        for part, a, b, d in (("repeat", "second", "first", "gain"), ("icl", "late", "early", "score")):
            if abs(r[part][a] - r[part][b] - r[part][d]) > 2e-4:
                fail(f"runs[{i}].{part}.{d}", f"must be {a} - {b}")
        if f"{r['variant']}-s{r['seed']}" in data["skipped"]:
            fail("skipped", f"{r['variant']}-s{r['seed']} is a run of this export")


def _semantic_rope_arms(data: dict, fail):
    names = [v["name"] for v in data["variants"]]
    pairs = [(r["variant"], r["seed"]) for r in data["runs"]]
    if len(set(pairs)) != len(pairs):
        fail("runs", "a (variant, seed) appears twice")
    if any(r["variant"] not in names for r in data["runs"]) or any(m[0] not in names for m in data["missing"]):
        fail("runs", f"every run and missing pair is one of the variants {names}")
    if {tuple(m) for m in data["missing"]} & set(pairs):
        fail("missing", "a finished run is listed as missing")
    for i, r in enumerate(data["runs"]):
        if r["history"][-1]["step"] != r["steps_trained"]:
            fail(f"runs[{i}].history", "must end at the run's last step")
    for i, m in enumerate(data["heads"]["models"]):
        mc = next((r["model_config"] for r in data["runs"]
                   if r["variant"] == m["variant"] and r["seed"] == data["heads"]["seed"]), None)
        if mc is None:
            fail(f"heads.models[{i}]", f"{m['variant']} seed {data['heads']['seed']} is not a run of this export")
        if len(m["heads"]) != mc["n_layer"] * m["n_head"]:
            fail(f"heads.models[{i}].heads", "one row per layer and head")


def _semantic_residual(data: dict, fail):
    variants = {}
    for i, v in enumerate(data["variants"]):
        for key in ("val_losses", "train_losses", "histories"):
            if len(v[key]) != len(v["seeds"]):
                fail(f"variants[{i}].{key}", f"{len(v[key])} entries for {len(v['seeds'])} seeds")
        if v["name"] in variants:
            fail(f"variants[{i}].name", f"{v['name']!r} appears twice")
        variants[v["name"]] = v
    band, base = data["baseline_band"], variants["baseline"]
    if band["seeds"] != base["seeds"]:
        fail("baseline_band.seeds", "must be the baseline's seeds")
    losses = base["val_losses"]
    for key, want in (("min", min(losses)), ("max", max(losses)), ("range", max(losses) - min(losses))):
        if abs(band[key] - want) > 1e-6:
            fail(f"baseline_band.{key}", f"{band[key]} but the val losses give {want}")
    seeds = data["model_card"]["training"]["seeds"]
    if seeds != {n: v["seeds"] for n, v in variants.items()} or list(seeds) != list(variants):
        fail("model_card.training.seeds", f"{seeds} but variants has {({n: v['seeds'] for n, v in variants.items()})}")
    for i, m in enumerate(data["stream"]["models"]):
        if m["variant"] not in variants:
            fail(f"stream.models[{i}].variant", f"{m['variant']!r} is not a variant")
        n_layer = variants[m["variant"]]["n_layer"]
        if len(m["points"]) != 2 * n_layer + 1:
            fail(f"stream.models[{i}].points", f"{len(m['points'])} points for {n_layer} blocks (want 2 * n_layer + 1)")
        for k, point in enumerate(m["points"]):
            want = ("embedding", None) if k == 0 else (("attention", "ffn")[(k - 1) % 2], (k + 1) // 2)
            if point["writes"] != k or (point["write"], point["block"]) != want:
                fail(f"stream.models[{i}].points[{k}]", f"writes/write/block must be {k}/{want[0]}/{want[1]}")
    for i, m in enumerate(data["gradients"]["models"]):
        if m["variant"] not in variants:
            fail(f"gradients.models[{i}].variant", f"{m['variant']!r} is not a variant")
        n_layer = variants[m["variant"]]["n_layer"]
        if [b["block"] for b in m["blocks"]] != list(range(1, n_layer + 1)):
            fail(f"gradients.models[{i}].blocks", f"must be blocks 1..{n_layer} in order")


def _semantic_mechanism(data: dict, fail):
    names = [v["name"] for v in data["variants"]]
    if len(set(names)) != len(names):
        fail("variants", f"a variant appears twice: {names}")
    steps = data["model_card"]["training"]["steps"]
    for i, v in enumerate(data["variants"]):
        if v["steps_trained"] > steps:
            fail(f"variants[{i}].steps_trained", f"{v['steps_trained']} > the schedule's {steps} steps")
        if v["history"][-1]["step"] != v["steps_trained"] or v["history"][-1]["val_loss"] != v["val_loss"]:
            fail(f"variants[{i}].history", "must end at steps_trained with the variant's val_loss")
        probe_steps = [p["step"] for p in v["probes"]]
        if probe_steps != [0] + [h["step"] for h in v["history"]]:
            fail(f"variants[{i}].probes", f"steps {probe_steps}: want 0, then every evaluation's")
    graded = [m["variant"] for m in data["gradients"]["models"]]
    if graded != names:
        fail("gradients.models", f"variants {graded}, want {names}")


def _semantic_norm(data: dict, fail):
    names = [r["name"] for r in data["runs"]]
    if len(set(names)) != len(names):
        fail("runs", f"a run appears twice: {names}")
    if names[:1] != ["baseline"]:
        fail("runs", "the baseline's full run comes first")
    steps = data["model_card"]["training"]["steps"]
    every = data["model_card"]["configs"]["norm"]["curve_every"]
    for i, r in enumerate(data["runs"]):
        if r["steps_trained"] > steps:
            fail(f"runs[{i}].steps_trained", f"{r['steps_trained']} > the schedule's {steps} steps")
        if r["history"][-1]["step"] != r["steps_trained"] or r["history"][-1]["val_loss"] != r["val_loss"]:
            fail(f"runs[{i}].history", "must end at steps_trained with the run's val_loss")
        if len(r["train_curve"]) != -(-r["steps_trained"] // every):
            fail(f"runs[{i}].train_curve", f"{len(r['train_curve'])} points for {r['steps_trained']} steps")
    for key in ("placement", ):
        for n in data[key]["runs"]:
            if n not in names:
                fail(f"{key}.runs", f"{n!r} is not a run")
    for i, g in enumerate(data["gains"]["models"]):
        if g["run"] not in names:
            fail(f"gains.models[{i}].run", f"{g['run']!r} is not a run")
    for i, m in enumerate(data["gradients"]["models"]):
        if [b["block"] for b in m["blocks"]] != list(range(1, m["n_layer"] + 1)):
            fail(f"gradients.models[{i}].blocks", f"must be blocks 1..{m['n_layer']} in order")
    timed = [t["run"] for t in data["model_card"]["timing"]["runs"]]
    if timed != names:
        fail("model_card.timing.runs", f"runs {timed}, want {names}")


def _semantic_gating(data: dict, fail):
    names = [r["name"] for r in data["runs"]]
    if len(set(names)) != len(names):
        fail("runs", f"a run appears twice: {names}")
    if names[:1] != ["baseline"]:
        fail("runs", "the baseline's full run comes first")
    counts = {r["ffn_params_per_layer"] for r in data["runs"]}
    if len(counts) != 1:
        fail("runs", f"the FFNs must have equal parameters per layer, got {sorted(counts)}")
    _histories_end(data["runs"], "runs", fail)
    limits = set(data["ranges"]["limits"])
    for i, m in enumerate(data["ranges"]["models"]):
        if m["run"] not in names:
            fail(f"ranges.models[{i}].run", f"{m['run']!r} is not a run")
        gated = m["ffn"] in ("swiglu", "bilinear")
        for j, layer in enumerate(m["layers"]):
            where = f"ranges.models[{i}].layers[{j}]"
            if layer["block"] != j + 1:
                fail(f"{where}.block", f"must be {j + 1}")
            if ("gate" in layer) != gated:
                fail(f"{where}.gate", "a gated FFN has a gate reading, a two-matrix FFN none")
            if set(layer["clamped_share"]) != limits:
                fail(f"{where}.clamped_share", f"one entry per limit: {sorted(limits)}")
    timed = [t["run"] for t in data["model_card"]["timing"]["runs"]]
    if timed != names:
        fail("model_card.timing.runs", f"runs {timed}, want {names}")


def _histories_end(rows: list[dict], key: str, fail):
    for i, r in enumerate(rows):
        if r["history"][-1]["step"] != r["steps_trained"] or r["history"][-1]["val_loss"] != r["val_loss"]:
            fail(f"{key}[{i}].history", "must end at steps_trained with the run's val_loss")


def _seed_rows(data: dict, fail):
    """seeds.json's and arms.json's rows: histories that end where the run did, no (variant, seed)
    twice, no baseline row (its seeds are the FFN experiment's)."""
    rows = data["seed_runs"]
    _histories_end(rows, "seed_runs", fail)
    pairs = [(r["name"], r["seed"]) for r in rows]
    if len(set(pairs)) != len(pairs):
        fail("seed_runs", f"a (variant, seed) appears twice: {pairs}")
    for i, r in enumerate(rows):
        if r["name"] == "baseline":
            fail(f"seed_runs[{i}].name", "the baseline's seeds are the FFN experiment's (ablation.json)")


def _semantic_gating_arms(data: dict, fail):
    """What arms.json's schema cannot say; that its arms are not gating.json's is checked where both
    are read (the lab before training, the site's facts)."""
    _seed_rows(data, fail)


def _semantic_gating_seeds(data: dict, fail):
    """What seeds.json's schema cannot say; that its variants and steps are gating.json's is checked
    where both are read (the lab before training, the site's facts)."""
    _seed_rows(data, fail)
    rows = data["seed_runs"]
    pairs = [(r["name"], r["seed"]) for r in rows]
    for i, r in enumerate(rows):
        if r["seed"] == data["pairs_with"]["run_seed"]:
            fail(f"seed_runs[{i}].seed", f"seed {r['seed']} is gating.json's own")
    if len({r["steps_trained"] for r in rows}) != 1:
        fail("seed_runs", "every extra seed trains the whole schedule")
    timed = [(t["run"], t["seed"]) for t in data["model_card"]["timing"]["runs"]]
    if timed != pairs:
        fail("model_card.timing.runs", f"runs {timed}, want {pairs}")
    said = [sd for e in data["model_card"].get("earlier", []) for sd in e["seeds"]]
    if len(set(said)) != len(said) or not set(said) < {r["seed"] for r in rows}:
        fail("model_card.earlier", f"seeds {said}: each once, each in seed_runs, and not all of them (this"
                                   " export's own command trained the rest)")


def write_validated(name: str, doc: dict, out_dir) -> Path:
    """Validate exactly the text about to be written as export `name` (e.g. RESIDUAL_FILE), replace
    out_dir/<its file name> atomically, and validate what landed. Returns the path written."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"
    validate(name, json.loads(text))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path, tmp = out / Path(name).name, out / f".{Path(name).name}.tmp"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    validate(name, json.loads(path.read_text(encoding="utf-8")))
    return path


def validate_dir(path) -> dict:
    """Load and validate the three export files in `path`; return them by file name."""
    out = {}
    for name in FILES:
        file = Path(path) / name
        if not file.exists():
            raise SchemaError(f"{name}: missing from {path}")
        try:
            out[name] = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise SchemaError(f"{name}: line {e.lineno}: invalid JSON: {e.msg}") from None
    return validate_files(out)


def validate_files(out: dict) -> dict:
    """Validate the three export files ({file name: parsed JSON}) and that they agree with each other."""
    for name in FILES:
        if name not in out:
            raise SchemaError(f"{name}: missing")
        validate(name, out[name])
    card, ablation = out["model-card.json"], out["ablation.json"]
    described = [{k: v[k] for k in card["variants"][0]} for v in ablation["variants"]]
    for i, (mine, theirs) in enumerate(zip(card["variants"], described)):
        if mine != theirs:
            raise SchemaError(f"model-card.json: variants[{i}]: {mine} but ablation.json says {theirs}")
    if len(card["variants"]) != len(described):
        raise SchemaError(f"model-card.json: variants: {len(card['variants'])} but ablation.json has {len(described)}")
    seeds = {v["name"]: v["seeds"] for v in ablation["variants"]}
    if card["training"]["seeds"] != seeds or list(card["training"]["seeds"]) != list(seeds):
        raise SchemaError(f"model-card.json: training.seeds: {card['training']['seeds']} but ablation.json has {seeds}")
    # neurons.json may be exported on its own (`python -m lab neurons`): it must still be our model.
    neurons = out["neurons.json"]
    book = neurons["corpus"]["file"]
    files = {f["file"]: f["sha256"] for f in card["corpus"].get("files", [card["corpus"]])}
    if files.get(book) != neurons["corpus"]["sha256"]:
        raise SchemaError(f"neurons.json: corpus: {book} with that sha256 is not a corpus file of model-card.json")
    books = card["split"].get("books", [{"file": book, **card["split"]}])
    val = next(b["val_chapters"] for b in books if b["file"] == book)
    if [neurons["split"]["select_chapters"][0], neurons["split"]["read_chapters"][1]] != val:
        raise SchemaError(f"neurons.json: split: the chapters do not cover {book}'s validation chapters {val}")
    arch, mc = card["architecture"], neurons["model_config"]
    for key in ("n_layer", "n_head", "d_model", "vocab_size", "block_size"):
        if mc.get(key) != arch[key]:
            raise SchemaError(f"neurons.json: model_config.{key}: {mc.get(key)} but model-card.json has {arch[key]}")
    variant = next((v for v in card["variants"] if v["name"] == neurons["model"]["variant"]), None)
    if variant is None or variant["d_ff"] != neurons["d_ff"]:
        raise SchemaError(f"neurons.json: model.variant: {neurons['model']['variant']!r} with d_ff {neurons['d_ff']}"
                          " is not a variant of model-card.json")
    return out
