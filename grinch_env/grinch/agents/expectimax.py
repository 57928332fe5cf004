"""``expectimax``: a rules-aware agent that samples the unseen cards and charges each row its future value.

It decodes the observation into what its seat knows (:func:`decode`), never the
true state.  Three ideas, all vectorised with :class:`HandEvaluator`:

* **Row opportunity cost** (the Yahtzee problem).  ``W(U, R)`` is the
  expected points still to come from the unused rows ``U`` with ``R`` rounds
  left after this one, computed once per layout by dynamic programming over a
  fixed sample of reference hands (the best 5 of ``horizon_cards`` random
  cards, per row): ``W(U, R) = mean_m max_{k in U} (best_k(m) + W(U - k, R - 1))``.
  A hand is worth ``bonus + max_k (row_k + W(U - k, R))``, so a row is only
  spent when what it earns now beats what it would earn later.
* **Sampling the future** (chance nodes).  Each decision draws ``samples``
  orderings of the cards it cannot locate (the draw pile and other hands'
  unknown cards are exchangeable from its seat); the same orderings serve
  every candidate action (common random numbers), which makes comparisons
  much less noisy than independent rollouts.
* **Lookahead to the end of the round** (max nodes).  With one turn left a
  discard is valued exactly (draw 2, then keep the best 5); with two turns
  left, and for the Grinch's draw sequences, by the best 5-card hand of the
  kept cards plus the future draws.  The Grinch's two draws are enumerated as
  ordered pairs of sources, with the second taking the card the first
  uncovered when both use the same pile.
"""

from __future__ import annotations

import numpy as np

from grinch_env.grinch.agents.base import BaseAgent, View, decode
from grinch_env.grinch.agents.handeval import HandEvaluator, five_card_subsets
from grinch_env.grinch.agents.simple import pick_best
from grinch_env.grinch.cards import NUM_CARDS
from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, MAX_ROUNDS, SCORE_BASE, TURNS_PER_ROUND, WHO_DRAWS
from grinch_env.grinch.scoring import NUM_ROWS

HAND_SIZE = 5
MAX_ROUND_POINTS = 200  # well above any row value plus bonus
FULL_ROWS = (1 << NUM_ROWS) - 1


class RowValues:
    """``W(U, R)``: expected future points of the unused rows ``U`` (bit mask) with ``R`` rounds to play."""

    def __init__(self, evaluator: HandEvaluator, horizon_cards: int = 7, reference_hands: int = 2000, seed: int = 12345) -> None:
        rng = np.random.default_rng(seed)
        cards = np.argsort(rng.random((reference_hands, NUM_CARDS)), axis=1)[:, :horizon_cards]
        rows, bonus = evaluator.score(cards[:, five_card_subsets(horizon_cards)])  # [M, C, 7], [M, C]
        self.best = (rows + bonus[..., None]).max(1).astype(np.float64)  # [M, 7]: best hand per row
        self._table = np.full((1 << NUM_ROWS, MAX_ROUNDS + 1), np.nan)
        self._table[:, 0] = 0.0

    def __call__(self, unused: int, rounds: int) -> float:
        value = self._table[unused, rounds]
        if np.isnan(value):
            ks = [k for k in range(NUM_ROWS) if unused >> k & 1]
            if len(ks) < rounds:
                raise ValueError(f"{rounds} rounds cannot be played with only {len(ks)} unused rows")
            options = np.stack([self.best[:, k] + self(unused & ~(1 << k), rounds - 1) for k in ks], axis=1)
            value = self._table[unused, rounds] = options.max(1).mean()
        return float(value)

    def offsets(self, used: list[bool], rounds_left: int) -> np.ndarray:
        """Return ``W(U - k, R)`` for every unused row ``k`` (``-inf`` for used rows): what keeping the others is worth."""
        unused = sum(1 << k for k in range(NUM_ROWS) if not used[k])
        out = np.full(NUM_ROWS, -np.inf)
        for k in range(NUM_ROWS):
            if unused >> k & 1:
                out[k] = self(unused & ~(1 << k), rounds_left)
        return out


_ROW_VALUES: dict[tuple, RowValues] = {}


def row_values(layout: tuple, evaluator: HandEvaluator, horizon_cards: int) -> RowValues:
    """Return the (per-process cached) :class:`RowValues` of a layout."""
    key = (id(layout), horizon_cards)
    if key not in _ROW_VALUES:
        _ROW_VALUES[key] = RowValues(evaluator, horizon_cards)
    return _ROW_VALUES[key]


class ExpectimaxAgent(BaseAgent):
    """Samples the unseen cards to value discards and draws to the end of the round; scores rows net of their future value.

    ``samples`` (default 32) is the number of sampled futures per decision:
    more is stronger and slower.  ``horizon_cards`` (default 7) sets the
    reference hands of the row values (best 5 of that many random cards).
    """

    name = "expectimax"

    def __init__(self, seed: int | None = None, samples: int = 32, horizon_cards: int = 7, row_weight: float = 1.0,
                 win_aware: int = 1, bonus_layout="standard") -> None:
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"expectimax samples must be an int >= 1, got {samples!r}")
        if isinstance(horizon_cards, bool) or not isinstance(horizon_cards, int) or not 5 <= horizon_cards <= 10:
            raise ValueError(f"expectimax horizon_cards must be an int in 5..10, got {horizon_cards!r}")
        if isinstance(row_weight, bool) or not isinstance(row_weight, (int, float)) or not 0 <= row_weight <= 3:
            raise ValueError(f"expectimax row_weight must be a number in 0..3, got {row_weight!r}")
        self.samples = samples
        self.row_weight = float(row_weight)
        self.win_aware = bool(win_aware)
        self._utility: np.ndarray | None = None
        super().__init__(seed, bonus_layout)
        self.evaluator = HandEvaluator(self.layout)
        self.rows = row_values(self.layout, self.evaluator, horizon_cards)

    # ------------------------------------------------------------ decisions
    def _act(self, observation: np.ndarray, legal: np.ndarray) -> int:
        view = decode(observation, self.scales)
        used = [v is not None for v in view.pads[0]]
        offsets = self.rows.offsets(used, view.rounds_left)
        offsets[np.isfinite(offsets)] *= self.row_weight
        # In the last round only winning matters: value a hand by the chance that its points win, not by the points.
        self._utility = self._win_chance(view) if self.win_aware and view.rounds_left == 0 else None
        first = int(legal[0])
        if first >= SCORE_BASE:
            rows, _ = self.evaluator.score(np.array(view.hand))
            return int(legal[pick_best((rows + offsets)[legal - SCORE_BASE], self.rng)])  # the bonus is the same for every row
        if first < DRAW_PILE_ACTION:
            return int(legal[pick_best(self._discard_values(view, legal, offsets), self.rng)])
        return int(legal[pick_best(self._draw_values(view, legal, offsets), self.rng)])

    def _futures(self, pool: list[int], count: int, samples: int) -> np.ndarray:
        """Return ``[samples, count]`` cards: the first ``count`` of independent random orderings of ``pool``."""
        pool_arr = np.array(pool, dtype=np.int64)
        count = min(count, len(pool_arr))
        order = np.argsort(self.rng.random((samples, len(pool_arr))), axis=1)[:, :count]
        return pool_arr[order]

    def _best5(self, cards: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Return the value of the best 5-card hand inside each ``cards[..., m]`` (m >= 5)."""
        m = cards.shape[-1]
        if m <= HAND_SIZE:
            values = self.evaluator.value(cards, offsets)
        else:
            values = self.evaluator.value(cards[..., five_card_subsets(m)], offsets).max(-1)
        if self._utility is not None:  # monotone, so it commutes with the max above
            values = self._utility[np.minimum(values.astype(np.int64), len(self._utility) - 1)]
        return values

    def _win_chance(self, view: View) -> np.ndarray:
        """Return ``u[p]``: the chance to win (ties count half) if this round adds ``p`` points to my total.

        Each opponent that has not scored this round yet adds a draw from the
        reference hands restricted to its unused rows; opponents are independent.
        """
        best = self.rows.best
        mine = view.totals[0] + np.arange(MAX_ROUND_POINTS + 1)
        chance = np.ones(len(mine))
        for j in range(1, view.num_players):
            scored = sum(v is not None for v in view.pads[j]) > view.round
            unused = view.unused_rows(j)
            finals = np.sort(view.totals[j] + (np.zeros(1) if scored or not unused else best[:, unused].max(1)))
            below = np.searchsorted(finals, mine, side="left")
            equal = np.searchsorted(finals, mine, side="right") - below
            chance *= (below + 0.5 * equal) / len(finals)
        return chance + 1e-6 * np.arange(len(mine))  # more points break ties, e.g. when the game is already won or lost

    def _discard_values(self, view: View, legal: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        hand = view.hand
        keeps = np.array([[c for c in hand if c != d] for d in legal], dtype=np.int64)  # [h, h-1]
        turns_left = TURNS_PER_ROUND - view.turn if view.turn is not None else 0
        if turns_left <= 0:
            return self._best5(keeps, offsets)
        futures = self._futures(view.unseen(), WHO_DRAWS * turns_left, self.samples)  # [S, f]
        s = futures.shape[0]
        cards = np.concatenate([np.broadcast_to(keeps[:, None, :], (len(legal), s, keeps.shape[1])),
                                np.broadcast_to(futures[None], (len(legal), s, futures.shape[1]))], axis=2)
        return self._best5(cards, offsets).mean(1)

    def _draw_values(self, view: View, legal: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Value each legal draw by the best follow-up (second draw, discard, future draws), averaged over sampled futures."""
        n = view.num_players
        turns_left = TURNS_PER_ROUND - view.turn
        second = view.first_draw_made
        draws_now = 1 if second else 2
        samples = self.samples if turns_left < 2 or second else max(4, self.samples // 2)
        futures = self._futures(view.unseen(), draws_now + WHO_DRAWS * turns_left, samples)  # [S, draws_now + f]
        s = futures.shape[0]
        hand = np.array(view.hand, dtype=np.int64)
        tops = [view.tops[j] for j in range(n)]

        def source_card(action: int, from_deck: int, taken: tuple[int, ...]) -> tuple[np.ndarray, int]:
            """Return ([S] cards drawn by ``action``, draw-pile cards used so far)."""
            if action == DRAW_PILE_ACTION:
                return futures[:, from_deck], from_deck + 1
            j = action - DRAW_DISCARD_BASE
            card = view.seconds[j] if j in taken else tops[j]
            return np.full(s, card, dtype=np.int64), from_deck

        def second_options(taken: tuple[int, ...]) -> list[int]:
            options = [DRAW_PILE_ACTION]
            for j in range(n):
                size = len(view.piles[j]) - taken.count(j)
                if size > 0 and (j not in taken or view.seconds[j] is not None):
                    options.append(DRAW_DISCARD_BASE + j)
            return options

        def finish(cards: list[np.ndarray], from_deck: int) -> np.ndarray:
            """Return [S] values of holding hand + cards, then the future draws of this round."""
            future = futures[:, draws_now:]
            stack = np.concatenate([np.broadcast_to(hand, (s, len(hand))), np.stack(cards, axis=1), future], axis=1)
            return self._best5(stack, offsets)

        values = []
        for a in legal:
            a = int(a)
            c1, used_deck = source_card(a, 0, ())
            if second:
                values.append(finish([c1], used_deck).mean())
                continue
            taken = () if a == DRAW_PILE_ACTION else (a - DRAW_DISCARD_BASE,)
            best = None
            for b in second_options(taken):
                c2, used2 = source_card(b, used_deck, taken)
                v = finish([c1, c2], used2)
                best = v if best is None else np.maximum(best, v)  # the second draw is chosen after seeing the first card
            values.append(best.mean())
        return np.array(values)
