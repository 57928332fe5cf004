"""Train sb3-contrib's MaskablePPO on the Gymnasium wrapper: ``python -m training.train_sb3 --config configs/sb3_maskable_ppo.yaml``.

The learner holds one seat (drawn at every reset, so it plays both roles);
the other seats are the config's opponents.  The model is saved as
``<checkpoint_dir>/<run_name>/model.zip``, which loads into evaluations and
tournaments as an agent through :func:`training.checkpoint.load_agent`.
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

    from grinch_env.grinch.gym_env import GrinchGymEnv

    kwargs = dict(num_players=cfg.num_players, opponents=list(cfg.opponents), bonus_layout=cfg.bonus_layout, reward_mode=cfg.reward_mode)
    return sb3_make_vec_env(GrinchGymEnv, n_envs=cfg.n_envs, seed=cfg.seed, env_kwargs=kwargs, vec_env_cls=DummyVecEnv)


def train_sb3(cfg: SB3Config, run_dir: Path | None = None, progress: bool = False) -> Path:
    """Train MaskablePPO as ``cfg`` says; return the path of the saved ``model.zip``."""
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(cfg.torch_threads)
    run_dir = Path(run_dir) if run_dir is not None else Path(cfg.checkpoint_dir) / cfg.run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(), sort_keys=False))
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
    model.learn(total_timesteps=cfg.total_timesteps, progress_bar=progress)
    path = run_dir / MODEL_FILE
    tmp = run_dir / f".{MODEL_FILE}.tmp.zip"
    model.save(str(tmp))
    tmp.replace(path)  # atomic: an interrupted save keeps the previous model
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="grinch-train-sb3", description="Train sb3-contrib MaskablePPO on the Gymnasium wrapper.")
    parser.add_argument("--config", required=True, help="YAML config (configs/sb3_maskable_ppo.yaml)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE", help="override a config value (repeatable)")
    parser.add_argument("--run-dir", help="output directory (default: <checkpoint_dir>/<run_name>)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        cfg = load_config(args.config, args.overrides, schema=SB3Config)
    except (ValueError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    path = train_sb3(cfg, args.run_dir, progress=not args.no_progress)
    print(f"saved {path}")
    if cfg.eval_games:
        from grinch_env.evaluation.versus import evaluate_against, learner_win_rate
        from training.checkpoint import load_agent

        results = evaluate_against(load_agent(path), cfg.eval_opponents, [cfg.num_players], cfg.eval_games, seed=10_000 + cfg.seed)
        for key, result in results.items():
            print(f"{key}: win rate {learner_win_rate(result):.3f} over {cfg.eval_games} games")
    return 0


if __name__ == "__main__":
    sys.exit(main())
