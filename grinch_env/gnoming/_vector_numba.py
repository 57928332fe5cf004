"""Compiled per-game state machine of :class:`grinch_env.gnoming.vector.VectorGnoming` (``backend="numba"``).

Every game's whole state is one row of an int16 array ``state[B, WIDTH]`` (the
field offsets below), so the kernels take one state argument and each game's
transition is a branchy loop body over scalars, as the scalar
:class:`~grinch_env.gnoming.game.Game` is a branchy method.  A step is:

1. :func:`step_into`: check every action against the masks the caller
   answered (nothing changes if one is illegal), then per game apply it and
   play the automatic (single-legal-action) decisions that follow, as
   ``Game.step`` does, until the game needs a decision (its legal actions
   are then in its row of ``mask``, computed once for both purposes) or
   randomness: a round deal (``status`` NEED_DEAL; game over first where
   ``dones``) or a reshuffle of the discard piles into the draw pile
   (NEED_SHUFFLE, the cards to shuffle already in the draw-pile area, in the
   scalar engine's order);
2. Python asks the deck source for those permutations and :func:`resume_into`
   applies them and carries on (again until a decision or randomness);
3. :func:`encode_into` writes every observation.

The scalar Game is the source of truth; ``tests/test_gnoming_vector.py``
plays the two against each other.
"""

from __future__ import annotations

import numba
import numpy as np

from grinch_env.gnoming.cards import COPIES, DECK_SIZE, HAZARD, MULLIGAN, NUM_KINDS, VALUES
from grinch_env.gnoming.game import DISCARD_A, DISCARD_B, DRAW, MAX_PLAYERS, NUM_ACTIONS, NUM_ROUNDS, PASS, TAKE_A

SLOTS = 9
_POSITIVE_END = 6  # kinds 0..5 are positive, 6..9 negative
_NEGATIVE_END = 10
GOING_OUT_BONUS = 5
# The observation's tables of totals and round scores start here (below the lowest possible: -159 and -53).
TOTAL_LOW, SCORE_LOW = -200, -60

# Phases (the scalar Phase values, in this order).
REVEAL, DRAW_PHASE, PLAY, BOUNCE, DISCARD, HAZARD_PHASE, DONE = 0, 1, 2, 3, 4, 5, 6
# Held-card sources, in the observation's order (§6.3): draw pile, pile A, pile B, bounce, displaced.
SRC_DRAW, SRC_A, SRC_B, SRC_BOUNCE, SRC_DISPLACED = 0, 1, 2, 3, 4
# step_into / resume_into status per game.
READY, NEED_DEAL, NEED_SHUFFLE = 0, 1, 2


def _layout(fields):
    """Return {name: offset} and the row width for ``fields`` [(name, size)]."""
    at, out = 0, {}
    for name, size in fields:
        out[name] = at
        at += size
    return out, at


_OFF, WIDTH = _layout([
    ("n", 1), ("round", 1), ("phase", 1), ("cur", 1), ("tp", 1), ("first", 1), ("reveals", 1), ("dlen", 1), ("reshuffled", 1),
    ("removed", 1), ("held", 1), ("hsrc", 1), ("went", 1), ("turns", 1), ("hzd", 1), ("hzpos", 1), ("plen", 2), ("shuffle_len", 1),
    ("lay", MAX_PLAYERS * SLOTS), ("up", MAX_PLAYERS * SLOTS), ("filled", SLOTS), ("final", MAX_PLAYERS),
    ("pile", 2 * DECK_SIZE), ("pcnt", 2 * NUM_KINDS), ("unseen", NUM_KINDS), ("rcnt", NUM_KINDS), ("draw", DECK_SIZE),
    ("totals", MAX_PLAYERS), ("rsc", NUM_ROUNDS * MAX_PLAYERS),
])
F_N, F_ROUND, F_PHASE, F_CUR, F_TP, F_FIRST = _OFF["n"], _OFF["round"], _OFF["phase"], _OFF["cur"], _OFF["tp"], _OFF["first"]
F_REVEALS, F_DLEN, F_RESHUF, F_REMOVED, F_HELD, F_HSRC = _OFF["reveals"], _OFF["dlen"], _OFF["reshuffled"], _OFF["removed"], _OFF["held"], _OFF["hsrc"]
F_WENT, F_TURNS, F_HZD, F_HZPOS, F_PLEN, F_SHUFLEN = _OFF["went"], _OFF["turns"], _OFF["hzd"], _OFF["hzpos"], _OFF["plen"], _OFF["shuffle_len"]
F_LAY, F_UP, F_FILLED, F_FINAL, F_PILE, F_PCNT = _OFF["lay"], _OFF["up"], _OFF["filled"], _OFF["final"], _OFF["pile"], _OFF["pcnt"]
F_UNSEEN, F_RCNT, F_DRAW, F_TOTALS, F_RSC = _OFF["unseen"], _OFF["rcnt"], _OFF["draw"], _OFF["totals"], _OFF["rsc"]

_COPIES = np.array(COPIES, dtype=np.int64)
_VALUE = np.array([v if v is not None else 0 for v in VALUES], dtype=np.int64)
# Points of a card outside matched lines (§1): a positive or negative card its value, a Hazard +10, a Mulligan 0.
_POINTS = np.array([*_VALUE[:_NEGATIVE_END], 10, 0], dtype=np.int64)
_LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8]], dtype=np.int64)
# Observation offsets (§6.3).
O_LAYOUT, O_SEATS, O_TOPS, O_PCNT, O_UNSEEN, O_RCNT = 0, 819, 826, 904, 928, 940
O_DRAWSIZE, O_RESHUF, O_REMOVED, O_HELD, O_HSRC, O_FILLED = 952, 953, 954, 955, 968, 973
O_PHASE, O_ROUND, O_TURNS, O_FIRST, O_WENT, O_FINAL, O_HZD, O_TOTALS, O_RSC = 982, 986, 989, 990, 997, 1004, 1011, 1018, 1025
_SEAT_STRIDE = SLOTS * 13
_OBS_PHASE = np.array([0, 1, 2, 2, 2, 3, 0], dtype=np.int64)  # reveal, draw, play/bounce/discard, Hazard response


# --------------------------------------------------------------------------------------------- rules helpers
@numba.njit(cache=True, nogil=True)
def _face_down(state, i, s):  # pragma: no cover - compiled
    """The number of face-down slots of seat ``s``."""
    c = 0
    for p in range(SLOTS):
        if state[i, F_UP + SLOTS * s + p] == 0:
            c += 1
    return c


@numba.njit(cache=True, nogil=True)
def _mulligan_slot(state, i, s):  # pragma: no cover - compiled
    """Where seat ``s`` may place a Mulligan (§3.3): -1 any slot, 0..8 only there, -2 nowhere."""
    at = -1
    for p in range(SLOTS):
        o = F_LAY + SLOTS * s + p
        if state[i, F_UP + SLOTS * s + p] and state[i, o] == MULLIGAN:
            if at >= 0:
                return -2
            at = p
    return at


@numba.njit(cache=True, nogil=True)
def _discard_options(state, i, card, mask):  # pragma: no cover - compiled
    """Set DISCARD_A / DISCARD_B in ``mask`` as §3.5 allows for ``card``; return how many."""
    if card == HAZARD:
        mask[i, DISCARD_A] = 1
        return 1
    la = state[i, F_PLEN]
    lb = state[i, F_PLEN + 1]
    if la == 0 or lb == 0:  # one empty pile takes the card; both empty: pile A
        mask[i, DISCARD_B if la > 0 else DISCARD_A] = 1
        return 1
    mask[i, DISCARD_A] = 1
    mask[i, DISCARD_B] = 1
    return 2


@numba.njit(cache=True, nogil=True)
def _legal(state, i, free_take, mask):  # pragma: no cover - compiled
    """Write game i's legal actions into row i of ``mask`` (int8[B,15], zeroed here); return how many."""
    for a in range(NUM_ACTIONS):
        mask[i, a] = 0
    ph = state[i, F_PHASE]
    c = state[i, F_CUR]
    count = 0
    if ph == REVEAL or ph == HAZARD_PHASE:
        for p in range(SLOTS):
            if state[i, F_UP + SLOTS * c + p] == 0:
                mask[i, p] = 1
                count += 1
        if ph == HAZARD_PHASE:
            mask[i, PASS] = 1
            count += 1
    elif ph == DRAW_PHASE:
        mask[i, DRAW] = 1
        count = 1
        mslot = _mulligan_slot(state, i, c)
        for x in range(2):
            length = state[i, F_PLEN + x]
            if length > 0 and (state[i, F_PILE + DECK_SIZE * x + length - 1] != MULLIGAN or mslot != -2):
                mask[i, TAKE_A + x] = 1
                count += 1
    elif ph == PLAY:
        held = state[i, F_HELD]
        mslot = _mulligan_slot(state, i, c) if held == MULLIGAN else -1
        for p in range(SLOTS):
            if mslot == -1 or mslot == p:
                mask[i, p] = 1
                count += 1
        if state[i, F_HSRC] == SRC_DRAW or free_take:
            count += _discard_options(state, i, held, mask)
    elif ph == BOUNCE:
        for p in range(SLOTS):
            if state[i, F_FILLED + p] == 0:
                mask[i, p] = 1
                count += 1
        count += _discard_options(state, i, state[i, F_HELD], mask)
    elif ph == DISCARD:
        count = _discard_options(state, i, state[i, F_HELD], mask)
    return count


@numba.njit(cache=True, nogil=True)
def _line_ok(kinds, mval, line, single):  # pragma: no cover - compiled
    """Return the matched value v of line ``line`` (§4.3), or -1; ``mval`` are the Mulligans' values under ``single``."""
    v = -1
    for j in range(3):
        k = kinds[_LINES[line, j]]
        if k >= _POSITIVE_END and k != MULLIGAN:
            return -1
        if k < _POSITIVE_END:
            if v >= 0 and v != k:
                return -1
            v = k
    if v < 0 or not single:
        return v
    for j in range(3):
        p = _LINES[line, j]
        if kinds[p] == MULLIGAN and mval[p] != v:
            return -1
    return v


@numba.njit(cache=True, nogil=True)
def _score_with(kinds, mval, single):  # pragma: no cover - compiled
    """The score of a face-up layout (§4.3) for one choice of the Mulligans' values (ignored unless ``single``)."""
    in_line = np.zeros(SLOTS, dtype=np.bool_)
    score = 0
    for line in range(6):
        v = _line_ok(kinds, mval, line, single)
        if v >= 0:
            score -= _VALUE[v]
            for j in range(3):
                in_line[_LINES[line, j]] = True
    for p in range(SLOTS):
        if not in_line[p]:
            score += _POINTS[kinds[p]]
    return score


@numba.njit(cache=True, nogil=True)
def score_layout(kinds, single):  # pragma: no cover - compiled
    """The score of a layout of 9 kinds (§4.3); ``single``: each Mulligan takes one value, the lowest score over the choices."""
    mval = np.zeros(SLOTS, dtype=np.int64)
    if not single:
        return _score_with(kinds, mval, False)
    mulls = np.empty(SLOTS, dtype=np.int64)
    m = 0
    for p in range(SLOTS):
        if kinds[p] == MULLIGAN:
            mulls[m] = p
            m += 1
    best = 1 << 30
    combos = 1
    for _ in range(m):
        combos *= _POSITIVE_END
    for code in range(combos):
        x = code
        for j in range(m):
            mval[mulls[j]] = x % _POSITIVE_END
            x //= _POSITIVE_END
        best = min(best, _score_with(kinds, mval, True))
    return best


# --------------------------------------------------------------------------------------------- transitions
@numba.njit(cache=True, nogil=True)
def _start_turn(state, i, s):  # pragma: no cover - compiled
    state[i, F_TP] = s
    state[i, F_CUR] = s
    state[i, F_PHASE] = DRAW_PHASE
    state[i, F_HELD] = -1
    state[i, F_HSRC] = -1
    for p in range(SLOTS):
        state[i, F_FILLED + p] = 0


@numba.njit(cache=True, nogil=True)
def _end_round(state, i, single):  # pragma: no cover - compiled
    """Reveal, score (§4.2-4.5) and close the round; return True if the game is over."""
    n = state[i, F_N]
    r = state[i, F_ROUND]
    kinds = np.empty(SLOTS, dtype=np.int64)
    raw = np.zeros(MAX_PLAYERS, dtype=np.int64)
    for s in range(n):
        for p in range(SLOTS):
            state[i, F_UP + SLOTS * s + p] = 1
            kinds[p] = state[i, F_LAY + SLOTS * s + p]
        raw[s] = score_layout(kinds, single)
    g = state[i, F_WENT]
    if g >= 0:
        lowest = True
        for s in range(n):
            if s != g and raw[s] < raw[g]:
                lowest = False
        raw[g] += -GOING_OUT_BONUS if lowest else GOING_OUT_BONUS
    for s in range(n):
        state[i, F_RSC + MAX_PLAYERS * r + s] = raw[s]
        state[i, F_TOTALS + s] += raw[s]
    state[i, F_ROUND] = r + 1
    state[i, F_HELD] = -1
    state[i, F_HSRC] = -1
    if r + 1 >= NUM_ROUNDS:
        state[i, F_PHASE] = DONE
        return True
    return False


@numba.njit(cache=True, nogil=True)
def _end_turn(state, i, max_turns, single):  # pragma: no cover - compiled
    """§3.7; return READY, or NEED_DEAL when the round ended (the game too if the phase is DONE)."""
    n = state[i, F_N]
    tp = state[i, F_TP]
    state[i, F_TURNS] += 1
    state[i, F_HELD] = -1
    state[i, F_HSRC] = -1
    if state[i, F_WENT] < 0:
        if _face_down(state, i, tp) == 0:
            state[i, F_WENT] = tp
            for s in range(n):
                state[i, F_FINAL + s] = 1 if s != tp else 0
        elif state[i, F_TURNS] >= max_turns * n:
            _end_round(state, i, single)
            return NEED_DEAL
    else:
        state[i, F_FINAL + tp] = 0
        left = 0
        for s in range(n):
            left += state[i, F_FINAL + s]
        if left == 0:
            _end_round(state, i, single)
            return NEED_DEAL
    _start_turn(state, i, tp + 1 if tp + 1 < n else 0)
    return READY


@numba.njit(cache=True, nogil=True)
def _next_responder(state, i, max_turns, single):  # pragma: no cover - compiled
    """Move the Hazard response (§3.6) to the next player after position ``hzpos`` with >= 2 face-down cards, else end the turn."""
    n = state[i, F_N]
    d = state[i, F_HZD]
    for j in range(state[i, F_HZPOS] + 1, n):
        s = (d + j) % n
        if _face_down(state, i, s) >= 2:
            state[i, F_HZPOS] = j
            state[i, F_CUR] = s
            state[i, F_PHASE] = HAZARD_PHASE
            return READY
    state[i, F_HZD] = -1
    state[i, F_HZPOS] = 0
    state[i, F_CUR] = state[i, F_TP]
    return _end_turn(state, i, max_turns, single)


@numba.njit(cache=True, nogil=True)
def _discard(state, i, x, max_turns, single):  # pragma: no cover - compiled
    """Discard the held card onto pile ``x`` (a Hazard leaves the round, §3.5-3.6)."""
    card = state[i, F_HELD]
    state[i, F_HELD] = -1
    state[i, F_HSRC] = -1
    if card == HAZARD:
        state[i, F_REMOVED] += 1
        state[i, F_HZD] = state[i, F_TP]
        state[i, F_HZPOS] = 0
        return _next_responder(state, i, max_turns, single)
    length = state[i, F_PLEN + x]
    state[i, F_PILE + DECK_SIZE * x + length] = card
    state[i, F_PLEN + x] = length + 1
    state[i, F_PCNT + NUM_KINDS * x + card] += 1
    return _end_turn(state, i, max_turns, single)


@numba.njit(cache=True, nogil=True)
def _place(state, i, p):  # pragma: no cover - compiled
    """Put the held card into the turn player's slot p (§3.2, §3.4); the card that left becomes the held card."""
    tp = state[i, F_TP]
    o = SLOTS * tp + p
    d = state[i, F_LAY + o]
    was_up = state[i, F_UP + o]
    state[i, F_LAY + o] = state[i, F_HELD]
    state[i, F_UP + o] = 1
    state[i, F_FILLED + p] = 1
    state[i, F_HELD] = d
    if was_up:
        state[i, F_HSRC] = SRC_DISPLACED
        state[i, F_PHASE] = DISCARD
        return
    state[i, F_UNSEEN + d] -= 1
    if d < _POSITIVE_END:
        for q in range(SLOTS):
            if state[i, F_UP + SLOTS * tp + q] and state[i, F_LAY + SLOTS * tp + q] == d:
                state[i, F_HSRC] = SRC_BOUNCE
                state[i, F_PHASE] = BOUNCE
                return
    state[i, F_HSRC] = SRC_DISPLACED
    state[i, F_PHASE] = DISCARD


@numba.njit(cache=True, nogil=True)
def _apply(state, i, a, max_turns, single):  # pragma: no cover - compiled
    """Apply legal action ``a`` to game i; return READY, NEED_DEAL or NEED_SHUFFLE."""
    ph = state[i, F_PHASE]
    c = state[i, F_CUR]
    if ph == REVEAL:
        o = SLOTS * c + a
        state[i, F_UP + o] = 1
        state[i, F_UNSEEN + state[i, F_LAY + o]] -= 1
        k = state[i, F_REVEALS] + 1
        state[i, F_REVEALS] = k
        n = state[i, F_N]
        if k == 2 * n:
            _start_turn(state, i, state[i, F_FIRST])
        else:
            state[i, F_CUR] = (state[i, F_FIRST] + k // 2) % n
        return READY
    if ph == DRAW_PHASE:
        if a == DRAW:
            length = state[i, F_DLEN] - 1
            card = state[i, F_DRAW + length]
            state[i, F_DLEN] = length
            if state[i, F_RESHUF]:
                state[i, F_RCNT + card] -= 1
            else:
                state[i, F_UNSEEN + card] -= 1
            state[i, F_HELD] = card
            state[i, F_HSRC] = SRC_DRAW
            state[i, F_PHASE] = PLAY
            if length == 0:
                # Every card of both piles except their tops, A's from the bottom then B's, into the draw-pile area.
                m = 0
                for x in range(2):
                    for j in range(state[i, F_PLEN + x] - 1):
                        k = state[i, F_PILE + DECK_SIZE * x + j]
                        state[i, F_DRAW + m] = k
                        m += 1
                        state[i, F_PCNT + NUM_KINDS * x + k] -= 1
                    if state[i, F_PLEN + x] > 0:
                        state[i, F_PILE + DECK_SIZE * x] = state[i, F_PILE + DECK_SIZE * x + state[i, F_PLEN + x] - 1]
                        state[i, F_PLEN + x] = 1
                state[i, F_SHUFLEN] = m
                return NEED_SHUFFLE
            return READY
        x = a - TAKE_A
        length = state[i, F_PLEN + x] - 1
        card = state[i, F_PILE + DECK_SIZE * x + length]
        state[i, F_PLEN + x] = length
        state[i, F_PCNT + NUM_KINDS * x + card] -= 1
        state[i, F_HELD] = card
        state[i, F_HSRC] = SRC_A + x
        state[i, F_PHASE] = PLAY
        return READY
    if ph == PLAY or ph == BOUNCE:
        if a < SLOTS:
            _place(state, i, a)
            return READY
        return _discard(state, i, a - DISCARD_A, max_turns, single)
    if ph == DISCARD:
        return _discard(state, i, a - DISCARD_A, max_turns, single)
    # Hazard response.
    if a < SLOTS:
        o = SLOTS * c + a
        state[i, F_UP + o] = 1
        state[i, F_UNSEEN + state[i, F_LAY + o]] -= 1
    return _next_responder(state, i, max_turns, single)


@numba.njit(cache=True, nogil=True)
def _advance(state, i, max_turns, single, free_take, mask):  # pragma: no cover - compiled
    """Play game i's automatic decisions (one legal action) until a real decision or randomness; return the status.

    On READY, row i of ``mask`` holds the legal actions of that decision (the masks the engine returns).
    """
    while state[i, F_PHASE] != DONE:
        if _legal(state, i, free_take, mask) != 1:
            return READY
        a = 0
        while mask[i, a] == 0:
            a += 1
        st = _apply(state, i, a, max_turns, single)
        if st != READY:
            return st
    return NEED_DEAL


@numba.njit(cache=True, nogil=True)
def _finish(state, i, st, margin, rewards, dones, last_totals):  # pragma: no cover - compiled
    """After a game's transitions: if it is over, write its rewards (§4.6) and totals and clear it for a new game."""
    if st != NEED_DEAL or state[i, F_PHASE] != DONE:
        return
    n = state[i, F_N]
    dones[i] = True
    for s in range(MAX_PLAYERS):
        last_totals[i, s] = state[i, F_TOTALS + s]
    if margin:
        total = 0
        for s in range(n):
            total += state[i, F_TOTALS + s]
        for s in range(n):
            t = state[i, F_TOTALS + s]
            rewards[i, s] = np.float32(((total - t) / (n - 1) - t) / 100)
    else:
        best = 1 << 30
        for s in range(n):
            best = min(best, state[i, F_TOTALS + s])
        third = 1 << 30
        for s in range(n):
            if state[i, F_TOTALS + s] == best:
                third = min(third, state[i, F_RSC + MAX_PLAYERS * (NUM_ROUNDS - 1) + s])
        w = 0
        for s in range(n):
            if state[i, F_TOTALS + s] == best and state[i, F_RSC + MAX_PLAYERS * (NUM_ROUNDS - 1) + s] == third:
                w += 1
        if w < n:
            for s in range(n):
                win = state[i, F_TOTALS + s] == best and state[i, F_RSC + MAX_PLAYERS * (NUM_ROUNDS - 1) + s] == third
                rewards[i, s] = np.float32(1.0 / w) if win else np.float32(-1.0 / (n - w))
    for f in range(WIDTH):
        if f != F_N:
            state[i, f] = 0


@numba.njit(cache=True, nogil=True)
def step_into(actions, state, mask, max_turns, single, free_take, margin, rewards, dones, last_totals, status):  # pragma: no cover - compiled
    """Apply ``actions`` to every game; return the first game whose action is illegal (nothing changed then), else -1."""
    envs = state.shape[0]
    for i in range(envs):  # out-of-range actions first
        if actions[i] < 0 or actions[i] >= NUM_ACTIONS:
            return i
    for i in range(envs):
        if mask[i, actions[i]] == 0:
            return i
    for i in range(envs):
        st = _apply(state, i, actions[i], max_turns, single)
        if st == READY:
            st = _advance(state, i, max_turns, single, free_take, mask)
        _finish(state, i, st, margin, rewards, dones, last_totals)
        status[i] = st
    return -1


@numba.njit(cache=True, nogil=True)
def resume_into(games, cards, state, mask, max_turns, single, free_take, margin, first_player, rotate, rewards, dones, last_totals, status):  # noqa: E501 # pragma: no cover
    """Apply game ``games[k]``'s pending random event with ``cards[k]`` (a round's draw pile, or the shuffled cards), then carry on."""
    for k in range(len(games)):
        i = games[k]
        if status[i] == NEED_SHUFFLE:
            m = state[i, F_SHUFLEN]
            for j in range(m):
                c = cards[k, j]
                state[i, F_DRAW + j] = c
                state[i, F_RCNT + c] += 1
            state[i, F_DLEN] = m
            state[i, F_RESHUF] = 1
            state[i, F_SHUFLEN] = 0
        else:
            _deal(state, i, cards[k], first_player, rotate)
        st = _advance(state, i, max_turns, single, free_take, mask)
        _finish(state, i, st, margin, rewards, dones, last_totals)
        status[i] = st


@numba.njit(cache=True, nogil=True)
def _deal(state, i, deck, first_player, rotate):  # pragma: no cover - compiled
    """Set up round ``state[i, F_ROUND]`` from ``deck`` (110 kinds, the draw pile, top card last) as §2 does."""
    n = state[i, F_N]
    r = state[i, F_ROUND]
    top = DECK_SIZE
    for s in range(MAX_PLAYERS):
        for p in range(SLOTS):
            o = SLOTS * s + p
            state[i, F_UP + o] = 0
            if s < n:
                top -= 1
                state[i, F_LAY + o] = deck[top]
            else:
                state[i, F_LAY + o] = 0
        state[i, F_FINAL + s] = 0
    for k in range(NUM_KINDS):
        state[i, F_UNSEEN + k] = _COPIES[k]
        state[i, F_RCNT + k] = 0
        state[i, F_PCNT + k] = 0
        state[i, F_PCNT + NUM_KINDS + k] = 0
    removed = 0
    for x in range(2):
        while True:
            top -= 1
            c = deck[top]
            state[i, F_UNSEEN + c] -= 1
            if c != HAZARD:
                break
            removed += 1
        state[i, F_PILE + DECK_SIZE * x] = c
        state[i, F_PLEN + x] = 1
        state[i, F_PCNT + NUM_KINDS * x + c] = 1
    for j in range(top):
        state[i, F_DRAW + j] = deck[j]
    state[i, F_DLEN] = top
    state[i, F_RESHUF] = 0
    state[i, F_REMOVED] = removed
    first = (first_player + r) % n if rotate else first_player
    state[i, F_FIRST] = first
    state[i, F_CUR] = first
    state[i, F_TP] = first
    state[i, F_PHASE] = REVEAL
    state[i, F_REVEALS] = 0
    state[i, F_HELD] = -1
    state[i, F_HSRC] = -1
    state[i, F_WENT] = -1
    state[i, F_TURNS] = 0
    state[i, F_HZD] = -1
    state[i, F_HZPOS] = 0
    for p in range(SLOTS):
        state[i, F_FILLED + p] = 0


# --------------------------------------------------------------------------------------------- observation
@numba.njit(cache=True, nogil=True)
def encode_into(state, f_count, f_draw, f_removed, f_turns, f_total, f_rsc, obs, seat, clear):  # pragma: no cover - compiled
    """Write every game's observation (§6.3) from its player to act into ``obs`` [B,1046] and that seat into ``seat`` [B].

    The masks come from the transitions.

    The ``f_*`` tables hold every normalised value as the scalar encoder computes it; ``f_turns`` is per table size
    [8, max_turns*8]; ``f_total`` and ``f_rsc`` start at TOTAL_LOW and SCORE_LOW.  ``clear``: zero each row first.
    """
    for i in range(state.shape[0]):
        if clear:
            obs[i, :] = 0.0
        n = state[i, F_N]
        c = state[i, F_CUR]
        seat[i] = c
        ph = state[i, F_PHASE]
        s = c
        for r in range(n):
            base = O_LAYOUT + _SEAT_STRIDE * r
            for p in range(SLOTS):
                o = SLOTS * s + p
                obs[i, base + 13 * p + (state[i, F_LAY + o] if state[i, F_UP + o] else 12)] = 1.0
            obs[i, O_SEATS + r] = 1.0
            if state[i, F_FINAL + s]:
                obs[i, O_FINAL + r] = 1.0
            obs[i, O_TOTALS + r] = f_total[state[i, F_TOTALS + s] - TOTAL_LOW]
            for rd in range(state[i, F_ROUND]):
                obs[i, O_RSC + MAX_PLAYERS * rd + r] = f_rsc[state[i, F_RSC + MAX_PLAYERS * rd + s] - SCORE_LOW]
            s = s + 1 if s + 1 < n else 0
        for x in range(2):
            length = state[i, F_PLEN + x]
            for d in range(3):
                k = state[i, F_PILE + DECK_SIZE * x + length - 1 - d] if d < length else 12
                obs[i, O_TOPS + 39 * x + 13 * d + k] = 1.0
            for k in range(NUM_KINDS):
                obs[i, O_PCNT + NUM_KINDS * x + k] = f_count[state[i, F_PCNT + NUM_KINDS * x + k]]
        for k in range(NUM_KINDS):
            obs[i, O_UNSEEN + k] = f_count[state[i, F_UNSEEN + k]]
            obs[i, O_RCNT + k] = f_count[state[i, F_RCNT + k]]
        obs[i, O_DRAWSIZE] = f_draw[state[i, F_DLEN]]
        obs[i, O_RESHUF] = state[i, F_RESHUF]
        obs[i, O_REMOVED] = f_removed[state[i, F_REMOVED]]
        held = state[i, F_HELD]
        obs[i, O_HELD + (held if held >= 0 else 12)] = 1.0
        if held >= 0:
            obs[i, O_HSRC + state[i, F_HSRC]] = 1.0
        if c == state[i, F_TP] and ph != REVEAL:
            for p in range(SLOTS):
                if state[i, F_FILLED + p]:
                    obs[i, O_FILLED + p] = 1.0
        obs[i, O_PHASE + _OBS_PHASE[ph]] = 1.0
        obs[i, O_ROUND + min(state[i, F_ROUND], NUM_ROUNDS - 1)] = 1.0
        obs[i, O_TURNS] = f_turns[n, state[i, F_TURNS]]
        obs[i, O_FIRST + (state[i, F_FIRST] - c) % n] = 1.0
        if state[i, F_WENT] >= 0:
            obs[i, O_WENT + (state[i, F_WENT] - c) % n] = 1.0
        if ph == HAZARD_PHASE:
            obs[i, O_HZD + (state[i, F_HZD] - c) % n] = 1.0
