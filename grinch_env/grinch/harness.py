"""*Grinch Grow Your Heart* through the game interface of :mod:`grinch_env.games`."""

from __future__ import annotations

from typing import Any

from grinch_env.grinch.agents import AGENT_CLASSES
from grinch_env.grinch.encoding import Encoder
from grinch_env.grinch.env import env, raw_env
from grinch_env.grinch.game import PHASE_SCORE, SCORE_BASE, Game, decisions_per_game
from grinch_env.grinch.scoring import ROW_NAMES

VECTOR = "grinch_env.grinch.vector:VectorGrinch"
AGENT_OPTIONS = ("bonus_layout",)  # game options the built-in agents must know


def new_game(num_players: int, seed: Any = None, **options: Any) -> Game:
    """Return a fresh game; ``options`` are :class:`Game`'s (``bonus_layout``, ``first_grinch``, ``num_rounds``)."""
    return Game(num_players, rng=seed, **options)


def rollout_steps(table_sizes: list[int]) -> int:
    """Return the steps of one self-play rollout: the longest game among the table sizes (every game has a fixed length)."""
    return max(decisions_per_game(n) for n in table_sizes)


class Recorder:
    """Steps a game and records, per round and seat, the role, the row scored and its points."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.rounds: list[list[dict[str, Any]]] = [[{}] * game.num_players for _ in range(game.num_rounds)]

    def step(self, action: int) -> None:
        game = self.game
        if game.phase != PHASE_SCORE:
            game.step(action)
            return
        rnd, grinch, seat = game.round, game.grinch, game.current
        game.step(action)
        row = action - SCORE_BASE
        self.rounds[rnd][seat] = {"role": "Grinch" if seat == grinch else "Who", "row": row, "points": game.score_sheet[seat][row]}


__all__ = ["AGENT_CLASSES", "AGENT_OPTIONS", "ROW_NAMES", "VECTOR", "Encoder", "Recorder", "env", "new_game", "raw_env", "rollout_steps"]
