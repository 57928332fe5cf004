"""Optional numba kernels for :class:`grinch_env.grinch.vector.VectorGrinch` (``backend="numba"``).

The same functions of the engine's state arrays as the numpy code of
``grinch_env.grinch.vector`` (the transitions ``_discard``/``_draw``/``_score``/
``_start_round``/``_rewards`` and the observation ``_encode``), written as
compiled loops over the games: no grouping by phase, no fancy indexing, no
temporaries.  A step is :func:`step_into` (check every action, then apply
it, rewards included); then, for the games that start a round or a new game,
their decks from the deck source (Python, asked in the numpy code's order)
dealt by :func:`deal_into`; then :func:`encode_into` (every observation and
mask).  Imported only when numba is installed (``backend="auto"`` or
``"numba"``); ``tests/test_vector.py`` checks both backends against the
scalar engine and against each other.  First use compiles the kernels (about
2.5 s, then cached in ``__pycache__``).
"""

from __future__ import annotations

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros  # count trailing zero bits (LLVM cttz)

from grinch_env.grinch.cards import CARDS_PER_SUIT, NUM_CARDS, NUM_SUITS
from grinch_env.grinch.encoding import (
    AT_TABLE,
    DRAW_PILE_SIZE,
    FIRST_DRAW_MADE,
    GRINCH_SEAT,
    HAND_SIZE,
    OWN_BONUS,
    OWN_ROW_VALUES,
    PHASE,
    ROUND,
    ROUNDS_LEFT,
    ROW_POINTS,
    ROW_USED,
    SEAT_BLOCK,
    SEAT_STRIDE,
    TO_ACT,
    TOTALS,
    TURN,
)
from grinch_env.grinch.game import (
    DEAL_SIZE,
    DRAW_DISCARD_BASE,
    DRAW_PILE_ACTION,
    GRINCH_DRAWS,
    MARGIN_SCALE,
    MAX_PLAYERS,
    NUM_ACTIONS,
    PHASE_DISCARD,
    PHASE_DRAW,
    PHASE_SCORE,
    SCORE_BASE,
    TURNS_PER_ROUND,
    WHO_DRAWS,
)
from grinch_env.grinch.scoring import COUNTS_BITS, MATCH_POINTS, NUM_ROWS, RANK_SUM_AT, RUN_POINTS, SUIT_COUNT_AT, TOP_AT, packed_tables

_SUIT_FEATURES = packed_tables()[0]

_DISCARD, _DRAW, _SCORE = PHASE_DISCARD.code, PHASE_DRAW.code, PHASE_SCORE.code  # the Phase enum's array codes
# step_into's status per game: nothing more to do, a round to deal, a game over (rewards written, then a new game to deal).
NO_DEAL, NEW_ROUND, GAME_OVER = 0, 1, 2
_PAD = 2 * NUM_ROWS + 1
_RANKS = COUNTS_BITS // 3
_MATCH_POINTS = np.array(MATCH_POINTS, dtype=np.int64)  # frozen into the compiled code as constants
_RUN_POINTS = np.array(RUN_POINTS, dtype=np.int64)



# Written for speed: the loops index the arguments directly (no row views, no helpers taking arrays), because
# every array variable numba creates per game costs an atomic reference count update; in the first version those
# updates were more than half of the observation's time.  Helpers take and return scalars only.


@numba.njit(cache=True, nogil=True)
def _features(hand):  # pragma: no cover - compiled
    """The packed suit features of a hand (``grinch_env.grinch.scoring.packed_tables``; the table is a constant here)."""
    feat = 0
    for s in range(NUM_SUITS):
        chunk = np.int64((hand >> np.uint64(CARDS_PER_SUIT * s)) & np.uint64((1 << CARDS_PER_SUIT) - 1))
        feat += _SUIT_FEATURES[(s << CARDS_PER_SUIT) + chunk]
    return feat


@numba.njit(cache=True, nogil=True)
def _match_run(feat):  # pragma: no cover - compiled
    """Match and Run points of a hand from the per-rank counts in its packed features.

    A 6-step loop rather than ``grinch_env.grinch.vector._MATCH_RUN``: that table is 2 MB, a cache miss per lookup.
    """
    most = 0
    run = 0
    longest = 0
    for r in range(_RANKS):
        count = (feat >> (3 * r)) & 7
        most = max(most, count)
        run = run + 1 if count else 0
        longest = max(longest, run)
    return _MATCH_POINTS[most], _RUN_POINTS[longest]


@numba.njit(cache=True, nogil=True)
def _row_value(feat, row):  # pragma: no cover - compiled
    """Row ``row``'s value of a hand from its packed features (as ``grinch_env.grinch.vector._hand_values``)."""
    if row < NUM_SUITS:
        return (feat >> (RANK_SUM_AT + 6 * row)) & 63
    if row == NUM_SUITS:
        return (feat >> TOP_AT) & 31
    match, run = _match_run(feat)
    return match if row == NUM_SUITS + 1 else run


@numba.njit(cache=True, nogil=True)
def encode_into(
    n, cur, maps, pad, phase, turn, rnd, rounds, grinch, draws, ptr,
    f_hand, f_pile, f_row, f_bonus, bonus_card, bonus_suit, bonus_count, bonus_points, obs, mask, clear,
):  # pragma: no cover - compiled; covered through the differential tests
    """Write every game's observation and mask of its player to act into ``obs`` [B,1337] and ``mask`` [B,62] (as ``VectorGrinch._encode``).

    ``clear``: zero each row of ``obs`` first (False when ``obs`` comes zeroed from ``np.zeros``).
    """
    one = np.uint64(1)
    for i in range(len(n)):
        ni = n[i]
        c = cur[i]
        hand = maps[i, c, 4]
        ph = phase[i]
        if clear:
            obs[i, :] = 0.0  # one memset, then the few ones: the card bitmaps are sparse
        mask[i, :] = 0
        x = hand
        while x:
            obs[i, trailing_zeros(x)] = 1.0
            x &= x - one
        p = c  # absolute seat of relative seat j, without a division per seat
        for j in range(ni):
            for f in range(4):  # pile contents, top, second, known in hand
                x = maps[i, p, f]
                b = SEAT_BLOCK + SEAT_STRIDE * j + NUM_CARDS * f
                while x:
                    obs[i, b + trailing_zeros(x)] = 1.0
                    x &= x - one
            obs[i, AT_TABLE + j] = 1.0
            size = 0
            x = maps[i, p, 4]
            while x:
                x &= x - one
                size += 1
            obs[i, HAND_SIZE + j] = f_hand[size]
            for k in range(NUM_ROWS):
                obs[i, ROW_USED + NUM_ROWS * j + k] = pad[i, p, k]
                obs[i, ROW_POINTS + NUM_ROWS * j + k] = pad[i, p, NUM_ROWS + k]
            obs[i, TOTALS + j] = pad[i, p, 2 * NUM_ROWS]
            if ph == _DRAW and maps[i, p, 0]:
                mask[i, DRAW_DISCARD_BASE + j] = 1
            p = p + 1 if p + 1 < ni else 0
        g = grinch[i] - c
        obs[i, GRINCH_SEAT + (g + ni if g < 0 else g)] = 1.0
        r = min(rnd[i], rounds[i] - 1)
        obs[i, ROUND + r] = 1.0
        obs[i, ROUNDS_LEFT + rounds[i] - 1 - r] = 1.0
        if turn[i] > 0:
            obs[i, TURN + turn[i] - 1] = 1.0
        obs[i, PHASE + ph] = 1.0
        if ph == _DRAW and draws[i] > 0:
            obs[i, FIRST_DRAW_MADE] = 1.0
        obs[i, DRAW_PILE_SIZE] = f_pile[ptr[i]]
        feat = _features(hand)
        for row in range(NUM_SUITS + 1):
            obs[i, OWN_ROW_VALUES + row] = f_row[_row_value(feat, row)]
        match, run = _match_run(feat)
        obs[i, OWN_ROW_VALUES + NUM_SUITS + 1] = f_row[match]
        obs[i, OWN_ROW_VALUES + NUM_SUITS + 2] = f_row[run]
        bonus = 0
        for b in range(len(bonus_card)):
            if (hand >> np.uint64(bonus_card[b])) & one and ((feat >> (SUIT_COUNT_AT + 3 * bonus_suit[b])) & 7) >= bonus_count[b]:
                bonus += bonus_points[b]
        obs[i, OWN_BONUS] = f_bonus[bonus]
        obs[i, TO_ACT] = 1.0
        if ph == _DISCARD:
            x = hand
            while x:
                mask[i, trailing_zeros(x)] = 1
                x &= x - one
        elif ph == _DRAW:
            mask[i, DRAW_PILE_ACTION] = 1  # the draw pile never runs out (grinch_env.grinch.vector's docstring); the piles above
        else:
            for k in range(NUM_ROWS):
                if pad[i, c, k] == 0.0:
                    mask[i, SCORE_BASE + k] = 1


@numba.njit(cache=True, nogil=True)
def step_into(
    actions, n, cur, pos, maps, stack, plen, deck, ptr, totals, pad, phase, turn, rnd, rounds, grinch, draws,
    f_points, f_total, bonus_card, bonus_suit, bonus_count, bonus_points, margin, mask, rewards, dones, last_totals, status,
):  # pragma: no cover - compiled; covered through the differential tests
    """Apply ``actions`` to every game (as ``VectorGrinch._discard``/``_draw``/``_score``/``_rewards``).

    Return the first game whose action is illegal, checked against ``mask`` (the masks the actions answer)
    before anything changes, else -1.  ``status[i]`` becomes NEW_ROUND or GAME_OVER (``rewards[i]``,
    ``dones[i]`` and ``last_totals[i]`` written) for the games :func:`deal_into` must deal, else NO_DEAL.
    """
    envs = len(n)
    for i in range(envs):  # out-of-range actions first, as VectorGrinch._check_actions reports them
        if actions[i] < 0 or actions[i] >= NUM_ACTIONS:
            return i
    for i in range(envs):
        if mask[i, actions[i]] == 0:
            return i
    one = np.uint64(1)
    for i in range(envs):
        a = actions[i]
        ni = n[i]
        p = cur[i]
        st = NO_DEAL
        begin = -1  # the turn-order position of the next player, if a player begins (VectorGrinch._begin_player)
        ph = phase[i]
        if ph == _DISCARD:
            bit = one << np.uint64(a)
            maps[i, p, 4] &= ~bit
            maps[i, p, 3] &= ~bit
            maps[i, p, 0] |= bit
            maps[i, p, 2] = maps[i, p, 1]
            maps[i, p, 1] = bit
            stack[i, p, plen[i, p]] = a
            plen[i, p] += 1
            nxt = pos[i] + 1
            if nxt < ni:
                begin = nxt
            elif turn[i] < TURNS_PER_ROUND:
                turn[i] += 1
                begin = 0
            else:
                turn[i] = 0
                phase[i] = _SCORE
                pos[i] = 0
                g = grinch[i] + 1
                cur[i] = g if g < ni else 0
        elif ph == _DRAW:
            if a == DRAW_PILE_ACTION:
                ptr[i] -= 1
                card = deck[i, ptr[i]]
            else:
                src = (p + a - DRAW_DISCARD_BASE) % ni
                length = plen[i, src] - 1
                card = stack[i, src, length]
                plen[i, src] = length
                cbit = one << np.uint64(card)
                maps[i, src, 0] &= ~cbit
                maps[i, src, 1] = maps[i, src, 2]
                maps[i, src, 2] = (one << np.uint64(stack[i, src, length - 2])) if length >= 2 else np.uint64(0)
                maps[i, p, 3] |= cbit  # a card taken from a discard pile is public
            maps[i, p, 4] |= one << np.uint64(card)
            draws[i] += 1
            if draws[i] == GRINCH_DRAWS:
                phase[i] = _DISCARD
        else:
            row = a - SCORE_BASE
            hand = maps[i, p, 4]
            feat = _features(hand)
            points = _row_value(feat, row)
            for b in range(len(bonus_card)):
                if (hand >> np.uint64(bonus_card[b])) & one and ((feat >> (SUIT_COUNT_AT + 3 * bonus_suit[b])) & 7) >= bonus_count[b]:
                    points += bonus_points[b]
            totals[i, p] += points
            pad[i, p, row] = 1.0
            pad[i, p, NUM_ROWS + row] = f_points[points]
            pad[i, p, 2 * NUM_ROWS] = f_total[totals[i, p]]
            nxt = pos[i] + 1
            if nxt < ni:
                pos[i] = nxt
                cur[i] = (grinch[i] + 1 + nxt) % ni
            else:
                rnd[i] += 1
                if rnd[i] < rounds[i]:
                    st = NEW_ROUND
                else:
                    st = GAME_OVER
                    dones[i] = True
                    for s in range(MAX_PLAYERS):
                        last_totals[i, s] = totals[i, s]
                    # Terminal rewards as VectorGrinch._rewards computes them (float64, then float32).
                    if margin:
                        total = 0
                        for s in range(ni):
                            total += totals[i, s]
                        for s in range(ni):
                            t = totals[i, s]
                            rewards[i, s] = np.float32((t - (total - t) / (ni - 1)) / MARGIN_SCALE)
                    else:
                        best = -1
                        for s in range(ni):
                            best = max(best, totals[i, s])
                        w = 0
                        for s in range(ni):
                            if totals[i, s] == best:
                                w += 1
                        if w < ni:  # all tied: every reward stays 0
                            losers = ni - w
                            for s in range(ni):
                                rewards[i, s] = np.float32(1.0 / w) if totals[i, s] == best else np.float32(-1.0 / losers)
        status[i] = st
        if begin >= 0:  # VectorGrinch._begin_player: the Grinch draws next, a Who draws two cards and discards
            c = (grinch[i] + 1 + begin) % ni
            pos[i] = begin
            cur[i] = c
            if c == grinch[i]:
                phase[i] = _DRAW
                draws[i] = 0
            else:
                phase[i] = _DISCARD
                q = ptr[i]
                for k in range(WHO_DRAWS):
                    maps[i, c, 4] |= one << np.uint64(deck[i, q - 1 - k])
                ptr[i] = q - WHO_DRAWS
    return -1


@numba.njit(cache=True, nogil=True)
def deal_into(games, decks, new_game, n, cur, pos, maps, plen, deck, ptr, totals, pad, phase, turn, rnd, grinch, draws):  # pragma: no cover - compiled
    """Deal ``decks[k]`` to game ``games[k]`` (a new game first where ``new_game[k]``), as ``VectorGrinch._start_round``."""
    one = np.uint64(1)
    for k in range(len(games)):
        i = games[k]
        ni = n[i]
        if new_game[k]:
            rnd[i] = 0
            for s in range(MAX_PLAYERS):
                totals[i, s] = 0
                for f in range(_PAD):
                    pad[i, s, f] = 0.0
        for c in range(NUM_CARDS):
            deck[i, c] = decks[k, c]
        for s in range(MAX_PLAYERS):
            hand = np.uint64(0)
            if s < ni:
                for d in range(DEAL_SIZE):  # seat s gets the deck's cards 47-2s and 46-2s
                    hand |= one << np.uint64(decks[k, NUM_CARDS - 1 - DEAL_SIZE * s - d])
            for f in range(4):
                maps[i, s, f] = 0
            maps[i, s, 4] = hand
            plen[i, s] = 0
        ptr[i] = NUM_CARDS - DEAL_SIZE * ni
        grinch[i] = rnd[i] % ni
        turn[i] = 1
        draws[i] = 0
        # VectorGrinch._begin_player(pos=0): the seat after the Grinch, a Who, draws two cards.
        c = (grinch[i] + 1) % ni
        pos[i] = 0
        cur[i] = c
        phase[i] = _DISCARD
        for d in range(WHO_DRAWS):
            maps[i, c, 4] |= one << np.uint64(deck[i, ptr[i] - 1 - d])
        ptr[i] -= WHO_DRAWS
