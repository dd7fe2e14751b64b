"""The lab's command line: `python -m lab <experiment>` runs one experiment end to end.

    python -m lab ffn --corpus PATH --out data/real-model [key=value ...]        (alias: all)
    python -m lab residual --corpus PATH --out data/real-model/residual [key=value ...]
    python -m lab mechanism --corpus PATH --out data/real-model/residual [key=value ...]
    python -m lab norm --corpus PATH --out data/real-model/norm [key=value ...]
    python -m lab gating --corpus PATH --out data/real-model/gating [key=value ...]
    python -m lab tokenizer --corpus PATH --work DIR --out data/real-model/tokenizer [key=value ...]   (no model trained)

and the single steps:

    python -m lab prepare --corpus PATH [key=value ...]
    python -m lab train [variant=no_ffn seed=0 ...]
    python -m lab export --out data/real-model [key=value ...]                   (the FFN experiment's export)
    python -m lab neurons --work ../lab-runs --out data/real-model [key=value ...]   (neurons.json only)
    python -m lab attention --work ../lab-runs/ed2 --out data/real-model/attention [key=value ...]
                                                (a trained run's attention weights and per-head measures)
    python -m lab rope --work ../lab-runs/ed2 --out data/real-model/rope [key=value ...]
                                                (RoPE's shift test and 512-token windows on a trained run)
    python -m lab kvcache --work ../lab-runs/ed2 --out data/real-model/kv-cache [key=value ...]
                                                (greedy generation with and without a KV cache on a trained run)
    python -m lab induction --work ../lab-runs/ed2 --out data/real-model/induction [runs=baseline:0,nope:0 ...]
                                                (the induction-head scan of finished runs: repeat gain, heads, ICL)
    python -m lab copytask --out data/real-model/induction [seeds=0,1,2,3,4 ...]
                                                (the synthetic copy task: where induction heads form, step by step)

key=value pairs override config fields (PrepareConfig, TrainConfig, the experiment's Config:
ffn.AllConfig and ffn.ExportConfig, residual.Config, mechanism.Config, norm.Config, gating.Config,
tokenizer.Config); a key that no
stage's config has is an error. Re-running a command resumes: finished runs are skipped,
interrupted ones continue from their checkpoint.
"""
from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import replace
from pathlib import Path, PureWindowsPath

from lab import prepare, train
from lab.experiments import ALIASES, EXPERIMENTS, attention, common, copy_task, ffn, induction, kv_cache, rope
from lab.experiments.common import config_from, split_overrides  # noqa: F401  (the command line's helpers)
from lab.experiments.ffn import AllConfig, run_plan  # noqa: F401  (their names before lab/experiments/)


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


def main(argv=None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m lab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=[*EXPERIMENTS, *ALIASES, "prepare", "train", "export", "neurons", attention.NAME,
                                                rope.NAME, kv_cache.NAME, induction.NAME, copy_task.NAME])
    parser.add_argument("--corpus", help="the UTF-8 corpus (every experiment, prepare)")
    parser.add_argument("--out", help="export directory (default: the experiment's, e.g. data/real-model/norm)")
    parser.add_argument("--work", default="lab/runs", help="data, checkpoints and logs (gitignored)")
    parser.add_argument("overrides", nargs="*", metavar="key=value")
    args = parser.parse_intermixed_args(argv)
    command = portable_command(argv)
    name = ALIASES.get(args.command, args.command)
    experiment = EXPERIMENTS.get(name)
    out = args.out or (experiment.DEFAULT_OUT if experiment else ffn.DEFAULT_OUT)

    if experiment is not None:
        if not args.corpus:
            parser.error(f"{args.command} needs --corpus")
        if experiment is ffn:
            ffn.run_command(args.corpus, out, args.work, args.overrides, command)
        else:
            common.run_command(experiment, args.corpus, out, args.work, args.overrides, command)
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
            cfg = replace(cfg, out_dir=str(common.run_dir(args.work, common.run_name(cfg), cfg.seed)))
        train.run(cfg)
    elif args.command == attention.NAME:
        (e,) = split_overrides(args.overrides, [attention.Config])
        out = args.out or attention.DEFAULT_OUT
        attention.run_export(config_from(attention.Config, {"work_dir": args.work, "out_dir": out, **e}), invoked=command)
    elif args.command == rope.NAME:
        (e,) = split_overrides(args.overrides, [rope.Config])
        rope.run_export(config_from(rope.Config, {"work_dir": args.work, "out_dir": args.out or rope.DEFAULT_OUT, **e}),
                        invoked=command)
    elif args.command == kv_cache.NAME:
        (e,) = split_overrides(args.overrides, [kv_cache.Config])
        kv_cache.run_export(config_from(kv_cache.Config, {"work_dir": args.work,
                                                          "out_dir": args.out or kv_cache.DEFAULT_OUT, **e}),
                            invoked=command)
    elif args.command == induction.NAME:
        (e,) = split_overrides(args.overrides, [induction.Config])
        induction.run_export(config_from(induction.Config, {"work_dir": args.work,
                                                            "out_dir": args.out or induction.DEFAULT_OUT, **e}),
                             invoked=command)
    elif args.command == copy_task.NAME:
        (e,) = split_overrides(args.overrides, [copy_task.Config])
        copy_task.run_export(config_from(copy_task.Config, {"out_dir": args.out or copy_task.DEFAULT_OUT, **e}),
                             invoked=command)
    elif args.command == "neurons":
        (e,) = split_overrides(args.overrides, [ffn.ExportConfig])
        ffn.run_neurons(config_from(ffn.ExportConfig, {"work_dir": args.work, "out_dir": out, **e}), invoked=command)
    else:
        (e,) = split_overrides(args.overrides, [ffn.ExportConfig])
        ffn.run_export(config_from(ffn.ExportConfig, {"work_dir": args.work, "out_dir": out, **e}), invoked=command)


if __name__ == "__main__":
    main()
