"""Vectorised scoring of many hands at once: the same numbers as :mod:`grinch_env.grinch.scoring`, in numpy.

Rule-aware agents compare thousands of candidate hands per decision; scoring
them one by one in Python would take milliseconds each time.  The tests check
that these tables agree with :func:`grinch_env.grinch.scoring.row_scores` and
:func:`grinch_env.grinch.scoring.bonus_points`, which stay the rules' reference.
"""

from __future__ import annotations

from functools import cache
from itertools import combinations

import numpy as np

from grinch_env.grinch.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, RANK, SUIT
from grinch_env.grinch.scoring import MATCH_POINTS, NUM_ROWS, RUN_POINTS

SUIT_OF = np.array(SUIT, dtype=np.int64)
RANK_OF = np.array(RANK, dtype=np.int64)
_MATCH = np.array(MATCH_POINTS, dtype=np.int64)
_SUITS = np.arange(NUM_SUITS)
_RANKS = np.arange(1, NUM_RANKS + 1)
_BITS = 1 << np.arange(NUM_RANKS)


def _run_table() -> np.ndarray:
    """Return the Run row's points for every 6-bit set of ranks present."""
    table = np.zeros(1 << NUM_RANKS, dtype=np.int64)
    for mask in range(1 << NUM_RANKS):
        longest = run = 0
        for r in range(NUM_RANKS):
            run = run + 1 if mask >> r & 1 else 0
            longest = max(longest, run)
        table[mask] = RUN_POINTS[longest]
    return table


_RUN = _run_table()


@cache
def five_card_subsets(m: int) -> np.ndarray:
    """Return the ``[C(m, 5), 5]`` index table of the 5-card subsets of ``m`` cards (``cards[..., table]`` lists them)."""
    return np.array(list(combinations(range(m), 5)), dtype=np.int64)


class HandEvaluator:
    """Scores batches of hands under one bonus layout."""

    def __init__(self, layout: tuple) -> None:
        self.bonus_points = np.array([0 if b is None else b.points for b in layout], dtype=np.int64)
        self.bonus_suit = np.array([0 if b is None else b.suit for b in layout], dtype=np.int64)
        self.bonus_count = np.array([0 if b is None else b.count for b in layout], dtype=np.int64)
        assert len(self.bonus_points) == NUM_CARDS

    def score(self, cards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(rows int[..., 7], bonus int[...])`` for hands ``cards int[..., h]``."""
        cards = np.asarray(cards, dtype=np.int64)
        suit = SUIT_OF[cards]
        rank = RANK_OF[cards]
        in_suit = suit[..., None] == _SUITS  # [..., h, 4]
        ranked = np.where(in_suit, rank[..., None], 0)
        suit_count = in_suit.sum(-2)
        rows = np.empty(cards.shape[:-1] + (NUM_ROWS,), dtype=np.int64)
        rows[..., :4] = ranked.sum(-2)
        rows[..., 4] = ranked.max(-2).sum(-1)
        rank_count = (rank[..., None] == _RANKS).sum(-2)  # [..., 6]
        rows[..., 5] = _MATCH[rank_count.max(-1)]
        rows[..., 6] = _RUN[((rank_count > 0) * _BITS).sum(-1)]
        need = np.take_along_axis(suit_count, self.bonus_suit[cards], axis=-1)
        bonus = (self.bonus_points[cards] * (need >= self.bonus_count[cards])).sum(-1)
        return rows, bonus

    def value(self, cards: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Return ``bonus + max_k(rows[k] + offsets[k])`` per hand: the best row choice when using row k is worth ``offsets[k]`` extra (``-inf`` = used)."""
        rows, bonus = self.score(cards)
        return bonus + (rows + offsets).max(-1)
