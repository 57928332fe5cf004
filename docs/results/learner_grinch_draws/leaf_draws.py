"""Does the learned value rank the Grinch's draws?  A learner checkpoint plays every decision itself, except that at the
Grinch's draws it takes the legal draw with the best mean value head over SAMPLES determinisations, read at its own
next decision (the network search with horizon 0: the one-ply chance expectation over the learned value, for the
blind draw the cards the pile may hold).  One seat against OPPONENT, seat-rotated paired deals (seed 4242).
docs/results/learner_grinch.md, eleventh session.  With a sixth argument ``round`` the draws are ranked by the round
value head instead (a run with ``net.round_value``; twelfth session).

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/leaf_draws.py checkpoints/learner_grinch_long greedy 2 200 16
    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/leaf_draws.py checkpoints/grinch_roundbase greedy 2 200 16 round
"""
import sys

import numpy as np
import torch

from grinch_env.agents import make_agent
from grinch_env.evaluation.evaluate import evaluate
from grinch_env.grinch.game import DRAW_PILE_ACTION, SCORE_BASE
from training.learner.search import NetSearch, load_learner

torch.set_num_threads(1)
ckpt, opponent, players, games, samples = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
net_agent = make_agent(ckpt, num_players=players, game="grinch")
net, cfg, _ = load_learner(ckpt)
if sys.argv[6:] == ["round"]:
    class RoundValue(torch.nn.Module):
        """The network with its round value head in the value's place (the leaf at the next own decision of the same turn:
        no row is scored in between, so the banked margin the search adds is the same for every draw)."""

        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, state, actions):
            logits, q, _, round_value = self.net.heads(state, actions)
            return logits, q, round_value

    net = RoundValue(net).eval()
search = NetSearch(net, "grinch", algo=cfg["algo"], credit=cfg["credit"], reward_mode=cfg["reward_mode"], samples=samples, top_k=7, horizon=0)
counts = {"blind": 0, "top": 0}


class LeafDraws:
    name = "net+value_draws"

    def reset(self, seed=None):
        net_agent.reset(seed)
        self.rng = np.random.default_rng(seed)

    def act(self, observation, action_mask):
        first = int(np.flatnonzero(action_mask)[0])
        if DRAW_PILE_ACTION <= first < SCORE_BASE:
            a = search.choose(observation, np.asarray(action_mask).astype(bool), self.rng)
            counts["blind" if a == DRAW_PILE_ACTION else "top"] += 1
            return a
        return net_agent.act(observation, action_mask)


print(evaluate([LeafDraws(), opponent], num_players=players, num_games=games, seed=4242, game="grinch").table())
print("draws:", counts)
