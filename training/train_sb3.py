"""Train sb3-contrib's MaskablePPO on the Gymnasium wrapper: ``python -m training.train_sb3 --config configs/sb3_maskable_ppo.yaml``.

The learner holds one seat (drawn at every reset, so it plays both roles);
the other seats are the config's opponents.  The model is saved as
``<checkpoint_dir>/<run_name>/model.zip``, which loads into evaluations and
tournaments as an agent through :func:`training.checkpoint.load_agent`.
Ctrl-C saves the model and exits; ``--resume`` continues the run directory's
``model.zip`` up to ``total_timesteps`` (the games in progress restart, so a
resumed run is not bit-identical to an uninterrupted one).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import yaml

from training.config import SB3Config, load_config

MODEL_FILE = "model.zip"


def make_vec_env(cfg: SB3Config):
    """Return SB3's DummyVecEnv of ``cfg.n_envs`` Gymnasium wrappers (seeded by SB3 from ``cfg.seed``)."""
    from stable_baselines3.common.env_util import make_vec_env as sb3_make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv

    from grinch_env.gym_env import GameGymEnv

    kwargs = dict(game=cfg.game, num_players=cfg.num_players, opponents=list(cfg.opponents), reward_mode=cfg.reward_mode, **cfg.game_options())
    return sb3_make_vec_env(GameGymEnv, n_envs=cfg.n_envs, seed=cfg.seed, env_kwargs=kwargs, vec_env_cls=DummyVecEnv)


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
    """``--resume`` of a run whose model has already trained ``total_timesteps``."""

    def __init__(self, run_dir: Path, done: int, total: int) -> None:
        super().__init__(f"run {str(run_dir)!r} is complete: {done} of {total} timesteps done, nothing to train")
        self.done = done


def train_sb3(cfg: SB3Config, run_dir: Path | None = None, progress: bool = False, resume: bool = False) -> Path:
    """Train MaskablePPO as ``cfg`` says (``resume``: on from the run's model.zip); return the path of the saved ``model.zip``.

    Ctrl-C saves the model trained so far and re-raises ``KeyboardInterrupt``;
    resuming a model that has reached ``total_timesteps`` raises :class:`RunCompleteError`.
    """
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(cfg.torch_threads)
    run_dir = Path(run_dir) if run_dir is not None else Path(cfg.checkpoint_dir) / cfg.run_name
    path = run_dir / MODEL_FILE
    if resume:
        if not path.is_file():
            raise FileNotFoundError(f"nothing to resume: {str(path)!r} does not exist (start the run without --resume)")
        model = MaskablePPO.load(str(path), env=make_vec_env(cfg), device="cpu")
        if model.num_timesteps >= cfg.total_timesteps:
            raise RunCompleteError(run_dir, model.num_timesteps, cfg.total_timesteps)
    else:
        model = MaskablePPO(
            "MlpPolicy",
            make_vec_env(cfg),
            learning_rate=cfg.learning_rate,
            n_steps=cfg.n_steps,
            batch_size=cfg.batch_size,
            n_epochs=cfg.n_epochs,
            gamma=cfg.gamma,
            gae_lambda=cfg.gae_lambda,
            ent_coef=cfg.ent_coef,
            policy_kwargs={"net_arch": list(cfg.net_arch)},
            seed=cfg.seed,
            device="cpu",
            verbose=0,
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(), sort_keys=False))
    done = model.num_timesteps
    callback = _progress_callback(cfg.total_timesteps, done, cfg.run_name) if progress else None
    try:
        model.learn(total_timesteps=cfg.total_timesteps - done, reset_num_timesteps=not resume, callback=callback)
    except KeyboardInterrupt:
        if callback is not None and hasattr(callback, "bar"):
            callback.bar.close()
        _save(model, path)
        print(f"interrupted after {model.num_timesteps} of {cfg.total_timesteps} timesteps: saved {path}", file=sys.stderr)
        raise
    _save(model, path)
    return path


def _save(model, path: Path) -> None:
    tmp = path.parent / f".{path.name}.tmp.zip"
    model.save(str(tmp))
    tmp.replace(path)  # atomic: an interrupted save keeps the previous model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="grinch-train-sb3", description="Train sb3-contrib MaskablePPO on the Gymnasium wrapper.")
    parser.add_argument("--config", required=True, help="YAML config (configs/sb3_maskable_ppo.yaml)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="override a config value (repeatable)")
    parser.add_argument("--run-dir", help="output directory (default: <checkpoint_dir>/<run_name>)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run directory's model.zip up to total_timesteps (the games in progress restart: not bit-exact)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        cfg = load_config(args.config, args.overrides, schema=SB3Config)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    command = f"python -m training.train_sb3 --config {args.config}" + "".join(f" --set {o}" for o in args.overrides)
    command += f" --run-dir {args.run_dir}" if args.run_dir else ""
    try:
        path = train_sb3(cfg, args.run_dir, progress=not args.no_progress, resume=args.resume)
    except FileNotFoundError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except RunCompleteError as complete:
        print(f"{complete}.\nTo train it further, raise total_timesteps: {command} --resume --set total_timesteps={complete.done + cfg.total_timesteps}")
        return 0
    except KeyboardInterrupt:
        print(f"resume with: {command} --resume", file=sys.stderr)
        return 130
    print(f"saved {path}")
    if cfg.eval_games:
        from grinch_env.evaluation.versus import evaluate_against, learner_win_rate
        from training.checkpoint import load_agent

        agent = load_agent(path, trust=True)  # this run wrote the .zip just now
        results = evaluate_against(agent, cfg.eval_opponents, [cfg.num_players], cfg.eval_games, seed=10_000 + cfg.seed, game=cfg.game)
        for key, result in results.items():
            print(f"{key}: win rate {learner_win_rate(result):.3f} over {cfg.eval_games} games")
    return 0


if __name__ == "__main__":
    sys.exit(main())
