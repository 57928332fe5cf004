"""*Gnoming A Round* through the game interface of :mod:`grinch_env.games`."""

from __future__ import annotations

from typing import Any

from grinch_env.gnoming.agents import AGENT_CLASSES
from grinch_env.gnoming.encoding import Encoder
from grinch_env.gnoming.env import env, raw_env
from grinch_env.gnoming.game import Game

VECTOR = "grinch_env.gnoming.vector:VectorGnoming"
AGENT_OPTIONS: tuple[str, ...] = ()  # the built-in agents play the default rules
ROW_NAMES: tuple[str, ...] = ()  # no score pad: a round scores the whole layout
# Self-play rollout length in decisions: rounds have no fixed length (a greedy 4-player game takes ~280-660 decisions),
# so a rollout keeps the games that ended within it.
ROLLOUT_DECISIONS = 1200


def new_game(num_players: int, seed: Any = None, **options: Any) -> Game:
    """Return a fresh game; ``options`` are :class:`Game`'s (``first_player``, ``mulligan_lines``, ...)."""
    return Game(num_players, rng=seed, **options)


def rollout_steps(table_sizes: list[int]) -> int:
    """Return the steps of one self-play rollout (games that end within it are kept)."""
    return ROLLOUT_DECISIONS


class Recorder:
    """Steps a game; ``rounds`` gives per round and seat its role (the round's ``starter`` or an ``other``) and round score."""

    def __init__(self, game: Game) -> None:
        self.game = game

    def step(self, action: int) -> None:
        self.game.step(action)

    @property
    def rounds(self) -> list[list[dict[str, Any]]]:
        game = self.game
        n = game.num_players
        out = []
        for r, scores in enumerate(game.round_scores):
            starter = (game.first_player + (r if game.start_rotation == "rotate" else 0)) % n
            out.append([{"role": "starter" if s == starter else "other", "points": int(scores[s])} for s in range(n)])
        return out


__all__ = ["AGENT_CLASSES", "AGENT_OPTIONS", "ROW_NAMES", "VECTOR", "Encoder", "Recorder", "env", "new_game", "raw_env", "rollout_steps"]
