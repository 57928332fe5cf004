"""Observation and action-mask encoding of a Gnoming :class:`~grinch_env.gnoming.game.Game` from one seat (§6.3).

One shape for 3..7 players: seats are listed by *relative seat*
``r = (seat - observer) % n`` (``r = 0`` is the observer), and rows for
``r >= n`` are zero.  Nobody ever holds private information (§5), so every
seat's tensor is the same public state, rotated to that seat.

==========  =======  =========================================================
indices     size     meaning
==========  =======  =========================================================
0..818      7x9x13   layouts: index ``117 r + 13 p + c``, ``c`` the kind
                     one-hot (0..11) or ``c = 12`` face down
819..825    7        seat ``r`` is at the table
826..903    2x3x13   the top 3 cards of pile A, then pile B, top first: kind
                     one-hot, or channel 12 = no card
904..927    2x12     count of each kind in pile A, then pile B, / 14
928..939    12       never-seen count of each kind (face-down slots and a
                     draw pile never reshuffled) / 14
940..951    12       count of each kind in a reshuffled draw pile / 14
952..954    3        draw pile size / 110; reshuffled flag; Hazards removed / 3
955..967    13       held card kind one-hot (channel 12 = none)
968..972    5        held card source: draw pile, pile A, pile B, bounce, displaced
973..981    9        own slots filled this turn (zero unless the observer is the turn player)
982..985    4        phase: reveal, draw, play/bounce/discard, Hazard response
986..988    3        round one-hot
989         1        turns this round / (``max_turns_per_player`` * n)
990..996    7        relative seat of this round's first player
997..1003   7        relative seat of the player who went out (zero if nobody)
1004..1010  7        relative seat still has a final turn
1011..1017  7        relative seat of the Hazard discarder (during responses)
1018..1024  7        totals by relative seat / 100
1025..1045  3x7      round scores by round and relative seat / 50 (zero for rounds not played)
==========  =======  =========================================================

Totals and round scores may be negative, so those entries lie in
``[-1.59, 2.49]`` and ``[-1.06, 1.66]`` (:func:`observation_bounds`);
the turn counter may pass 1 during the final turns.  The action mask is
``int8[15]``, all zeros for a seat that is not to act.
"""

from __future__ import annotations

import struct
from operator import add
from typing import Any

import numpy as np

from grinch_env.gnoming.cards import DECK_SIZE, HAZARD, MAX_COPIES, NUM_KINDS
from grinch_env.gnoming.game import (
    BOUNCE,
    DISCARD,
    DONE,
    DRAW_PHASE,
    HAZARD_PHASE,
    HELD_SOURCES,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_ACTIONS,
    NUM_ROUNDS,
    NUM_SLOTS,
    PLAY,
    REVEAL,
    Game,
)

CHANNELS = 13  # 12 kinds + "face down" / "no card" / "none"
EMPTY = 12
SEAT_BLOCK = NUM_SLOTS * CHANNELS  # 117
CELL_BYTES = 4 * CHANNELS
LAYOUTS = 0
PRESENT = LAYOUTS + MAX_PLAYERS * SEAT_BLOCK  # 819
PILE_TOPS = PRESENT + MAX_PLAYERS  # 826
TOP_DEPTH = 3
PILE_COUNTS = PILE_TOPS + 2 * TOP_DEPTH * CHANNELS  # 904
NEVER_SEEN = PILE_COUNTS + 2 * NUM_KINDS  # 928
RESHUFFLED_COUNTS = NEVER_SEEN + NUM_KINDS  # 940
DRAW_SIZE = RESHUFFLED_COUNTS + NUM_KINDS  # 952
RESHUFFLED_FLAG = DRAW_SIZE + 1  # 953
REMOVED = DRAW_SIZE + 2  # 954
HELD = DRAW_SIZE + 3  # 955
HELD_SOURCE = HELD + CHANNELS  # 968
FILLED = HELD_SOURCE + len(HELD_SOURCES)  # 973
PHASE = FILLED + NUM_SLOTS  # 982
ROUND = PHASE + 4  # 986
TURNS = ROUND + NUM_ROUNDS  # 989
FIRST_PLAYER = TURNS + 1  # 990
WENT_OUT = FIRST_PLAYER + MAX_PLAYERS  # 997
FINAL_TURN = WENT_OUT + MAX_PLAYERS  # 1004
DISCARDER = FINAL_TURN + MAX_PLAYERS  # 1011
TOTALS = DISCARDER + MAX_PLAYERS  # 1018
ROUND_SCORES = TOTALS + MAX_PLAYERS  # 1025
OBS_SIZE = ROUND_SCORES + NUM_ROUNDS * MAX_PLAYERS  # 1046
assert OBS_SIZE == 1046

TOTAL_SCALE = 100.0
ROUND_SCALE = 50.0
NUM_REMOVABLE = 3  # Hazards
PHASE_INDEX = {REVEAL: 0, DRAW_PHASE: 1, PLAY: 2, BOUNCE: 2, DISCARD: 2, HAZARD_PHASE: 3}
SOURCE_INDEX = {s: i for i, s in enumerate(HELD_SOURCES)}
# Bounds of §4.5: a round score lies in [-53, 83], a total in [-159, 249].
ROUND_SCORE_BOUNDS = (-53, 83)
TOTAL_BOUNDS = (-159, 249)


def observation_bounds(num_players: int, max_turns_per_player: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(low, high)`` float32[1046] arrays that hold every observation of such a game."""
    low = np.zeros(OBS_SIZE, np.float32)
    high = np.ones(OBS_SIZE, np.float32)
    low[TOTALS:ROUND_SCORES] = np.float32(TOTAL_BOUNDS[0] / TOTAL_SCALE)
    high[TOTALS:ROUND_SCORES] = np.float32(TOTAL_BOUNDS[1] / TOTAL_SCALE)
    low[ROUND_SCORES:] = np.float32(ROUND_SCORE_BOUNDS[0] / ROUND_SCALE)
    high[ROUND_SCORES:] = np.float32(ROUND_SCORE_BOUNDS[1] / ROUND_SCALE)
    cap = max_turns_per_player * num_players
    high[TURNS] = np.float32((cap + num_players - 1) / cap)  # the final turns may pass the cap
    return low, high


def _check_seat(game: Game, seat: Any) -> int:
    n = game.num_players
    if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
        raise ValueError(f"seat must be in 0..{n - 1} for {n} players, got {seat!r}")
    return int(seat)


def encode(game: Game, seat: int) -> np.ndarray:
    """Return the float32[1046] observation of ``game`` from ``seat``'s point of view (§6.3)."""
    seat = _check_seat(game, seat)
    n = game.num_players
    obs = np.zeros(OBS_SIZE, np.float32)
    rel = [(seat + r) % n for r in range(n)]  # absolute seat at each relative seat
    for r, s in enumerate(rel):
        base = LAYOUTS + SEAT_BLOCK * r
        layout, up = game.layouts[s], game.face_up[s]
        for p in range(NUM_SLOTS):
            obs[base + CHANNELS * p + (layout[p] if up[p] else EMPTY)] = 1.0
        obs[PRESENT + r] = 1.0
    for i, pile in enumerate(game.piles):
        for d in range(TOP_DEPTH):
            c = pile[-1 - d] if d < len(pile) else EMPTY
            obs[PILE_TOPS + CHANNELS * (TOP_DEPTH * i + d) + c] = 1.0
        counts = np.bincount(np.asarray(pile, np.int64), minlength=NUM_KINDS) if pile else np.zeros(NUM_KINDS)
        obs[PILE_COUNTS + NUM_KINDS * i:PILE_COUNTS + NUM_KINDS * (i + 1)] = counts / MAX_COPIES
    obs[NEVER_SEEN:NEVER_SEEN + NUM_KINDS] = np.asarray(game.never_seen_counts()) / MAX_COPIES
    if game.reshuffled:
        if game.draw_pile:
            obs[RESHUFFLED_COUNTS:RESHUFFLED_COUNTS + NUM_KINDS] = np.bincount(np.asarray(game.draw_pile, np.int64), minlength=NUM_KINDS) / MAX_COPIES
        obs[RESHUFFLED_FLAG] = 1.0
    obs[DRAW_SIZE] = len(game.draw_pile) / DECK_SIZE
    obs[REMOVED] = len(game.removed) / NUM_REMOVABLE
    obs[HELD + (EMPTY if game.held is None else game.held)] = 1.0
    if game.held_source is not None:
        obs[HELD_SOURCE + SOURCE_INDEX[game.held_source]] = 1.0
    phase = game.phase
    if phase is not DONE:
        if game.turn_player == seat and phase is not REVEAL:
            obs[FILLED:FILLED + NUM_SLOTS] = game.filled
        obs[PHASE + PHASE_INDEX[phase]] = 1.0
    obs[ROUND + game.round] = 1.0
    obs[TURNS] = game.turns_this_round / game.turn_cap
    obs[FIRST_PLAYER + (game.round_first - seat) % n] = 1.0
    if game.went_out is not None:
        obs[WENT_OUT + (game.went_out - seat) % n] = 1.0
    for r, s in enumerate(rel):
        obs[FINAL_TURN + r] = game.final_turns[s]
        obs[TOTALS + r] = game.totals[s] / TOTAL_SCALE
        for i, scores in enumerate(game.round_scores):
            obs[ROUND_SCORES + MAX_PLAYERS * i + r] = scores[s] / ROUND_SCALE
    if phase is HAZARD_PHASE:
        obs[DISCARDER + (game.turn_player - seat) % n] = 1.0
    return obs


def action_mask(game: Game, seat: int) -> np.ndarray:
    """Return the int8[15] mask of ``seat``: 1 for each legal action if ``seat`` is to act, else all zeros."""
    seat = _check_seat(game, seat)
    return np.frombuffer(game.legal_mask() if game.current == seat else bytearray(NUM_ACTIONS), np.int8)


_F32 = struct.Struct("<f")
_PACK7 = struct.Struct("<7f").pack
_PACK8 = struct.Struct("<8f").pack


def _floats(values) -> bytes:
    """Return little-endian float32 bytes of ``values``."""
    return np.asarray(values, dtype="<f4").tobytes()


# One-hot pieces: a 13-channel card cell, by kind (0..11) or 12 (face down / no card / none).
_CELL = tuple(_floats(np.eye(CHANNELS)[c]) for c in range(CHANNELS))
_SOURCE = {None: bytes(4 * len(HELD_SOURCES))} | {src: _floats(np.eye(len(HELD_SOURCES))[i]) for i, src in enumerate(HELD_SOURCES)}
_HELD = {(k, src): _CELL[EMPTY if k is None else k] + _SOURCE[src] for k in [None, *range(NUM_KINDS)] for src in _SOURCE}
_SEAT_ONE_HOT = tuple(_floats(np.eye(MAX_PLAYERS)[r]) for r in range(MAX_PLAYERS)) + (bytes(4 * MAX_PLAYERS),)
_NO_SEAT = MAX_PLAYERS  # index of the all-zero seat piece
_ZERO_FILLED = bytes(4 * NUM_SLOTS)
_COUNT = tuple(_F32.pack(c / MAX_COPIES) for c in range(DECK_SIZE + 1))
_ONE, _ZERO = _F32.pack(1.0), _F32.pack(0.0)
_ZERO_KINDS = bytes(4 * NUM_KINDS)
# Byte offsets inside the encoder's middle section (observation indices 826..952).
_MID_TOPS = 0
_MID_COUNTS = 4 * (PILE_COUNTS - PILE_TOPS)
_MID_NEVER = 4 * (NEVER_SEEN - PILE_TOPS)
_MID_RESHUFFLED = 4 * (RESHUFFLED_COUNTS - PILE_TOPS)
_MID_SIZE = 4 * (DRAW_SIZE - PILE_TOPS)
_MASKS: dict[tuple[int, ...], np.ndarray] = {}  # legal actions -> mask (copied out)
_NO_MASK = np.zeros(NUM_ACTIONS, np.int8)
_FILLED: dict[tuple[bool, ...], bytes] = {}


class Encoder:
    """Encodes observations exactly like :func:`encode` and :func:`action_mask`, from cached byte pieces.

    The observation is one ``bytearray.join`` of little-endian float32 pieces
    (viewed by ``np.frombuffer``: a fresh, writable ``float32[1046]`` array
    per call).  Pieces are kept while their inputs are unchanged:

    * each absolute seat's 117-float layout block (a bytearray) and the
      face-down counts, updated cell by cell from :attr:`Game.slot_log`
      (rebuilt when the log is a new list);
    * indices 826..952 (pile tops and counts, never-seen and reshuffled
      counts, draw size) as one bytearray written in place: a pile's cells
      when it differs from the encoder's copy (a push or a pop changes one
      count), a never-seen count per changed slot, and the counts of the
      cards popped from the draw pile (read from the encoder's copy; the
      engine only pops it) or all of them when it is another list (a
      reshuffle, a new round);
    * tables for the held card, the phase/round/turn features, relative-seat
      one-hots, the filled slots, each score row and each mask.

    So a game is expected to change only through :meth:`Game.step` between
    calls (as in the environment); another game object resets the cache.
    The tests check it against :func:`encode` over whole games.
    """

    __slots__ = (
        "_game", "_n", "_pad", "_blocks", "_kinds", "_ups", "_log", "_logged", "_middle", "_piles",
        "_pile_counts", "_draw_ref", "_draw_copy", "_draw_len", "_draw_counts", "_reshuffled", "_never_down", "_flow", "_rel",
        "_scores", "_scores_key",
    )

    def __init__(self) -> None:
        self._game: Game | None = None

    def _reset(self, game: Game) -> None:
        self._game = game
        n = self._n = game.num_players
        self._pad = bytes(4 * SEAT_BLOCK * (MAX_PLAYERS - n)) + _floats([1.0] * n + [0.0] * (MAX_PLAYERS - n))  # and "present"
        self._blocks: list[bytearray] = [bytearray()] * (2 * n)  # doubled (the same objects), so a rotation is a slice
        self._kinds: list[list[int]] = []
        self._ups: list[list[bool]] = []
        self._log = None
        self._logged = 0
        # Indices 826..952 (pile tops, pile counts, never-seen, reshuffled counts, draw size) as one bytearray, written in place.
        self._middle = bytearray(4 * (DRAW_SIZE + 1 - PILE_TOPS))
        self._piles: list = [None, None]
        self._pile_counts = [[0] * NUM_KINDS, [0] * NUM_KINDS]
        self._draw_ref = None
        self._draw_copy: list[int] = []
        self._draw_len = 0
        self._draw_counts = [0] * NUM_KINDS
        self._reshuffled = False
        self._never_down = [0] * NUM_KINDS
        self._flow: dict = {}
        self._rel: dict = {}
        self._scores: dict = {}
        self._scores_key = None

    def _write_never(self, k: int) -> None:
        """Write the never-seen count of kind ``k`` (face-down cards, plus a draw pile never reshuffled)."""
        c = self._never_down[k] + (0 if self._reshuffled else self._draw_counts[k])
        at = _MID_NEVER + 4 * k
        self._middle[at:at + 4] = _COUNT[c]

    def _rebuild_seats(self, game: Game) -> None:
        """Build every seat's block and face-down counts afresh."""
        n = self._n
        cell, empty = _CELL, _CELL[EMPTY]
        never = [0] * NUM_KINDS
        self._kinds = [layout[:] for layout in game.layouts]
        self._ups = [up[:] for up in game.face_up]
        for s in range(n):
            layout, up = self._kinds[s], self._ups[s]
            self._blocks[s] = self._blocks[s + n] = bytearray().join([cell[k] if u else empty for k, u in zip(layout, up)])
            for k, u in zip(layout, up):
                if not u:
                    never[k] += 1
        self._never_down = never
        self._log = game.slot_log
        self._logged = len(game.slot_log)
        self._draw_ref = None  # the draw section is rewritten whole

    def _update_slots(self, game: Game) -> None:
        """Apply the slot changes logged since the last call."""
        log = self._log
        layouts, face_up, kinds, ups, blocks, never = game.layouts, game.face_up, self._kinds, self._ups, self._blocks, self._never_down
        for s, p in log[self._logged:]:
            k, u = layouts[s][p], face_up[s][p]
            if not ups[s][p]:
                old = kinds[s][p]
                never[old] -= 1
                self._write_never(old)
            if not u:
                never[k] += 1
                self._write_never(k)
            kinds[s][p] = k
            ups[s][p] = u
            blocks[s][CELL_BYTES * p:CELL_BYTES * (p + 1)] = _CELL[k if u else EMPTY]
        self._logged = len(log)

    def _update_pile(self, i: int, pile: list[int]) -> None:
        cell = _CELL
        size = len(pile)
        mid = self._middle
        at = _MID_TOPS + 3 * CELL_BYTES * i
        mid[at:at + 3 * CELL_BYTES] = b"".join([cell[pile[-1 - d]] if d < size else cell[EMPTY] for d in range(TOP_DEPTH)])
        old = self._piles[i]
        counts = self._pile_counts[i]
        base = _MID_COUNTS + 4 * NUM_KINDS * i
        # A step pushes or pops the top card; anything else (a reshuffle, a new round) is counted afresh.
        if old is not None and size == len(old) + 1 and pile[:-1] == old:
            k = pile[-1]
            counts[k] += 1
            mid[base + 4 * k:base + 4 * k + 4] = _COUNT[counts[k]]
        elif old is not None and size == len(old) - 1 and old[:-1] == pile:
            k = old[-1]
            counts[k] -= 1
            mid[base + 4 * k:base + 4 * k + 4] = _COUNT[counts[k]]
        else:
            raw = bytes(pile)
            counts = self._pile_counts[i] = [raw.count(k) for k in range(NUM_KINDS)]
            mid[base:base + 4 * NUM_KINDS] = b"".join(map(_COUNT.__getitem__, counts))
        self._piles[i] = pile[:]

    def _update_draw(self, game: Game) -> None:
        draw_pile = game.draw_pile
        size = len(draw_pile)
        counts = self._draw_counts
        mid = self._middle
        if draw_pile is self._draw_ref and size <= self._draw_len:
            at = _MID_RESHUFFLED if self._reshuffled else _MID_NEVER
            for k in self._draw_copy[size:self._draw_len]:  # the cards popped since
                counts[k] -= 1
                if self._reshuffled:
                    mid[at + 4 * k:at + 4 * k + 4] = _COUNT[counts[k]]
                else:
                    self._write_never(k)
        else:
            raw = bytes(draw_pile)
            counts = self._draw_counts = [raw.count(k) for k in range(NUM_KINDS)]
            self._draw_ref = draw_pile
            self._draw_copy = draw_pile[:]
            self._reshuffled = game.reshuffled
            count = _COUNT.__getitem__
            if self._reshuffled:
                mid[_MID_NEVER:_MID_SIZE] = b"".join(map(count, self._never_down)) + b"".join(map(count, counts))
            else:
                mid[_MID_NEVER:_MID_SIZE] = b"".join(map(count, map(add, self._never_down, counts))) + _ZERO_KINDS
        self._draw_len = size
        mid[_MID_SIZE:_MID_SIZE + 4] = _F32.pack(size / DECK_SIZE)

    def observe(self, game: Game, seat: int) -> dict[str, np.ndarray]:
        """Return ``{"observation": float32[1046], "action_mask": int8[15]}`` of ``game`` from ``seat``."""
        if game is not self._game:
            self._reset(game)
        n = self._n
        if seat.__class__ is not int or not 0 <= seat < n:
            seat = _check_seat(game, seat)
        log = game.slot_log
        if log is not self._log:
            self._rebuild_seats(game)
        elif len(log) != self._logged:
            self._update_slots(game)
        pa, pb = game.piles
        if self._piles[0] != pa:
            self._update_pile(0, pa)
        if self._piles[1] != pb:
            self._update_pile(1, pb)
        if game.draw_pile is not self._draw_ref or len(game.draw_pile) != self._draw_len:
            self._update_draw(game)
        phase = game.phase
        flow_key = (phase._value_, game.round, game.turns_this_round, game.reshuffled, len(game.removed))
        flow = self._flow.get(flow_key)
        if flow is None:
            values = [0.0] * 8
            if phase is not DONE:
                values[PHASE_INDEX[phase]] = 1.0
            values[4 + game.round] = 1.0
            values[7] = game.turns_this_round / game.turn_cap
            flow = self._flow[flow_key] = (
                (_ONE if game.reshuffled else _ZERO) + _F32.pack(len(game.removed) / NUM_REMOVABLE),
                _PACK8(*values),
            )
        tp = game.turn_player
        if tp == seat and phase is not REVEAL and phase is not DONE and True in game.filled:
            key = tuple(game.filled)
            filled = _FILLED.get(key)
            if filled is None:
                filled = _FILLED[key] = _floats(key)  # once per pattern
        else:
            filled = _ZERO_FILLED
        went_out = game.went_out
        discarder = tp if phase is HAZARD_PHASE else -1
        # Final turns go in seat order from the left of who went out, so their count says which are left.
        rel_key = (seat, game.round_first, went_out, discarder, game.final_turns.count(True))
        rel = self._rel.get(rel_key)
        if rel is None:
            final = game.final_turns
            finals = [float(final[(seat + r) % n]) for r in range(n)] + [0.0] * (MAX_PLAYERS - n)
            rel = self._rel[rel_key] = (
                _SEAT_ONE_HOT[(game.round_first - seat) % n]
                + _SEAT_ONE_HOT[_NO_SEAT if went_out is None else (went_out - seat) % n]
                + _PACK7(*finals)
                + _SEAT_ONE_HOT[_NO_SEAT if discarder < 0 else (discarder - seat) % n]
            )
        if len(game.round_scores) != self._scores_key:
            self._scores = {}
            self._scores_key = len(game.round_scores)
        scores = self._scores.get(seat)
        if scores is None:
            pad = [0.0] * (MAX_PLAYERS - n)
            values = [game.totals[(seat + r) % n] / TOTAL_SCALE for r in range(n)] + pad
            for i in range(NUM_ROUNDS):
                if i < len(game.round_scores):
                    values += [game.round_scores[i][(seat + r) % n] / ROUND_SCALE for r in range(n)] + pad
                else:
                    values += [0.0] * MAX_PLAYERS
            scores = self._scores[seat] = _floats(values)
        obs = np.frombuffer(
            bytearray().join(
                [
                    *self._blocks[seat:seat + n], self._pad, self._middle, flow[0], _HELD[game.held, game.held_source],
                    filled, flow[1], rel, scores,
                ]
            ),
            np.float32,
        )
        if game.current == seat:
            key = tuple(game.legal_actions())
            mask = _MASKS.get(key)
            if mask is None:
                mask = _MASKS[key] = np.zeros(NUM_ACTIONS, np.int8)
                mask[list(key)] = 1
            return {"observation": obs, "action_mask": mask.copy()}
        return {"observation": obs, "action_mask": _NO_MASK.copy()}


# ------------------------------------------------------------ decoding
def _one_hot_index(block: np.ndarray, what: str) -> int | None:
    hot = np.flatnonzero(block)
    if len(hot) > 1:
        raise ValueError(f"not an observation: {what} has {len(hot)} hot entries")
    return int(hot[0]) if len(hot) else None


def _count(x: float, scale: float) -> int:
    return int(round(float(x) * scale))


def decode_game(observation: np.ndarray, rng: np.random.Generator | int | None = None, **options: Any) -> Game:
    """Return a :class:`Game` consistent with one seat's observation alone, the observer at seat 0.

    Other seats keep their relative order.  The public state is copied; the
    hidden cards are dealt from ``rng``: the never-seen multiset uniformly
    over every face-down slot and (if never reshuffled) the draw pile, a
    reshuffled pile's known multiset in random order, and each discard pile
    as its known top 3 (in order) over the rest of its counts in random order
    (that order is not in the observation).  ``encode(game, 0)`` equals the
    observation.  The player to act is the observer whenever the observation
    allows it (a search agent decodes its own decision); otherwise the rules'
    next actor.  ``options`` are the game's rule options; ``num_players``
    is refused and ``first_player`` ignored, since the observation gives both
    (relative to the observer).
    """
    obs = np.asarray(observation, dtype=np.float32)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"observation must have shape ({OBS_SIZE},), got {obs.shape}")
    if "num_players" in options:
        raise ValueError("num_players comes from the observation; do not pass it to decode_game")
    n = int(obs[PRESENT:PRESENT + MAX_PLAYERS].sum())
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ValueError(f"not an observation: {n} seats present")
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    options = dict(options)
    options.pop("first_player", None)  # the observation says who starts, relative to the observer
    round_index = _one_hot_index(obs[ROUND:ROUND + NUM_ROUNDS], "the round")
    first_rel = _one_hot_index(obs[FIRST_PLAYER:FIRST_PLAYER + n], "the first player")
    rotation = options.get("start_rotation", "rotate")
    first_player = (first_rel - round_index) % n if rotation == "rotate" else first_rel
    g = Game(n, rng=rng, first_player=first_player, _start=False, **options)
    g.round = round_index
    g.round_first = first_rel
    # Public facts.
    g.face_up = []
    layouts: list[list[int | None]] = []
    for r in range(n):
        block = obs[SEAT_BLOCK * r:SEAT_BLOCK * (r + 1)].reshape(NUM_SLOTS, CHANNELS)
        kinds = [int(np.argmax(block[p])) for p in range(NUM_SLOTS)]
        layouts.append([None if k == EMPTY else k for k in kinds])
        g.face_up.append([k != EMPTY for k in kinds])
    pile_counts = [[_count(x, MAX_COPIES) for x in obs[PILE_COUNTS + NUM_KINDS * i:PILE_COUNTS + NUM_KINDS * (i + 1)]] for i in range(2)]
    never_seen = [_count(x, MAX_COPIES) for x in obs[NEVER_SEEN:NEVER_SEEN + NUM_KINDS]]
    reshuffled_counts = [_count(x, MAX_COPIES) for x in obs[RESHUFFLED_COUNTS:RESHUFFLED_COUNTS + NUM_KINDS]]
    draw_size = _count(obs[DRAW_SIZE], DECK_SIZE)
    g.reshuffled = bool(obs[RESHUFFLED_FLAG])
    g.reshuffles = int(g.reshuffled)  # how many is not observed; bookkeeping only
    g.slot_log = []
    g.removed = [HAZARD] * _count(obs[REMOVED], NUM_REMOVABLE)
    held = _one_hot_index(obs[HELD:HELD + CHANNELS], "the held card")
    g.held = None if held == EMPTY else held
    source = _one_hot_index(obs[HELD_SOURCE:HELD_SOURCE + len(HELD_SOURCES)], "the held card's source")
    g.held_source = None if source is None else HELD_SOURCES[source]
    g.filled = [bool(x) for x in obs[FILLED:FILLED + NUM_SLOTS]]
    phase_index = _one_hot_index(obs[PHASE:PHASE + 4], "the phase")
    g.turns_this_round = _count(obs[TURNS], g.turn_cap)
    went_out = _one_hot_index(obs[WENT_OUT:WENT_OUT + n], "who went out")
    g.went_out = went_out
    g.final_turns = [bool(x) for x in obs[FINAL_TURN:FINAL_TURN + n]]
    g.totals = [_count(x, TOTAL_SCALE) for x in obs[TOTALS:TOTALS + n]]
    g.round_scores = [
        [_count(x, ROUND_SCALE) for x in obs[ROUND_SCORES + MAX_PLAYERS * i:ROUND_SCORES + MAX_PLAYERS * i + n]]
        for i in range(round_index + (phase_index is None))
    ]
    g.round_capped = [False] * len(g.round_scores)  # not observed; bookkeeping only
    g.round_went_out = [None] * len(g.round_scores)
    # Discard piles: the known top 3 over the rest of the counts, in random order.
    g.piles = []
    for i in range(2):
        tops = []
        for d in range(TOP_DEPTH):
            c = _one_hot_index(obs[PILE_TOPS + CHANNELS * (TOP_DEPTH * i + d):PILE_TOPS + CHANNELS * (TOP_DEPTH * i + d + 1)], "a pile top")
            if c is None or c == EMPTY:
                break
            tops.append(c)
        rest = list(pile_counts[i])
        for c in tops:
            rest[c] -= 1
        below = [k for k in range(NUM_KINDS) for _ in range(rest[k])]
        below = [below[j] for j in rng.permutation(len(below))]
        g.piles.append(below + tops[::-1])
    # Hidden cards.
    pool = [k for k in range(NUM_KINDS) for _ in range(never_seen[k])]
    pool = [pool[j] for j in rng.permutation(len(pool))]
    at = 0
    g.layouts = []
    for r in range(n):
        layout = []
        for k in layouts[r]:
            if k is None:
                k = pool[at]
                at += 1
            layout.append(k)
        g.layouts.append(layout)
    if g.reshuffled:
        known = [k for k in range(NUM_KINDS) for _ in range(reshuffled_counts[k])]
        g.draw_pile = [known[j] for j in rng.permutation(len(known))]
    else:
        g.draw_pile = pool[at:]
    if len(g.draw_pile) != draw_size:
        raise ValueError(f"not a consistent observation: the draw pile holds {draw_size} cards, the counts give {len(g.draw_pile)}")
    # Who acts.
    g.responders = []
    if phase_index is None:
        g.phase = DONE
        g.current = None
        g.turn_player = first_rel
        g.round_scores = g.round_scores[:NUM_ROUNDS]
        g.round_capped = g.round_capped[:NUM_ROUNDS]
        g.round_went_out = g.round_went_out[:NUM_ROUNDS]
    elif phase_index == 0:
        g.phase = REVEAL
        g.reveal_picks = sum(map(sum, g.face_up))
        g.current = (first_rel + g.reveal_picks // 2) % n
        g.turn_player = first_rel
    else:
        g.reveal_picks = 2 * n
        g.turn_player = tp = (first_rel + g.turns_this_round) % n
        if phase_index == 1:
            g.phase = DRAW_PHASE
        elif phase_index == 2:
            g.phase = {"bounce": BOUNCE, "displaced": DISCARD}.get(g.held_source, PLAY)
        else:
            g.phase = HAZARD_PHASE
            tp = _one_hot_index(obs[DISCARDER:DISCARDER + n], "the Hazard discarder")
            g.turn_player = tp
            eligible = [(tp + i) % n for i in range(1, n) if g.face_down_count((tp + i) % n) >= 2]
            # The observer is the responder when it may respond (a search agent decodes its own turn).
            start = eligible.index(0) if 0 in eligible else 0
            g.responders = eligible[start:]
        g.current = g.responders[0] if g.phase is HAZARD_PHASE else tp
    return g


__all__ = ["OBS_SIZE", "Encoder", "action_mask", "decode_game", "encode", "observation_bounds"]
