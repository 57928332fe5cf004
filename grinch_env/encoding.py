"""Observation and action-mask encoding of a :class:`~grinch_env.game.Game` from one seat.

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

import numpy as np

from grinch_env.cards import NUM_CARDS
from grinch_env.game import (
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
from grinch_env.scoring import MAX_ROW_VALUE, NUM_ROWS, bonus_points, max_bonus, row_scores

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

_PHASE_INDEX = {PHASE_DISCARD: 0, PHASE_DRAW: 1, PHASE_SCORE: 2}
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
    """Encodes one game's observations like :func:`encode`, caching what changes only at scoring or between rounds.

    The seat table, the Grinch's seat, the round and the score pads (rows used,
    points, totals) live in one template per seat; each call copies the
    template and adds the rest.  When players have scored since a template was
    written, only their entries (and the round's, at a new round) are patched.
    The cache assumes the game changes only through :meth:`Game.step` (as in
    the environment): it is keyed by the game object and the number of scores
    written so far, which determine these features.
    """

    __slots__ = ("_game", "_templates", "_scales")

    def __init__(self) -> None:
        self._game: Game | None = None
        # seat -> (template, scores written when it was last brought up to date, its round one-hots)
        self._templates: dict[int, tuple[np.ndarray, int, list[int]]] = {}
        self._scales: Scales | None = None

    def __call__(self, game: Game, seat: int) -> np.ndarray:
        """Return the observation of ``game`` from ``seat`` (equal to ``encode(game, seat)``)."""
        if game is not self._game:
            self._game = game
            self._scales = scales_for(game.layout)
            self._templates = {}
        scored = game.round * game.num_players + (game.pos if game.phase == PHASE_SCORE else 0)
        entry = self._templates.get(seat)
        if entry is None or entry[1] != scored:
            entry = self._templates[seat] = self._bring_up_to_date(game, seat, entry, scored)
        obs = entry[0].copy()
        _write_fast_features(game, seat, self._scales, obs)
        return obs

    def _bring_up_to_date(self, game: Game, seat: int, entry: tuple | None, scored: int) -> tuple[np.ndarray, int, list[int]]:
        """Return ``seat``'s template entry for a game in which ``scored`` scores have been written."""
        n = game.num_players
        round_ones = _round_ones(game, seat)
        if entry is None or not 0 < scored - entry[1] < n:
            template = np.zeros(OBS_SIZE, dtype=np.float32)
            template.put(_AT_TABLE_INDEX[n], 1.0)
            template.put(round_ones, 1.0)
            _write_score_features(game, seat, range(n), self._scales, template)
            return template, scored, round_ones
        template, before, old_round_ones = entry
        # Score number c was written by the (c % n)-th player of round c // n: Whos from the Grinch's left, Grinch last.
        first = game.first_grinch + 1
        _write_score_features(game, seat, {(first + c // n + c % n) % n for c in range(before, scored)}, self._scales, template)
        if round_ones != old_round_ones:
            template.put(old_round_ones, 0.0)
            template.put(round_ones, 1.0)
        return template, scored, round_ones


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
    # A bytearray filled item by item and viewed as int8 costs half of np.zeros plus fancy indexing.
    buffer = bytearray(NUM_ACTIONS)
    if game.current == seat:
        for a in game.legal_actions():
            buffer[a] = 1
    return np.frombuffer(buffer, dtype=np.int8)


__all__ = ["OBS_SIZE", "Scales", "action_mask", "Encoder", "encode", "scales_for", "DRAW_PILE_ACTION"]
