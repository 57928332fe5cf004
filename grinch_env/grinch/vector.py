"""Batched engine: B independent games of *Grinch Grow Your Heart* stepped together (numpy arrays, optional numba kernel).

Example::

    import numpy as np
    from grinch_env.grinch.vector import VectorGrinch

    venv = VectorGrinch(num_envs=1024, num_players=[2, 3, 4, 5, 6], seed=0)
    obs, mask, seat = venv.reset()               # float32[envs,1337], int8[envs,62], int64[envs]
    rng = np.random.default_rng(0)
    for _ in range(1000):
        actions = (rng.random(mask.shape) * mask).argmax(axis=1)   # a random legal action per game
        obs, mask, seat, rewards, dones = venv.step(actions)
        # rewards float32[envs,6]: seat s's terminal reward in game i if dones[i], else 0

``obs[i]`` and ``mask[i]`` are game i's observation and action mask from the
seat ``seat[i]`` of the player to act, with exactly the encoding of the AEC
env (:mod:`grinch_env.grinch.encoding`) and the same ``Discrete(62)`` actions.
``rewards[i, s]`` is seat ``s``'s reward (:func:`grinch_env.grinch.env.terminal_rewards`,
``reward_mode`` "win" or "margin") of a game that ended on this step
(``dones[i]``), zero otherwise and for seats ``s >= num_players[i]``.  A
finished game is reset at once: ``obs/mask/seat`` are then the first decision
of a fresh game and ``last_totals[i]`` holds the finished game's final totals.
Every call returns new arrays, so a rollout buffer may keep them
(``copy=False`` returns the engine's own buffers instead, overwritten by the
next call).

Games of different sizes mix in one batch (``num_players=[2, 3, 4, 5, 6]`` is
repeated over the batch); each keeps its own number of rounds and decisions
(:func:`grinch_env.grinch.game.decisions_per_game`).

Same rules as :mod:`grinch_env.grinch.game`
------------------------------------
The scalar :class:`~grinch_env.grinch.game.Game` is the source of truth; this module
is the same state machine over arrays, and ``tests/test_vector.py`` plays
thousands of games through both with the same decks and actions and asserts
identical observations, masks, seats, rewards and totals at every step.  The
shuffles come from a *deck source*: a callable ``indices int64[k] -> int[k, 48]``
giving the decks (top card last, as ``Game._start_round`` takes them) of the
games in ``indices`` that begin a round.  The default shuffles every deck of
a step at once from one generator seeded by ``seed``; :func:`per_game_decks`
draws game i's decks as ``generators[i].permutation(48)``, exactly the call a
scalar ``Game(rng=generators[i])`` makes, which is how the test gives both
engines the same cards.  The draw pile never runs out with 2-6 players
(2n dealt + 6(n-1) drawn by the Whos + 6 by the Grinch = 8n <= 48 cards), so
the scalar engine's refill rule is never needed here.

Technique, chosen by measurement
--------------------------------
State is small integer arrays: hands, discard-pile contents, pile tops and
publicly known cards are ``uint64`` bitmasks per seat ([B,6,5]), each discard
pile's order a [B,6,3] stack, the deck a [B,48] array with a pointer, the
score pads [B,6,15] already normalised as the observation shows them.
``step`` with the ``"numpy"`` backend groups the games by phase (discard /
draw / score) and applies each phase's transition to its group with numpy
fancy indexing.  The observation is rebuilt for every game at every step (the
observer changes every step, so nothing carries over): most of it is 25
bitmaps of 48 cards per game (own hand, then per relative seat: pile
contents, top, second, known in hand), the rest one-hot scatters and lookups
of precomputed float32 tables, so the values are bit-identical to the scalar
encoder's; numpy builds it with one gather of the per-seat arrays and
``np.unpackbits`` into the float buffer, in blocks of 1024 games.

The ``"numba"`` backend (``grinch_env.grinch._vector_numba``; ``backend="auto"``, the
default, takes it when numba is installed) runs the same state machine as
compiled loops over the games: ``step_into`` checks all actions and then
applies them (rewards included), ``deal_into`` deals the decks of the games
that start a round or a new game (asked from the deck source in the numpy
code's order, so a seed gives the same games on both backends), and
``encode_into`` writes every observation and mask.  The numpy transitions
stay as the fallback and as the second implementation the tests compare with.

Figures that decided it (4 players, random legal play, decisions per CPU-second
on the 2-core development machine, ``benchmarks/bench_vector.py --cpu``): the
AEC env 63k; the scalar loop behind this interface 78k; numpy 9.8k / 377k /
856k / 628k at 1 / 64 / 1024 / 8192 games; numba observation only, numpy
transitions 23k / 861k / 1.68M / 1.03M.  Profiles put 70-80% of a numpy step in
building the observation.  Later, with the AEC env at ~92k, the all-numba step
took 1024 games from 1.7-1.8M to 2.9-3.0M (31-33x the AEC env; 3.1M with
``copy=False``) and 8192 games from 1.05M to 1.2-1.3M (1.8-2.0M with
``copy=False``); at 1024 games about 40% of the benchmark's time is its own
random choice and most of the engine's is writing the 5.5 MB of float32
observations.  Torch tensors were ruled out on the dominant kernel: expanding
1024 x 25 bitmaps to floats takes 0.29 ms with ``np.unpackbits`` and
1.4-1.6 ms in torch on CPU (byte lookup table or shift-and-mask), with higher
per-call overhead too.  Either way a 2x256 MLP forward alone runs at 115k
observations/s on one core, so training is limited by the network, not by
this engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from grinch_env.grinch import encoding as enc
from grinch_env.grinch import game as rules
from grinch_env.grinch.cards import CARDS_PER_SUIT, NUM_CARDS, NUM_SUITS
from grinch_env.grinch.game import action_name
from grinch_env.grinch.scoring import (
    COUNTS_BITS,
    MAX_ROW_VALUE,
    NUM_ROWS,
    RANK_SUM_AT,
    SUIT_COUNT_AT,
    TOP_AT,
    packed_tables,
    resolve_layout,
)
from grinch_env.vector_base import actions_array, fresh_buffer, pick_backend, table_sizes
from grinch_env.vector_base import illegal_action_error as _illegal

DeckSource = Callable[[np.ndarray], np.ndarray]

# Phases as small ints (the scalar engine's "discard", "draw", "score").
_DISCARD, _DRAW, _SCORE = rules.PHASE_DISCARD.code, rules.PHASE_DRAW.code, rules.PHASE_SCORE.code  # the Phase enum's array codes
_SEATS = np.arange(rules.MAX_PLAYERS)
_BIT = np.left_shift(np.uint64(1), np.arange(NUM_CARDS, dtype=np.uint64))
_CHUNK = np.uint64((1 << CARDS_PER_SUIT) - 1)
_SUIT_SHIFT = np.arange(NUM_SUITS, dtype=np.uint64) * np.uint64(CARDS_PER_SUIT)
_TAIL = enc.AT_TABLE  # entries from here on are not card bitmaps
_BLOCKS = _TAIL // NUM_CARDS  # 25 card bitmaps of 48 entries: own hand, then 4 per relative seat
_BYTES = NUM_CARDS // 8  # 6 bytes hold a 48-card bitmap
_BLOCK_GAMES = 1024
_RECYCLE_BYTES = 8 << 20  # observation buffers this large are recycled (numba backend, copy=True)
# The bitmap trick relies on the encoding's layout: own hand, then per relative seat pile contents, top, second, known.
if not (
    enc.SEAT_BLOCK == NUM_CARDS and enc.SEAT_STRIDE == 4 * NUM_CARDS and (enc.PILE_CONTENTS, enc.PILE_TOP, enc.PILE_SECOND, enc.KNOWN_IN_HAND) == (0, 48, 96, 144)
    and enc.AT_TABLE == enc.SEAT_BLOCK + rules.MAX_PLAYERS * enc.SEAT_STRIDE
):  # pragma: no cover - guards a change of grinch_env.grinch.encoding's index table
    raise ImportError("grinch_env.grinch.vector assumes the card-bitmap layout of grinch_env.grinch.encoding; update VectorGrinch._encode and _vector_numba")


_SUIT_FEATURES, _MATCH_RUN = packed_tables()
_SUIT_OFFSET = np.arange(NUM_SUITS) << CARDS_PER_SUIT  # row s of the table in the raveled array
_ROUNDS = np.array([rules.ROUNDS_BY_PLAYERS.get(n, 0) for n in range(rules.MAX_PLAYERS + 1)], dtype=np.int64)


def _bits(cards: Sequence[int]) -> np.uint64:
    """Return the uint64 bitmask of ``cards`` (bit c = card c)."""
    out = 0
    for c in cards:
        out |= 1 << int(c)
    return np.uint64(out)


def batched_decks(rng: np.random.Generator) -> DeckSource:
    """Return a deck source that shuffles all requested decks at once from ``rng``."""

    def draw(indices: np.ndarray) -> np.ndarray:
        return rng.permuted(np.broadcast_to(np.arange(NUM_CARDS), (len(indices), NUM_CARDS)), axis=1)

    return draw


def per_game_decks(generators: Sequence[np.random.Generator]) -> DeckSource:
    """Return a deck source drawing game i's decks as ``generators[i].permutation(48)``, as a scalar ``Game(rng=generators[i])`` does."""

    def draw(indices: np.ndarray) -> np.ndarray:
        return np.array([generators[i].permutation(NUM_CARDS) for i in indices], dtype=np.int64).reshape(len(indices), NUM_CARDS)

    return draw


class VectorGrinch:
    """``num_envs`` independent games stepped together, each reset automatically when it ends.

    Arguments: ``num_envs`` (>= 1); ``num_players`` an int 2..6 or a sequence of
    them (game i gets ``num_players[i % len]``); ``seed`` for the shuffles
    (``reset(seed)`` re-seeds); ``bonus_layout`` as in :class:`~grinch_env.grinch.game.Game`;
    ``reward_mode`` ``"win"`` or ``"margin"``; ``deck_source`` an optional
    callable ``indices int64[k] -> int[k, 48]`` dealing the decks (top card
    last) of the games in ``indices`` that start a round; it replaces the
    seeded shuffles (see :func:`per_game_decks`); ``copy`` (default True) as in
    Gymnasium's vector envs: with ``copy=False``, ``reset``/``step`` return the
    engine's own ``obs``/``mask``/``seat`` buffers, overwritten by the next call
    (saves an allocation per step; copy what you keep).

    Attributes: ``num_players`` int64[envs]; ``last_totals`` int64[envs,6], the
    final totals of each slot's most recently finished game (zero before the
    first one ends and for absent seats).
    """

    # _vector_reference.ReferenceVectorGrinch repeats these arguments on purpose (the differential test builds both from one set).
    def __init__(
        self,
        num_envs: int,
        num_players: int | Sequence[int] = 4,
        seed: int | None = None,
        bonus_layout: str | Mapping | tuple = "standard",
        reward_mode: str = "win",
        deck_source: DeckSource | None = None,
        copy: bool = True,
        backend: str = "auto",
    ) -> None:
        self.num_players = table_sizes(num_envs, num_players, rules.MIN_PLAYERS, rules.MAX_PLAYERS)
        self.num_envs = envs = int(num_envs)
        if reward_mode not in rules.REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {rules.REWARD_MODES}, got {reward_mode!r}")
        self.reward_mode = reward_mode
        self.layout = resolve_layout(bonus_layout)
        self.scales = scales = enc.Scales(self.layout)
        self._custom_decks = deck_source
        self._decks = deck_source if deck_source is not None else batched_decks(np.random.default_rng(seed))
        self._started = False

        # Bonus cards as arrays: card bit, required suit and count, points.
        bonus = [(c, b) for c, b in enumerate(self.layout) if b is not None]
        self._bonus_card = np.array([c for c, _ in bonus], dtype=np.uint64)
        self._bonus_suit = np.array([b.suit for _, b in bonus], dtype=np.int64)
        self._bonus_count = np.array([b.count for _, b in bonus], dtype=np.int64)
        self._bonus_points = np.array([b.points for _, b in bonus], dtype=np.int64)
        # float32 tables of every normalised value, computed as the scalar encoder computes them (Python float, then float32).
        max_points = MAX_ROW_VALUE + int(self._bonus_points.sum())
        self._f_points = np.array([v / scales.points for v in range(max_points + 1)], dtype=np.float32)
        self._f_total = np.array([v / scales.total for v in range(6 * max_points + 1)], dtype=np.float32)
        self._f_row = np.array([v / MAX_ROW_VALUE for v in range(MAX_ROW_VALUE + 1)], dtype=np.float32)
        self._f_bonus = np.array([v / scales.bonus for v in range(max_points + 1)], dtype=np.float32)
        self._f_hand = np.array([v / enc.MAX_HAND for v in range(NUM_CARDS + 1)], dtype=np.float32)
        self._f_pile = np.array([v / NUM_CARDS for v in range(NUM_CARDS + 1)], dtype=np.float32)

        n = self.num_players
        self._rounds = _ROUNDS[n]
        self._ar = np.arange(envs)
        self._valid = _SEATS < n[:, None]  # seat j (absolute or relative) is at the table
        self._flat_base = self._ar[:, None] * rules.MAX_PLAYERS  # row of (game, seat 0) in the [envs*6, ...] views
        # Game state.
        self._round = np.zeros(envs, dtype=np.int64)
        self._turn = np.zeros(envs, dtype=np.int64)  # 1..3, 0 while scoring
        self._phase = np.zeros(envs, dtype=np.int64)
        self._grinch = np.zeros(envs, dtype=np.int64)
        self._pos = np.zeros(envs, dtype=np.int64)
        self._cur = np.zeros(envs, dtype=np.int64)
        self._draws = np.zeros(envs, dtype=np.int64)
        # Per seat, the card sets the observation shows, as 48-bit masks in the observation's order (pile
        # contents, pile top, card under the top, known in hand), then the hand: one gather serves them all.
        self._maps = np.zeros((envs, rules.MAX_PLAYERS, 5), dtype=np.uint64)
        self._pile, self._top, self._second, self._known, self._hand = (self._maps[:, :, k] for k in range(5))
        self._stack = np.zeros((envs, rules.MAX_PLAYERS, rules.TURNS_PER_ROUND), dtype=np.int64)  # each pile bottom to top
        self._plen = np.zeros((envs, rules.MAX_PLAYERS), dtype=np.int64)
        self._deck = np.zeros((envs, NUM_CARDS), dtype=np.int64)  # draw pile, top card at _ptr - 1
        self._ptr = np.zeros(envs, dtype=np.int64)
        self._totals = np.zeros((envs, rules.MAX_PLAYERS), dtype=np.int64)
        # Per seat, the score pad as the observation shows it: row used (7), points / points_scale (7), total / total_scale.
        self._pad = np.zeros((envs, rules.MAX_PLAYERS, 2 * NUM_ROWS + 1), dtype=np.float32)
        self.last_totals = np.zeros((envs, rules.MAX_PLAYERS), dtype=np.int64)
        self._mask = np.zeros((envs, rules.NUM_ACTIONS), dtype=np.int8)
        self.copy = bool(copy)
        self.backend = pick_backend(backend, "grinch_env.grinch._vector_numba")
        self._bonus_card_i64 = self._bonus_card.astype(np.int64)
        self._status = np.zeros(envs, dtype=np.int64)  # the numba step's per-game deal status
        self._obs_pool: list[np.ndarray] = []  # large observation buffers returned with copy=True, reused once dropped
        self._recycle = self.backend == "numba" and self.copy and envs * enc.OBS_SIZE * 4 >= _RECYCLE_BYTES
        if self.backend == "numba":
            from grinch_env.grinch import _vector_numba as kernels

            # The kernels' arguments, bound once: the state arrays are only ever updated in place.
            self._kernels = kernels
            self._step_args = (
                self.num_players, self._cur, self._pos, self._maps, self._stack, self._plen, self._deck, self._ptr, self._totals,
                self._pad, self._phase, self._turn, self._round, self._rounds, self._grinch, self._draws, self._f_points, self._f_total,
                self._bonus_card_i64, self._bonus_suit, self._bonus_count, self._bonus_points, self.reward_mode == "margin", self._mask,
            )
            self._deal_args = (
                self.num_players, self._cur, self._pos, self._maps, self._plen, self._deck, self._ptr, self._totals, self._pad,
                self._phase, self._turn, self._round, self._grinch, self._draws,
            )
            self._encode_args = (
                self.num_players, self._cur, self._maps, self._pad, self._phase, self._turn, self._round, self._rounds, self._grinch,
                self._draws, self._ptr, self._f_hand, self._f_pile, self._f_row, self._f_bonus, self._bonus_card_i64, self._bonus_suit,
                self._bonus_count, self._bonus_points,
            )
        if not self.copy:
            self._obs = np.zeros((envs, enc.OBS_SIZE), dtype=np.float32)
            self._seat = np.zeros(envs, dtype=np.int64)

    # ---------------------------------------------------------------- public
    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``(obs, mask, seat)`` of B fresh games; ``seed`` re-seeds the shuffles (ignored with a custom deck source)."""
        if seed is not None and self._custom_decks is None:
            self._decks = batched_decks(np.random.default_rng(seed))
        self._new_games(self._ar)
        self.last_totals[:] = 0
        self._started = True
        return self._observe()

    def load_games(self, games: Sequence, indices: Sequence[int] | np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``(obs, mask, seat)`` of every slot after copying scalar :class:`~grinch_env.grinch.game.Game` states into slots ``indices``.

        ``games[k]`` goes to slot ``indices[k]`` (default: slots ``0..len(games)-1``);
        the other slots keep their games (or, before the first reset, start
        fresh ones).  A loaded game continues exactly as the scalar game
        would, until its round ends; later rounds come from the deck source,
        as for any game here.  Search agents use this to play many
        determinisations of one position at once.  Each game must match the
        slot's table size and the engine's bonus layout, be unfinished, play
        the rules' number of rounds and have seat 0 as its first Grinch (the
        engine passes the Grinch on from seat 0).
        """
        if indices is None:
            indices = np.arange(len(games))
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        if len(idx) != len(games):
            raise ValueError(f"load_games needs one slot index per game: {len(games)} games, {len(idx)} indices")
        if len(idx) and (idx.min() < 0 or idx.max() >= self.num_envs or len(np.unique(idx)) != len(idx)):
            raise ValueError(f"slot indices must be distinct ints in 0..{self.num_envs - 1}, got {idx.tolist()}")
        if not self._started:  # deal fresh games only into the slots not loaded (a deck source is asked for nothing else)
            rest = np.setdiff1d(self._ar, idx)
            if len(rest):
                self._new_games(rest)
            self.last_totals[:] = 0
            self._started = True
        phases = {"discard": _DISCARD, "draw": _DRAW, "score": _SCORE}
        for k, (i, g) in enumerate(zip(idx.tolist(), games)):
            n = int(self.num_players[i])
            if g.num_players != n:
                raise ValueError(f"game {k} has {g.num_players} players but slot {i} plays {n}")
            if g.layout != self.layout:
                raise ValueError(f"game {k} uses another bonus layout than this engine")
            if g.phase not in phases:
                raise ValueError(f"game {k} is in phase {g.phase!r}: only unfinished games (discard, draw, score) can be loaded")
            if g.first_grinch != 0 or g.num_rounds != rules.ROUNDS_BY_PLAYERS[n]:
                raise ValueError(f"game {k} has first_grinch={g.first_grinch} and num_rounds={g.num_rounds}; the batched engine plays "
                                 f"first_grinch=0 and the rules' {rules.ROUNDS_BY_PLAYERS[n]} rounds for {n} players")
            if any(len(p) > rules.TURNS_PER_ROUND for p in g.piles):
                raise ValueError(f"game {k} has a discard pile of more than {rules.TURNS_PER_ROUND} cards (a refilled variant game)")
            self._round[i] = g.round
            self._turn[i] = 0 if g.turn is None else g.turn
            self._phase[i] = phases[g.phase]
            self._grinch[i] = g.grinch
            self._pos[i] = g.pos
            self._cur[i] = g.current
            self._draws[i] = g.draws_made
            self._maps[i] = 0
            self._stack[i] = 0
            self._pad[i] = 0.0
            self._totals[i] = 0
            for p in range(n):
                pile = g.piles[p]
                self._plen[i, p] = len(pile)
                self._stack[i, p, :len(pile)] = pile
                self._pile[i, p] = _bits(pile)
                self._top[i, p] = _bits(pile[-1:])
                self._second[i, p] = _bits(pile[-2:-1])
                self._known[i, p] = _bits(g.known[p])
                self._hand[i, p] = _bits(g.hands[p])
                self._totals[i, p] = g.totals[p]
                self._pad[i, p, 2 * NUM_ROWS] = self._f_total[g.totals[p]]
                for row, points in enumerate(g.score_sheet[p]):
                    if points is not None:
                        self._pad[i, p, row] = 1.0
                        self._pad[i, p, NUM_ROWS + row] = self._f_points[points]
            self._plen[i, n:] = 0
            draw = g.draw_pile
            self._deck[i] = 0
            self._deck[i, :len(draw)] = draw
            self._ptr[i] = len(draw)
        return self._observe()

    def copy_slots(self, src: np.ndarray, dst: np.ndarray, source: VectorGrinch | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``(obs, mask, seat)`` of every slot after copying the game in slot ``src[k]`` into slot ``dst[k]`` (one game played many ways).

        ``source``: another engine (same bonus layout) whose slots ``src`` are copied; by default this one.
        The whole state is copied, the draw pile's order included: both copies then meet the same chance.
        """
        source = self if source is None else source
        src = np.asarray(src, dtype=np.int64).reshape(-1)
        dst = np.asarray(dst, dtype=np.int64).reshape(-1)
        if src.shape != dst.shape or (len(src) and (min(src.min(), dst.min()) < 0 or src.max() >= source.num_envs or dst.max() >= self.num_envs)):
            raise ValueError(f"src and dst must be slot indices (in 0..{source.num_envs - 1} and 0..{self.num_envs - 1}) of equal length, "
                             f"got {len(src)} and {len(dst)}")
        if not isinstance(source, VectorGrinch) or source.layout != self.layout:
            raise ValueError("copy_slots copies games only from a VectorGrinch with the same bonus layout")
        if (source.num_players[src] != self.num_players[dst]).any():
            raise ValueError("copy_slots copies games only between slots of the same table size")
        if not (self._started and source._started):
            raise RuntimeError("call reset() or load_games() on both engines before copy_slots()")
        names = ("_round", "_turn", "_phase", "_grinch", "_pos", "_cur", "_draws", "_maps", "_stack", "_plen", "_deck", "_ptr", "_totals", "_pad")
        for name in names:
            getattr(self, name)[dst] = getattr(source, name)[src]
        return self._observe()

    def reveal_hands(self, obs: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """Return copies of observations ``obs[k]`` of the seats to act in games ``slots[k]`` with every other seat's
        "known in hand" block holding that seat's whole hand.

        For a critic that learns in training only (an asymmetric critic): the
        hidden hands are information no agent may act on, so this is never an
        agent's input.  The draw pile's order stays hidden.
        """
        slots = np.asarray(slots, dtype=np.int64)
        out = np.array(obs, dtype=np.float32, copy=True)
        n = self.num_players[slots]
        cards = np.arange(NUM_CARDS, dtype=np.uint64)
        for j in range(1, rules.MAX_PLAYERS):
            at = np.flatnonzero(j < n)
            seat = (self._cur[slots[at]] + j) % n[at]
            hand = (self._hand[slots[at], seat][:, None] >> cards) & np.uint64(1)
            lo = enc.SEAT_BLOCK + j * enc.SEAT_STRIDE + enc.KNOWN_IN_HAND
            out[at, lo:lo + NUM_CARDS] = hand
        return out

    def totals(self) -> np.ndarray:
        """Return int64[envs,6]: each game's totals so far (a finished game's are in ``last_totals``)."""
        return self._totals.copy()

    def rows_used(self) -> np.ndarray:
        """Return bool[envs,6,7]: which rows each seat has scored in its current game."""
        return self._pad[:, :, :NUM_ROWS] > 0.5

    def rounds(self) -> np.ndarray:
        """Return int64[envs]: each game's current round (0-based)."""
        return self._round.copy()

    def hand_values(self, hands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(int64[k,7] row values, int64[k] bonuses)`` of hands given as ``uint64[k]`` card bitmasks (bit c = card c, at most 6 cards)."""
        return self._hand_values(np.asarray(hands, dtype=np.uint64).reshape(-1))

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Return ``(obs, mask, seat, rewards, dones)`` after game i's current player took ``actions[i]``."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self.backend == "numba":
            return self._step_numba(actions)
        a = self._check_actions(actions)
        phase = self._phase
        discard = np.flatnonzero(phase == _DISCARD)
        draw = np.flatnonzero(phase == _DRAW)
        score = np.flatnonzero(phase == _SCORE)
        rewards = np.zeros((self.num_envs, rules.MAX_PLAYERS), dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        if len(discard):
            self._discard(discard, a[discard])
        if len(draw):
            self._draw(draw, a[draw])
        if len(score):
            ended = self._score(score, a[score])
            if len(ended):
                dones[ended] = True
                rewards[ended] = self._rewards(self._totals[ended], self.num_players[ended])
                self.last_totals[ended] = self._totals[ended]
                self._new_games(ended)
        obs, mask, seat = self._observe()
        return obs, mask, seat, rewards, dones

    def _step_numba(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``step`` through the compiled kernels of :mod:`grinch_env.grinch._vector_numba` (same results as the numpy transitions)."""
        k = self._kernels
        a = actions_array(actions, self.num_envs)
        rewards = np.zeros((self.num_envs, rules.MAX_PLAYERS), dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        status = self._status
        bad = k.step_into(a, *self._step_args, rewards, dones, self.last_totals, status)
        if bad >= 0:
            self._raise_illegal(bad, a)
        if status.any():
            # The deck source is asked as the numpy transitions ask it: the games starting a round, then the new games.
            parts = [idx for idx in (np.flatnonzero(status == k.NEW_ROUND), np.flatnonzero(status == k.GAME_OVER)) if len(idx)]
            decks = [self._deal_decks(idx) for idx in parts]
            games = np.concatenate(parts)
            k.deal_into(games, np.concatenate(decks), status[games] == k.GAME_OVER, *self._deal_args)
        obs, mask, seat = self._observe()
        return obs, mask, seat, rewards, dones

    # ----------------------------------------------------------- transitions
    def _new_games(self, idx: np.ndarray) -> None:
        self._round[idx] = 0
        self._pad[idx] = 0.0
        self._totals[idx] = 0
        self._start_round(idx)

    def _start_round(self, idx: np.ndarray) -> None:
        """Deal a round in games ``idx`` (as ``Game._start_round``: seat p gets the deck's cards 47-2p and 46-2p)."""
        n = self.num_players[idx]
        deck = self._deal_decks(idx)
        self._deck[idx] = deck
        dealt = _BIT[deck[:, ::-1][:, : rules.DEAL_SIZE * rules.MAX_PLAYERS]].reshape(len(idx), rules.MAX_PLAYERS, rules.DEAL_SIZE)
        self._hand[idx] = np.bitwise_or.reduce(dealt, axis=2) * self._valid[idx]
        self._ptr[idx] = NUM_CARDS - rules.DEAL_SIZE * n
        self._grinch[idx] = self._round[idx] % n
        self._maps[idx, :, :4] = 0  # piles and known cards
        self._plen[idx] = 0
        self._turn[idx] = 1
        self._draws[idx] = 0
        self._begin_player(idx, np.zeros(len(idx), dtype=np.int64))

    def _deal_decks(self, idx: np.ndarray) -> np.ndarray:
        """Return int64[k,48]: the decks of games ``idx`` from the deck source (checked if it is the user's)."""
        deck = np.asarray(self._decks(idx), dtype=np.int64)
        if self._custom_decks is not None and (deck.shape != (len(idx), NUM_CARDS) or (np.sort(deck, axis=1) != np.arange(NUM_CARDS)).any()):
            raise ValueError(f"the deck source must return int[{len(idx)}, {NUM_CARDS}], each row a permutation of 0..{NUM_CARDS - 1}; got shape {deck.shape}")
        return deck

    def _begin_player(self, idx: np.ndarray, pos: np.ndarray) -> None:
        """Make the ``pos``-th player of the turn order act in games ``idx``; a Who draws two cards here."""
        n = self.num_players[idx]
        grinch = self._grinch[idx]
        cur = (grinch + 1 + pos) % n
        self._pos[idx] = pos
        self._cur[idx] = cur
        is_grinch = cur == grinch
        self._phase[idx] = np.where(is_grinch, _DRAW, _DISCARD)
        self._draws[idx[is_grinch]] = 0
        who = idx[~is_grinch]
        if len(who):
            ptr = self._ptr[who]
            cards = self._deck[who[:, None], ptr[:, None] - 1 - np.arange(rules.WHO_DRAWS)]
            self._hand[who, self._cur[who]] |= np.bitwise_or.reduce(_BIT[cards], axis=1)
            self._ptr[who] = ptr - rules.WHO_DRAWS

    def _discard(self, idx: np.ndarray, card: np.ndarray) -> None:
        p = self._cur[idx]
        bit = _BIT[card]
        self._hand[idx, p] &= ~bit
        self._known[idx, p] &= ~bit
        self._pile[idx, p] |= bit
        self._second[idx, p] = self._top[idx, p]
        self._top[idx, p] = bit
        length = self._plen[idx, p]
        self._stack[idx, p, length] = card
        self._plen[idx, p] = length + 1
        # Next player of this turn, else next turn, else scoring.
        nxt = self._pos[idx] + 1
        more = nxt < self.num_players[idx]
        if more.any():
            self._begin_player(idx[more], nxt[more])
        last = idx[~more]
        if len(last):
            new_turn = self._turn[last] < rules.TURNS_PER_ROUND
            turn = last[new_turn]
            if len(turn):
                self._turn[turn] += 1
                self._begin_player(turn, np.zeros(len(turn), dtype=np.int64))
            scoring = last[~new_turn]
            if len(scoring):
                self._turn[scoring] = 0
                self._phase[scoring] = _SCORE
                self._pos[scoring] = 0
                self._cur[scoring] = (self._grinch[scoring] + 1) % self.num_players[scoring]

    def _draw(self, idx: np.ndarray, action: np.ndarray) -> None:
        p = self._cur[idx]
        from_pile = action == rules.DRAW_PILE_ACTION
        card = np.empty(len(idx), dtype=np.int64)
        top = self._ptr[idx[from_pile]] - 1
        card[from_pile] = self._deck[idx[from_pile], top]
        self._ptr[idx[from_pile]] = top
        taken = ~from_pile
        if taken.any():
            g = idx[taken]
            src = (p[taken] + action[taken] - rules.DRAW_DISCARD_BASE) % self.num_players[g]
            length = self._plen[g, src] - 1
            c = self._stack[g, src, length]
            self._plen[g, src] = length
            self._pile[g, src] &= ~_BIT[c]
            self._top[g, src] = self._second[g, src]
            self._second[g, src] = np.where(length >= 2, _BIT[self._stack[g, src, length - 2]], 0)
            self._known[g, p[taken]] |= _BIT[c]  # a card taken from a discard pile is public
            card[taken] = c
        self._hand[idx, p] |= _BIT[card]
        draws = self._draws[idx] + 1
        self._draws[idx] = draws
        self._phase[idx[draws == rules.GRINCH_DRAWS]] = _DISCARD

    def _score(self, idx: np.ndarray, action: np.ndarray) -> np.ndarray:
        """Score the actors' hands in games ``idx``; return the games that ended."""
        p = self._cur[idx]
        row = action - rules.SCORE_BASE
        values, bonus = self._hand_values(self._hand[idx, p])
        points = values[np.arange(len(idx)), row] + bonus
        self._totals[idx, p] += points
        self._pad[idx, p, row] = 1.0
        self._pad[idx, p, NUM_ROWS + row] = self._f_points[points]
        self._pad[idx, p, 2 * NUM_ROWS] = self._f_total[self._totals[idx, p]]
        n = self.num_players[idx]
        nxt = self._pos[idx] + 1
        more = nxt < n
        same = idx[more]
        self._pos[same] = nxt[more]
        self._cur[same] = (self._grinch[same] + 1 + nxt[more]) % n[more]
        last = idx[~more]
        self._round[last] += 1
        going_on = self._round[last] < self._rounds[last]
        if going_on.any():
            self._start_round(last[going_on])
        return last[~going_on]

    def _rewards(self, totals: np.ndarray, n: np.ndarray) -> np.ndarray:
        """Return float32[k,6] terminal rewards as :func:`grinch_env.grinch.env.terminal_rewards` computes them (float64, then float32)."""
        valid = _SEATS < n[:, None]
        if self.reward_mode == "win":
            best = np.where(valid, totals, -1).max(axis=1, keepdims=True)
            winners = valid & (totals == best)
            w = winners.sum(axis=1, keepdims=True)
            losers = np.maximum(n[:, None] - w, 1)  # all tied: no loser, every reward is 0 below
            out = np.where(winners, 1.0 / w, -1.0 / losers)
            out[(w == n[:, None])[:, 0]] = 0.0
        else:
            t = np.where(valid, totals, 0)
            others = t.sum(axis=1, keepdims=True) - t
            out = (t - others / (n[:, None] - 1)) / rules.MARGIN_SCALE
        return np.where(valid, out, 0.0).astype(np.float32)

    def _hand_values(self, hands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return int64[k,7] row values and int64[k] bonuses of the hands (uint64 bitmasks, at most 6 cards), as :mod:`grinch_env.grinch.scoring` scores them."""
        chunks = ((hands[:, None] >> _SUIT_SHIFT) & _CHUNK).astype(np.int64)  # [k, 4]: one suit each
        f = _SUIT_FEATURES[chunks + _SUIT_OFFSET].sum(axis=1)
        values = np.empty((len(hands), NUM_ROWS), dtype=np.int64)
        values[:, :NUM_SUITS] = (f[:, None] >> (RANK_SUM_AT + 6 * np.arange(NUM_SUITS))) & 63
        values[:, 4] = (f >> TOP_AT) & 31
        match_run = _MATCH_RUN[f & ((1 << COUNTS_BITS) - 1)]
        values[:, 5] = match_run & 63
        values[:, 6] = match_run >> 6
        suit_count = (f[:, None] >> (SUIT_COUNT_AT + 3 * self._bonus_suit)) & 7
        held = ((hands[:, None] >> self._bonus_card) & np.uint64(1)).astype(bool)
        bonus = (held & (suit_count >= self._bonus_count)) @ self._bonus_points
        return values, bonus

    # ----------------------------------------------------------- observation
    def _observe(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``(obs, mask, seat)`` of every game's player to act (new arrays unless ``copy=False``)."""
        if self.backend == "numba":
            # Where the new observation comes from, by measurement: up to a few MB, np.zeros (calloc, no zeroing pass in the
            # kernel) was 5-10% faster than anything else; above (44 MB at 8192 games) recycling a dropped buffer, zeroed
            # by the kernel, was 35% faster than fresh pages from the system at every step.
            if not self.copy:
                obs, clear = self._obs, True
            elif self._recycle:
                obs, clear = self._fresh_obs(), True
            else:
                obs, clear = np.zeros((self.num_envs, enc.OBS_SIZE), dtype=np.float32), False
            self._kernels.encode_into(*self._encode_args, obs, self._mask, clear)
        elif self.copy:
            # np.zeros (calloc) measured faster here than np.empty plus filling the 137 non-bitmap entries.
            obs = np.zeros((self.num_envs, enc.OBS_SIZE), dtype=np.float32)
        else:
            obs = self._obs
            obs[:, _TAIL:] = 0.0
        if self.backend == "numpy":
            # Blocks of games keep each block's temporaries in cache.
            for lo in range(0, self.num_envs, _BLOCK_GAMES):
                hi = min(lo + _BLOCK_GAMES, self.num_envs)
                self._encode(slice(lo, hi), obs[lo:hi], self._mask[lo:hi])
        if self.copy:
            return obs, self._mask.copy(), self._cur.copy()
        self._seat[:] = self._cur
        return obs, self._mask, self._seat

    def _fresh_obs(self) -> np.ndarray:
        """Return an observation buffer no one else holds (:func:`grinch_env.vector_base.fresh_buffer`)."""
        return fresh_buffer(self._obs_pool, (self.num_envs, enc.OBS_SIZE))

    def _encode(self, games: slice, obs: np.ndarray, mask: np.ndarray) -> None:
        """Write the observations and masks of ``games`` (a block of the batch) into ``obs`` and ``mask``."""
        envs = len(obs)
        ar = self._ar[:envs]
        n = self.num_players[games]
        cur = self._cur[games]
        valid = self._valid[games]
        # Row of (game, relative seat j) in the [envs*6, ...] views: one gather per per-seat array.
        rows = self._flat_base[games] + (cur[:, None] + _SEATS) % n[:, None]
        maps = np.take(self._maps.reshape(-1, 5), rows, axis=0)  # [envs, 6, 5]
        maps *= valid[:, :, None]
        pad = np.take(self._pad.reshape(-1, 2 * NUM_ROWS + 1), rows, axis=0)
        pad *= valid[:, :, None]
        own_hand = maps[:, 0, 4]

        bitmaps = np.empty((envs, _BLOCKS), dtype=np.uint64)
        bitmaps[:, 0] = own_hand
        bitmaps[:, 1:] = maps[:, :, :4].reshape(envs, 4 * rules.MAX_PLAYERS)
        # Little-endian bytes of each 48-card bitmap, unpacked bit 0 first: card c is bit c.
        byte = bitmaps.view(np.uint8).reshape(envs, _BLOCKS, 8)[:, :, :_BYTES]
        obs[:, :_TAIL] = np.unpackbits(byte, axis=-1, bitorder="little").reshape(envs, _TAIL)

        phase = self._phase[games]
        turn = self._turn[games]
        rounds = self._rounds[games]
        rnd = np.minimum(self._round[games], rounds - 1)
        obs[:, enc.AT_TABLE:enc.AT_TABLE + rules.MAX_PLAYERS] = valid
        obs[ar, enc.GRINCH_SEAT + (self._grinch[games] - cur) % n] = 1.0
        obs[:, enc.HAND_SIZE:enc.HAND_SIZE + rules.MAX_PLAYERS] = self._f_hand[np.bitwise_count(maps[:, :, 4])]
        obs[ar, enc.ROUND + rnd] = 1.0
        obs[ar, enc.ROUNDS_LEFT + rounds - 1 - rnd] = 1.0
        in_turn = np.flatnonzero(turn > 0)
        obs[in_turn, enc.TURN + turn[in_turn] - 1] = 1.0
        obs[ar, enc.PHASE + phase] = 1.0
        obs[:, enc.FIRST_DRAW_MADE] = (phase == _DRAW) & (self._draws[games] > 0)
        obs[:, enc.DRAW_PILE_SIZE] = self._f_pile[self._ptr[games]]
        obs[:, enc.ROW_USED:enc.ROW_USED + rules.MAX_PLAYERS * NUM_ROWS] = pad[:, :, :NUM_ROWS].reshape(envs, -1)
        obs[:, enc.ROW_POINTS:enc.ROW_POINTS + rules.MAX_PLAYERS * NUM_ROWS] = pad[:, :, NUM_ROWS:2 * NUM_ROWS].reshape(envs, -1)
        obs[:, enc.TOTALS:enc.TOTALS + rules.MAX_PLAYERS] = pad[:, :, 2 * NUM_ROWS]
        values, bonus = self._hand_values(own_hand)
        obs[:, enc.OWN_ROW_VALUES:enc.OWN_ROW_VALUES + NUM_ROWS] = self._f_row[values]
        obs[:, enc.OWN_BONUS] = self._f_bonus[bonus]
        obs[:, enc.TO_ACT] = 1.0  # every observation is the actor's

        mask[:] = 0
        mask[:, :NUM_CARDS] = obs[:, :NUM_CARDS] * (phase == _DISCARD)[:, None]
        draw = phase == _DRAW
        mask[:, rules.DRAW_PILE_ACTION] = draw  # the draw pile never runs out (module docstring)
        mask[:, rules.DRAW_DISCARD_BASE:rules.DRAW_DISCARD_BASE + rules.MAX_PLAYERS] = (maps[:, :, 0] != 0) & draw[:, None]
        mask[:, rules.SCORE_BASE:] = (pad[:, 0, :NUM_ROWS] == 0) & (phase == _SCORE)[:, None]

    def _check_actions(self, actions: np.ndarray) -> np.ndarray:
        """Return ``actions`` as int64[envs] if each is legal in its game, else raise ``ValueError`` naming the first bad one."""
        a = actions_array(actions, self.num_envs)
        bad = (a < 0) | (a >= rules.NUM_ACTIONS)
        if not bad.any():
            bad = self._mask[self._ar, a] == 0
        if bad.any():
            self._raise_illegal(int(np.flatnonzero(bad)[0]), a)
        return a

    def _raise_illegal(self, i: int, a: np.ndarray) -> None:
        """Raise the ``ValueError`` naming game i's illegal action ``a[i]`` and its legal actions."""
        raise illegal_action_error(i, int(a[i]), int(self._cur[i]), self._mask[i])


def illegal_action_error(game: int, action: int, seat: int, mask: np.ndarray) -> ValueError:
    """Return the error the batched engine raises for an illegal ``action`` in ``game``: it names the action and the legal ones."""
    return _illegal(game, action, seat, mask, action_name)


__all__ = ["VectorGrinch", "DeckSource", "batched_decks", "illegal_action_error", "per_game_decks"]
