"""Where does the Grinch network lose its points to `expectimax`?  Play one seat with a composite agent that lets the
network decide one kind of decision (draws, discards or the row to score) and `expectimax` every other, against
`expectimax`, seat-rotated over paired deals: the gap each kind costs, measured in games instead of guessed.
A diagnosis for docs/results/learner_grinch.md (seventeenth session).

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/swap_kinds.py [NETWORK] [GAMES] [KINDS]

``NETWORK``: a learner run directory (default ``checkpoints/learner_grinch_cards``); ``GAMES`` per match (default
1200, seed 4242, 2 players); ``KINDS``: comma-separated from ``draw``, ``discard``, ``score``, ``none`` (the composite
is `expectimax` throughout: the control, parity by construction) and ``all`` (the network throughout).
"""
import sys

import numpy as np

from grinch_env.agents import make_agent
from grinch_env.evaluation.evaluate import evaluate
from grinch_env.grinch.game import DRAW_PILE_ACTION, SCORE_BASE

network = sys.argv[1] if len(sys.argv) > 1 else "checkpoints/learner_grinch_cards"
games = int(sys.argv[2]) if len(sys.argv) > 2 else 1200
kinds = (sys.argv[3] if len(sys.argv) > 3 else "none,draw,discard,score,all").split(",")
ALLOWED = ("none", "draw", "discard", "score", "all")
if set(kinds) - set(ALLOWED):
    raise SystemExit(f"KINDS must come from {', '.join(ALLOWED)}, got {','.join(kinds)}")


def kind_of(mask: np.ndarray) -> str:
    if mask[SCORE_BASE:].any():
        return "score"
    if mask[:DRAW_PILE_ACTION].any():
        return "discard"
    return "draw"


class Composite:
    """The network for the decisions of kind ``kind`` (every kind for ``all``, none for ``none``), `expectimax` for the rest."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.name = f"network on {kind}"
        self.net = make_agent(network, num_players=2, game="grinch")
        self.expert = make_agent("expectimax", num_players=2, game="grinch")

    def reset(self, seed=None):
        self.net.reset(seed)
        self.expert.reset(seed)

    def act(self, observation, action_mask):
        mask = np.asarray(action_mask)
        mine = self.kind == "all" or (self.kind != "none" and kind_of(mask) == self.kind)
        return (self.net if mine else self.expert).act(observation, action_mask)


for kind in kinds:
    res = evaluate([Composite(kind), "expectimax"], num_players=2, num_games=games, seed=4242, game="grinch")
    a = res.per_agent[res.agents[0]]
    b = res.per_agent[res.agents[1]]
    lo, hi = a["win_rate_ci"]
    print(f"network on {kind:8s} against expectimax, {games} games: win share {a['win_rate']:.3f} [{lo:.3f}, {hi:.3f}]; "
          f"mean total {a['mean_score']:.1f} against {b['mean_score']:.1f}", flush=True)
