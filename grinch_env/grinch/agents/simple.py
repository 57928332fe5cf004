"""The two baselines: ``random`` (uniform over legal actions) and ``greedy`` (best row value now)."""

from __future__ import annotations

import numpy as np

from grinch_env.grinch import encoding as enc
from grinch_env.grinch.agents.base import BaseAgent, decode
from grinch_env.grinch.agents.handeval import HandEvaluator
from grinch_env.grinch.cards import NUM_CARDS
from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, SCORE_BASE
from grinch_env.grinch.scoring import NUM_ROWS


class RandomAgent(BaseAgent):
    """Plays a uniformly random legal action."""

    name = "random"

    def _act(self, observation: np.ndarray, legal: np.ndarray) -> int:
        return int(legal[self.rng.integers(len(legal))])


def pick_best(values: np.ndarray, rng: np.random.Generator) -> int:
    """Return the index of the largest value, ties broken at random by ``rng``."""
    values = np.asarray(values, dtype=np.float64)
    best = np.flatnonzero(values >= values.max() - 1e-9)
    return int(best[0]) if len(best) == 1 else int(best[rng.integers(len(best))])


class GreedyAgent(BaseAgent):
    """Maximises the best immediately scorable value (row value plus bonus, unused rows only).

    * discard: keeps the hand whose best unused row (bonus included) is highest;
    * draw (Grinch): takes the card that maximises that value of the hand it
      makes; the draw pile counts as the mean over the cards it cannot locate;
    * score: the highest-value unused row.
    Ties are broken at random by the agent's seeded generator.
    """

    name = "greedy"

    def __init__(self, seed: int | None = None, bonus_layout="standard") -> None:
        super().__init__(seed, bonus_layout)
        self.evaluator = HandEvaluator(self.layout)

    def _act(self, observation: np.ndarray, legal: np.ndarray) -> int:
        used = observation[enc.ROW_USED:enc.ROW_USED + NUM_ROWS] > 0.5
        offsets = np.where(used, -np.inf, 0.0)
        hand = np.flatnonzero(observation[:NUM_CARDS] > 0.5)
        first = int(legal[0])
        if first >= SCORE_BASE:
            rows, _ = self.evaluator.score(hand)
            return int(legal[pick_best(rows[legal - SCORE_BASE], self.rng)])
        if first < DRAW_PILE_ACTION:
            keeps = np.array([[c for c in hand if c != d] for d in legal])
            return int(legal[pick_best(self.evaluator.value(keeps, offsets), self.rng)])
        view = decode(observation, self.scales)
        values = []
        for a in legal:
            if a == DRAW_PILE_ACTION:
                pool = np.array(view.unseen())
                hands = np.concatenate([np.broadcast_to(hand, (len(pool), len(hand))), pool[:, None]], axis=1)
                values.append(self.evaluator.value(hands, offsets).mean())
            else:
                top = view.tops[a - DRAW_DISCARD_BASE]
                values.append(self.evaluator.value(np.append(hand, top), offsets))
        return int(legal[pick_best(np.array(values), self.rng)])
