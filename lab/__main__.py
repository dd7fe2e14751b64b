"""The lab's command line.

    python -m lab all --corpus PATH --out data/real-model [key=value ...]
    python -m lab prepare --corpus PATH [key=value ...]
    python -m lab train [variant=no_ffn seed=0 ...]
    python -m lab export --out data/real-model [key=value ...]
    python -m lab neurons --work ../lab-runs --out data/real-model [key=value ...]   (neurons.json only)
    python -m lab residual --corpus PATH --out data/real-model/residual [key=value ...]
    python -m lab mechanism --corpus PATH --out data/real-model/residual [key=value ...]
    python -m lab norm --corpus PATH --out data/real-model/norm [key=value ...]

key=value pairs override config fields (PrepareConfig, TrainConfig, ExportConfig,
AllConfig, residual.ResidualConfig, mechanism.MechanismConfig, norm.NormConfig); a key that no stage's config has is an error. Re-running a command
resumes: finished runs are skipped, interrupted ones continue from their checkpoint.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path, PureWindowsPath

from lab import export, mechanism, norm, prepare, residual, train
from lab.model import VARIANTS


@dataclass
class AllConfig:
    seeds: int = 5  # the baseline runs seeds 0..seeds-1 (their spread is the noise floor)
    variant_seeds: int = 3  # every other variant runs seeds 0..variant_seeds-1
    per_variant: str = ""  # seed counts that differ from variant_seeds, e.g. "no_ffn:1,attn_only_12l:1"
    # Parallel training processes. 1 = one run at a time with every core: on 2 CPU cores one
    # 2-thread run did 11,800 tok/s, two 1-thread runs side by side 3,300-4,200 each.
    jobs: int = 1


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
    plan = []
    for s in range(max(counts.values())):
        plan += [(v, s) for v in VARIANTS if s < counts[v]]
    return plan


def portable_command(argv: list[str]) -> str:
    """The command line as typed, with no directory of this machine: an absolute path becomes
    PATH/TO/<its file name> (a relative path stays, it names a place in a checkout).

    portable_command(["all", "--corpus", "/data/sanguo.txt", "steps=5"]) -> 'python -m lab all --corpus PATH/TO/sanguo.txt steps=5'
    """
    def portable(arg: str) -> str:
        key, eq, value = arg.partition("=") if "=" in arg else ("", "", arg)
        if PureWindowsPath(value).drive:
            value = f"PATH/TO/{PureWindowsPath(value).name}"
        elif Path(value).is_absolute():
            value = f"PATH/TO/{Path(value).name}"
        return key + eq + value

    return "python -m lab " + shlex.join(portable(a) for a in argv)


def config_from(cls, overrides: dict):
    """A config dataclass with overrides checked against its field names and cast to their types.

    config_from(AllConfig, {"seeds": "3"}).seeds -> 3; config_from(AllConfig, {"seed": "3"}) -> ValueError
    """
    types = {f.name: f.type for f in fields(cls)}
    unknown = sorted(set(overrides) - set(types))
    if unknown:
        raise ValueError(f"unknown {cls.__name__} field(s): {unknown}; known: {sorted(types)}")
    cast = {"int": int, "float": float, "str": str, "bool": lambda v: v.lower() in ("1", "true", "yes", "on")}
    return cls(**{k: cast[types[k]](v) if isinstance(v, str) else v for k, v in overrides.items()})


def split_overrides(pairs: list[str], classes) -> list[dict]:
    """Route key=value pairs to the configs that have the key.

    split_overrides(["steps=5"], [AllConfig, train.TrainConfig]) -> [{}, {"steps": "5"}]
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


def train_all(runs: list[train.TrainConfig], jobs: int) -> list[dict]:
    """Train every run, `jobs` at a time. In parallel each run is its own
    `python -m lab train` process (a crash or kill loses only that run's last steps)."""
    if jobs <= 1:
        return [train.run(c) for c in runs]
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
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


def run_all(corpus: str, out: str, work: str, overrides: list[str], command: str) -> None:
    """prepare -> every run of run_plan -> export; `command` is this command line (portable_command)."""
    a, p, t, e = split_overrides(overrides, [AllConfig, prepare.PrepareConfig, train.TrainConfig, export.ExportConfig])
    for forbidden in ("variant", "seed", "out_dir", "data_dir", "corpus", "work_dir"):
        if forbidden in t or forbidden in p or forbidden in e:
            raise SystemExit(f"`all` sets {forbidden} itself; use the single-step commands to choose it")
    all_cfg = config_from(AllConfig, a)
    # A command= override is what the model card records (as `lab export` honours it), else
    # this command line with its absolute paths cut to file names.
    command = e.get("command") or command
    work_dir = Path(work)
    timing_file = work_dir / "timing.json"
    timing = json.loads(timing_file.read_text()) if timing_file.exists() else {}

    import torch  # only to pick the device and the parallelism

    cuda = torch.cuda.is_available() and t.get("device", "auto") in ("auto", "cuda")
    plan = run_plan(all_cfg.seeds, all_cfg.variant_seeds, all_cfg.per_variant)
    n_runs = len(plan)
    jobs = 1 if cuda else max(1, min(all_cfg.jobs, n_runs))
    threads = max(1, (os.cpu_count() or 1) // jobs) if not cuda else 0
    timing["config"] = {**asdict(all_cfg), "jobs_resolved": jobs, "threads_per_run": threads}
    # Provenance as of now, when this process has loaded lab/: a commit made while the
    # runs train must not be credited with them.
    timing["command"] = command
    timing["lab_commit"], timing["lab_dirty"] = export.git_lab_commit()
    print(f"all: {n_runs} runs, {jobs} at a time, {threads or 'default'} threads each; work dir {work_dir}")

    t0 = time.time()
    prepare.run(config_from(prepare.PrepareConfig, {**p, "corpus": corpus, "work_dir": str(work_dir)}))
    timing["prepare_seconds"] = time.time() - t0
    timing_file.write_text(json.dumps(timing, indent=1))

    runs = [config_from(train.TrainConfig, {**t, "variant": v, "seed": s, "data_dir": str(work_dir / "data"),
                                            "out_dir": str(work_dir / f"{v}-s{s}"),
                                            "threads": t.get("threads", threads)}) for v, s in plan]
    t1 = time.time()
    results = train_all(runs, jobs)
    timing["train_seconds"] = timing.get("train_seconds", 0.0) + time.time() - t1
    timing_file.write_text(json.dumps(timing, indent=1))
    for r in results:
        print(f"  {r['variant']:>14} seed {r['seed']}: val {r['val_loss']:.4f}  ({r['wall_seconds']:.0f} s,"
              f" {r['train_tokens_per_second']:,.0f} tok/s)")

    export.run(config_from(export.ExportConfig, {**e, "work_dir": str(work_dir), "out_dir": out}), invoked=command)
    print(f"all: done in {time.time() - t0:.0f} s this invocation")


def run_residual(corpus: str, out: str, work: str, overrides: list[str], command: str, experiment=residual) -> None:
    """The residual experiment (lab/residual.py) or its mechanism runs (lab/mechanism.py): one
    process, one run at a time with every core."""
    config_class = {residual: residual.ResidualConfig, mechanism: mechanism.MechanismConfig,
                    norm: norm.NormConfig}[experiment]
    r, p, t = split_overrides(overrides, [config_class, prepare.PrepareConfig, train.TrainConfig])
    for forbidden in ("variant", "seed", "out_dir", "data_dir", "corpus", "work_dir", "stop_at"):
        if forbidden in t or forbidden in p:
            raise SystemExit(f"`{experiment.__name__.split('.')[-1]}` sets {forbidden} itself;"
                             " use the single-step commands or the --work option to choose it")
    import torch

    threads = 0 if torch.cuda.is_available() and t.get("device", "auto") in ("auto", "cuda") else (os.cpu_count() or 1)
    base = config_from(train.TrainConfig, {**t, "data_dir": str(Path(work) / "data"), "threads": t.get("threads", threads)})
    prep = config_from(prepare.PrepareConfig, {**p, "corpus": corpus, "work_dir": work})
    experiment.run(config_from(config_class, r), prep, base, out, command)


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m lab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["all", "prepare", "train", "export", "neurons", "residual", "mechanism",
                                            "norm"])
    parser.add_argument("--corpus", help="the UTF-8 corpus (all, prepare, residual)")
    parser.add_argument("--out", help="export directory (all, export, neurons: data/real-model; residual:"
                                      " data/real-model/residual)")
    parser.add_argument("--work", default="lab/runs", help="data, checkpoints and logs (gitignored)")
    parser.add_argument("overrides", nargs="*", metavar="key=value")
    args = parser.parse_intermixed_args(argv)
    command = portable_command(argv)
    out = args.out or {"residual": "data/real-model/residual", "mechanism": "data/real-model/residual",
                       "norm": "data/real-model/norm"}.get(args.command, "data/real-model")

    if args.command == "all":
        if not args.corpus:
            parser.error("all needs --corpus")
        run_all(args.corpus, out, args.work, args.overrides, command)
    elif args.command == "residual":
        if not args.corpus:
            parser.error("residual needs --corpus")
        run_residual(args.corpus, out, args.work, args.overrides, command)
    elif args.command == "mechanism":
        if not args.corpus:
            parser.error("mechanism needs --corpus")
        run_residual(args.corpus, out, args.work, args.overrides, command, experiment=mechanism)
    elif args.command == "norm":
        if not args.corpus:
            parser.error("norm needs --corpus")
        run_residual(args.corpus, out, args.work, args.overrides, command, experiment=norm)
    elif args.command == "prepare":
        if not args.corpus:
            parser.error("prepare needs --corpus")
        (p,) = split_overrides(args.overrides, [prepare.PrepareConfig])
        if "work_dir" in p:  # --work names it; a key=value would be silently overridden
            raise SystemExit("prepare: choose the work dir with --work, not work_dir=")
        prepare.run(config_from(prepare.PrepareConfig, {**p, "corpus": args.corpus, "work_dir": args.work}))
    elif args.command == "train":
        (t,) = split_overrides(args.overrides, [train.TrainConfig])
        t.setdefault("data_dir", str(Path(args.work) / "data"))
        cfg = config_from(train.TrainConfig, t)
        if not cfg.out_dir:
            cfg = replace(cfg, out_dir=str(Path(args.work) / f"{cfg.variant}-s{cfg.seed}"))
        train.run(cfg)
    elif args.command == "neurons":
        (e,) = split_overrides(args.overrides, [export.ExportConfig])
        export.run_neurons(config_from(export.ExportConfig, {"work_dir": args.work, "out_dir": out, **e}),
                           invoked=command)
    else:
        (e,) = split_overrides(args.overrides, [export.ExportConfig])
        export.run(config_from(export.ExportConfig, {"work_dir": args.work, "out_dir": out, **e}),
                   invoked=command)


if __name__ == "__main__":
    main()
