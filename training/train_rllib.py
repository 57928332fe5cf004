"""RLlib PPO self-play from a YAML config: ``python -m training.train_rllib --config configs/rllib_ppo.yaml`` (needs ``.[ray]``).

Usage::

    python -m training.train_rllib --config configs/rllib_ppo.yaml                 # a fresh run, then its report
    python -m training.train_rllib --config configs/rllib_ppo.yaml --set rllib.iterations=5 --set checkpoint.run_name=try
    python -m training.train_rllib --config configs/rllib_ppo.yaml --resume        # restore the checkpoint, go on to rllib.iterations
    python -m training.train_rllib --config configs/rllib_ppo.yaml --report        # only evaluate the saved checkpoint

The config (:class:`RLlibConfig`) has the one trainer's shared keys (``game``, ``num_players``, ``seed``,
``torch_threads``, ``checkpoint: {dir, run_name}``, ``eval: {final_opponents, final_games}``: :mod:`training.bridges`)
and an ``rllib:`` section.  It builds :func:`grinch_env.integrations.rllib.selfplay_config` (a masked PPO module
``main`` learning against itself, a ``frozen`` copy of itself and fixed baseline agents), trains
``rllib.iterations`` RLlib iterations, saves the algorithm to ``<run dir>/rllib_checkpoint/`` every
``rllib.checkpoint_every`` iterations and at the end (``--resume`` restores it and continues), logs every iteration
to ``<run dir>/rllib_log.jsonl``, and evaluates the checkpoint's ``main`` module against ``eval.final_opponents``
with the project's own evaluator (``<run dir>/report/``).  The checkpoint plays in tournaments like any agent:
``python -m grinch_env.evaluation --agents checkpoints/rllib_ppo:trust=1,greedy``.

Exit status: 0 done, 2 bad input (``error: ...`` says what is wrong).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Literal

from pydantic import Field, PositiveInt, field_validator

from training.bridges import BridgeConfig, Section, command_line, load_config, write_config
from training.bridges import build_parser as bridge_parser

CHECKPOINT = "rllib_checkpoint"
LOG = "rllib_log.jsonl"


class RLlibRaySection(Section):
    """The Ray instance RLlib runs on."""

    address: str = Field(default="local", min_length=1, description="local: start a private Ray instance; auto: join `ray start --head`; or an address")
    num_cpus: int | None = Field(default=None, ge=1, description="CPUs of a local Ray instance (null: all)")
    object_store_mb: int | None = Field(default=None, ge=64, description="object store of a local Ray instance in MiB (null: Ray's default)")


class RLlibSection(Section):
    """RLlib PPO self-play's knobs (:func:`grinch_env.integrations.rllib.selfplay_config`) and the Ray instance."""

    reward_mode: Literal["win", "margin"] = Field(default="margin", description="every seat's terminal reward")
    iterations: int = Field(default=50, ge=1, description="RLlib training iterations")
    checkpoint_every: int = Field(default=10, ge=1, description="save the algorithm every this many iterations")
    hidden_sizes: list[PositiveInt] = Field(default_factory=lambda: [256, 256], min_length=1, description="MLP widths of the policy and value networks")
    train_batch_size: int = Field(default=4000, ge=1, description="env steps per iteration (all seats' decisions)")
    minibatch_size: int = Field(default=512, ge=1, description="decisions per gradient step")
    num_epochs: int = Field(default=4, ge=1, description="passes over each batch")
    lr: float = Field(default=3e-4, gt=0, description="Adam learning rate")
    entropy_coeff: float = Field(default=0.01, ge=0, description="entropy bonus")
    opponent_probs: dict[str, float] = Field(default_factory=lambda: {"main": 0.6, "frozen": 0.2, "random": 0.1, "greedy": 0.1},
                                             description="weight of games: main in every seat, against frozen, or a make_agent baseline")
    freeze_every: int = Field(default=5, ge=1, description="copy main into the frozen opponent every this many iterations")
    num_env_runners: int = Field(default=0, ge=0, description="RLlib EnvRunner actors (0: sample in the driver)")
    ray: RLlibRaySection = Field(default_factory=RLlibRaySection, description="the Ray instance")

    @field_validator("opponent_probs")
    @classmethod
    def _weights(cls, v: dict[str, float]) -> dict[str, float]:
        if any(p < 0 for p in v.values()) or sum(v.values()) <= 0:
            raise ValueError(f"opponent_probs must be non-negative with a positive sum, got {v}")
        return v


class RLlibConfig(BridgeConfig):
    """``python -m training.train_rllib``: RLlib PPO self-play through the RLlib adapter."""

    DEFAULT_RUN_NAME = "rllib_ppo"
    rllib: RLlibSection = Field(default_factory=RLlibSection)


def build_algorithm(cfg: RLlibConfig) -> Any:
    """Return the RLlib PPO algorithm for ``cfg`` (Ray started or joined first)."""
    from grinch_env.integrations.rllib import GAMES, selfplay_config
    from training.distributed import init_ray

    r = cfg.rllib
    if cfg.game not in GAMES:
        raise ValueError(f"game: the RLlib adapter has no game {cfg.game!r}; registered games are {sorted(GAMES)}")
    init_ray(r.ray.address, num_cpus=r.ray.num_cpus, object_store_mb=r.ray.object_store_mb)
    config = selfplay_config(
        cfg.game, {"num_players": cfg.num_players, "reward_mode": r.reward_mode}, r.opponent_probs, tuple(r.hidden_sizes),
        r.freeze_every, cfg.seed, r.num_env_runners, r.train_batch_size, r.minibatch_size, r.num_epochs, r.lr, r.entropy_coeff,
    )
    return config.build_algo()


def iteration_summary(result: dict[str, Any], seconds: float) -> dict[str, Any]:
    """Return the few numbers logged per iteration: env steps, episodes, main's mean return, seconds."""
    runners = result.get("env_runners", {})
    main_return = runners.get("module_episode_returns_mean", {}).get("main")
    return {"iteration": int(result["training_iteration"]), "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
            "episodes": int(runners.get("num_episodes_lifetime", 0)), "main_return_mean": None if main_return is None else float(main_return),
            "seconds": round(seconds, 2)}


def train(cfg: RLlibConfig, resume: bool = False, progress: bool = True) -> Any:
    """Train up to ``cfg.rllib.iterations`` iterations in ``cfg.run_dir`` (continuing its saved algorithm with ``resume``); return the algorithm."""
    import torch

    run_dir, iterations = cfg.run_dir, cfg.rllib.iterations
    if resume and not (run_dir / CHECKPOINT).is_dir():
        raise FileNotFoundError(f"nothing to resume: {str(run_dir / CHECKPOINT)!r} does not exist (start the run without --resume)")
    torch.set_num_threads(cfg.torch_threads)
    algo = build_algorithm(cfg)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_config(cfg, run_dir)
    if resume:
        algo.restore_from_path(str((run_dir / CHECKPOINT).resolve()))
        print(f"resumed {run_dir / CHECKPOINT} at iteration {algo.iteration}/{iterations}")
    with (run_dir / LOG).open("a") as log:
        while algo.iteration < iterations:
            t0 = time.perf_counter()
            result = algo.train()
            entry = iteration_summary(result, time.perf_counter() - t0)
            log.write(json.dumps(entry) + "\n")
            log.flush()
            if progress:
                print(f"iteration {entry['iteration']}: {entry['env_steps']} env steps, main return {entry['main_return_mean']}, {entry['seconds']} s", flush=True)
            if algo.iteration % cfg.rllib.checkpoint_every == 0 or algo.iteration == iterations:
                algo.save_to_path(str((run_dir / CHECKPOINT).resolve()))
    return algo


def report(cfg: RLlibConfig) -> str:
    """Evaluate the saved ``main`` module (one seat) against ``eval.final_opponents`` with the project's evaluator; write
    ``<run dir>/report/`` and return the text."""
    from grinch_env.evaluation.versus import write_final_report
    from grinch_env.integrations.rllib import RLlibAgent

    agent = RLlibAgent(cfg.run_dir / CHECKPOINT, name=f"{cfg.run_name}/main")
    return write_final_report(cfg.run_dir, agent, list(cfg.eval.final_opponents), [cfg.num_players], cfg.eval.final_games,
                              seed=10_000 + cfg.seed, game=cfg.game, checkpoint_name=CHECKPOINT)


def _check(cfg: RLlibConfig, resume: bool, only_report: bool) -> None:
    saved = cfg.run_dir / CHECKPOINT
    if resume and only_report:
        raise ValueError("--resume trains and --report only evaluates: give one of them")
    if only_report and not saved.is_dir():
        raise ValueError(f"nothing to report: {str(saved)!r} does not exist (train the run first, without --report)")
    if only_report and not cfg.eval.final_games:
        raise ValueError("--report with eval.final_games: 0 plays no games; give --set eval.final_games=N")
    if not resume and not only_report and saved.exists():
        raise ValueError(f"{saved} exists: go on with --resume, or pick another run name (--set checkpoint.run_name=NAME)")


def build_parser() -> argparse.ArgumentParser:
    return bridge_parser(
        "python -m training.train_rllib", "RLlib PPO self-play (masked) through the RLlib adapter.", "configs/rllib_ppo.yaml",
        resume="restore <run dir>/rllib_checkpoint and continue to rllib.iterations",
        report="train nothing: evaluate the run's rllib_checkpoint against eval.final_opponents and write <run dir>/report/")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        cfg = load_config(RLlibConfig, args.config, args.set)
        _check(cfg, args.resume, args.report)
        if not args.report:
            algo = train(cfg, resume=args.resume, progress=not args.quiet)
            algo.stop()
            print(f"saved {cfg.run_dir / CHECKPOINT} after {cfg.rllib.iterations} iterations")
        if cfg.eval.final_games:
            print(report(cfg))
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"resume with: {command_line('training.train_rllib', args)} --resume", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["CHECKPOINT", "LOG", "RLlibConfig", "RLlibRaySection", "RLlibSection", "build_algorithm", "build_parser", "iteration_summary",
           "main", "report", "train"]
