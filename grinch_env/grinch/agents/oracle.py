"""``oracle``: expectimax that is shown the true game, a bound on what knowing the hidden cards is worth.

It cannot play from an observation alone: whoever runs the game calls
``see(game)`` with the true :class:`~grinch_env.grinch.game.Game` before each
``act`` (``training.match`` does).  Instead of sampling the cards it cannot
locate, it plays expectimax against the true deck order: each of its
``samples`` futures is the exact run of cards the draw pile will deal it to
the end of the round.  Only the other Grinch's draw sources are uncertain
(a draw from a discard pile leaves the deck's card for the next player), so
each future draws them at random: from the draw pile with chance
``deck_share`` (default: how often expectimax's Grinch does, per table size).
Everything else (row values, lookahead, last-round win chances) is expectimax's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from grinch_env.grinch.agents.expectimax import ExpectimaxAgent
from grinch_env.grinch.game import PHASE_DRAW, TURNS_PER_ROUND, WHO_DRAWS, Game


def future_draws(game: Game, grinch_deck_draws: Sequence[bool] | None = None) -> list[int]:
    """Return the cards the current player will draw from the draw pile this round, in order.

    In the Grinch's draw phase the list starts with the draws still to make
    this turn; then 2 cards per later turn.  A Who draws 2 cards from the draw
    pile each turn; another player's Grinch draws take a draw-pile card only
    where ``grinch_deck_draws`` (one flag per such draw, in order) says so
    (default: every draw from the draw pile).
    """
    deck = game.draw_pile[::-1]  # top first
    me, order = game.current, game.order
    flags = iter(grinch_deck_draws) if grinch_deck_draws is not None else None
    ptr = 0
    mine: list[int] = []

    def others(p: int) -> int:
        """Return how many draw-pile cards player ``p``'s draws of one turn take."""
        if p != game.grinch or flags is None:
            return WHO_DRAWS
        return sum(bool(next(flags, True)) for _ in range(WHO_DRAWS))

    if game.phase == PHASE_DRAW:
        now = 2 - game.draws_made
        mine += deck[ptr:ptr + now]
        ptr += now
    else:
        for p in order[game.pos + 1:]:  # the rest of this turn's players draw first
            ptr += others(p)
    turn = game.turn if game.turn is not None else TURNS_PER_ROUND
    for _ in range(turn + 1, TURNS_PER_ROUND + 1):
        for p in order:
            if p == me:
                mine += deck[ptr:ptr + WHO_DRAWS]
                ptr += WHO_DRAWS
            else:
                ptr += others(p)
    return mine


# How often expectimax's Grinch draws from the draw pile (8 expectimax games per size; 288 and 192 draws).
DECK_DRAW_SHARE = {2: 0.78, 4: 0.56}
DEFAULT_DECK_DRAW_SHARE = 0.65


class OracleAgent(ExpectimaxAgent):
    """Expectimax with the true deck order (call ``see(game)`` before each ``act``); see the module docstring."""

    name = "oracle"

    def __init__(self, seed: int | None = None, samples: int = 32, deck_share: float | None = None, horizon_cards: int = 7,
                 win_aware: int = 1, bonus_layout="standard") -> None:
        if deck_share is not None and (isinstance(deck_share, bool) or not isinstance(deck_share, (int, float)) or not 0 <= deck_share <= 1):
            raise ValueError(f"oracle deck_share must be a number in 0..1, got {deck_share!r}")
        super().__init__(seed, samples=samples, horizon_cards=horizon_cards, win_aware=win_aware, bonus_layout=bonus_layout)
        self.deck_share = deck_share
        self._game: Game | None = None

    def see(self, game: Game) -> None:
        """Show the agent the true game before it acts."""
        self._game = game

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        if self._game is None:
            raise RuntimeError("the oracle agent needs the true game: call see(game) before act (training.match does)")
        try:
            return super().act(observation, action_mask)
        finally:
            self._game = None

    def _futures(self, pool: list[int], count: int, samples: int) -> np.ndarray:
        """Return ``[samples, count]``: the true next cards, under random draw sources of the other Grinch."""
        game = self._game
        share = self.deck_share if self.deck_share is not None else DECK_DRAW_SHARE.get(game.num_players, DEFAULT_DECK_DRAW_SHARE)
        out = []
        for _ in range(samples):
            cards = future_draws(game, (self.rng.random(2 * TURNS_PER_ROUND) < share).tolist())[:count]
            if len(cards) < count:  # pragma: no cover - the draw pile never runs out with 2-6 players
                raise RuntimeError(f"the draw pile holds {len(cards)} of the {count} cards the oracle expects to draw")
            out.append(cards)
        return np.array(out, dtype=np.int64)


__all__ = ["DECK_DRAW_SHARE", "OracleAgent", "future_draws"]
