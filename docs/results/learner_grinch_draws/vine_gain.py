"""What is a seen top worth against the pile under a Grinch learner's own play?  Self-play rollouts of a checkpoint at
2 players (64 games x ROLLOUTS seeds, the policy's sampling) with 128 vine pairs in flight (``ppo.vine_pairs``,
training/learner/vine.py): at draws where the pile and a seen top are both legal, the taken draw and another legal one
are both played to the round's end by the network's most likely moves, with the same chance.  Prints, over the pairs
that compared a top with the pile, the top's gain in points of the round's banked margin (mean and 95% interval),
split by where the policy is sure of the pile (probability >= 0.9) or not, and by whether the top is the draw greedy
makes at that position.  docs/results/learner_grinch.md,
thirteenth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/vine_gain.py checkpoints/learner_grinch_long [ROLLOUTS]
"""
import sys

import numpy as np
import torch

from grinch_env.agents import make_agent
from grinch_env.games import get_game
from grinch_env.grinch.game import DRAW_PILE_ACTION
from training.learner.algos import vine_top_gains
from training.learner.rollout import collect, encode
from training.learner.search import load_learner
from training.model import MaskedCategorical

torch.set_num_threads(1)
torch.manual_seed(0)  # the policy samples with torch
greedy = make_agent("greedy", num_players=2, game="grinch", seed=0)  # it breaks ties at random
net, cfg, _ = load_learner(sys.argv[1])
rollouts = int(sys.argv[2]) if len(sys.argv) > 2 else 6
gains, sure, greedys = [], [], []
for it in range(rollouts):
    engine = get_game("grinch").vector(num_envs=64, num_players=2, seed=1000 + it, reward_mode="margin")
    b = collect(engine, net, "grinch", "ppo", np.random.default_rng(1000 + it), credit="pad", vine_pairs=128)
    pile, gain = vine_top_gains(b)
    gain, taken = gain[pile], b.actions[b.vine_index]  # a top less the pile, points
    with torch.no_grad():
        st, at = encode("grinch", b.obs[b.vine_index[pile]].astype(np.float32))
        logits = net(st, at)[0]
    p_pile = MaskedCategorical(logits, torch.from_numpy(b.masks[b.vine_index[pile]].astype(bool))).probs[:, DRAW_PILE_ACTION].numpy()
    top = np.where(taken == DRAW_PILE_ACTION, b.vine_action, taken)[pile]
    at = b.vine_index[pile]
    greedys.append(np.array([greedy.act(b.obs[i].astype(np.float32), b.masks[i]) for i in at]) == top)  # the top is greedy's draw
    gains.append(gain)
    sure.append(p_pile >= 0.9)
g, s, gr = np.concatenate(gains), np.concatenate(sure), np.concatenate(greedys)


def line(label: str, x: np.ndarray) -> str:
    half = 1.96 * x.std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else float("nan")
    return f"  {label}: {len(x)} pairs, a top's gain over the pile {x.mean():+.2f} [{x.mean() - half:+.2f}, {x.mean() + half:+.2f}] points"


print(f"{sys.argv[1]}: {rollouts} rollouts of 64 self-play games, pairs comparing a seen top with the pile")
print(line("all", g))
print(line("policy sure of the pile (p >= 0.9)", g[s]))
print(line("otherwise", g[~s]))
print(line("the top is greedy's draw there", g[gr]))
print(line("  and the policy sure of the pile", g[gr & s]))
print(line("a top greedy does not draw", g[~gr]))
