"""The piece every experiment shares: plan (variant, seed) runs, train them resumably, check that
they share data, budget and schedule, and the parts of a model card that are the same everywhere.

An experiment is a module of lab/experiments/ (see __init__.py) that holds its variants' roles,
its measurements and its export; this module holds what they have in common:

- the command: `run_command` routes `key=value` settings to the experiment's config, prepare's and
  train's, and calls the experiment's `run(cfg, prep, base, out, invoked)`;
- the data: `ensure_data` prepares the work dir once, or checks that its data came from this
  corpus with these settings;
- the runs: `round_robin` plans (variant, seed) pairs seed 0 of every variant first, `train_runs`
  trains them (one at a time with every core, or `jobs` processes), each resumable from its
  checkpoint in `work/<variant>-s<seed>/`; `parse_stops` reads `stop_early=NAME:STEP`;
  `check_same_settings` refuses runs whose settings differ beyond what the experiment varies;
- the export: `seed_band` (a variant's val-loss range over its seeds), `hardware`, `precision`,
  `utc_date`, `portable_config` (no machine path in anything exported), `sig`/`sig_all`.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, fields, replace
from pathlib import Path

import torch

from lab import prepare, train
from lab.model import GPT, ModelConfig, make_config, variant_overrides

LAB_DIR = Path(__file__).resolve().parents[1]  # lab/: what git_lab_commit reports on
REPO_DIR = LAB_DIR.parent
# Settings that name a place on the machine that ran the lab: never exported.
MACHINE_PATHS = ("work_dir", "out_dir", "data_dir")
# PrepareConfig fields added after the first exports, with the value that reproduces them.
LATER_PREPARE = {"val_fraction": 0.08}
# TrainConfig fields that never change a trajectory: runs may differ in them.
TRAJECTORY_FREE = ("variant", "seed", "out_dir", "data_dir", "eval_every", "ckpt_every", "device", "threads",
                   "progress", "bar_position", "stop_at", "snapshot_every")


# --- settings ------------------------------------------------------------------------------------


def config_from(cls, overrides: dict):
    """A config dataclass with overrides checked against its field names and cast to their types.

    config_from(train.TrainConfig, {"steps": "3"}).steps -> 3; config_from(train.TrainConfig, {"stepz": "3"}) -> ValueError
    """
    types = {f.name: f.type for f in fields(cls)}
    unknown = sorted(set(overrides) - set(types))
    if unknown:
        raise ValueError(f"unknown {cls.__name__} field(s): {unknown}; known: {sorted(types)}")
    cast = {"int": int, "float": float, "str": str, "bool": lambda v: v.lower() in ("1", "true", "yes", "on")}
    return cls(**{k: cast[types[k]](v) if isinstance(v, str) else v for k, v in overrides.items()})


def split_overrides(pairs: list[str], classes) -> list[dict]:
    """Route key=value pairs to the configs that have the key.

    split_overrides(["steps=5"], [prepare.PrepareConfig, train.TrainConfig]) -> [{}, {"steps": "5"}]
    """
    routed = [{} for _ in classes]
    for pair in pairs:
        if "=" not in pair:
            raise SystemExit(f"expected key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        hits = [i for i, c in enumerate(classes) if key in {f.name for f in fields(c)}]
        if not hits:
            known = sorted({f.name for c in classes for f in fields(c)})
            raise SystemExit(f"unknown setting {key!r}; known: {known}")
        for i in hits:
            routed[i][key] = value
    return routed


def portable_config(config: dict) -> dict:
    """A resolved config as the export records it: no path of this machine (the corpus by its
    file name; work, output and data directories and the command left out).

    portable_config({"corpus": "/data/sanguo.txt", "work_dir": "/data/runs", "steps": 5}) -> {"corpus": "sanguo.txt", "steps": 5}
    """
    out = {k: v for k, v in config.items() if k not in MACHINE_PATHS + ("command",)}
    if "corpus" in out:  # a file, or several comma-separated: their names
        out["corpus"] = ",".join(Path(p.strip()).name for p in out["corpus"].split(",") if p.strip())
    return out


def run_command(experiment, corpus: str, out: str, work: str, overrides: list[str], invoked: str) -> dict:
    """`python -m lab <experiment>` for an experiment with the standard shape: its own config
    (experiment.Config), prepare's and train's; one process, one run at a time with every core
    (torch's default threads on CUDA). The experiment sets variant, seed, out_dir, data_dir and
    stop_at of every run itself."""
    name = experiment.NAME
    r, p, t = split_overrides(overrides, [experiment.Config, prepare.PrepareConfig, train.TrainConfig])
    for forbidden in ("variant", "seed", "out_dir", "data_dir", "corpus", "work_dir", "stop_at"):
        if forbidden in t or forbidden in p:
            raise SystemExit(f"`{name}` sets {forbidden} itself; use the single-step commands or the --work option"
                             " to choose it")
    cuda = torch.cuda.is_available() and t.get("device", "auto") in ("auto", "cuda")
    threads = 0 if cuda else (os.cpu_count() or 1)
    base = config_from(train.TrainConfig, {**t, "data_dir": str(Path(work) / "data"), "threads": t.get("threads", threads)})
    prep = config_from(prepare.PrepareConfig, {**p, "corpus": corpus, "work_dir": work})
    return experiment.run(config_from(experiment.Config, r), prep, base, out, invoked)


# --- data and runs -------------------------------------------------------------------------------


def corpus_shas(meta_corpus: dict) -> list[tuple[str, str]]:
    """(file name, sha256) of every corpus file a work dir was prepared from (one file before books)."""
    files = meta_corpus.get("files") or [meta_corpus]
    return [(f["file"], f["sha256"]) for f in files]


def ensure_data(cfg: prepare.PrepareConfig) -> None:
    """prepare.run when cfg.work_dir has no data yet; else check that it was made from these corpus
    files, byte for byte, with these settings (the runs there were trained on it)."""
    work = Path(cfg.work_dir)
    meta_file = work / "data" / "meta.json"
    if not meta_file.exists():
        prepare.run(cfg)
        return
    meta = json.loads(meta_file.read_text())
    files = prepare.corpus_files(cfg.corpus)
    theirs_files = corpus_shas(meta["corpus"])
    if [f.name for f in files] != [n for n, _ in theirs_files]:
        raise SystemExit(f"{work / 'data'} was prepared from other corpus files ({[n for n, _ in theirs_files]});"
                         " choose another --work")
    for f, (name, sha) in zip(files, theirs_files):
        if prepare.sha256_of(f) != sha:
            raise SystemExit(f"corpus file {name}: its sha256 differs from the one {work / 'data'} was prepared"
                             f" with ({sha[:12]}…); nothing overwritten; choose another --work")
    mine, theirs = portable_config(asdict(cfg)), portable_config(meta["config"])
    diff = {k: (theirs.get(k), v) for k, v in mine.items() if k != "corpus" and theirs.get(k, LATER_PREPARE.get(k)) != v}
    if diff:
        raise SystemExit(f"{work / 'data'} was prepared with other settings (there, now): {diff}; choose another --work")
    print(f"reusing the prepared data in {work / 'data'}")


def round_robin(counts: dict[str, int]) -> list[tuple[str, int]]:
    """(variant, seed) in training order: seed 0 of every variant first, then round by round, so an
    interrupted experiment has a comparable set early.

    round_robin({"a": 2, "b": 1}) -> [("a", 0), ("b", 0), ("a", 1)]
    """
    return [(v, s) for s in range(max(counts.values(), default=0)) for v in counts if s < counts[v]]


def parse_stops(text: str, names) -> dict[str, int]:
    """`stop_early=NAME:STEP,...` -> {NAME: STEP}, each NAME one of `names`.

    parse_stops("b:400", ["a", "b"]) -> {"b": 400}
    """
    out = {}
    for item in filter(None, text.split(",")):
        name, _, n = item.partition(":")
        if name not in names or not n.isdigit():
            raise SystemExit(f"stop_early: expected VARIANT:STEP with a variant of {list(names)}, got {item!r}")
        out[name] = int(n)
    return out


def run_dir(work, name: str, seed: int) -> Path:
    """Where run (name, seed) lives: checkpoint and result.json. run_dir("w", "baseline", 0) -> Path('w/baseline-s0')"""
    return Path(work) / f"{name}-s{seed}"


def run_name(cfg: train.TrainConfig) -> str:
    """The run directory's name before -s<seed>: the variant, and the schedule when it is not the default one,
    so a longer run never takes (or is read as) the default run's place.
    run_name(train.TrainConfig(variant="baseline", steps=5600)) -> 'baseline-5600steps'"""
    default = train.TrainConfig.steps
    return cfg.variant if cfg.steps == default else f"{cfg.variant}-{cfg.steps}steps"


def train_runs(runs: list[train.TrainConfig], jobs: int = 1) -> list[dict]:
    """Train every run (each resumes from its checkpoint; a finished one is read back), `jobs` at a
    time. In parallel each run is its own `python -m lab train` process (a crash or kill loses only
    that run's last steps)."""
    if jobs <= 1:
        return [train.run(c) for c in runs]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_DIR), os.environ.get("PYTHONPATH")]))}
    pending, active = list(runs), {}  # active: slot -> (process, config)
    try:
        while pending or active:
            for slot in range(jobs):
                if slot not in active and pending:
                    cfg = replace(pending.pop(0), bar_position=slot)
                    args = [f"{k}={v}" for k, v in asdict(cfg).items()]
                    active[slot] = (subprocess.Popen([sys.executable, "-m", "lab", "train", *args], env=env), cfg)
            time.sleep(0.5)
            for slot, (proc, cfg) in list(active.items()):
                if proc.poll() is not None:
                    del active[slot]
                    if proc.returncode:
                        raise SystemExit(f"training {cfg.variant} seed {cfg.seed} failed (exit {proc.returncode});"
                                         " run the same command again to resume")
    finally:
        for proc, _ in active.values():
            proc.terminate()
            proc.wait()
    return [json.loads((c.resolved_out_dir() / "result.json").read_text()) for c in runs]


def check_same_settings(results: list[dict], varied=()) -> None:
    """Raise ValueError unless every run was trained with the same settings (variant, seed, the
    settings that do not change a trajectory and the experiment's own `varied` fields aside):
    same data, budget and schedule. A run recorded before a later TrainConfig field existed has
    that field's default."""
    ignore = set(TRAJECTORY_FREE) | set(varied)
    first = {k: v for k, v in {**train.LATER_FIELDS, **results[0]["config"]}.items() if k not in ignore}
    for r in results:
        other = {k: x for k, x in {**train.LATER_FIELDS, **r["config"]}.items() if k not in ignore}
        if other != first:
            diff = {k: (first.get(k), other.get(k)) for k in first.keys() | other.keys() if first.get(k) != other.get(k)}
            raise ValueError(f"runs differ in training settings: {r['variant']} seed {r['seed']}: {diff}")


def fresh_model(name: str, seed: int, vocab_size: int, tc: train.TrainConfig) -> GPT:
    """The model train.py builds for (variant, seed) before its first step."""
    torch.manual_seed(seed)
    return GPT(make_config(vocab_size=vocab_size, block_size=tc.block_size, dropout=tc.dropout,
                           **variant_overrides(name))).eval()


def load_model(path: Path) -> GPT:
    """The trained model of a run directory (its ckpt.pt), in eval mode."""
    ckpt = torch.load(Path(path) / "ckpt.pt", map_location="cpu", weights_only=False)
    model = GPT(ModelConfig(**ckpt["model_config"]))
    model.load_state_dict(ckpt["model"])
    return model.eval()


# --- the export ----------------------------------------------------------------------------------


def sig(x: float, digits: int) -> float:
    """Round to significant digits. sig(0.0123456, 3) -> 0.0123; sig(1234.5, 3) -> 1230.0"""
    return float(f"{x:.{digits}g}")


def sig_all(value, digits: int):
    """Every float in a nested value to `digits` significant digits. sig_all({"a": [0.123456]}, 3) -> {"a": [0.123]}"""
    if isinstance(value, float):
        return sig(value, digits)
    if isinstance(value, dict):
        return {k: sig_all(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [sig_all(v, digits) for v in value]
    return value


def corpus_label(meta: dict) -> str:
    """The corpus part of an export's model-card name: a one-file corpus by its file's stem, several
    books by their count. corpus_label({"corpus": {"files": [{"file": "tiny.txt"}]}}) -> 'tiny'"""
    files = meta["corpus"]["files"]
    return Path(files[0]["file"]).stem if len(files) == 1 else f"mingqing{len(files)}"


def one_book_history(history: list[dict]) -> list[dict]:
    """A run's evaluations in the shape the residual, mechanism, norm and gating exports still use
    (step, tokens, train and val loss): their schemas predate the per-book evaluations."""
    return [{k: h[k] for k in ("step", "tokens", "train_loss", "val_loss")} for h in history]


def finite(x):
    """None for NaN or infinity (JSON has neither), else x."""
    return x if x is None or math.isfinite(x) else None


def steps_of(result: dict) -> int:
    """Steps a run trained (a result.json from before stop_at has only the schedule's steps)."""
    return result.get("steps_trained", result["steps"])


def estimate_seconds(results: dict[str, dict], steps: int) -> float:
    """Seconds a run of `steps` steps would take at the mean pace of the runs trained so far."""
    paced = list(results.values())
    if not paced:
        return 0.0
    per_step = sum(r["wall_seconds"] for r in paced) / sum(steps_of(r) for r in paced)
    return per_step * steps


def band_from_ablation(path: Path) -> dict | None:
    """The baseline's seed band from the FFN experiment's committed export, with the precision its card names."""
    if not path.exists():
        return None
    ab = json.loads(path.read_text(encoding="utf-8"))
    floor = ab["noise_floor"]
    prec = json.loads((path.parent / "model-card.json").read_text(encoding="utf-8"))["training"].get("precision", "")
    return {"source": path.name, "seeds": floor["seeds"], "min": floor["min"], "max": floor["max"],
            "range": floor["range"], "precision": prec}


def run_timing(runs: list[dict], measure_s: float) -> dict:
    """The model card's timing block from the export's run rows (name, steps, wall time, speed)."""
    return {"runs": [{"run": r["name"], "seed": r["seed"], "steps_trained": r["steps_trained"],
                      "wall_seconds": r["wall_seconds"], "tokens_per_second": r["tokens_per_second"],
                      "threads": r["threads"], "reused": r["reused"]} for r in runs],
            "measure_seconds": round(measure_s, 1)}


def card_configs(meta: dict, train_config: dict, name: str, cfg) -> dict:
    """The model card's configs block: prepare's, train's (the per-run fields aside) and the experiment's."""
    return {"prepare": portable_config(meta["config"]),
            "train": portable_config({k: v for k, v in train_config.items()
                                      if k not in ("variant", "seed", "bar_position", "stop_at")}),
            name: portable_config(asdict(cfg))}


def seed_band(variant: str, results: list[dict]) -> dict:
    """A variant's val-loss range over its seeds (the noise floor a difference must clear).

    seed_band("b", [{"seed": 0, "val_loss": 5.0}, {"seed": 1, "val_loss": 5.5}])["range"] -> 0.5
    """
    vl = [r["val_loss"] for r in results]
    return {"variant": variant, "seeds": [r["seed"] for r in results],
            "min": min(vl), "max": max(vl), "range": round(max(vl) - min(vl), 6)}


def git_lab_commit() -> tuple[str | None, bool | None]:
    """The last commit touching lab/ and whether lab/ has uncommitted changes (None, None outside git)."""
    try:
        commit = subprocess.run(["git", "log", "-1", "--format=%H", "--", "."], cwd=LAB_DIR, capture_output=True,
                                text=True, check=True).stdout.strip() or None
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=LAB_DIR, capture_output=True,
                                    text=True, check=True).stdout.strip())
        return commit, dirty
    except (OSError, subprocess.CalledProcessError):
        return None, None


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def hardware(first: dict, parallel_runs: int = 1, **extra) -> dict:
    """The model card's hardware block from a run's result: device, its name, cores, runs at once,
    `extra` (in order), torch's version."""
    device = first["device"].split(":")[0]
    name = torch.cuda.get_device_name(0) if device == "cuda" and torch.cuda.is_available() else cpu_name()
    return {"device": device, "name": name, "cpu_count": os.cpu_count() or 1, "parallel_runs": parallel_runs,
            **extra, "torch": torch.__version__}


def precision(result: dict) -> str:
    """How a run computed. precision({"bf16_autocast": False}) -> 'fp32'"""
    return "bf16 autocast, fp32 weights; evaluation in fp32" if result["bf16_autocast"] else "fp32"


def utc_date() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")


def provenance(command: str, code: tuple) -> dict:
    """The model card's date, command and code (lab_commit, lab_dirty as the process loaded lab/)."""
    return {"date": utc_date(), "command": command, "code": {"lab_commit": code[0], "lab_dirty": code[1]}}
