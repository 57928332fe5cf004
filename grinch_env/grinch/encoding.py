"""Observation and action-mask encoding of a :class:`~grinch_env.grinch.game.Game` from one seat.

One fixed shape for 2..6 players: seats are listed by *relative seat*
``j = (seat - observer) % n`` (``j = 0`` is the observer, ``j = 1`` the player
to its left, ...), and seats ``j >= n`` are zero padding.  Everything in it is
information the observer may know under perfect recall (RULES.md,
"Information"); nothing else is read from the game.

======================  =======  ==================================================
indices                 size     meaning
======================  =======  ==================================================
0..47                   48       own hand (1 per card id held)
48 + 192 j + 0..47      48 x 6   discard pile of relative seat j: contents
48 + 192 j + 48..95     48 x 6   ... its top card (one-hot)
48 + 192 j + 96..143    48 x 6   ... the card under the top (one-hot)
48 + 192 j + 144..191   48 x 6   cards publicly known to be in seat j's hand
                                 (taken by the Grinch from a discard pile)
1200..1205              6        seat j is at the table
1206..1211              6        the Grinch is relative seat j (1206: I am the Grinch)
1212..1217              6        hand size of seat j / 6
1218..1223              6        round index one-hot (0-based)
1224..1229              6        rounds left after this one, one-hot (0..5)
1230..1232              3        turn 1/2/3 one-hot (all 0 while scoring)
1233..1235              3        phase one-hot: discard, draw, score (all 0 when done)
1236                    1        the Grinch has made its first draw this turn
1237                    1        draw-pile size / 48
1238 + 7 j + k          42       row k of seat j's score pad is used
1280 + 7 j + k          42       points written in that row / points_scale
1322..1327              6        total of seat j / total_scale
1328..1334              7        own hand's value in each row / 30 (bonus excluded)
1335                    1        own hand's bonus / bonus_scale
1336                    1        it is the observer's turn to act
======================  =======  ==================================================

``bonus_scale`` is the largest bonus a 5-card hand could carry under the
layout, ``points_scale = 30 + bonus_scale`` and ``total_scale = 6 *
points_scale``, so every entry lies in ``[0, 1]``.  The action mask is
``int8[62]``; it is all zeros for a player who is not to act.
"""

from __future__ import annotations

import struct

import numpy as np

from grinch_env.grinch.cards import CARDS_PER_SUIT, NUM_CARDS, NUM_RANKS, NUM_SUITS
from grinch_env.grinch.game import (
    DRAW_PILE_ACTION,
    MAX_PLAYERS,
    MAX_ROUNDS,
    MIN_PLAYERS,
    NUM_ACTIONS,
    PHASE_DISCARD,
    PHASE_DRAW,
    PHASE_SCORE,
    Game,
)
from grinch_env.grinch.scoring import MATCH_ROW, MAX_ROW_VALUE, NUM_ROWS, RUN_ROW, bonus_points, max_bonus, row_scores

HAND = 0
SEAT_BLOCK = 48
SEAT_STRIDE = 4 * NUM_CARDS  # 192
PILE_CONTENTS, PILE_TOP, PILE_SECOND, KNOWN_IN_HAND = 0, 48, 96, 144
AT_TABLE = SEAT_BLOCK + MAX_PLAYERS * SEAT_STRIDE  # 1200
GRINCH_SEAT = AT_TABLE + MAX_PLAYERS  # 1206
HAND_SIZE = GRINCH_SEAT + MAX_PLAYERS  # 1212
ROUND = HAND_SIZE + MAX_PLAYERS  # 1218
ROUNDS_LEFT = ROUND + MAX_ROUNDS  # 1224
TURN = ROUNDS_LEFT + MAX_ROUNDS  # 1230
PHASE = TURN + 3  # 1233
FIRST_DRAW_MADE = PHASE + 3  # 1236
DRAW_PILE_SIZE = FIRST_DRAW_MADE + 1  # 1237
ROW_USED = DRAW_PILE_SIZE + 1  # 1238
ROW_POINTS = ROW_USED + MAX_PLAYERS * NUM_ROWS  # 1280
TOTALS = ROW_POINTS + MAX_PLAYERS * NUM_ROWS  # 1322
OWN_ROW_VALUES = TOTALS + MAX_PLAYERS  # 1328
OWN_BONUS = OWN_ROW_VALUES + NUM_ROWS  # 1335
TO_ACT = OWN_BONUS + 1  # 1336
OBS_SIZE = TO_ACT + 1  # 1337

_PHASE_INDEX = {p: p.code for p in (PHASE_DISCARD, PHASE_DRAW, PHASE_SCORE)}  # the Phase enum's codes
MAX_HAND = 6


class Scales:
    """Normalisers for point-valued features, derived from the bonus layout."""

    __slots__ = ("bonus", "points", "total")

    def __init__(self, layout: tuple) -> None:
        self.bonus = float(max(1, max_bonus(layout)))
        self.points = MAX_ROW_VALUE + self.bonus
        self.total = MAX_ROUNDS * self.points


# Scales of the layouts seen so far, keyed by the layout tuple's identity (the
# tuple is kept alive in the value, so an id is never reused while cached).
_SCALES_BY_LAYOUT: dict[int, tuple[tuple, Scales]] = {}

# Precomputed flat indices per relative seat j, so the hot loop only adds a card id.
_PILE = tuple(SEAT_BLOCK + j * SEAT_STRIDE + PILE_CONTENTS for j in range(MAX_PLAYERS))
_TOP = tuple(SEAT_BLOCK + j * SEAT_STRIDE + PILE_TOP for j in range(MAX_PLAYERS))
_SECOND = tuple(SEAT_BLOCK + j * SEAT_STRIDE + PILE_SECOND for j in range(MAX_PLAYERS))
_KNOWN = tuple(SEAT_BLOCK + j * SEAT_STRIDE + KNOWN_IN_HAND for j in range(MAX_PLAYERS))
_ROW_USED = tuple(tuple(ROW_USED + NUM_ROWS * j + k for k in range(NUM_ROWS)) for j in range(MAX_PLAYERS))
_ROW_POINTS = tuple(tuple(ROW_POINTS + NUM_ROWS * j + k for k in range(NUM_ROWS)) for j in range(MAX_PLAYERS))
_OWN_ROWS = list(range(OWN_ROW_VALUES, OWN_ROW_VALUES + NUM_ROWS)) + [OWN_BONUS]
# _ROTATIONS[n][seat][j]: the absolute seat at relative seat j.
_ROTATIONS = {n: tuple(tuple((seat + j) % n for j in range(n)) for seat in range(n)) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)}
_AT_TABLE_INDEX = {n: [AT_TABLE + j for j in range(n)] for n in _ROTATIONS}
# Where _write_fast_features writes its values: draw-pile size, hand sizes, own row values and bonus.
_FAST_VALUE_INDEX = {n: np.array([DRAW_PILE_SIZE] + [HAND_SIZE + j for j in range(n)] + _OWN_ROWS, dtype=np.intp) for n in _ROTATIONS}


def scales_for(layout: tuple) -> Scales:
    """Return the (cached) :class:`Scales` of a resolved bonus layout."""
    entry = _SCALES_BY_LAYOUT.get(id(layout))
    if entry is None or entry[0] is not layout:
        entry = _SCALES_BY_LAYOUT[id(layout)] = (layout, Scales(layout))
    return entry[1]


def encode(game: Game, seat: int, scales: Scales | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """Return the ``float32[OBS_SIZE]`` observation of ``game`` from ``seat``."""
    if scales is None:
        scales = scales_for(game.layout)
    if out is None:
        obs = np.zeros(OBS_SIZE, dtype=np.float32)
    else:
        obs = out
        obs.fill(0.0)
    _write_slow_features(game, seat, scales, obs)
    _write_fast_features(game, seat, scales, obs)
    return obs


class Encoder:
    """Encodes one game's observations like :func:`encode`, from cached byte pieces.

    The observation is assembled with one ``bytearray.join`` of little-endian
    float32 pieces (viewed by ``np.ndarray(shape, dtype, buffer)``: a fresh, writable
    ``float32[1337]`` array per call), each kept where it changes:

    * every absolute seat's 192-float pile/known block, rebuilt only for the
      seats that :attr:`Game.pile_log` names since the last call (all of them
      when the log is a new list); the observer's relative order is a slice
      of the doubled list of blocks;
    * every seat's score-pad pieces, rebuilt when its pad changed, and joined
      once per observer and score;
    * the seat-table, Grinch and round one-hots (global table per players,
      round, Grinch and rounds);
    * hand sizes, turn/phase/draw-pile features and "observer to act" (one
      global table);
    * the own hand: its one-hot, suit row values and packed counts from four
      per-suit tables (4096 entries each), then Match/Run by rank counts and
      the bonus by suit counts and bonus cards held (small tables).

    Piles and known cards are trusted to change only as ``game.pile_log``
    says, score pads rebuilt for the seats that scored since (the first
    ``game.pos`` of ``game.order`` while scoring) and compared at a new round;
    the round features are keyed by ``game.round``.  So a game is expected to change
    only through :meth:`Game.step` (as in the environment); another game
    object resets the cache.
    """

    __slots__ = (
        "_game", "_n", "_scales", "_bonus", "_bonus_values", "_bonus_mask", "_pad_blocks", "_pad_rows", "_pad_totals",
        "_log", "_logged", "_blocks2", "_pile_bits", "_last_seat",
        "_round", "_round_pieces", "_round_id",
        "_sheets", "_totals", "_scored", "_used2", "_points2", "_totals2", "_seat_scores",
    )

    def __init__(self) -> None:
        self._game: Game | None = None

    def _reset(self, game: Game) -> None:
        self._game = game
        n = self._n = game.num_players
        self._scales = scales = scales_for(game.layout)
        bonus = _bonus_table(game.layout, scales)
        self._bonus = bonus
        self._bonus_values = bonus.values
        self._bonus_mask = bonus.mask
        self._pad_blocks = bytes(_BLOCK_BYTES * (MAX_PLAYERS - n))
        self._pad_rows = bytes(4 * NUM_ROWS * (MAX_PLAYERS - n))
        self._pad_totals = bytes(4 * (MAX_PLAYERS - n))
        self._log = None
        self._logged = 0
        self._blocks2 = [b""] * (2 * n)
        self._pile_bits = [0] * n  # each seat's discard pile as a 48-bit card set
        self._last_seat = None
        self._round = None
        self._sheets = [None] * n
        self._totals = None
        self._scored = 0
        self._used2 = [b""] * (2 * n)
        self._points2 = [b""] * (2 * n)
        self._totals2 = [b""] * (2 * n)

    def _update_blocks(self, game: Game) -> None:
        """Rebuild the 192-float block of every seat that ``game.pile_log`` names since the last call.

        A new log list (new round, draw-pile refill, another game) rebuilds every seat.
        """
        log = game.pile_log
        piles = game.piles
        known = game.known
        pile_bits = self._pile_bits
        if log is self._log:
            n = self._n
            blocks2 = self._blocks2
            for p in log[self._logged:]:
                bits = pile_bits[p] = _card_bits(piles[p])
                blocks2[p] = blocks2[p + n] = _seat_block(piles[p], known[p], bits)
        else:
            self._log = log
            pile_bits[:] = map(_card_bits, piles)
            blocks = list(map(_seat_block, piles, known, pile_bits))
            self._blocks2 = blocks + blocks
        self._logged = len(log)

    def _update_round(self, game: Game) -> None:
        """Fetch (or build) the seat-table, Grinch and round one-hots of every seat."""
        self._round = game.round
        key = (self._n, game.round, game.grinch, game.num_rounds)
        pieces = _ROUND_PIECES.get(key)
        if pieces is None:
            pieces = _ROUND_PIECES[key] = _round_pieces(game)
        self._round_pieces = pieces
        self._round_id = id(pieces)  # stands for ``key`` in _SIZES_TURN's keys: _ROUND_PIECES keeps ``pieces`` alive

    def _update_scores(self, game: Game, hint: int | None) -> None:
        """Rebuild the score-pad entries (rows used, points, total) of every seat whose pad or total changed.

        Seat ``hint`` (the last observer: while scoring, the player who scored since) is looked at first.
        """
        sheets = game.score_sheet
        totals = game.totals
        snap = self._sheets
        old_totals = self._totals
        if hint is not None and old_totals is not None:
            if sheets[hint] != snap[hint] or totals[hint] != old_totals[hint]:
                self._set_pad(hint, sheets[hint], totals[hint])
                old_totals[hint] = totals[hint]
                if sheets == snap and totals == old_totals:
                    self._seat_scores = [None] * self._n
                    return
        for p in range(self._n):
            if sheets[p] != snap[p] or old_totals is None or totals[p] != old_totals[p]:
                self._set_pad(p, sheets[p], totals[p])
        self._totals = totals[:]
        self._seat_scores = [None] * self._n

    def _set_pad(self, p: int, sheet: list, total: int) -> None:
        """Keep seat ``p``'s pad and total and their feature bytes (in both halves of the doubled lists)."""
        n = self._n
        self._sheets[p] = sheet[:]
        if total == 0 and sheet == _EMPTY_SHEET:
            used = points = _EMPTY_ROWS
            total_bytes = _ZERO
        else:
            points_scale = self._scales.points
            used = _PACK_7F(*[0.0 if v is None else 1.0 for v in sheet])
            points = _PACK_7F(*[0.0 if v is None else v / points_scale for v in sheet])
            total_bytes = _PACK_1F(total / self._scales.total)
        self._used2[p] = self._used2[p + n] = used
        self._points2[p] = self._points2[p + n] = points
        self._totals2[p] = self._totals2[p + n] = total_bytes

    def _scores_seen_from(self, seat: int) -> bytes:
        """Return (and keep until the next score) the score-pad features as ``seat`` sees them."""
        end = seat + self._n
        data = self._seat_scores[seat] = b"".join((
            *self._used2[seat:end], self._pad_rows, *self._points2[seat:end], self._pad_rows, *self._totals2[seat:end], self._pad_totals,
        ))
        return data

    def __call__(self, game: Game, seat: int) -> np.ndarray:
        """Return the observation of ``game`` from ``seat`` (equal to ``encode(game, seat)``)."""
        return self.observe(game, seat)["observation"]

    def observe(self, game: Game, seat: int) -> dict[str, np.ndarray]:
        """Return ``{"observation": encode(game, seat), "action_mask": action_mask(game, seat)}`` (fresh arrays)."""
        if game is not self._game:
            self._reset(game)
            self._update_blocks(game)
        else:
            log = game.pile_log
            if log is not self._log:
                self._update_blocks(game)
            elif len(log) == self._logged + 1:
                # One new entry: exactly one discard since the last call (a draw from a pile logs two
                # seats, a refill or a new round a new list), so seat p's pile only gained its top card.
                p = log[-1]
                pile = game.piles[p]
                bits = self._pile_bits[p] = self._pile_bits[p] | _CARD_BIT[pile[-1]]
                self._blocks2[p] = self._blocks2[p + self._n] = _seat_block(pile, game.known[p], bits)
                self._logged += 1
            elif len(log) != self._logged:
                self._update_blocks(game)
        # Pads change only while scoring (in a round's score phase, the first game.pos seats of
        # game.order have scored), or by a score that ended the round (or the game).
        phase = game.phase
        if game.round != self._round:
            self._update_round(game)
            if game.score_sheet != self._sheets:
                self._update_scores(game, self._last_seat)
            self._scored = game.pos if phase == PHASE_SCORE else 0
        elif phase == PHASE_SCORE and game.pos != self._scored:
            sheets = game.score_sheet
            totals = game.totals
            for p in game.order[self._scored:game.pos]:
                self._set_pad(p, sheets[p], totals[p])
                self._totals[p] = totals[p]
            self._scored = game.pos
            self._seat_scores = [None] * self._n
        self._last_seat = seat
        hands = game.hands
        hand = hands[seat]
        # The hand as a 48-bit set, then per suit (12 bits) a table entry: the suit's one-hot
        # block, suit row value, packed counts (rank counts, Rainbow sum, suit counts), mask bytes.
        held = 0
        for c in hand:  # a plain loop: cheaper than sum(map(tuple.__getitem__, ...)) for a few cards
            held |= _CARD_BIT[c]
        w = _SUIT0[held & 4095]
        x = _SUIT1[held >> 12 & 4095]
        y = _SUIT2[held >> 24 & 4095]
        z = _SUIT3[held >> 36]
        packed = w[2] + x[2] + y[2] + z[2]
        # The table look-ups miss only for a hand or a state not seen before (subscription is
        # cheaper than dict.get on a hit).
        try:
            match_run = _MATCH_RUN[packed & _RANKS_MASK]
        except KeyError:
            match_run = _match_run(packed & _RANKS_MASK)
        bonus_key = held & self._bonus_mask | packed & _SUIT_COUNTS_MASK
        try:
            bonus = self._bonus_values[bonus_key]
        except KeyError:
            bonus = self._bonus.miss(hand, bonus_key)
        current = game.current
        key = (*map(len, hands), seat, current, game.turn, phase, game.draws_made, len(game.draw_pile), self._round_id)
        try:
            middle, to_act = _SIZES_TURN[key]
        except KeyError:
            middle, to_act = _sizes_turn(game, seat, key, self._round_pieces)
        end = seat + self._n
        observation = _NDARRAY(_OBS_SHAPE, _FLOAT32, bytearray().join((
            w[0], x[0], y[0], z[0],
            *self._blocks2[seat:end],
            self._pad_blocks,
            middle,
            self._seat_scores[seat] or self._scores_seen_from(seat),
            w[1], x[1], y[1], z[1], _RAINBOW[packed >> 24 & 255], match_run, bonus,
            to_act,
        )))
        # action_mask(game, seat): the rules' legal actions (Game.legal_mask), zeros for a seat not to act.
        mask = _NDARRAY(_MASK_SHAPE, _INT8, game.legal_mask() if current == seat else bytearray(NUM_ACTIONS))
        return {"observation": observation, "action_mask": mask}


# ----------------------------------------------------------- Encoder's pieces
# A feature block as a little-endian int: float32 1.0 (0x3F800000) in the 4 bytes of each set entry.
_ONE_BITS = 0x3F800000
_FLOAT32 = np.dtype(np.float32)
# np.ndarray(shape, dtype, buffer) is np.frombuffer's array (writable over a bytearray, sharing it) for less call overhead.
_NDARRAY = np.ndarray
_OBS_SHAPE = (OBS_SIZE,)
_MASK_SHAPE = (NUM_ACTIONS,)
_ONE = struct.pack("<f", 1.0)
_ZERO = bytes(4)
_HAND_BYTES = 4 * NUM_CARDS
_BLOCK_BYTES = 4 * SEAT_STRIDE
# One-hot of card c over the 48 cards, and 48 zeros.
_ONE_BIT = tuple(_ONE_BITS << (32 * c) for c in range(NUM_CARDS))
_ONE_HOT = tuple(bits.to_bytes(_HAND_BYTES, "little") for bits in _ONE_BIT)
_EMPTY_48 = bytes(_HAND_BYTES)
_EMPTY_SHEET = [None] * NUM_ROWS
_EMPTY_ROWS = bytes(4 * NUM_ROWS)
_EMPTY_BLOCK = bytes(_BLOCK_BYTES)
_EMPTY_144 = bytes(3 * _HAND_BYTES)
_PACK_1F = struct.Struct("<f").pack
_PACK_2F = struct.Struct("<2f").pack
_PACK_6F = struct.Struct("<6f").pack
_PACK_7F = struct.Struct("<7f").pack
_PACK_8F = struct.Struct("<8f").pack
_PACK_12F = struct.Struct("<12f").pack
_CACHE_LIMIT = 1 << 16

# (players, round, Grinch, rounds) -> (per seat: seat table and Grinch one-hots, round one-hots).
_ROUND_PIECES: dict[tuple, tuple[list[bytes], bytes]] = {}


def _round_pieces(game: Game) -> tuple[list[bytes], bytes]:
    n = game.num_players
    rnd = min(game.round, game.num_rounds - 1)
    at_table = [1.0] * n + [0.0] * (MAX_PLAYERS - n)
    pieces = []
    for seat in range(n):
        grinch = [0.0] * MAX_PLAYERS
        grinch[(game.grinch - seat) % n] = 1.0
        pieces.append(_PACK_12F(*at_table, *grinch))
    rounds = [0.0] * (2 * MAX_ROUNDS)
    rounds[rnd] = 1.0
    rounds[MAX_ROUNDS + game.num_rounds - 1 - rnd] = 1.0
    return pieces, _PACK_12F(*rounds)


def _card_bits(cards: list[int]) -> int:
    """Return ``cards`` as a 48-bit set (bit ``c`` for card ``c``)."""
    bits = 0
    for c in cards:  # a plain loop: cheaper than sum(map(tuple.__getitem__, ...)) for a few cards
        bits |= _CARD_BIT[c]
    return bits


def _seat_block(pile: list[int], known: list[int], pile_bits: int) -> bytes:
    """Return a seat's 192-float block: pile contents (``pile_bits``, the pile as a card set), top, card under the top, cards known in hand."""
    # One-hot bytes per suit from the suit tables: cheaper than adding up 1536-bit one-hot ints.
    if pile:
        b = pile_bits
        second = _ONE_HOT[pile[-2]] if len(pile) > 1 else _EMPTY_48
        head = (_SUIT0_HOT[b & 4095], _SUIT1_HOT[b >> 12 & 4095], _SUIT2_HOT[b >> 24 & 4095], _SUIT3_HOT[b >> 36], _ONE_HOT[pile[-1]], second)
        if not known:
            return b"".join((*head, _EMPTY_48))
    elif not known:
        return _EMPTY_BLOCK
    else:
        head = (_EMPTY_144,)
    b = _card_bits(known)
    return b"".join((*head, _SUIT0_HOT[b & 4095], _SUIT1_HOT[b >> 12 & 4095], _SUIT2_HOT[b >> 24 & 4095], _SUIT3_HOT[b >> 36]))


# (hand sizes by absolute seat, observer, player to act, turn, phase, draws made, draw-pile size,
# id of the round's _ROUND_PIECES entry), as one flat tuple -> (the features from the seat table to the draw-pile size as seen
# by the observer: seat table and Grinch one-hots, hand sizes, round one-hots, turn/phase/first-draw/draw-pile;
# the "observer to act" feature).
_SIZES_TURN: dict[tuple, tuple[bytes, bytes]] = {}


def _sizes_turn(game: Game, seat: int, key: tuple, round_pieces: tuple[list[bytes], bytes]) -> tuple[bytes, bytes]:
    n = game.num_players
    sizes = [len(game.hands[(seat + j) % n]) / MAX_HAND for j in range(n)] + [0.0] * (MAX_PLAYERS - n)
    values = [0.0] * 8
    to_act = _ZERO
    phase_index = _PHASE_INDEX.get(game.phase)
    if phase_index is not None:
        if game.turn is not None:
            values[game.turn - 1] = 1.0
        values[3 + phase_index] = 1.0
        if phase_index == 1 and game.draws_made:
            values[6] = 1.0
        if game.current == seat:
            to_act = _ONE
    values[7] = len(game.draw_pile) / NUM_CARDS
    if len(_SIZES_TURN) >= _CACHE_LIMIT:
        _SIZES_TURN.clear()
    middle = b"".join((round_pieces[0][seat], _PACK_6F(*sizes), round_pieces[1], _PACK_8F(*values)))
    entry = _SIZES_TURN[key] = (middle, to_act)
    return entry


_CARD_BIT = tuple(1 << c for c in range(NUM_CARDS))


def _suit_tables() -> tuple[tuple, ...]:
    """Per suit, for each 12-bit set of that suit's cards (bit ``2 * (rank - 1) + copy``): (one-hot
    bytes of the 12 cards, suit row value / 30 as float32 bytes, packed counts, the 12 cards' discard-mask bytes).  The packed counts add up over
    the four suits without carries: four bits per rank (bits 0..23) count the cards of that
    rank, bits 24..31 the highest rank held, four bits at ``48 + 4 * suit`` the cards of the suit."""
    base = [(0, 0, 0, 0, 0)]
    for field in range(1, 1 << CARDS_PER_SUIT):
        low = (field & -field).bit_length() - 1
        bits, total, high, lanes, count = base[field & (field - 1)]
        rank = low // 2 + 1
        base.append((bits | _ONE_BITS << (32 * low), total + rank, max(high, rank), lanes + (1 << (4 * (rank - 1))), count + 1))
    rows = [
        (bits.to_bytes(4 * CARDS_PER_SUIT, "little"), _PACK_1F(total / MAX_ROW_VALUE), lanes | high << 24, count, bytes((field >> i) & 1 for i in range(CARDS_PER_SUIT)))
        for field, (bits, total, high, lanes, count) in enumerate(base)
    ]
    return tuple(tuple((b, v, packed | count << (48 + 4 * s), mask) for b, v, packed, count, mask in rows) for s in range(NUM_SUITS))


_RANKS_MASK = (1 << 24) - 1  # the rank counts in a packed sum
_SUIT_COUNTS_MASK = ((1 << 16) - 1) << 48  # the suit counts in a packed sum
_SUIT_TABLES = _SUIT0, _SUIT1, _SUIT2, _SUIT3 = _suit_tables()
# The one-hot pieces alone (for card sets other than the own hand: pile contents, known cards).
_SUIT0_HOT, _SUIT1_HOT, _SUIT2_HOT, _SUIT3_HOT = (tuple(entry[0] for entry in table) for table in _SUIT_TABLES)
# The Rainbow feature (sum of the suits' highest ranks / 30) as float32 bytes.
_RAINBOW = tuple(_PACK_1F(v / MAX_ROW_VALUE) for v in range(256))
# Rank counts (four bits per rank) -> Match value / 30, Run value / 30 as float32 bytes.
_MATCH_RUN: dict[int, bytes] = {}


def _match_run(rank_counts: int) -> bytes:
    cards = [2 * (r - 1) for r in range(1, NUM_RANKS + 1) for _ in range((rank_counts >> (4 * (r - 1))) & 15)]
    values = row_scores(cards)  # suit 0 cards of those ranks: Match and Run read only the ranks
    _MATCH_RUN[rank_counts] = entry = _PACK_2F(values[MATCH_ROW] / MAX_ROW_VALUE, values[RUN_ROW] / MAX_ROW_VALUE)
    return entry


class _BonusTable:
    """A layout's own-hand bonus feature (float32 bytes), keyed by the bonus cards held (bits 0..47) and the suit counts (four bits each from 48)."""

    __slots__ = ("layout", "scale", "mask", "values")

    def __init__(self, layout: tuple, scales: Scales) -> None:
        self.layout = layout
        self.scale = scales.bonus
        self.mask = sum(1 << c for c in range(NUM_CARDS) if layout[c] is not None)
        self.values: dict[int, bytes] = {}

    def miss(self, hand: list[int], key: int) -> bytes:
        value = _PACK_1F(bonus_points(hand, self.layout) / self.scale)
        if len(self.values) >= _CACHE_LIMIT:
            self.values.clear()
        self.values[key] = value
        return value


_BONUS_TABLES: dict[int, _BonusTable] = {}


def _bonus_table(layout: tuple, scales: Scales) -> _BonusTable:
    table = _BONUS_TABLES.get(id(layout))
    if table is None or table.layout is not layout:
        table = _BONUS_TABLES[id(layout)] = _BonusTable(layout, scales)
    return table


def _round_ones(game: Game, seat: int) -> list[int]:
    """Return the indices of the round's one-hot features from ``seat``: the Grinch's relative seat, the round, rounds left."""
    n = game.num_players
    rnd = min(game.round, game.num_rounds - 1)
    g = game.grinch - seat
    return [GRINCH_SEAT + (g + n if g < 0 else g), ROUND + rnd, ROUNDS_LEFT + game.num_rounds - 1 - rnd]


def _write_score_features(game: Game, seat: int, seats, scales: Scales, obs: np.ndarray) -> None:
    """Write the score-pad features (rows used, points, total) of the absolute ``seats`` as ``seat`` sees them."""
    n = game.num_players
    sheets = game.score_sheet
    ones = []
    idx = []
    vals = []
    points_scale = scales.points
    for p in seats:
        j = p - seat
        if j < 0:
            j += n
        sheet = sheets[p]
        if sheet.count(None) != NUM_ROWS:
            used = _ROW_USED[j]
            at = _ROW_POINTS[j]
            for k, v in enumerate(sheet):
                if v is not None:
                    ones.append(used[k])
                    idx.append(at[k])
                    vals.append(v / points_scale)
        idx.append(TOTALS + j)
        vals.append(game.totals[p] / scales.total)
    if ones:
        obs.put(ones, 1.0)
    obs.put(idx, vals)


def _write_slow_features(game: Game, seat: int, scales: Scales, obs: np.ndarray) -> None:
    """Write the features that change only when someone scores or a round starts (``obs`` is zero there)."""
    n = game.num_players
    obs.put(_AT_TABLE_INDEX[n], 1.0)
    obs.put(_round_ones(game, seat), 1.0)
    _write_score_features(game, seat, range(n), scales, obs)


def _write_fast_features(game: Game, seat: int, scales: Scales, obs: np.ndarray) -> None:
    """Write the features that may change at every step (``obs`` is zero there).

    Collects the indices of all 1-entries in one list and the other values in
    a second list against precomputed indices, so the array is written with two
    numpy calls: per-call numpy overhead and per-item Python work, not
    arithmetic, dominate at this size.
    """
    n = game.num_players
    piles = game.piles
    known = game.known
    hands = game.hands
    hand = hands[seat]
    rotation = _ROTATIONS[n][seat]
    ones = hand[:]
    for p, base, top, second, known_base in zip(rotation, _PILE, _TOP, _SECOND, _KNOWN):
        pile = piles[p]
        if pile:
            ones += [base + c for c in pile]
            ones.append(top + pile[-1])
            if len(pile) > 1:
                ones.append(second + pile[-2])
        kn = known[p]
        if kn:
            ones += [known_base + c for c in kn]
    phase_index = _PHASE_INDEX.get(game.phase)
    if phase_index is not None:
        if game.turn is not None:
            ones.append(TURN + game.turn - 1)
        ones.append(PHASE + phase_index)
        if phase_index == 1 and game.draws_made:
            ones.append(FIRST_DRAW_MADE)
        if game.current == seat:
            ones.append(TO_ACT)
    obs.put(ones, 1.0)
    vals = [len(game.draw_pile) / NUM_CARDS]
    vals += [len(hands[p]) / MAX_HAND for p in rotation]
    vals += [v / MAX_ROW_VALUE for v in row_scores(hand)]
    vals.append(bonus_points(hand, game.layout) / scales.bonus)
    obs.put(_FAST_VALUE_INDEX[n], vals)


def action_mask(game: Game, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """Return the ``int8[62]`` mask of ``seat``'s legal actions (all zeros unless ``seat`` is to act)."""
    if out is not None:
        out.fill(0)
        if game.current == seat:
            out[game.legal_actions()] = 1
        return out
    return np.frombuffer(game.legal_mask() if game.current == seat else bytearray(NUM_ACTIONS), _INT8)


_INT8 = np.dtype(np.int8)


__all__ = ["OBS_SIZE", "Scales", "action_mask", "Encoder", "encode", "scales_for", "DRAW_PILE_ACTION"]
