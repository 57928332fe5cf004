"""What do the Grinch's draws cost?  A learner checkpoint plays every decision except the Grinch's draws, which greedy
makes (its rule: the card whose hand has the best open row plus bonus, the draw pile at its mean over the unseen
cards), one seat against OPPONENT, seat-rotated paired deals (seed 4242).  docs/results/learner_grinch.md, eleventh
session.  A diagnosis only: greedy's draw rule is a heuristic the learner may not read.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/hybrid.py checkpoints/learner_grinch_long greedy 2 600
"""
import sys

import numpy as np

from grinch_env.agents import make_agent
from grinch_env.evaluation.evaluate import evaluate
from grinch_env.grinch.game import DRAW_PILE_ACTION, SCORE_BASE

ckpt, opponent, players, games = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
net = make_agent(ckpt, num_players=players, game="grinch")
greedy = make_agent("greedy", num_players=players, game="grinch")


class GreedyDraws:
    name = "net+greedy_draws"

    def reset(self, seed=None):
        net.reset(seed)
        greedy.reset(seed)

    def act(self, observation, action_mask):
        first = int(np.flatnonzero(action_mask)[0])
        agent = greedy if DRAW_PILE_ACTION <= first < SCORE_BASE else net  # a draw's legal actions are all draws
        return agent.act(observation, action_mask)


print(evaluate([GreedyDraws(), opponent], num_players=players, num_games=games, seed=4242, game="grinch").table())
