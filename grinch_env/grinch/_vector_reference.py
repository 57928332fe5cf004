"""Reference batched engine: :class:`grinch_env.grinch.vector.VectorGrinch`'s interface over a loop of scalar games.

It steps one :class:`~grinch_env.grinch.game.Game` per slot and encodes with
:func:`~grinch_env.grinch.encoding.encode`, so it is correct by construction and slow
(about 75k decisions/s); ``benchmarks/bench_vector.py`` compares it with the
array engine.  Same arguments, returns and errors as ``VectorGrinch``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from grinch_env.grinch.cards import NUM_CARDS
from grinch_env.grinch.encoding import OBS_SIZE, action_mask, encode, scales_for
from grinch_env.grinch.game import MAX_PLAYERS, MIN_PLAYERS, NUM_ACTIONS, REWARD_MODES, Game, terminal_rewards
from grinch_env.grinch.scoring import resolve_layout
from grinch_env.grinch.vector import DeckSource, batched_decks, illegal_action_error
from grinch_env.vector_base import table_sizes


class _DeckRng:
    """Stand-in generator for a scalar Game: its ``permutation(48)`` calls come from a deck source."""

    def __init__(self, source: DeckSource, index: int) -> None:
        self.source = source
        self.index = np.array([index])

    def permutation(self, n: int) -> np.ndarray:
        if n != NUM_CARDS:
            raise RuntimeError("the batched engine never refills the draw pile (it cannot run out with 2-6 players)")
        return self.source(self.index)[0]


class ReferenceVectorGrinch:
    """``num_envs`` independent games stepped together, each reset automatically when it ends.

    Arguments: ``num_envs`` (>= 1); ``num_players`` an int 2..6 or a sequence of
    them (game i gets ``num_players[i % len]``); ``seed`` for the shuffles;
    ``bonus_layout`` as in :class:`~grinch_env.grinch.game.Game`; ``reward_mode``
    ``"win"`` or ``"margin"`` (:func:`grinch_env.grinch.env.terminal_rewards`);
    ``deck_source`` an optional callable ``indices int64[k] -> int[k, 48]``
    that deals the decks (top card last) of the games in ``indices`` that
    start a round, used by the differential test (:func:`per_game_decks`).
    """

    # The same constructor as VectorGrinch's, on purpose (the differential test builds both from one set of arguments).
    def __init__(
        self,
        num_envs: int,
        num_players: int | Sequence[int] = 4,
        seed: int | None = None,
        bonus_layout: str | Mapping | tuple = "standard",
        reward_mode: str = "win",
        deck_source: DeckSource | None = None,
    ) -> None:
        self.num_players = table_sizes(num_envs, num_players, MIN_PLAYERS, MAX_PLAYERS)
        self.num_envs = int(num_envs)
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
        self.reward_mode = reward_mode
        self.layout = resolve_layout(bonus_layout)
        self.scales = scales_for(self.layout)
        self._custom_decks = deck_source
        self._rng = np.random.default_rng(seed)
        self._decks = deck_source if deck_source is not None else batched_decks(self._rng)
        self.games: list[Game] = []
        self.last_totals = np.zeros((self.num_envs, MAX_PLAYERS), dtype=np.int64)
        self._obs = np.zeros((self.num_envs, OBS_SIZE), dtype=np.float32)
        self._mask = np.zeros((self.num_envs, NUM_ACTIONS), dtype=np.int8)
        self._seat = np.zeros(self.num_envs, dtype=np.int64)

    def _new_game(self, i: int) -> Game:
        g = Game(int(self.num_players[i]), bonus_layout=self.layout, rng=0, _start=False)
        g.rng = _DeckRng(self._decks, i)  # the round's deck comes from the deck source
        g._start_round()
        return g

    def _write(self, i: int) -> None:
        g = self.games[i]
        self._seat[i] = g.current
        encode(g, g.current, self.scales, out=self._obs[i])
        action_mask(g, g.current, out=self._mask[i])

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``(obs, mask, seat)`` of B fresh games; ``seed`` re-seeds the shuffles."""
        if seed is not None and self._custom_decks is None:
            self._rng = np.random.default_rng(seed)
            self._decks = batched_decks(self._rng)
        self.games = [self._new_game(i) for i in range(self.num_envs)]
        self.last_totals[:] = 0
        for i in range(self.num_envs):
            self._write(i)
        return self._obs.copy(), self._mask.copy(), self._seat.copy()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Return ``(obs, mask, seat, rewards, dones)`` after game i's current player took ``actions[i]``."""
        if not self.games:
            raise RuntimeError("call reset() before step()")
        actions = self._check_actions(actions)
        rewards = np.zeros((self.num_envs, MAX_PLAYERS), dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        for i, g in enumerate(self.games):
            g.step(int(actions[i]))
            if g.done:
                n = g.num_players
                rewards[i, :n] = terminal_rewards(g.totals, self.reward_mode)
                self.last_totals[i] = 0
                self.last_totals[i, :n] = g.totals
                dones[i] = True
                self.games[i] = self._new_game(i)
            self._write(i)
        return self._obs.copy(), self._mask.copy(), self._seat.copy(), rewards, dones

    def _check_actions(self, actions: np.ndarray) -> np.ndarray:
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be an integer array of shape ({self.num_envs},), got dtype {a.dtype} and shape {a.shape}")
        bad = (a < 0) | (a >= NUM_ACTIONS)
        if not bad.any():
            bad = self._mask[np.arange(self.num_envs), a] == 0
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise illegal_action_error(i, int(a[i]), int(self._seat[i]), self._mask[i])
        return a.astype(np.int64, copy=False)


__all__ = ["ReferenceVectorGrinch"]
