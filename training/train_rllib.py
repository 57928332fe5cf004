"""RLlib PPO self-play from a YAML config: ``python -m training.train_rllib --config configs/rllib_ppo.yaml`` (needs ``.[ray]``).

Builds :func:`grinch_env.integrations.rllib.selfplay_config` (a masked PPO
module ``main`` learning against itself, a ``frozen`` copy of itself and fixed
baseline agents), trains ``iterations`` RLlib iterations, saves the algorithm
to ``<run dir>/rllib_checkpoint/`` every ``checkpoint_every`` iterations and at
the end (``--resume`` restores it and continues), logs every iteration to
``<run dir>/rllib_log.jsonl``, and evaluates the checkpoint's ``main`` module
against our agents with the project's own evaluator (``<run dir>/report/``).
The checkpoint plays in tournaments like any agent:
``python -m grinch_env.evaluation --agents checkpoints/rllib_ppo,greedy``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from training.config import _Section, command_parser, run_command, write_config_yaml

CHECKPOINT = "rllib_checkpoint"
LOG = "rllib_log.jsonl"


class RLlibRayConfig(_Section):
    address: str = Field(default="local", min_length=1, description="local: start a private Ray instance; auto: join `ray start --head`; or an address")
    num_cpus: int | None = Field(default=None, ge=1, description="CPUs of a local Ray instance (null: all)")
    object_store_mb: int | None = Field(default=None, ge=64, description="object store of a local Ray instance in MiB (null: Ray's default)")


class RLlibEvalConfig(_Section):
    games: int = Field(default=200, ge=0, description="games per opponent in the final report (0: no report)")
    opponents: list[str] = Field(default=["random", "greedy"], description="make_agent specs in the final report")


class RLlibConfig(_Section):
    """``python -m training.train_rllib``: RLlib PPO self-play through the RLlib adapter."""

    run_name: str = Field(default="rllib_ppo", min_length=1, description="run directory name under checkpoint_dir")
    checkpoint_dir: str = Field(default="checkpoints", description="parent directory of run directories")
    seed: int = Field(default=0, description="RLlib's seed and the matchups' seed")
    game: str = Field(default="grinch", description="a game registered in grinch_env.integrations.rllib.GAMES")
    num_players: int = Field(default=4, ge=2, description="table size (the game checks its own range)")
    reward_mode: str = Field(default="margin", min_length=1, description="the game's reward_mode (grinch: win or margin; the env checks it)")
    iterations: int = Field(default=50, ge=1, description="RLlib training iterations")
    checkpoint_every: int = Field(default=10, ge=1, description="save the algorithm every this many iterations")
    hidden_sizes: list[int] = Field(default=[256, 256], description="MLP widths of the policy and value networks")
    train_batch_size: int = Field(default=4000, ge=1, description="env steps per iteration (all seats' decisions)")
    minibatch_size: int = Field(default=512, ge=1, description="decisions per gradient step")
    num_epochs: int = Field(default=4, ge=1, description="passes over each batch")
    lr: float = Field(default=3e-4, gt=0, description="Adam learning rate")
    entropy_coeff: float = Field(default=0.01, ge=0, description="entropy bonus")
    opponent_probs: dict[str, float] = Field(default_factory=lambda: {"main": 0.6, "frozen": 0.2, "random": 0.1, "greedy": 0.1},
                                             description="weight of games: main in every seat, against frozen, or a make_agent baseline")
    freeze_every: int = Field(default=5, ge=1, description="copy main into the frozen opponent every this many iterations")
    num_env_runners: int = Field(default=0, ge=0, description="RLlib EnvRunner actors (0: sample in the driver)")
    torch_threads: int = Field(default=1, ge=1, description="torch intra-op threads of the driver")
    ray: RLlibRayConfig = Field(default_factory=RLlibRayConfig, description="the Ray instance")
    eval: RLlibEvalConfig = Field(default_factory=RLlibEvalConfig, description="final evaluation")

    @field_validator("opponent_probs")
    @classmethod
    def _weights(cls, v: dict[str, float]) -> dict[str, float]:
        if any(p < 0 for p in v.values()) or sum(v.values()) <= 0:
            raise ValueError(f"opponent_probs must be non-negative with a positive sum, got {v}")
        return v


def build_algorithm(cfg: RLlibConfig) -> Any:
    """Return the RLlib PPO algorithm for ``cfg`` (Ray started or joined first)."""
    from grinch_env.integrations.rllib import GAMES, selfplay_config
    from training.distributed import init_ray

    if cfg.game not in GAMES:
        raise ValueError(f"game: unknown game {cfg.game!r}; registered games are {sorted(GAMES)}")
    init_ray(cfg.ray.address, num_cpus=cfg.ray.num_cpus, object_store_mb=cfg.ray.object_store_mb)
    config = selfplay_config(
        cfg.game, {"num_players": cfg.num_players, "reward_mode": cfg.reward_mode}, cfg.opponent_probs, tuple(cfg.hidden_sizes),
        cfg.freeze_every, cfg.seed, cfg.num_env_runners, cfg.train_batch_size, cfg.minibatch_size, cfg.num_epochs, cfg.lr, cfg.entropy_coeff,
    )
    return config.build_algo()


def iteration_summary(result: dict[str, Any], seconds: float) -> dict[str, Any]:
    """Return the few numbers logged per iteration: env steps, episodes, main's mean return, seconds."""
    runners = result.get("env_runners", {})
    main_return = runners.get("module_episode_returns_mean", {}).get("main")
    return {"iteration": int(result["training_iteration"]), "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
            "episodes": int(runners.get("num_episodes_lifetime", 0)), "main_return_mean": None if main_return is None else float(main_return),
            "seconds": round(seconds, 2)}


def train(cfg: RLlibConfig, run_dir: Path, resume: bool = False, progress: bool = True) -> Any:
    """Train ``cfg.iterations`` iterations (continuing a saved run with ``resume``); return the algorithm."""
    import torch

    torch.set_num_threads(cfg.torch_threads)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_config_yaml(cfg, run_dir)
    algo = build_algorithm(cfg)
    if resume:
        if not (run_dir / CHECKPOINT).is_dir():
            raise FileNotFoundError(f"nothing to resume: {run_dir / CHECKPOINT} does not exist")
        algo.restore_from_path(str((run_dir / CHECKPOINT).resolve()))
        print(f"resumed {run_dir / CHECKPOINT} at iteration {algo.iteration}/{cfg.iterations}")
    with (run_dir / LOG).open("a") as log:
        while algo.iteration < cfg.iterations:
            t0 = time.perf_counter()
            result = algo.train()
            entry = iteration_summary(result, time.perf_counter() - t0)
            log.write(json.dumps(entry) + "\n")
            log.flush()
            if progress:
                print(f"iteration {entry['iteration']}: {entry['env_steps']} env steps, main return {entry['main_return_mean']}, {entry['seconds']} s", flush=True)
            if algo.iteration % cfg.checkpoint_every == 0 or algo.iteration == cfg.iterations:
                algo.save_to_path(str((run_dir / CHECKPOINT).resolve()))
    return algo


def report(cfg: RLlibConfig, run_dir: Path) -> str:
    """Evaluate the saved ``main`` module (one seat) against ``eval.opponents`` with the project's evaluator; return the text."""
    from grinch_env.evaluation.versus import write_final_report
    from grinch_env.integrations.rllib import RLlibAgent

    agent = RLlibAgent(run_dir / CHECKPOINT, name=f"{cfg.run_name}/main")
    return write_final_report(run_dir, agent, cfg.eval.opponents, [cfg.num_players], cfg.eval.games, seed=10_000 + cfg.seed)


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("grinch-train-rllib", "RLlib PPO self-play (masked) through the RLlib adapter.", "configs/rllib_ppo.yaml")
    parser.add_argument("--resume", action="store_true", help="restore <run dir>/rllib_checkpoint and continue to `iterations`")
    return parser


def _command(cfg: RLlibConfig, run_dir: Path, args: argparse.Namespace) -> None:
    if not args.report_only:
        algo = train(cfg, run_dir, resume=args.resume, progress=not args.no_progress)
        algo.stop()
        print(f"saved {run_dir / CHECKPOINT} after {cfg.iterations} iterations")
    if args.report_only or (not args.no_report and cfg.eval.games):
        print(report(cfg, run_dir))


def main(argv: list[str] | None = None) -> int:
    return run_command(build_parser(), argv, RLlibConfig, _command)


if __name__ == "__main__":
    sys.exit(main())
