"""The ``random`` and ``greedy`` agents of *Gnoming A Round*, and :class:`GreedyPolicy` (greedy's rule, also the search's rollout policy)."""

from __future__ import annotations

import numpy as np

from grinch_env.gnoming.agents.base import (
    FACE_DOWN,
    GOING_OUT_POINTS,
    LINES,
    LINES_THROUGH,
    SLOTS,
    BaseAgent,
    View,
    _placed,
    can_place,
    decode,
    expected_score,
    mean_points,
)
from grinch_env.gnoming.cards import POINTS
from grinch_env.gnoming.game import DISCARD_A, DISCARD_B, DRAW, PASS, TAKE_A


class RandomAgent(BaseAgent):
    """Plays a uniformly random legal action."""

    name = "random"

    def _act(self, observation: np.ndarray, legal: list[int]) -> int:
        return legal[int(self.rng.integers(len(legal)))]


def _argmin(values: list[float], actions: list[int]) -> int:
    """Return the action of the lowest value; ties (within 1e-9) go to the lowest action id."""
    best = min(values)
    return min(a for a, v in zip(actions, values) if v <= best + 1e-9)


class GreedyPolicy:
    """The greedy decision rule on a :class:`View` (deterministic; shared by ``greedy`` and the search's rollouts).

    Every option is valued by the expected §4.3 score of the own layout it
    leaves, lower is better, with face-down cards at ``u`` = the mean points
    of the never-seen cards (a line with a face-down card counts as
    unmatched).  Leaving no face-down card while nobody has gone out adds the
    §4.4 adjustment: −5 if that expected score is at most every other
    layout's (valued the same way), else +5.

    * draw: each legal pile top is worth its best legal placement; ``DRAW`` is
      worth the expectation, over the draw pile's known distribution (the
      never-seen cards, or the reshuffled multiset), of the better of the best
      placement and discarding.  Take a top only if it beats the draw.
    * play: place where the score is lowest, or discard when nothing beats
      the current layout (a card taken from a pile must be placed).
    * bounce: bounce into the slot that lowers the score most, else stop.
    * discard pile: cover the pile whose top scores fewer points (the card
      the next players would want most); ties go to pile A.
    * reveal and Hazard response: always flip, the face-down slot whose lines
      show the most face-up positive cards (lowest slot on ties); flipping
      leaves the expected score unchanged and brings the layout closer to
      being known and going out.
    Ties between options go to the lowest action id.
    """

    def choose(self, view: View, legal: list[int]) -> int:
        """Return the greedy action among ``legal`` for ``view``."""
        if len(legal) == 1:
            return legal[0]
        if view.phase in ("reveal", "hazard"):
            return self.flip(view, legal)
        if view.phase == "draw":
            return self.draw(view, legal)
        slots = [a for a in legal if a < SLOTS]
        if not slots:
            return self.discard_pile(view, legal)
        return self.place(view, legal, view.held)

    # ---- pieces
    def unknown_value(self, view: View) -> float:
        """Return the expected points of a face-down card: the mean of the never-seen cards."""
        return mean_points(view.never_seen)

    def value(self, view: View, layout: list[int], unknown: float) -> float:
        """Return the expected score of my ``layout``, with the going-out adjustment when it has no face-down card."""
        score = expected_score(layout, unknown)
        if view.went_out is None and FACE_DOWN not in layout:
            others = min(expected_score(view.layouts[r], unknown) for r in range(1, view.num_players))
            score += -GOING_OUT_POINTS if score <= others else GOING_OUT_POINTS
        return score

    def best_placement(self, view: View, kind: int, unknown: float, slots=range(SLOTS)) -> float:
        """Return the lowest value of placing ``kind`` into one of ``slots`` (inf when none is allowed)."""
        mine = view.layouts[0]
        return min((self.value(view, _placed(mine, p, kind), unknown) for p in slots if can_place(mine, p, kind)), default=np.inf)

    def draw(self, view: View, legal: list[int]) -> int:
        unknown = self.unknown_value(view)
        keep = self.value(view, view.layouts[0], unknown)
        pool = view.reshuffled_counts if view.reshuffled else view.never_seen
        size = sum(pool)
        values, actions = [], []
        for a in legal:
            if a == DRAW:
                v = sum(c * min(keep, self.best_placement(view, k, unknown)) for k, c in enumerate(pool) if c) / size if size else keep
            else:
                v = self.best_placement(view, view.pile_tops[a - TAKE_A][0], unknown)
            values.append(v)
            actions.append(a)
        # Take a top only when it strictly beats the blind draw: DRAW wins ties whatever its id.
        if DRAW in actions:
            draw_value = values[actions.index(DRAW)]
            takes = [(v, a) for v, a in zip(values, actions) if a != DRAW and v < draw_value - 1e-9]
            return min(takes)[1] if takes else DRAW
        return _argmin(values, actions)

    def place(self, view: View, legal: list[int], kind: int) -> int:
        unknown = self.unknown_value(view)
        mine = view.layouts[0]
        values, actions = [], []
        for a in legal:
            if a < SLOTS:
                values.append(self.value(view, _placed(mine, a, kind), unknown))
                actions.append(a)
        stop = [a for a in legal if a in (DISCARD_A, DISCARD_B)]
        if stop:
            keep = self.value(view, mine, unknown)
            if keep <= min(values) + 1e-9:
                return self.discard_pile(view, legal)
        return _argmin(values, actions)

    def discard_pile(self, view: View, legal: list[int]) -> int:
        piles = [a for a in (DISCARD_A, DISCARD_B) if a in legal]
        if len(piles) == 1:
            return piles[0]
        tops = [view.pile_tops[i][0] if view.pile_tops[i] else None for i in range(2)]
        if tops[0] is None or tops[1] is None:
            return DISCARD_A
        return DISCARD_B if POINTS[tops[1]] < POINTS[tops[0]] else DISCARD_A

    def option_values(self, view: View, legal: list[int]) -> dict[int, float]:
        """Return the value this rule ranks each legal action by (lower is better), phase by phase as :meth:`choose`.

        Draw: a top's best placement, ``DRAW`` the expectation described above;
        play and bounce: the layout's value after the placement, a discard (or
        stopping) the value of keeping the layout; discard pile: the points of
        the top it covers; reveal and Hazard response: minus the flip's
        support (``PASS`` 0).  :meth:`choose` breaks the ties as documented.
        """
        if view.phase in ("reveal", "hazard"):
            mine = view.layouts[0]
            return {a: -float(_support(mine, a)) if a < SLOTS else 0.0 for a in legal}
        if view.phase == "draw":
            unknown = self.unknown_value(view)
            keep = self.value(view, view.layouts[0], unknown)
            pool = view.reshuffled_counts if view.reshuffled else view.never_seen
            size = sum(pool)
            out = {}
            for a in legal:
                if a == DRAW:
                    out[a] = sum(c * min(keep, self.best_placement(view, k, unknown)) for k, c in enumerate(pool) if c) / size if size else keep
                else:
                    out[a] = self.best_placement(view, view.pile_tops[a - TAKE_A][0], unknown)
            return out
        if not any(a < SLOTS for a in legal):
            tops = [view.pile_tops[i][0] if view.pile_tops[i] else None for i in range(2)]
            return {a: float(POINTS[tops[a - DISCARD_A]]) if a in (DISCARD_A, DISCARD_B) and tops[a - DISCARD_A] is not None else 0.0 for a in legal}
        unknown = self.unknown_value(view)
        mine = view.layouts[0]
        keep = self.value(view, mine, unknown)
        return {a: self.value(view, _placed(mine, a, view.held), unknown) if a < SLOTS else keep for a in legal}

    def flip(self, view: View, legal: list[int]) -> int:
        mine = view.layouts[0]
        slots = [a for a in legal if a < SLOTS]
        if not slots:
            return PASS if PASS in legal else legal[0]

        return max(slots, key=lambda p: (_support(mine, p), -p))


def _support(mine: list[int], p: int) -> int:
    """Return how many face-up positive cards the lines through slot ``p`` show (the flip rule's preference)."""
    return sum(1 for i in LINES_THROUGH[p] for q in LINES[i] if q != p and 0 <= mine[q] <= 5)


class GreedyAgent(BaseAgent):
    """One-step greedy on the expected layout score (see :class:`GreedyPolicy`); deterministic given the observation."""

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.policy = GreedyPolicy()

    def _act(self, observation: np.ndarray, legal: list[int]) -> int:
        return self.policy.choose(decode(observation), legal)


__all__ = ["GreedyAgent", "GreedyPolicy", "RandomAgent"]
