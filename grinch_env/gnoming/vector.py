"""Batched engine: B independent games of *Gnoming A Round* stepped together (a compiled numba state machine, scalar fallback).

Example: ``VectorGnoming(num_envs=1024, num_players=[3, 4, 5, 6, 7], seed=0)``,
then ``reset()`` and ``step(actions)`` as in :mod:`grinch_env.grinch.vector`'s
example (observations ``float32[envs,1046]``, masks ``int8[envs,15]``,
rewards ``float32[envs,7]``).

The interface is :class:`grinch_env.grinch.vector.VectorGrinch`'s.  ``obs[i]`` and
``mask[i]`` are game i's observation and action mask from the seat
``seat[i]`` of the player to act, with exactly the encoding of the AEC env
(:func:`grinch_env.gnoming.encoding.encode`, §6.3 of RULES_GNOMING.md) and the
same ``Discrete(15)`` actions.  Decisions with a single legal action are
played inside, as :meth:`Game.step <grinch_env.gnoming.game.Game.step>` plays
them, so every returned decision has at least two legal actions.
``rewards[i, s]`` is seat ``s``'s reward (:func:`grinch_env.gnoming.game.terminal_rewards`,
``reward_mode`` "win" or "margin") of a game that ended on this step
(``dones[i]``), zero otherwise and for seats ``s >= num_players[i]``.  A
finished game is reset at once: ``obs/mask/seat`` are then the first
decision of a fresh game and ``last_totals[i]`` holds the finished game's
final totals.  Every call returns new arrays (``copy=False`` returns the
engine's own buffers instead, overwritten by the next call).  Games of
different sizes (3..7) mix in one batch.

Same rules as :mod:`grinch_env.gnoming.game`
---------------------------------------------
The scalar :class:`~grinch_env.gnoming.game.Game` is the source of truth.
``tests/test_gnoming_vector.py`` plays a thousand mixed-size games through
both with the same shuffles and random legal actions, and asserts identical
observations, masks, seats, rewards and totals at every step.

Randomness comes from a *deck source*: a callable ``(game, length) ->
int[length]`` returning the next permutation of ``range(length)`` for game
slot ``game``.  A scalar Game draws exactly two kinds of permutation from its
generator: ``rng.permutation(110)`` per round (the deck is
``DECK[perm]``, top card last) and ``rng.permutation(m)`` per reshuffle of
the ``m`` cards under the two pile tops (pile A's from the bottom, then
B's); the engine asks the source for the same ones, in the same order.
:func:`per_game_decks` answers game i's requests with
``generators[i].permutation(length)``, which is how the test gives both
engines the same cards.  The default source is ``per_game_decks`` over one
generator per game slot spawned from ``seed``, so a seed gives the same
games on both backends and at any batch size.

Backends
--------
``"numba"`` (``backend="auto"`` takes it when numba is installed): the whole
per-game state is one int16 row, and :mod:`grinch_env.gnoming._vector_numba`
runs the branchy per-game state machine (transitions, automatic decisions,
scoring, rewards, the deal) and writes every observation and mask in
compiled loops; Python only answers the deck source.  ``"numpy"``: the
fallback when numba is absent, a loop of scalar :class:`Game` objects
encoded by the AEC env's :class:`~grinch_env.gnoming.encoding.Encoder`
(correct by construction, about half as fast as the AEC env).  Figures:
``benchmarks/bench_vector.py --game gnoming``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from grinch_env.gnoming.cards import DECK, DECK_SIZE, MAX_COPIES
from grinch_env.gnoming.encoding import NUM_REMOVABLE, OBS_SIZE, ROUND_SCALE, TOTAL_SCALE, Encoder
from grinch_env.gnoming.game import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_ACTIONS,
    NUM_ROUNDS,
    REWARD_MODES,
    Game,
    action_name,
    check_options,
)
from grinch_env.vector_base import actions_array, fresh_buffer, pick_backend, table_sizes
from grinch_env.vector_base import illegal_action_error as _illegal

DeckSource = Callable[[int, int], np.ndarray]
_DECK = np.array(DECK, dtype=np.int16)


def per_game_decks(generators: Sequence[np.random.Generator]) -> DeckSource:
    """Return a deck source answering game i's requests with ``generators[i].permutation(length)``, as a scalar ``Game(rng=generators[i])`` draws."""

    def draw(game: int, length: int) -> np.ndarray:
        return generators[game].permutation(length)

    return draw


def seeded_generators(num_envs: int, seed: int | None) -> list[np.random.Generator]:
    """Return one independent generator per game slot, spawned from ``seed`` (fresh entropy if None)."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(num_envs)]


class _SourceRng(np.random.Generator):
    """A scalar Game's generator whose ``permutation`` calls are answered by a deck source (the scalar backend)."""

    def __init__(self, source: DeckSource, game: int) -> None:
        super().__init__(np.random.PCG64(0))
        self._source = source
        self._game = game

    def permutation(self, x: Any, axis: int = 0) -> np.ndarray:  # noqa: D102 - the only call a Game makes
        return _check_permutation(self._source(self._game, int(x)), int(x))


def _check_permutation(perm: Any, length: int) -> np.ndarray:
    """Return ``perm`` as int64[length] if it is a permutation of ``range(length)``; else raise ``ValueError``."""
    p = np.asarray(perm)
    if p.shape != (length,) or not np.issubdtype(p.dtype, np.integer) or not np.array_equal(np.sort(p), np.arange(length)):
        raise ValueError(f"the deck source must return a permutation of range({length}) (int[{length}]), got {p!r:.200}")
    return p.astype(np.int64, copy=False)


def _trusted(perm: np.ndarray, length: int) -> np.ndarray:
    """Return ``perm`` unchecked (a permutation from a numpy Generator)."""
    return perm


def illegal_action_error(game: int, action: int, seat: int, mask: np.ndarray) -> ValueError:
    """Return the error the batched engine raises for an illegal ``action`` in ``game``: it names the action, the seat and the legal ones."""
    return _illegal(game, action, seat, mask, action_name)


class VectorGnoming:
    """``num_envs`` independent Gnoming games stepped together, each reset automatically when it ends.

    Arguments: ``num_envs`` (>= 1); ``num_players`` an int 3..7 or a sequence
    of them (game i gets ``num_players[i % len]``); ``seed`` for the shuffles
    (``reset(seed)`` re-seeds); ``reward_mode`` ``"win"`` or
    ``"margin"``; ``backend`` ``"auto"``, ``"numba"`` or ``"numpy"`` (module
    docstring); ``copy`` (default True) as in Gymnasium's vector envs;
    ``deck_source`` an optional callable ``(game, length) -> permutation``
    replacing the seeded shuffles (:func:`per_game_decks`); and the rule
    options of :class:`~grinch_env.gnoming.game.Game` (``first_player``,
    ``start_rotation``, ``discard_take``, ``mulligan_lines``,
    ``max_turns_per_player``), the same for every game (``first_player``
    must be a seat of the smallest table).

    Attributes: ``num_players`` int64[envs]; ``last_totals`` int64[envs,7],
    the final totals of each slot's most recently finished game (zero before
    the first one ends and for absent seats); ``backend``.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int | Sequence[int] = 4,
        seed: int | None = 0,
        reward_mode: str = "win",
        backend: str = "auto",
        copy: bool = True,
        deck_source: DeckSource | None = None,
        *,
        first_player: int = 0,
        start_rotation: str = "rotate",
        discard_take: str = "must_place",
        mulligan_lines: str = "independent",
        max_turns_per_player: int = 30,
    ) -> None:
        self.num_players = table_sizes(num_envs, num_players, MIN_PLAYERS, MAX_PLAYERS)
        self.num_envs = envs = int(num_envs)
        if not isinstance(reward_mode, str) or reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")
        self.reward_mode = reward_mode
        # The scalar rules validate the options, for the smallest table (first_player must be a seat of every game).
        opts = check_options(int(self.num_players.min()), first_player, start_rotation, discard_take, mulligan_lines, max_turns_per_player)
        del opts["num_players"]
        self.options = opts
        if deck_source is not None and not callable(deck_source):
            raise ValueError(f"deck_source must be a callable (game, length) -> permutation, got {deck_source!r}")
        self._custom_source = deck_source
        self._source = deck_source if deck_source is not None else per_game_decks(seeded_generators(envs, seed))
        # A user's deck source is checked at every answer; the engine's own generators always return permutations.
        self._check = _check_permutation if deck_source is not None else _trusted
        self.backend = pick_backend(backend, "grinch_env.gnoming._vector_numba")
        self.copy = bool(copy)
        self._started = False
        self.last_totals = np.zeros((envs, MAX_PLAYERS), dtype=np.int64)
        self._mask = np.zeros((envs, NUM_ACTIONS), dtype=np.int8)
        self._seat = np.zeros(envs, dtype=np.int64)
        self._obs = np.zeros((envs, OBS_SIZE), dtype=np.float32) if not self.copy else None
        self._obs_pool: list[np.ndarray] = []  # observation buffers returned with copy=True, reused once dropped (numba)
        if self.backend == "numba":
            from grinch_env.gnoming import _vector_numba as kernels

            self._k = kernels
            self._state = np.zeros((envs, kernels.WIDTH), dtype=np.int16)  # small: the rows stay in cache longer
            self._status = np.zeros(envs, dtype=np.int64)
            cap = opts["max_turns_per_player"]
            # float32 tables of every normalised value, computed as the scalar encoder computes them (float64, then float32).
            self._f_count = np.array([c / MAX_COPIES for c in range(DECK_SIZE + 1)], dtype=np.float32)
            self._f_draw = np.array([c / DECK_SIZE for c in range(DECK_SIZE + 1)], dtype=np.float32)
            self._f_removed = np.array([c / NUM_REMOVABLE for c in range(NUM_REMOVABLE + 1)], dtype=np.float32)
            self._f_turns = np.zeros((MAX_PLAYERS + 1, (cap + 1) * MAX_PLAYERS + 1), dtype=np.float32)
            for n in range(MIN_PLAYERS, MAX_PLAYERS + 1):
                self._f_turns[n, : (cap + 1) * n] = [t / (cap * n) for t in range((cap + 1) * n)]
            self._f_total = np.array([t / TOTAL_SCALE for t in range(kernels.TOTAL_LOW, 300)], dtype=np.float32)
            self._f_rsc = np.array([s / ROUND_SCALE for s in range(kernels.SCORE_LOW, 100)], dtype=np.float32)
            self._rules = (cap, opts["mulligan_lines"] == "single", opts["discard_take"] == "free")
            self._encode_args = (self._f_count, self._f_draw, self._f_removed, self._f_turns, self._f_total, self._f_rsc)
        else:
            self._games: list[Game] = []
            self._encoders: list[Encoder] = []

    # ---------------------------------------------------------------- public
    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``(obs, mask, seat)`` of B fresh games; ``seed`` re-seeds the shuffles (ignored with a custom deck source)."""
        if seed is not None and self._custom_source is None:
            self._source = per_game_decks(seeded_generators(self.num_envs, seed))
        self.last_totals[:] = 0
        if self.backend == "numba":
            s = self._state
            s[:] = 0
            s[:, self._k.F_N] = self.num_players
            self._status[:] = self._k.NEED_DEAL
            self._resume(np.zeros((self.num_envs, MAX_PLAYERS), dtype=np.float32), np.zeros(self.num_envs, dtype=bool))
        else:
            self._games = [self._new_game(i) for i in range(self.num_envs)]
            self._encoders = [Encoder() for _ in range(self.num_envs)]  # the AEC env's observer; each caches one game's pieces
        self._started = True
        return self._observe()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Return ``(obs, mask, seat, rewards, dones)`` after game i's player to act took ``actions[i]``."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = actions_array(actions, self.num_envs)
        rewards = np.zeros((self.num_envs, MAX_PLAYERS), dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        if self.backend == "numba":
            cap, single, free = self._rules
            bad = self._k.step_into(a, self._state, self._mask, cap, single, free, self.reward_mode == "margin", rewards, dones, self.last_totals, self._status)
            if bad >= 0:
                self._raise_illegal(bad, a)
            self._resume(rewards, dones)
        else:
            bad = (a < 0) | (a >= NUM_ACTIONS)
            if not bad.any():
                bad = self._mask[np.arange(self.num_envs), a] == 0
            if bad.any():
                self._raise_illegal(int(np.flatnonzero(bad)[0]), a)
            for i, g in enumerate(self._games):
                g.step(int(a[i]))
                if g.done:
                    n = g.num_players
                    dones[i] = True
                    rewards[i, :n] = g.rewards(self.reward_mode)
                    self.last_totals[i, :n] = g.totals
                    self.last_totals[i, n:] = 0
                    self._games[i] = self._new_game(i)
        obs, mask, seat = self._observe()
        return obs, mask, seat, rewards, dones

    # ------------------------------------------------------------- internals
    def _new_game(self, i: int) -> Game:
        return Game(int(self.num_players[i]), rng=_SourceRng(self._source, i), **self.options)

    def _resume(self, rewards: np.ndarray, dones: np.ndarray) -> None:
        """Answer the numba games' pending random events (deals, reshuffles) from the deck source until none is left."""
        k = self._k
        status = self._status
        cap, single, free = self._rules
        while True:
            games = np.flatnonzero(status)
            if not len(games):
                return
            cards = np.zeros((len(games), DECK_SIZE), dtype=np.int16)
            for j, i in enumerate(games):
                if status[i] == k.NEED_SHUFFLE:
                    m = int(self._state[i, k.F_SHUFLEN])
                    under = self._state[i, k.F_DRAW:k.F_DRAW + m]
                    cards[j, :m] = under[self._check(self._source(int(i), m), m)]
                else:
                    cards[j] = _DECK[self._check(self._source(int(i), DECK_SIZE), DECK_SIZE)]
            k.resume_into(
                games, cards, self._state, self._mask, cap, single, free, self.reward_mode == "margin", self.options["first_player"],
                self.options["start_rotation"] == "rotate", rewards, dones, self.last_totals, status,
            )

    def _observe(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``(obs, mask, seat)`` of every game's player to act (new arrays unless ``copy=False``)."""
        if not self.copy:
            obs, clear = self._obs, True
        elif self.backend == "numba":
            obs, clear = self._fresh_obs(), True
        else:
            obs, clear = np.zeros((self.num_envs, OBS_SIZE), dtype=np.float32), False
        if self.backend == "numba":
            self._k.encode_into(self._state, *self._encode_args, obs, self._seat, clear)
        else:
            for i, g in enumerate(self._games):
                view = self._encoders[i].observe(g, g.current)
                obs[i] = view["observation"]
                self._mask[i] = view["action_mask"]
                self._seat[i] = g.current
        if self.copy:
            return obs, self._mask.copy(), self._seat.copy()
        return obs, self._mask, self._seat

    def _fresh_obs(self) -> np.ndarray:
        """Return an observation buffer no one else holds (:func:`grinch_env.vector_base.fresh_buffer`)."""
        return fresh_buffer(self._obs_pool, (self.num_envs, OBS_SIZE))

    def _raise_illegal(self, i: int, a: np.ndarray) -> None:
        raise illegal_action_error(i, int(a[i]), int(self._seat[i]), self._mask[i])

    def state_dict(self, i: int) -> dict[str, Any]:
        """Return game i's state in the keys of ``Game.state_dict()`` that both backends hold (for debugging and tests)."""
        if self.backend != "numba":
            return self._games[i].state_dict()
        k, s = self._k, self._state[i]
        n = int(s[k.F_N])
        lay = s[k.F_LAY:k.F_LAY + 9 * MAX_PLAYERS].reshape(MAX_PLAYERS, 9)[:n]
        up = s[k.F_UP:k.F_UP + 9 * MAX_PLAYERS].reshape(MAX_PLAYERS, 9)[:n]
        piles = [s[k.F_PILE + DECK_SIZE * x:k.F_PILE + DECK_SIZE * x + s[k.F_PLEN + x]].tolist() for x in range(2)]
        rounds = int(s[k.F_ROUND])
        phases = ("reveal", "draw", "play", "bounce", "discard", "hazard", "done")
        sources = ("draw", "A", "B", "bounce", "displaced")
        return {
            "num_players": n, "round": rounds, "first_player": int(s[k.F_FIRST]), "phase": phases[s[k.F_PHASE]],
            "turn_player": int(s[k.F_TP]), "current_player": int(s[k.F_CUR]), "layouts": lay.tolist(),
            "face_up": (up != 0).tolist(), "discard_piles": piles, "draw_pile": s[k.F_DRAW:k.F_DRAW + s[k.F_DLEN]].tolist(),
            "draw_pile_reshuffled": bool(s[k.F_RESHUF]), "removed": [10] * int(s[k.F_REMOVED]),
            "held": None if s[k.F_HELD] < 0 else int(s[k.F_HELD]), "held_source": None if s[k.F_HELD] < 0 else sources[s[k.F_HSRC]],
            "filled": [p for p in range(9) if s[k.F_FILLED + p]],
            "went_out": None if s[k.F_WENT] < 0 else int(s[k.F_WENT]),
            "final_turns_left": [x for x in range(n) if s[k.F_FINAL + x]], "turns_this_round": int(s[k.F_TURNS]),
            "round_scores": s[k.F_RSC:k.F_RSC + MAX_PLAYERS * NUM_ROUNDS].reshape(NUM_ROUNDS, MAX_PLAYERS)[:rounds, :n].tolist(),
            "totals": s[k.F_TOTALS:k.F_TOTALS + n].tolist(),
        }


__all__ = ["DeckSource", "VectorGnoming", "illegal_action_error", "per_game_decks", "seeded_generators"]
