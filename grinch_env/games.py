"""The game interface: what a game package gives the harness (tournaments, evaluation, play, training, checkpoints).

Every game lives in one subpackage (``grinch_env.grinch``, ``grinch_env.gnoming``)
whose ``harness`` module provides, in the spirit of OpenSpiel's game/state split:

==========================  =====================================================
``new_game(n, seed, **o)``  a fresh :class:`GameState` for ``n`` players, deals from ``seed``
``Encoder``                 ``Encoder().observe(game, seat)`` -> ``{"observation", "action_mask"}``
                            (the env's encoding, from ``seat``'s point of view)
``Recorder``                ``Recorder(game)``; ``.step(action)`` steps the game and keeps
                            per-round, per-seat records ``{"role", "points"[, "row"]}`` in ``.rounds``
``AGENT_CLASSES``           built-in agents by name (``random``, ``greedy``, ...)
``env`` / ``raw_env``       the PettingZoo AEC environment factories
``VECTOR``                  ``"module:Class"`` of the batched engine (``None`` if there is none)
``ROW_NAMES``               score-pad rows that ``Recorder`` reports (``()`` if none)
``AGENT_OPTIONS``           the game options that built-in agents take as keywords
==========================  =====================================================

A :class:`GameState` is the rules' state machine: ``num_players``,
``current`` (the seat to act, ``None`` once over), ``done``, ``totals``,
``legal_actions()`` (the one source of legality), ``step(action)``,
``winners()``, ``rewards(reward_mode)``, ``clone()``,
``resample_from_infostate(seat, rng)`` (a determinisation), ``state_dict()``
and ``render(seat=None)``.

:data:`GAMES` maps each game's name to its :class:`GameSpec` (the facts a
harness needs without importing the game); :func:`get_game` validates a name.
Imports run one way: rules <- encoding <- env <- agents <- evaluation <- training.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

import numpy as np


class IllegalActionError(ValueError):
    """An action that the rules do not allow in this state (every game's ``step`` raises it, naming the phase, action and legal actions)."""


class GameState(Protocol):
    """The state machine a game's rules module provides (see the module docstring)."""

    num_players: int
    current: int | None
    totals: list[int]

    @property
    def done(self) -> bool: ...

    def legal_actions(self) -> list[int]: ...

    def step(self, action: int) -> None: ...

    def winners(self) -> list[int]: ...

    def rewards(self, reward_mode: str) -> list[float]: ...

    def clone(self) -> GameState: ...


@dataclass(frozen=True)
class GameSpec:
    """The facts of one game that the harness needs, and lazy access to its package."""

    name: str
    title: str
    package: str
    env_version: str
    min_players: int
    max_players: int
    default_players: int
    num_actions: int
    obs_size: int
    highest_total_wins: bool
    reward_modes: tuple[str, ...]
    roles: tuple[str, str]
    """Round roles that a seat's round records carry: seat 0 of a tournament plays ``roles[0]`` in the first round."""

    @property
    def harness(self) -> ModuleType:
        """Return the game's ``harness`` module (imported on first use)."""
        return importlib.import_module(f"{self.package}.harness")

    def player_counts(self) -> range:
        return range(self.min_players, self.max_players + 1)

    def check_num_players(self, num_players: Any) -> int:
        """Return ``num_players`` as an int, or raise ``ValueError`` naming this game's range."""
        if isinstance(num_players, bool) or not isinstance(num_players, int) or num_players not in self.player_counts():
            raise ValueError(f"num_players for {self.title} must be an int in {self.min_players}..{self.max_players}, got {num_players!r}")
        return num_players

    def new_game(self, num_players: int, seed: Any = None, **options: Any) -> GameState:
        """Return a fresh game state dealt from ``seed``."""
        return self.harness.new_game(self.check_num_players(num_players), seed, **options)

    def encoder(self) -> Any:
        return self.harness.Encoder()

    def recorder(self, game: GameState) -> Any:
        return self.harness.Recorder(game)

    def agent_classes(self) -> dict[str, type]:
        return dict(self.harness.AGENT_CLASSES)

    def env(self, **kwargs: Any) -> Any:
        """Return the wrapped PettingZoo AEC environment."""
        return self.harness.env(**kwargs)

    def raw_env(self, **kwargs: Any) -> Any:
        return self.harness.raw_env(**kwargs)

    def vector(self, **kwargs: Any) -> Any:
        """Return the batched engine, built with ``kwargs`` (``num_envs``, ``num_players``, ``seed``, ...)."""
        target = self.harness.VECTOR
        if target is None:
            raise ValueError(f"{self.title} has no batched engine")
        module, _, cls = target.partition(":")
        return getattr(importlib.import_module(module), cls)(**kwargs)

    @property
    def row_names(self) -> tuple[str, ...]:
        return tuple(self.harness.ROW_NAMES)


# One entry per game, field for field alike (`duplicates` pairs the two entries: it is a table, not repeated logic).
GAMES: dict[str, GameSpec] = {
    "grinch": GameSpec(
        name="grinch",
        title="Grinch Grow Your Heart",
        package="grinch_env.grinch",
        env_version="grinch_grow_your_heart_v0",
        min_players=2,
        max_players=6,
        default_players=4,
        num_actions=62,
        obs_size=1337,
        highest_total_wins=True,
        reward_modes=("win", "margin"),
        roles=("Grinch", "Who"),
    ),
    "gnoming": GameSpec(
        name="gnoming",
        title="Gnoming A Round",
        package="grinch_env.gnoming",
        env_version="gnoming_a_round_v0",
        min_players=3,
        max_players=7,
        default_players=4,
        num_actions=15,
        obs_size=1046,
        highest_total_wins=False,
        reward_modes=("win", "margin"),
        roles=("starter", "other"),
    ),
}
DEFAULT_GAME = "grinch"


def copy_generator(rng: np.random.Generator) -> np.random.Generator:
    """Return an independent ``numpy.random.Generator`` in the same state as ``rng`` (every game's ``clone`` uses it)."""
    bit_generator = type(rng.bit_generator)()
    bit_generator.state = rng.bit_generator.state
    return np.random.Generator(bit_generator)


def get_game(name: str | GameSpec = DEFAULT_GAME) -> GameSpec:
    """Return the :class:`GameSpec` called ``name``, or raise ``ValueError`` listing the games."""
    if isinstance(name, GameSpec):
        return name
    try:
        return GAMES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {name!r}: choose one of {', '.join(sorted(GAMES))}") from None


__all__ = ["DEFAULT_GAME", "GAMES", "GameSpec", "GameState", "copy_generator", "get_game"]
