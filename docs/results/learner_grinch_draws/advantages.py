"""Is there a learning signal at the Grinch's draws?  Self-play rollouts of a Grinch learner checkpoint at 2 players
(64 games x 6 seeds, the training's own PPO sampling, GAE lambda 0.95, pad credit), and the GAE advantages of the draws
where the draw pile and a seen top are both legal, by what the policy drew.  docs/results/learner_grinch.md, eleventh
session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/advantages.py checkpoints/learner_grinch_long
"""
import sys

import numpy as np
import torch

from grinch_env.games import get_game
from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, SCORE_BASE
from training.learner.rollout import collect
from training.learner.search import load_learner

torch.set_num_threads(1)
net, cfg, _ = load_learner(sys.argv[1])
net.eval()
out: dict[str, list] = {"pile": [], "top": []}
adv_all = []
for it in range(6):
    engine = get_game("grinch").vector(num_envs=64, num_players=2, seed=it, reward_mode="margin")
    b = collect(engine, net, "grinch", "ppo", np.random.default_rng(it), gae_lambda=0.95, credit="pad")
    draw = (b.actions >= DRAW_PILE_ACTION) & (b.actions < SCORE_BASE)
    both = draw & b.masks[:, DRAW_PILE_ACTION].astype(bool) & b.masks[:, DRAW_DISCARD_BASE:SCORE_BASE].astype(bool).any(1)
    out["pile"].append(b.advantages[both & (b.actions == DRAW_PILE_ACTION)])
    out["top"].append(b.advantages[both & (b.actions > DRAW_PILE_ACTION)])
    adv_all.append(b.advantages)
for k, v in out.items():
    v = np.concatenate(v) * 100
    print(f"{k}: n {len(v)} mean advantage {v.mean():+.2f} points (se {v.std() / np.sqrt(len(v)):.2f}), std {v.std():.1f}")
a = np.concatenate(adv_all) * 100
print(f"all decisions: n {len(a)} std {a.std():.1f} points")
