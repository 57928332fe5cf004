"""Self-play PPO training from a YAML config: ``python -m training.train --config configs/default.yaml``.

Reads top to bottom like CleanRL's ppo.py: config, seeding, then per update
one rollout of complete games on the batched engine (:mod:`training.selfplay`),
per-seat GAE and the masked PPO update (:mod:`training.ppo`), logging
(tqdm, TensorBoard), snapshots into the opponent pool, periodic evaluation
(best.pt) and checkpoints (latest.pt); at the end a final evaluation report
is written next to the checkpoint and printed.

Every save is one transaction (:func:`training.checkpoint.save_checkpoint`:
state, opponent-pool snapshots and their SHA-256 manifest, fsynced), so a run
killed at any instant, SIGKILL included, resumes (``--resume RUN_DIR``) from
its newest checkpoint that verifies and ends on the same weights, bit for bit,
as a run never stopped.  SIGINT (Ctrl-C) or SIGTERM finishes the update in
flight, saves, prints the resume command and exits with 130 / 143; a second
signal drops the update in flight instead (nothing half-applied is saved).
``--resume`` refuses a ``--config``, or an edited ``config.yaml`` in the run
directory, that differs from the checkpoint's config unless
``--override-config`` or ``--checkpoint-config`` says which one wins.
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from tqdm import tqdm

from grinch_env.evaluation.versus import evaluate_against, learner_win_rate, write_final_report
from training.checkpoint import (  # both trainers save and resume here (`duplicates` pairs this list with distill.py's: names, not logic)
    BEST,
    LATEST,
    STATE_DIR,
    CheckpointError,
    GracefulStop,
    Interrupted,
    PolicyAgent,
    atomic_torch_save,
    check_network,
    committed_checkpoints,
    load_checkpoint,
    load_latest,
    load_verified_tensors,
    load_weights,
    make_checkpoint,
    restore_rng_states,
    rng_states,
    save_checkpoint,
    save_verified,
    validate_checkpoint,
)
from training.config import (
    TrainConfig,
    add_run_arguments,
    apply_overrides,
    choose_resume_config,
    config_from_dict,
    load_config,
    read_config_data,
    run_directory,
    write_config_yaml,
)
from training.distributed import rollout_collector
from training.ppo import ppo_update
from training.selfplay import OpponentPool, build_model, collect_rollout, make_engine

SNAPSHOT_DIR = "snapshots"
# evaluate_against, learner_win_rate, role_results, format_roles and write_final_report live in
# grinch_env.evaluation.versus (no torch); they are imported above under their old names too.


class Trainer:
    """One training run: state (network, optimizer, pool, counters, random streams) and the loop."""

    def __init__(self, cfg: TrainConfig, run_dir: Path | None = None, progress: bool = True) -> None:
        self.cfg = cfg
        self.run_dir = Path(run_dir) if run_dir is not None else run_directory(cfg)
        self.progress = progress
        torch.set_num_threads(cfg.torch_threads)
        random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.rng = np.random.default_rng(cfg.seed)
        self.model = build_model(cfg)
        if cfg.init_checkpoint is not None:
            self.init_weights(cfg.init_checkpoint)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=cfg.ppo.learning_rate, eps=1e-5)
        self.pool = OpponentPool(cfg)
        self.engine = make_engine(cfg)
        self.collector = None  # Ray workers (distributed: in the config), started by the first update: --report-only never starts Ray
        self.update = 0
        self.env_steps = 0
        self.learner_steps = 0
        self.best_metric = -float("inf")
        self.last_eval: dict[str, float] = {}
        self.writer = None
        self.evaluator: Callable[..., dict[str, Any]] = evaluate_against
        self._fresh = True  # no checkpoint loaded or saved yet
        self._saved_update = -1  # the update the newest resume checkpoint holds

    # ------------------------------------------------------------ checkpoints
    def state(self, with_optimizer: bool = True) -> dict[str, Any]:
        return make_checkpoint(
            self.model,
            self.cfg.model_dump(),
            self.optimizer if with_optimizer else None,
            update=self.update,
            env_steps=self.env_steps,
            learner_steps=self.learner_steps,
            best_metric=self.best_metric,
            last_eval=self.last_eval,
            pool=[name for name, _ in self.pool.snapshots],
            rng=rng_states(self.rng),
        )

    def save(self, name: str = LATEST, label: str | None = None) -> Path:
        """Write best.pt (weights for playing, no optimizer: 1.8 MB vs 5.3 MB), or commit a resume checkpoint and return latest.pt.

        A resume checkpoint is one transaction (:func:`training.checkpoint.save_checkpoint`): the state, the pool's
        snapshot files and config.yaml under one SHA-256 manifest; snapshots that left the pool are deleted only after it.
        """
        if name == BEST:
            save_verified(self.state(with_optimizer=False), self.run_dir / BEST)
            return self.run_dir / BEST
        if label is None:
            label = f"update {self.update} of {self.cfg.total_updates} (saved every {self.cfg.save_every})"
        state = self.state()
        state["label"] = label
        snapshots = [f"{SNAPSHOT_DIR}/{n}.pt" for n, _ in self.pool.snapshots]
        # The first save of a new run drops any checkpoint an earlier run left in the directory (after this one is durable).
        save_checkpoint(self.run_dir, state, snapshots, label=label, gc_dirs=(SNAPSHOT_DIR,), keep=1 if self._fresh else 2,
                        extra_text={"config.yaml": yaml.safe_dump(self.cfg.model_dump(), sort_keys=False)})
        self._fresh = False
        self._saved_update = self.update
        return self.run_dir / LATEST

    def init_weights(self, path: str | Path) -> None:
        """Start the network from another checkpoint's weights (``init_checkpoint``); counters and optimizer start fresh."""
        load_weights(self.model, path)

    def load(self, path: str | Path) -> None:
        """Restore everything from a checkpoint written by :meth:`save` (resume): a run directory, its latest.pt or an older single .pt.

        A run directory with manifests resumes from its newest checkpoint that verifies (:func:`training.checkpoint.load_latest`).
        """
        path = Path(path)
        run_dir = path if path.is_dir() else path.parent.parent if path.parent.name == STATE_DIR else path.parent
        if (path.is_dir() or path.name == LATEST or path.parent.name == STATE_DIR) and committed_checkpoints(run_dir):
            ckpt, info = load_latest(run_dir, report=tqdm.write)
            self.load_state(ckpt, run_dir, info)
        else:
            self.load_state(load_checkpoint(path), run_dir, None, source=path)

    def load_state(self, ckpt: dict[str, Any], run_dir: Path, info: dict[str, Any] | None, source: Path | None = None) -> None:
        """Restore the network, optimizer, counters, opponent pool and random streams from ``ckpt``; ``info`` is its verified manifest (None: an older checkpoint without one)."""
        source = source or (run_dir / info["state"] if info else run_dir / LATEST)
        validate_checkpoint(ckpt, source)
        if ckpt.get("optimizer") is None or "rng" not in ckpt:
            raise ValueError(f"checkpoint {str(source)!r} holds no optimizer or random state: it cannot be resumed")
        check_network(ckpt, self.model, source)
        self.model.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        self.update = int(ckpt["update"])
        self.env_steps = int(ckpt["env_steps"])
        self.learner_steps = int(ckpt["learner_steps"])
        self.best_metric = float(ckpt["best_metric"])
        self.last_eval = dict(ckpt.get("last_eval") or {})
        self.pool.snapshots.clear()
        self.pool._snapshot_agents.clear()
        for name in ckpt.get("pool", []):
            rel = f"{SNAPSHOT_DIR}/{name}.pt"
            if info is not None:
                weights = load_verified_tensors(run_dir, info, rel)
            else:
                snap = run_dir / rel
                if not snap.is_file():
                    raise CheckpointError(f"snapshot {snap} named by the opponent pool of {str(source)!r} is missing: "
                                          "resuming without it would not continue the run as it was")
                try:
                    weights = torch.load(snap, map_location="cpu", weights_only=True)
                except Exception as err:
                    raise CheckpointError(f"snapshot {snap} is not a readable torch file ({type(err).__name__}): it was altered or truncated") from None
            self.pool.add_snapshot(name, weights)
        restore_rng_states(ckpt["rng"], self.rng)
        self._fresh = False
        self._saved_update = self.update

    # ------------------------------------------------------------------ loop
    def train(self, stop_after: int | None = None) -> None:
        """Run updates until ``total_updates`` (or ``stop_after`` updates in this call), then save latest.pt.

        SIGINT or SIGTERM finishes the update in flight, saves and raises :class:`~training.checkpoint.Interrupted`;
        a second signal (or any other KeyboardInterrupt) drops the update in flight: nothing is saved, the newest
        checkpoint stands.
        """
        cfg = self.cfg
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if self.update == 0:  # a new run; a resumed one keeps the config.yaml of its checkpoint (rewritten with each save)
            write_config_yaml(cfg, self.run_dir)
        if cfg.tensorboard and self.writer is None:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.run_dir / "tb"))
        if self.collector is None and cfg.distributed.backend != "local":
            self.collector = rollout_collector(cfg)  # before our signal handlers: ray.init installs its own for SIGTERM
        end = cfg.total_updates if stop_after is None else min(cfg.total_updates, self.update + stop_after)
        start_steps, start_time = self.env_steps, time.perf_counter()
        bar = tqdm(total=cfg.total_updates, initial=self.update, disable=not self.progress, desc=cfg.run_name, unit="upd", dynamic_ncols=True)
        with GracefulStop("update", report=tqdm.write) as stop:
            try:
                while self.update < end and not stop.requested:
                    self._one_update(bar)
            except KeyboardInterrupt as err:
                bar.close()
                signum = getattr(err, "signum", signal.SIGINT)
                tqdm.write(f"{signal.Signals(signum).name}: dropped update {self.update + 1} in flight (nothing of it is saved); "
                           + self._where_to_resume())
                raise Interrupted(signum) from None
            if stop.requested:
                name = signal.Signals(stop.signum).name
                self.save(label=f"update {self.update} of {cfg.total_updates} (saved on {name})")
                bar.close()
                tqdm.write(f"{name}: stopped after update {self.update}; " + self._where_to_resume())
                raise Interrupted(stop.signum)
        bar.close()
        elapsed = time.perf_counter() - start_time
        if self.env_steps > start_steps:
            tqdm.write(f"trained {self.env_steps - start_steps} env steps in {elapsed:.0f} s: {(self.env_steps - start_steps) / elapsed:.0f} steps/s (evaluations included)")
        if self._saved_update != self.update:  # the last update's own periodic save is this checkpoint already
            self.save()
        if not (self.run_dir / BEST).exists():
            self.save(BEST)  # no periodic evaluation picked one: the final weights are the best we know
        if self.writer is not None:
            self.writer.flush()

    def _where_to_resume(self) -> str:
        """Return where the newest checkpoint is, what it holds and the command that resumes it."""
        infos = committed_checkpoints(self.run_dir)
        if not infos:
            return f"no checkpoint was saved yet in {self.run_dir}: start the run again with the same command"
        info = infos[0]
        return (f"checkpoint {self.run_dir / info['state']} (also {self.run_dir / LATEST}) holds {info['label']}; "
                f"resume with: python -m training.train --resume {self.run_dir}")

    def _one_update(self, bar: tqdm) -> None:
        cfg = self.cfg
        if cfg.ppo.anneal_lr:
            self.optimizer.param_groups[0]["lr"] = cfg.ppo.learning_rate * (1.0 - self.update / cfg.total_updates)
        t0 = time.perf_counter()
        self.model.eval()
        if self.collector is None and cfg.distributed.backend != "local":
            self.collector = rollout_collector(cfg)
        if self.collector is None:
            rollout = collect_rollout(self.engine, self.model, self.pool, cfg, self.rng)
        else:
            rollout = self.collector.collect(self.model, self.pool, self.rng)
        t1 = time.perf_counter()
        self.model.train()
        stats = ppo_update(self.model, self.optimizer, rollout.tensors(), cfg.ppo, self.rng)
        t2 = time.perf_counter()
        self.update += 1
        self.env_steps += rollout.env_steps
        self.learner_steps += len(rollout.actions)
        stats.update(
            steps_per_second=rollout.env_steps / (t2 - t0),
            learner_steps_per_second=len(rollout.actions) / (t2 - t0),
            rollout_seconds=t1 - t0,
            update_seconds=t2 - t1,
            learning_rate=self.optimizer.param_groups[0]["lr"],
        )
        for kind, rate in rollout.win_rates.items():
            stats[f"rollout_win_rate/{kind}"] = rate
        if self.update % cfg.selfplay.snapshot_every == 0:
            name = f"update_{self.update:06d}"
            atomic_torch_save(self.model.state_dict(), self.run_dir / SNAPSHOT_DIR / f"{name}.pt")
            self.pool.add_snapshot(name, self.model.state_dict())
            # A snapshot that left the pool stays on disk until a checkpoint without it is durable (save_checkpoint deletes it).
        if cfg.eval.every and self.update % cfg.eval.every == 0:
            self._periodic_eval(stats)
        self._log(stats, bar)
        if self.update % cfg.save_every == 0:
            self.save()

    def _periodic_eval(self, stats: dict[str, float]) -> None:
        cfg = self.cfg
        agent = PolicyAgent(self.model, name=cfg.run_name)
        results = self.evaluator(agent, cfg.eval.opponents, cfg.eval.num_players, cfg.eval.games, seed=cfg.seed + self.update,
                                 processes=cfg.eval.processes, game=cfg.game)
        rates = {key: learner_win_rate(r) for key, r in results.items()}
        self.last_eval = rates
        for key, rate in rates.items():
            stats[f"eval_win_rate/{key}"] = rate
        metric_keys = [k for k in rates if k.split("@")[0] == cfg.eval.best_metric_opponent] or list(rates)
        metric = float(np.mean([rates[k] for k in metric_keys]))
        stats["eval_best_metric"] = metric
        tqdm.write(f"update {self.update}: win rates " + ", ".join(f"{k} {v:.2f}" for k, v in rates.items()))
        if metric > self.best_metric:
            self.best_metric = metric
            self.save(BEST)

    def _log(self, stats: dict[str, float], bar: tqdm) -> None:
        if self.writer is not None:
            for key, value in stats.items():
                group = "charts" if "/" not in key else ""
                self.writer.add_scalar(f"{group}/{key}" if group else key, value, self.env_steps)
        bar.set_postfix(
            sps=f"{stats['steps_per_second']:.0f}",
            ent=f"{stats['entropy']:.2f}",
            kl=f"{stats['approx_kl']:.3f}",
            ev=f"{stats['explained_variance']:.2f}",
            **{k.split("/")[1]: f"{v:.2f}" for k, v in stats.items() if k.startswith("rollout_win_rate/")},
            refresh=False,
        )
        bar.update(1)

    def close(self) -> None:
        if self.collector is not None:
            self.collector.close()
            self.collector = None
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    # ----------------------------------------------------------- final report
    def final_report(self) -> str:
        """Evaluate best.pt against the final opponents, write the report next to it and return the text."""
        from training.checkpoint import load_agent

        cfg = self.cfg
        if cfg.eval.final_games == 0:
            return ""
        return write_final_report(self.run_dir, load_agent(self.run_dir), cfg.eval.final_opponents, cfg.eval.num_players, cfg.eval.final_games,
                                  seed=10_000 + cfg.seed, processes=cfg.eval.processes, evaluator=self.evaluator, game=cfg.game)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="grinch-train", description="Self-play PPO with action masking for Grinch Grow Your Heart.")
    parser.add_argument("--config", help="YAML config (configs/*.yaml); optional with --resume, which uses the run's stored config")
    parser.add_argument("--resume", nargs="?", const="", default=None, metavar="PATH",
                        help="resume from PATH (a run directory or latest.pt); without PATH, the config's run directory")
    parser.add_argument("--stop-after", type=int, help="stop (saving latest.pt) after this many updates in this session")
    wins = parser.add_mutually_exclusive_group()
    wins.add_argument("--override-config", action="store_const", const="given", dest="config_wins",
                      help="with --resume: where --config (or an edited config.yaml in the run directory) differs from the checkpoint's config, the given values win")
    wins.add_argument("--checkpoint-config", action="store_const", const="checkpoint", dest="config_wins",
                      help="with --resume: the checkpoint's config wins over --config or an edited config.yaml (which is rewritten from it)")
    add_run_arguments(parser, report_only_help="(--resume RUN_DIR or --config)")
    return parser


def resume_file(path: Path, report_only: bool = False) -> Path:
    """Return the checkpoint to resume (or report on) for ``--resume PATH``; raise ``ValueError`` saying why a path cannot be resumed."""
    if path.is_dir():
        if (path / LATEST).is_file():
            return path / LATEST
        if (path / BEST).is_file():
            if report_only:
                return path / BEST  # a shipped run may hold only best.pt
            raise ValueError(_not_resumable(path / BEST, f"run directory {str(path)!r} holds {BEST} but no {LATEST}"))
        raise ValueError(f"run directory {str(path)!r} holds no {LATEST}: there is nothing to resume (start the run with --config, without --resume)")
    if not path.is_file():
        raise ValueError(f"--resume {str(path)!r}: no such run directory or checkpoint")
    return path


def _not_resumable(best: Path, what: str) -> str:
    """Return the message for a weights-only checkpoint given to ``--resume``, with what to do instead."""
    run = best.parent
    return (f"{what}: it keeps the weights only (no optimizer or random state), so it cannot be resumed. "
            f"To train on from its weights, start a new run whose config sets init_checkpoint: {run} and the same model section "
            f"(as configs/selfplay_finetune.yaml does for checkpoints/distill_expectimax), e.g. "
            f"python -m training.train --config CONFIG.yaml --set init_checkpoint={run} --set run_name=NEW_NAME")


def _resume_source(args: argparse.Namespace) -> tuple[Path, Path | None]:
    """Return ``(run directory to read, single checkpoint file or None)`` for ``--resume``."""
    if args.resume:
        path = Path(args.resume)
        if path.is_dir():
            return path, None
        if path.parent.name == STATE_DIR:
            return path.parent.parent, None
        if path.name == LATEST and committed_checkpoints(path.parent):
            return path.parent, None
        return path.parent, path
    cfg = load_config(args.config, args.overrides)
    return run_directory(cfg, args.run_dir), None


def _load_for_resume(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any] | None, Path, Path]:
    """Return ``(checkpoint, manifest or None, file it came from, run directory it came from)`` for ``--resume``."""
    source_dir, single = _resume_source(args)
    if single is None and committed_checkpoints(source_dir):
        ckpt, info = load_latest(source_dir, report=lambda line: print(line, file=sys.stderr))  # which checkpoint, and why a newer one was skipped
        return ckpt, info, source_dir / info["state"], source_dir
    ckpt_file = resume_file(single if single is not None else source_dir, args.report_only)
    return load_checkpoint(ckpt_file), None, ckpt_file, ckpt_file.parent


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.config is None and args.resume is None:
        build_parser().error("give --config, --resume PATH, or both")
    if args.config_wins is not None and args.resume is None:
        build_parser().error("--override-config and --checkpoint-config choose between configs on --resume; give --resume too")
    try:
        info = None
        if args.resume is not None:
            ckpt, info, ckpt_file, source_dir = _load_for_resume(args)
            if not args.report_only and (ckpt.get("optimizer") is None or "rng" not in ckpt):
                raise ValueError(_not_resumable(ckpt_file, f"{str(ckpt_file)!r} is a weights-only checkpoint"))
            candidates = []
            if args.config is not None:
                candidates.append((f"--config {args.config}", read_config_data(args.config)))
            yaml_file = source_dir / "config.yaml"
            if yaml_file.is_file() and args.config_wins != "checkpoint":
                candidates.append((str(yaml_file), read_config_data(yaml_file)))
            base, notes = choose_resume_config(ckpt["config"], candidates, args.config_wins, str(ckpt_file))
            for note in notes:
                print(note)
            cfg = config_from_dict(apply_overrides(base, args.overrides), source=str(ckpt_file))
            run_dir = Path(args.run_dir) if args.run_dir else source_dir
            if args.config_wins == "checkpoint" and yaml_file.is_file():
                write_config_yaml(config_from_dict(ckpt["config"]), source_dir)
                print(f"rewrote {yaml_file} from the checkpoint's config")
        else:
            cfg = load_config(args.config, args.overrides)
            run_dir = run_directory(cfg, args.run_dir)
            existing = committed_checkpoints(run_dir)
            if existing and not args.report_only:
                print(f"warning: {run_dir} holds a checkpoint ({existing[0]['label']}); this new run replaces it once it saves. "
                      f"To continue that run instead: python -m training.train --resume {run_dir}")
        trainer = Trainer(cfg, run_dir, progress=not args.no_progress)
        if args.resume is not None and not args.report_only:
            trainer.load_state(ckpt, source_dir, info, source=ckpt_file)
            if trainer.update >= cfg.total_updates:
                print(f"run {str(run_dir)!r} is complete: {trainer.update} of {cfg.total_updates} updates done, nothing to train.\n"
                      f"To train it further, raise total_updates: python -m training.train --resume {run_dir} --set total_updates={trainer.update + cfg.total_updates}\n"
                      f"To write its evaluation report again: python -m training.train --resume {run_dir} --report-only")
                return 0
            print(f"resumed {ckpt_file} at update {trainer.update}/{cfg.total_updates}")
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.report_only:
        print(trainer.final_report())
        return 0
    try:
        trainer.train(stop_after=args.stop_after)
    except KeyboardInterrupt as err:
        trainer.close()
        if not isinstance(err, Interrupted):  # Ctrl-C outside the update loop (while Ray starts, or in the last writes)
            print("interrupted outside the update loop; nothing half-done was saved; " + trainer._where_to_resume(), file=sys.stderr)
        return getattr(err, "exit_code", 130)
    except ValueError as err:  # e.g. distributed.address names no running Ray cluster
        trainer.close()
        print(f"error: {err}", file=sys.stderr)
        return 2
    trainer.close()
    print(f"saved {run_dir / LATEST} and {run_dir / BEST} after {trainer.update} updates, {trainer.env_steps} env steps")
    if not args.no_report and trainer.update >= cfg.total_updates:
        print(trainer.final_report())
    return 0


if __name__ == "__main__":
    sys.exit(main())
