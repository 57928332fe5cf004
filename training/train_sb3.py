"""Train sb3-contrib's MaskablePPO on the Gymnasium wrapper: ``python -m training.train_sb3 --config configs/sb3_maskable_ppo.yaml``.

Usage::

    python -m training.train_sb3 --config configs/sb3_maskable_ppo.yaml              # a fresh run, then its report
    python -m training.train_sb3 --config configs/sb3_maskable_ppo.yaml --set sb3.total_timesteps=20000 --set checkpoint.run_name=try
    python -m training.train_sb3 --config configs/sb3_maskable_ppo.yaml --resume     # go on up to sb3.total_timesteps
    python -m training.train_sb3 --config configs/sb3_maskable_ppo.yaml --report     # only evaluate the saved model

The config (:class:`SB3Config`) has the one trainer's shared keys (``game``, ``num_players``, ``seed``,
``torch_threads``, ``checkpoint: {dir, run_name}``, ``eval: {final_opponents, final_games}``: :mod:`training.bridges`)
and an ``sb3:`` section of MaskablePPO's knobs.  The learner holds one seat (drawn at every reset, so it plays every
role); the other seats are ``sb3.opponents``.  The model is saved as ``<checkpoint.dir>/<checkpoint.run_name>/model.zip``
(next to ``config.yaml`` and the report's ``report/``), which loads into evaluations and tournaments as an agent
through :func:`training.checkpoint.load_agent`.  Ctrl-C saves the model and exits; ``--resume`` continues the run
directory's ``model.zip`` up to ``sb3.total_timesteps`` (the games in progress restart, so a resumed run is not
bit-identical to an uninterrupted one).

Exit status: 0 done, 2 bad input (``error: ...`` says what is wrong), 130 interrupted (the model is saved).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Literal

from pydantic import Field, PositiveInt, model_validator

from grinch_env.games import get_game
from training.bridges import BridgeConfig, Section, command_line, load_config, write_config
from training.bridges import build_parser as bridge_parser

MODEL_FILE = "model.zip"


class SB3Section(Section):
    """MaskablePPO's knobs and the learner's table (one learner seat against ``opponents``)."""

    opponents: list[str] = Field(default_factory=lambda: ["random"], min_length=1,
                                 description="make_agent specs of the other seats (one repeated, or num_players - 1)")
    bonus_layout: Literal["standard", "none"] = Field("standard", description="bonus-card layout of the rules (grinch only)")
    reward_mode: Literal["win", "margin"] = Field("win", description="the learner seat's terminal reward")
    n_envs: int = Field(4, ge=1, description="environments in SB3's DummyVecEnv")
    total_timesteps: int = Field(100_000, ge=1, description="learner decisions to train on")
    net_arch: list[PositiveInt] = Field(default_factory=lambda: [256, 256], min_length=1,
                                        description="hidden layer widths of the policy and value MLPs")
    learning_rate: float = Field(3e-4, gt=0, description="Adam learning rate")
    n_steps: int = Field(512, ge=1, description="steps per environment per rollout")
    batch_size: int = Field(256, ge=1, description="minibatch size")
    n_epochs: int = Field(4, ge=1, description="passes over each rollout")
    gamma: float = Field(1.0, ge=0, le=1, description="discount per learner decision")
    gae_lambda: float = Field(0.95, ge=0, le=1, description="GAE lambda")
    ent_coef: float = Field(0.01, ge=0, description="entropy bonus coefficient")


class SB3Config(BridgeConfig):
    """``python -m training.train_sb3``: sb3-contrib MaskablePPO on the Gymnasium wrapper (one learner seat), for either game."""

    DEFAULT_RUN_NAME = "sb3_maskable_ppo"
    sb3: SB3Section = Field(default_factory=SB3Section)

    @model_validator(mode="after")
    def _fits_the_table(self) -> SB3Config:
        spec = get_game(self.game)
        if self.game != "grinch" and self.sb3.bonus_layout != "standard":
            raise ValueError(f"sb3.bonus_layout: {spec.title} has no bonus cards; leave sb3.bonus_layout at 'standard'")
        if len(self.sb3.opponents) not in (1, self.num_players - 1):
            raise ValueError(f"sb3.opponents: give 1 spec (every other seat) or num_players - 1 = {self.num_players - 1}, "
                             f"got {len(self.sb3.opponents)}: {self.sb3.opponents}")
        return self

    def game_options(self) -> dict[str, str]:
        """The rule options a game of this config is created with (the Grinch's bonus layout)."""
        return {"bonus_layout": self.sb3.bonus_layout} if self.game == "grinch" else {}


def make_vec_env(cfg: SB3Config):
    """Return SB3's DummyVecEnv of ``cfg.sb3.n_envs`` Gymnasium wrappers (seeded by SB3 from ``cfg.seed``)."""
    from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv

    from grinch_env.gym_env import GameGymEnv

    kwargs = dict(game=cfg.game, num_players=cfg.num_players, opponents=list(cfg.sb3.opponents), reward_mode=cfg.sb3.reward_mode,
                  **cfg.game_options())
    return sb3_make_vec_env(GameGymEnv, n_envs=cfg.sb3.n_envs, seed=cfg.seed, env_kwargs=kwargs, vec_env_cls=DummyVecEnv)


def _progress_callback(total: int, initial: int, desc: str):
    """Return an SB3 callback showing a plain tqdm bar (SB3's own bar needs ``rich``, which the project does not depend on)."""
    from stable_baselines3.common.callbacks import BaseCallback
    from tqdm import tqdm

    class Progress(BaseCallback):
        def _on_training_start(self) -> None:
            self.bar = tqdm(total=total, initial=initial, desc=desc, unit="step", dynamic_ncols=True)

        def _on_step(self) -> bool:
            self.bar.update(self.training_env.num_envs)
            return True

        def _on_training_end(self) -> None:
            self.bar.close()

    return Progress()


class RunCompleteError(Exception):
    """``--resume`` of a run whose model has already trained ``sb3.total_timesteps``."""

    def __init__(self, run_dir: Path, done: int, total: int) -> None:
        super().__init__(f"run {str(run_dir)!r} is complete: {done} of {total} timesteps done, nothing to train")
        self.done = done


def train_sb3(cfg: SB3Config, progress: bool = False, resume: bool = False) -> Path:
    """Train MaskablePPO as ``cfg`` says (``resume``: on from the run's model.zip); return the path of the saved ``model.zip``.

    Ctrl-C saves the model trained so far and re-raises ``KeyboardInterrupt``;
    resuming a model that has reached ``sb3.total_timesteps`` raises :class:`RunCompleteError`.
    """
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(cfg.torch_threads)
    s, run_dir = cfg.sb3, cfg.run_dir
    path = run_dir / MODEL_FILE
    if resume:
        if not path.is_file():
            raise FileNotFoundError(f"nothing to resume: {str(path)!r} does not exist (start the run without --resume)")
        model = MaskablePPO.load(str(path), env=make_vec_env(cfg), device="cpu")
        if model.num_timesteps >= s.total_timesteps:
            raise RunCompleteError(run_dir, model.num_timesteps, s.total_timesteps)
    else:
        model = MaskablePPO("MlpPolicy", make_vec_env(cfg), learning_rate=s.learning_rate, n_steps=s.n_steps, batch_size=s.batch_size,
                            n_epochs=s.n_epochs, gamma=s.gamma, gae_lambda=s.gae_lambda, ent_coef=s.ent_coef,
                            policy_kwargs={"net_arch": list(s.net_arch)}, seed=cfg.seed, device="cpu", verbose=0)
    run_dir.mkdir(parents=True, exist_ok=True)
    write_config(cfg, run_dir)
    done = model.num_timesteps
    callback = _progress_callback(s.total_timesteps, done, cfg.run_name) if progress else None
    try:
        model.learn(total_timesteps=s.total_timesteps - done, reset_num_timesteps=not resume, callback=callback)
    except KeyboardInterrupt:
        if callback is not None and hasattr(callback, "bar"):
            callback.bar.close()
        _save(model, path)
        print(f"interrupted after {model.num_timesteps} of {s.total_timesteps} timesteps: saved {path}", file=sys.stderr)
        raise
    _save(model, path)
    return path


def _save(model, path: Path) -> None:
    tmp = path.parent / f".{path.name}.tmp.zip"
    model.save(str(tmp))
    tmp.replace(path)  # atomic: an interrupted save keeps the previous model


def report(cfg: SB3Config) -> str:
    """Evaluate the run's ``model.zip`` (one seat) against ``eval.final_opponents``; write ``<run dir>/report/`` and return the text."""
    from grinch_env.evaluation.versus import write_final_report
    from training.checkpoint import load_agent

    agent = load_agent(cfg.run_dir / MODEL_FILE, trust=True)  # this run wrote the .zip
    return write_final_report(cfg.run_dir, agent, list(cfg.eval.final_opponents), [cfg.num_players], cfg.eval.final_games,
                              seed=10_000 + cfg.seed, game=cfg.game, checkpoint_name=MODEL_FILE)


def _check(cfg: SB3Config, resume: bool, only_report: bool) -> None:
    path = cfg.run_dir / MODEL_FILE
    if resume and only_report:
        raise ValueError("--resume trains and --report only evaluates: give one of them")
    if only_report and not path.is_file():
        raise ValueError(f"nothing to report: {str(path)!r} does not exist (train the run first, without --report)")
    if only_report and not cfg.eval.final_games:
        raise ValueError("--report with eval.final_games: 0 plays no games; give --set eval.final_games=N")
    if not resume and not only_report and path.exists():
        raise ValueError(f"{path} exists: go on with --resume, or pick another run name (--set checkpoint.run_name=NAME)")


def build_parser() -> argparse.ArgumentParser:
    return bridge_parser(
        "python -m training.train_sb3", "Train sb3-contrib MaskablePPO on the Gymnasium wrapper (one learner seat).", "configs/sb3_maskable_ppo.yaml",
        resume="continue the run directory's model.zip up to sb3.total_timesteps (the games in progress restart: not bit-exact)",
        report="train nothing: evaluate the run's model.zip against eval.final_opponents and write <run dir>/report/")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    command = command_line("training.train_sb3", args)
    try:
        cfg = load_config(SB3Config, args.config, args.set)
        _check(cfg, args.resume, args.report)
        if not args.report:
            path = train_sb3(cfg, progress=not args.quiet, resume=args.resume)
            print(f"saved {path}")
        if cfg.eval.final_games:
            print(report(cfg))
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except RunCompleteError as complete:
        total = cfg.sb3.total_timesteps
        print(f"{complete}.\nTo train it further, raise sb3.total_timesteps: {command} --resume --set sb3.total_timesteps={complete.done + total}")
        return 0
    except KeyboardInterrupt:
        print(f"resume with: {command} --resume", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["MODEL_FILE", "RunCompleteError", "SB3Config", "SB3Section", "build_parser", "main", "make_vec_env", "report", "train_sb3"]
