"""``oracle``: expectimax that is shown the true game, a bound on what knowing the hidden cards is worth.

It cannot play from an observation alone: whoever runs the game calls
``see(game)`` with the true :class:`~grinch_env.game.Game` before each
``act`` (``training.match`` does).  Instead of sampling the cards it cannot
locate, it plays expectimax against the one true future: the cards the draw
pile will deal it to the end of the round, in order, assuming every other
draw of the round comes from the draw pile (the Grinch's draws from discard
piles, when they happen, shift the deck and the assumption is then wrong).
Everything else (row values, lookahead, last-round win chances) is expectimax's.
"""

from __future__ import annotations

import numpy as np

from grinch_env.agents.expectimax import ExpectimaxAgent
from grinch_env.game import PHASE_DRAW, TURNS_PER_ROUND, WHO_DRAWS, Game


def future_draws(game: Game) -> list[int]:
    """Return the cards the current player will draw from the draw pile this round, in order, if every draw of the round is from the draw pile.

    In the Grinch's draw phase the list starts with the draws still to make
    this turn.  Every player draws 2 cards per turn (a Who automatically, the
    Grinch by its two draws).
    """
    deck = game.draw_pile[::-1]  # top first
    me, order, n = game.current, game.order, game.num_players
    ptr = 0
    mine: list[int] = []
    if game.phase == PHASE_DRAW:
        now = 2 - game.draws_made
        mine += deck[ptr:ptr + now]
        ptr += now
    else:
        ptr += WHO_DRAWS * (n - 1 - game.pos)  # the rest of this turn's players draw first
    turn = game.turn if game.turn is not None else TURNS_PER_ROUND
    for _ in range(turn + 1, TURNS_PER_ROUND + 1):
        for p in order:
            if p == me:
                mine += deck[ptr:ptr + WHO_DRAWS]
            ptr += WHO_DRAWS
    return mine


class OracleAgent(ExpectimaxAgent):
    """Expectimax with the true deck order (call ``see(game)`` before each ``act``); see the module docstring."""

    name = "oracle"

    def __init__(self, seed: int | None = None, horizon_cards: int = 7, win_aware: int = 1, bonus_layout="standard") -> None:
        super().__init__(seed, samples=1, horizon_cards=horizon_cards, win_aware=win_aware, bonus_layout=bonus_layout)
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
        """Return ``[1, count]``: the true next cards instead of sampled ones."""
        cards = future_draws(self._game)[:count]
        if len(cards) < count:  # pragma: no cover - the draw pile never runs out with 2-6 players
            raise RuntimeError(f"the draw pile holds {len(cards)} of the {count} cards the oracle expects to draw")
        return np.array([cards], dtype=np.int64)


__all__ = ["OracleAgent", "future_draws"]
