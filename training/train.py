"""Train an agent from a config: the project's one trainer, for every learning family (``algo:`` in the config).

Usage::

    python -m training.train --config configs/grinch.yaml                    # a fresh run, then its report
    python -m training.train --config configs/grinch.yaml --set budget.generations=2 --set checkpoint.run_name=try
    python -m training.train --resume checkpoints/grinch                     # go on exactly where it stopped
    python -m training.train --resume checkpoints/grinch --set budget.generations=6   # ... with a larger budget
    python -m training.train --report checkpoints/champion_grinch --final-games 1200 --processes 2   # evaluate only

``--config`` is a YAML file of :class:`training.config.TrainConfig`: ``algo: afterstate`` (afterstate values, the
champions' family: :mod:`training.learner.afterstate_run`) or ``algo: ppo`` (the token network's self-play PPO:
:mod:`training.learner.run`).  A run directory ``<checkpoint.dir>/<checkpoint.run_name>/`` holds ``latest.pt``
(everything a resume needs: the run goes on bit for bit, also after ``kill -9``), ``config.yaml`` (the config, to
read), ``curve.csv`` and ``curve.png`` (win share over CPU time) and ``report/`` (the final seat-rotated,
paired-deal matches against ``eval.final_opponents``, with 95% intervals).  Any training run's agent plays by its
directory's path: ``make_agent("checkpoints/grinch")``, ``--agents checkpoints/grinch,greedy``.

Exit status: 0 done (or this piece done), 2 bad input (a message says what is wrong and what is allowed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import torch

from training.config import TrainConfig, apply_sets, dump_yaml, from_runner, load_config, runner_changes, validate
from training.files import atomic_write_bytes
from training.learner.formats import AFTERSTATE_FORMAT, LATEST, RUN_FORMAT

FORMATS = {AFTERSTATE_FORMAT: "afterstate", RUN_FORMAT: "ppo"}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m training.train", description=__doc__.split("\n\n")[0],
                                epilog="configs: configs/grinch.yaml (the quick start), configs/gnoming.yaml, configs/champion_*.yaml, configs/ppo_*.yaml")
    p.add_argument("--config", help="a YAML training config (a fresh run; with --resume, the config the run goes on under)")
    p.add_argument("--resume", metavar="RUN_DIR", help="go on with the run saved in RUN_DIR (or its latest.pt) exactly")
    p.add_argument("--report", metavar="RUN_DIR", help="only evaluate the run saved in RUN_DIR and write RUN_DIR/report/")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key (dotted, YAML value; repeatable)")
    p.add_argument("--generations", type=int, help="afterstate: fit at most this many more generations in this piece")
    p.add_argument("--for-seconds", type=float, help="ppo: stop this piece after this many training seconds (resume later)")
    p.add_argument("--final-games", type=int, help="games per opponent and table size in the report (default: eval.final_games)")
    p.add_argument("--processes", type=int, help="afterstate: processes that play the report's games (default: distributed.num_workers)")
    p.add_argument("--quiet", action="store_true", help="print no progress lines")
    return p


def stored(path: str | Path) -> tuple[dict[str, Any], str, Path]:
    """``(TrainConfig data, algo, file)`` of the checkpoint at ``path`` (a run directory or its ``latest.pt``)."""
    p = Path(path)
    file = p / LATEST if p.is_dir() else p
    if not file.is_file():
        raise ValueError(f"no checkpoint at {path}: give a run directory holding {LATEST} (e.g. checkpoints/grinch) or the .pt file")
    ckpt = torch.load(file, map_location="cpu", weights_only=False)
    algo = FORMATS.get(ckpt.get("format") if isinstance(ckpt, dict) else None)
    if algo is None:
        raise ValueError(f"{file} is not a checkpoint of the trainer (format {ckpt.get('format') if isinstance(ckpt, dict) else None!r}; "
                         f"expected one of {sorted(FORMATS)})")
    flat = ckpt["afterstate_config"] if algo == "afterstate" else ckpt["config"]
    return from_runner(flat, algo), algo, file


def resume_overrides(path: str | Path, config: str | None, sets: list[str]) -> list[str]:
    """The runner overrides of a resume: the saved config, replaced by ``config`` (if given) and then ``sets``.

    ``--config X --resume DIR`` with the same config as the run's (after ``--set``) changes nothing; a run goes on in
    the directory it is loaded from (a copy included) unless ``--set checkpoint.dir=/checkpoint.run_name=`` branch it.
    """
    data, algo, file = stored(path)
    saved_runner = validate(data, f"{file} (its stored config)").runner().model_dump()
    base = data
    if config is not None:
        base = load_config(config).model_dump()
        base["checkpoint"] = data.get("checkpoint", {})  # where the run lives is the loaded run's, unless --set moves it
        if base["algo"] != algo:
            raise ValueError(f"{path} holds an {algo} run; --config {config} trains algo {base['algo']!r}: a run keeps its family "
                             "(start a fresh run for another)")
    wanted = validate(apply_sets(base, sets), "--config/--set").runner().model_dump()
    return runner_changes(saved_runner, wanted)


def open_run(args: argparse.Namespace):
    """``(algo, runner state, TrainConfig)`` of the run the arguments name: fresh, resumed or to report."""
    if args.config and not (args.resume or args.report):
        cfg = load_config(args.config, args.set)
        if (cfg.run_dir / LATEST).exists():
            raise ValueError(f"{cfg.run_dir / LATEST} exists: go on with --resume {cfg.run_dir}, or pick another run name "
                             "(--set checkpoint.run_name=NAME)")
        runner = cfg.runner()
        if cfg.algo == "afterstate":
            from training.learner.afterstate_run import AfterstateRun

            return cfg.algo, AfterstateRun(runner), cfg
        from training.learner.run import Trainer

        return cfg.algo, (Trainer.load(runner.branch_from, config=runner) if runner.branch_from else Trainer(runner)), cfg
    path = args.resume or args.report
    overrides = resume_overrides(path, args.config, args.set)
    _, algo, _ = stored(path)
    if algo == "afterstate":
        from training.learner.afterstate_run import AfterstateRun

        run = AfterstateRun.load(path, overrides)
    else:
        from training.learner.run import Trainer

        run = Trainer.load(path, overrides)
    return algo, run, validate(from_runner(run.cfg.model_dump(), algo), str(path))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.resume and args.report or not (args.config or args.resume or args.report):
        print("error: give --config FILE (a fresh run), --resume RUN_DIR (go on; --config FILE may come with it) or --report RUN_DIR",
              file=sys.stderr)
        return 2
    try:
        algo, run, cfg = open_run(args)
        if algo == "afterstate" and args.for_seconds is not None or algo == "ppo" and args.generations is not None:
            flag = "--for-seconds" if algo == "afterstate" else "--generations"
            raise ValueError(f"{flag} is not a piece of an {algo} run; it takes " + ("--generations N" if algo == "afterstate" else "--for-seconds S"))
        if args.report and algo == "afterstate" and not run.fitted:
            raise ValueError(f"{args.report} holds no fitted generation yet: go on with --resume {args.report}")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        return run_pieces(args, algo, run, cfg)
    except ValueError as exc:  # input found wrong once the run starts (e.g. a Ray address with no cluster behind it)
        print(f"error: {exc}", file=sys.stderr)
        return 2


def run_pieces(args: argparse.Namespace, algo: str, run: Any, cfg: TrainConfig) -> int:
    """Train this piece of the run (unless ``--report``), then write its report when the run is done."""
    games = cfg.runner().final_games if algo == "afterstate" else cfg.runner().eval.final_games
    games = games if args.final_games is None else args.final_games
    if algo == "afterstate":
        from training.learner import afterstate_run as family

        if not args.report:
            atomic_write_bytes(run.cfg.run_dir / "config.yaml", dump_yaml(cfg).encode())
            family.train(run, args.generations, quiet=args.quiet)
        if (args.report or run.generation >= run.cfg.stages) and games:
            family.final_report(run, games, processes=args.processes or cfg.distributed.num_workers)
        return 0
    from training.learner import run as family

    torch.set_num_threads(run.cfg.torch_threads)
    if not args.report:
        atomic_write_bytes(run.cfg.run_dir / "config.yaml", dump_yaml(cfg).encode())
        family.train(run, for_seconds=args.for_seconds, quiet=args.quiet)
    if (args.report or run.done()) and games:
        family.final_report(run, games)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["TrainConfig", "build_parser", "main", "resume_overrides", "stored"]
