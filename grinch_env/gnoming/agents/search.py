"""The ``search`` agent of *Gnoming A Round*: greedy rollouts on sampled determinisations (:func:`grinch_env.gnoming.encoding.decode_game`)."""

from __future__ import annotations

import numpy as np

from grinch_env.gnoming.agents.base import FACE_DOWN, GOING_OUT_POINTS, SLOTS, BaseAgent, View, decode, expected_score
from grinch_env.gnoming.agents.simple import GreedyPolicy, _argmin
from grinch_env.gnoming.cards import NUM_KINDS
from grinch_env.gnoming.encoding import decode_game
from grinch_env.gnoming.game import DISCARD_A, DISCARD_B, Game

HORIZONS = ("turn", "round")


def view_of_game(game: Game, seat: int) -> View:
    """Return the :class:`View` of ``seat`` read from public parts of ``game`` (equal to ``decode(encode(game, seat))``).

    The search's rollouts use it instead of encoding and decoding 1046 floats
    per decision; it reads only what §5 makes public, so the rollout policy
    never peeks at a face-down card of the determinisation.
    """
    n = game.num_players
    seats = [(seat + r) % n for r in range(n)]
    layouts = [[k if up else FACE_DOWN for k, up in zip(game.layouts[s], game.face_up[s])] for s in seats]
    never_seen = [0] * NUM_KINDS
    for s in range(n):
        for k, up in zip(game.layouts[s], game.face_up[s]):
            if not up:
                never_seen[k] += 1
    reshuffled = bool(game.reshuffled)
    reshuffled_counts = [0] * NUM_KINDS
    for k in game.draw_pile:
        (reshuffled_counts if reshuffled else never_seen)[k] += 1
    if not reshuffled:
        reshuffled_counts = [0] * NUM_KINDS
    went_out = None if game.went_out is None else (game.went_out - seat) % n
    return View(
        num_players=n,
        layouts=layouts,
        pile_tops=[list(reversed(pile[-3:])) for pile in game.piles],
        pile_counts=[[pile.count(k) for k in range(NUM_KINDS)] for pile in game.piles],
        never_seen=never_seen,
        reshuffled_counts=reshuffled_counts,
        draw_size=len(game.draw_pile),
        reshuffled=reshuffled,
        hazards_removed=len(game.removed),
        held=game.held,
        held_source=game.held_source,
        filled=[False] * SLOTS,
        phase=_VIEW_PHASE.get(str(game.phase), "play"),
        round=game.round,
        first_player=0,
        went_out=went_out,
        final_turn=[False] * n,
        hazard_discarder=None,
        totals=[game.totals[s] for s in seats],
    )


_VIEW_PHASE = {"reveal": "reveal", "draw": "draw", "hazard": "hazard", "done": "done"}


class SearchAgent(BaseAgent):
    """Picks the action with the best mean outcome over sampled determinisations, the rest played by :class:`GreedyPolicy`.

    At each decision it deals ``samples`` determinisations of the hidden cards
    with ``decode_game`` (the same deals for every candidate action:
    common random numbers), applies each legal action, and plays on with the
    greedy policy for every seat:

    * ``horizon="turn"`` (default): to the end of the current turn; the
      outcome is my layout's score with its face-down cards as dealt (so
      lines a face-down card may complete count with their probability), plus
      the §4.4 ±5 if I went out, or my round score if the round ended;
    * ``horizon="round"``: to the end of the round; the outcome is my round
      score minus the mean of the others' (about 100× slower per decision:
      1.7 s of wall clock at 3 players on a loaded machine, against 26 ms).

    Lower is better; ties go to the lowest action id.  Reveal and Hazard
    response decisions only change what is known, not the expected score, so
    with ``horizon="turn"`` they are left to the greedy rule.
    """

    name = "search"

    def __init__(self, seed: int | None = None, samples: int = 8, horizon: str = "turn") -> None:
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"search samples must be an int >= 1, got {samples!r}")
        if horizon not in HORIZONS:
            raise ValueError(f"search horizon must be one of {HORIZONS}, got {horizon!r}")
        self.samples = samples
        self.horizon = horizon
        self.policy = GreedyPolicy()
        super().__init__(seed)

    def _act(self, observation: np.ndarray, legal: list[int]) -> int:
        view = decode(observation)
        # With the turn horizon the outcome is my layout's true score, which a reveal, a Hazard response or the
        # choice of discard pile leaves unchanged: those are left to the greedy rule.
        if self.horizon == "turn" and (view.phase in ("reveal", "hazard") or all(a in (DISCARD_A, DISCARD_B) for a in legal)):
            return self.policy.choose(view, legal)
        seeds = self.rng.integers(2**63, size=self.samples)
        first = decode_game(observation, np.random.default_rng(int(seeds[0])))
        # One decode, then fresh deals of the hidden cards (cheaper than decoding the observation again).
        deals = [first] + [first.resample_from_infostate(0, np.random.default_rng(int(s))) for s in seeds[1:]]
        totals = [0.0] * len(legal)
        for deal, s in zip(deals, seeds):
            for i, a in enumerate(legal):
                game = deal.clone(rng=np.random.default_rng(int(s) + 1))
                totals[i] += self.outcome(game, a)
        return _argmin(totals, legal)

    def outcome(self, game: Game, action: int) -> float:
        """Return the outcome (lower is better) for seat 0 of playing ``action`` in ``game``, then the greedy policy."""
        start_round = game.round
        game.step(action)
        if self.horizon == "turn":
            # Others' Hazard responses only turn cards up: they change no true score, so the turn is over for us.
            while not game.done and game.round == start_round and game.turn_player == 0 and game.phase not in ("draw", "hazard"):
                self._greedy_step(game)
            if game.done or game.round != start_round:
                return float(game.round_scores[start_round][0])
            score = expected_score(game.layouts[0], 0.0)
            if game.went_out == 0:
                others = min(expected_score(game.layouts[s], 0.0) for s in range(1, game.num_players))
                score += -GOING_OUT_POINTS if score <= others else GOING_OUT_POINTS
            return score
        while not game.done and game.round == start_round:
            self._greedy_step(game)
        scores = game.round_scores[start_round]
        return scores[0] - sum(scores[1:]) / (len(scores) - 1)

    def _greedy_step(self, game: Game) -> None:
        seat = game.current
        legal = game.legal_actions()
        game.step(legal[0] if len(legal) == 1 else self.policy.choose(view_of_game(game, seat), legal))


__all__ = ["HORIZONS", "SearchAgent", "view_of_game"]
