"""Rules-level token encodings of a Gnoming position, for set/attention networks (``training.learner``).

The tokens are computed from the observation (:mod:`grinch_env.gnoming.encoding`),
so they carry exactly what a seat may know and nothing hidden; the same
functions serve a single :class:`~grinch_env.gnoming.game.Game` and a batch of
observations from the batched engine.  ``grinch_env.grinch.tokens`` has the
same functions and the same column layout, so one network reads both games.

State tokens, ``float32[N_TOKENS, TOKEN_DIM]``; columns ``TYPE, CARD, SEAT,
POS`` hold integer ids, the rest are dense features (zero-padded to
``NUM_DENSE``):

=======  =====  =====================================================================
type     count  content
=======  =====  =====================================================================
global   1      card = held card; phase, round, held source, draw pile size, turns...
seat     7      seat = relative seat; total, 3 round scores, starts/went out/final turn/Hazard discarder;
                face-down slots, printed points of the face-up cards, matched lines (v2)
slot     63     seat, pos = slot 0..8, card = face-up kind or FACE_DOWN; filled this turn; printed points,
                face down, and the row's and column's line facts as in the action tokens (v2)
pile     6      pos = 3 * pile + depth, card = kind (top 3 of piles A and B); printed points (v2)
kind     12     card = kind; count in pile A, pile B, never seen, reshuffled draw pile; printed points (v2)
=======  =====  =====================================================================

Tokens of seats not at the table have type ``PAD`` (0).

Action tokens, ``float32[NUM_ACTIONS, ACTION_DIM]`` (columns ``TYPE, CARD,
CARD2, POS`` then dense): what each action does under the rules.  A slot
action names the slot, the card it places (the held card) and the card it
displaces (or FACE_DOWN), and describes the slot's row and column before and
after the action from the face-up cards alone: face-down count, whether the
line can still match (no negative or Hazard, one positive value at most,
Mulligans wild), how many cards agree, whether it is matched, its value.
These are rule facts of the afterstate before chance: no values of unseen
cards, no heuristic scores.
"""

from __future__ import annotations

import numpy as np

from grinch_env.gnoming import encoding as enc
from grinch_env.gnoming.cards import HAZARD, MULLIGAN, NUM_KINDS, POINTS
from grinch_env.gnoming.game import (
    DISCARD_A,
    DISCARD_B,
    DRAW,
    MAX_PLAYERS,
    NUM_ACTIONS,
    NUM_SLOTS,
    PASS,
    TAKE_A,
    TAKE_B,
    Game,
)
from grinch_env.tokens import (  # the column layout both games share (`duplicates` pairs this list with the other game's: names, not logic)
    ACTION_DIM,
    CARD,
    CARD2,
    CARD_VOCAB,
    NO_CARD,
    NUM_DENSE,
    NUM_IDS,
    POS,
    POS_VOCAB,
    SEAT,
    SEAT_VOCAB,
    TOKEN_DIM,
    TYPE,
    TYPE_VOCAB,
)

TOKENS_VERSION = 2  # bump when any token column changes: checkpoints record it and refuse another

FACE_DOWN = NUM_KINDS + 1  # 13
NO_SEAT = 7

# State token types and where they sit.
PAD, GLOBAL, SEAT_T, SLOT_T, PILE_T, KIND_T = 0, 1, 2, 3, 4, 5
G0 = 0
S0 = G0 + 1
L0 = S0 + MAX_PLAYERS  # 8
P0 = L0 + MAX_PLAYERS * NUM_SLOTS  # 71
K0 = P0 + 2 * enc.TOP_DEPTH  # 77
N_TOKENS = K0 + NUM_KINDS  # 89

# Action token types.
A_FLIP, A_PLACE, A_DRAW, A_TAKE, A_DISCARD, A_PASS = 1, 2, 3, 4, 5, 6

LINES = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8]])
_SLOT_LINES = np.array([[p // 3, 3 + p % 3] for p in range(NUM_SLOTS)])  # the row and the column through slot p
_POINTS = np.array(POINTS + (0, 0), dtype=np.float32)  # by kind; 12 (face down) and 13 score nothing known
LINE_FEATURES = 5


def _kinds(onehot: np.ndarray) -> np.ndarray:
    """Return the kind (0..11) or 12 (face down / no card) of 13-channel one-hot blocks; all-zero blocks give 12."""
    k = onehot.argmax(-1)
    return np.where(onehot.max(-1) > 0, k, enc.EMPTY)


def _line_stats(cells: np.ndarray) -> np.ndarray:
    """Return ``float32[..., 5]`` for lines of 3 kinds (12 = face down): face down / 3, can match, agreeing / 3, matched, value / 8."""
    down = cells == enc.EMPTY
    positive = cells < 6
    breaker = ((cells >= 6) & (cells <= HAZARD)).any(-1)
    pos_kind = np.where(positive, cells, 99)
    lo = pos_kind.min(-1)
    hi = np.where(positive, cells, -1).max(-1)
    has_pos = positive.any(-1)
    alive = ~breaker & (~has_pos | (lo == hi))
    agree = positive.sum(-1) + (cells == MULLIGAN).sum(-1)
    fd = down.sum(-1)
    matched = alive & (fd == 0) & has_pos
    value = np.where(has_pos, lo + 3, 0)
    return np.stack([fd / 3.0, alive, np.where(alive, agree, 0) / 3.0, matched, value / 8.0], -1).astype(np.float32)


def encode_batch(obs: np.ndarray, masks: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(state float32[B, N_TOKENS, TOKEN_DIM], actions float32[B, NUM_ACTIONS, ACTION_DIM])`` of observations ``[B, 1046]``.

    ``masks`` (``[B, 15]``) are not needed for the tokens; illegal actions get
    tokens too (the network masks them).  Everything is read from the
    observation, so nothing hidden can enter.
    """
    obs = np.asarray(obs, dtype=np.float32)
    if obs.ndim != 2 or obs.shape[1] != enc.OBS_SIZE:
        raise ValueError(f"obs must have shape [B, {enc.OBS_SIZE}], got {obs.shape}")
    b = obs.shape[0]
    st = np.zeros((b, N_TOKENS, TOKEN_DIM), dtype=np.float32)
    present = obs[:, enc.PRESENT:enc.PRESENT + MAX_PLAYERS] > 0  # [B, 7]
    layouts = _kinds(obs[:, :enc.PRESENT].reshape(b, MAX_PLAYERS, NUM_SLOTS, enc.CHANNELS))  # [B, 7, 9], 12 = face down
    held = _kinds(obs[:, enc.HELD:enc.HELD + enc.CHANNELS])  # [B]
    tops = _kinds(obs[:, enc.PILE_TOPS:enc.PILE_COUNTS].reshape(b, 2, enc.TOP_DEPTH, enc.CHANNELS))  # [B, 2, 3], 12 = none
    filled = obs[:, enc.FILLED:enc.FILLED + NUM_SLOTS]

    # global
    g = st[:, G0]
    g[:, TYPE] = GLOBAL
    g[:, CARD] = np.where(held == enc.EMPTY, NO_CARD, held + 1)
    g[:, SEAT] = NO_SEAT
    dense = np.concatenate([
        obs[:, enc.DRAW_SIZE:enc.HELD],  # draw size, reshuffled flag, Hazards removed
        obs[:, enc.HELD_SOURCE:enc.FILLED],  # 5 sources
        obs[:, enc.PHASE:enc.FIRST_PLAYER],  # 4 phases, 3 rounds, turns
    ], axis=1)
    g[:, NUM_IDS:NUM_IDS + dense.shape[1]] = dense

    # seats
    s = st[:, S0:L0]
    s[..., TYPE] = np.where(present, SEAT_T, PAD)
    s[..., SEAT] = np.arange(MAX_PLAYERS)
    s[..., NUM_IDS + 0] = obs[:, enc.TOTALS:enc.TOTALS + MAX_PLAYERS]
    s[..., NUM_IDS + 1:NUM_IDS + 4] = obs[:, enc.ROUND_SCORES:enc.OBS_SIZE].reshape(b, 3, MAX_PLAYERS).transpose(0, 2, 1)
    for i, base in enumerate((enc.FIRST_PLAYER, enc.WENT_OUT, enc.FINAL_TURN, enc.DISCARDER)):
        s[..., NUM_IDS + 4 + i] = obs[:, base:base + MAX_PLAYERS]

    # slots
    sl = st[:, L0:P0].reshape(b, MAX_PLAYERS, NUM_SLOTS, TOKEN_DIM)
    sl[..., TYPE] = np.where(present, SLOT_T, PAD)[..., None]
    sl[..., CARD] = np.where(layouts == enc.EMPTY, FACE_DOWN, layouts + 1)
    sl[..., SEAT] = np.arange(MAX_PLAYERS)[:, None]
    sl[..., POS] = np.arange(NUM_SLOTS)
    sl[:, 0, :, NUM_IDS] = filled
    down = layouts == enc.EMPTY
    points = _POINTS[layouts]  # the printed points of each face-up card; 0 face down (kind 12)
    sl[..., NUM_IDS + 1] = points / 10.0
    sl[..., NUM_IDS + 2] = down
    seat_lines = _line_stats(layouts[:, :, LINES])  # [B, 7, 6 lines, 5]
    sl[..., NUM_IDS + 3:NUM_IDS + 3 + 2 * LINE_FEATURES] = seat_lines[:, :, _SLOT_LINES].reshape(b, MAX_PLAYERS, NUM_SLOTS, 2 * LINE_FEATURES)
    sl *= present[..., None, None]
    s[..., NUM_IDS + 8] = down.sum(-1) / NUM_SLOTS  # public counts of each layout
    s[..., NUM_IDS + 9] = points.sum(-1) / 50.0
    s[..., NUM_IDS + 10] = seat_lines[..., 3].sum(-1) / 6.0  # lines already matched
    s *= present[..., None]  # seats not at the table stay all zero (their type is PAD)

    # pile tops
    pt = st[:, P0:K0].reshape(b, 2, enc.TOP_DEPTH, TOKEN_DIM)
    pt[..., TYPE] = PILE_T
    pt[..., CARD] = np.where(tops == enc.EMPTY, NO_CARD, tops + 1)
    pt[..., SEAT] = NO_SEAT
    pt[..., POS] = np.arange(2 * enc.TOP_DEPTH).reshape(2, enc.TOP_DEPTH)
    pt[..., NUM_IDS] = np.where(tops == enc.EMPTY, 0.0, _POINTS[tops] / 10.0)

    # kind counts
    kt = st[:, K0:]
    kt[..., TYPE] = KIND_T
    kt[..., CARD] = np.arange(NUM_KINDS) + 1
    kt[..., SEAT] = NO_SEAT
    kt[..., NUM_IDS + 0] = obs[:, enc.PILE_COUNTS:enc.PILE_COUNTS + NUM_KINDS]
    kt[..., NUM_IDS + 1] = obs[:, enc.PILE_COUNTS + NUM_KINDS:enc.NEVER_SEEN]
    kt[..., NUM_IDS + 2] = obs[:, enc.NEVER_SEEN:enc.RESHUFFLED_COUNTS]
    kt[..., NUM_IDS + 3] = obs[:, enc.RESHUFFLED_COUNTS:enc.DRAW_SIZE]
    kt[..., NUM_IDS + 4] = _POINTS[:NUM_KINDS] / 10.0

    return st, _action_tokens(obs, layouts[:, 0], held, tops)


def _action_tokens(obs: np.ndarray, own: np.ndarray, held: np.ndarray, tops: np.ndarray) -> np.ndarray:
    b = obs.shape[0]
    at = np.zeros((b, NUM_ACTIONS, ACTION_DIM), dtype=np.float32)
    phase = obs[:, enc.PHASE:enc.PHASE + 4]
    flipping = (phase[:, 0] > 0) | (phase[:, 3] > 0)  # reveal or Hazard response: a slot action turns a card up
    held_id = np.where(held == enc.EMPTY, NO_CARD, held + 1)

    # slots: before/after stats of the row and the column through the slot
    after = np.repeat(own[:, None, :], NUM_SLOTS, axis=1)  # [B, 9 actions, 9 slots]
    placed = np.where(held == enc.EMPTY, enc.EMPTY, held)
    idx = np.arange(NUM_SLOTS)
    after[:, idx, idx] = np.where(flipping, enc.EMPTY, placed)[:, None]  # a flip's card is unknown until it is up
    before_stats = _line_stats(own[:, LINES])  # [B, 6, 5]
    after_stats = _line_stats(after[:, :, LINES])  # [B, 9, 6, 5]
    lines = _SLOT_LINES  # [9, 2]
    bs = before_stats[:, lines].reshape(b, NUM_SLOTS, 2 * LINE_FEATURES)
    as_ = after_stats[:, idx[:, None], lines].reshape(b, NUM_SLOTS, 2 * LINE_FEATURES)
    slot = at[:, :NUM_SLOTS]
    slot[..., TYPE] = np.where(flipping, A_FLIP, A_PLACE)[:, None]
    slot[..., CARD] = np.where(flipping, NO_CARD, held_id)[:, None]
    slot[..., CARD2] = np.where(own == enc.EMPTY, FACE_DOWN, own + 1)
    slot[..., POS] = idx
    d = NUM_IDS
    slot[..., d:d + 10] = bs
    slot[..., d + 10:d + 20] = as_
    slot[..., d + 20] = own == enc.EMPTY  # the displaced card is face down (it may bounce once seen)
    slot[..., d + 21] = np.where(flipping[:, None], 0.0, _POINTS[held][:, None] / 10.0)
    slot[..., d + 22] = _POINTS[own] / 10.0

    # draw, take, discard, pass
    at[:, DRAW, TYPE] = A_DRAW
    at[:, DRAW, POS] = 9
    top_id = np.where(tops[:, :, 0] == enc.EMPTY, NO_CARD, tops[:, :, 0] + 1)  # [B, 2]
    under_id = np.where(tops[:, :, 1] == enc.EMPTY, NO_CARD, tops[:, :, 1] + 1)
    for i, (take, discard) in enumerate(((TAKE_A, DISCARD_A), (TAKE_B, DISCARD_B))):
        at[:, take, TYPE] = A_TAKE
        at[:, take, CARD] = top_id[:, i]
        at[:, take, CARD2] = under_id[:, i]  # the card it uncovers
        at[:, take, POS] = 10 + i
        at[:, discard, TYPE] = A_DISCARD
        at[:, discard, CARD] = held_id
        at[:, discard, CARD2] = top_id[:, i]  # the card it covers
        at[:, discard, POS] = 12 + i
        at[:, discard, d + 21] = _POINTS[held] / 10.0
    at[:, PASS, TYPE] = A_PASS
    at[:, PASS, POS] = 14
    return at


def state_tokens(game: Game, seat: int) -> np.ndarray:
    """Return ``float32[N_TOKENS, TOKEN_DIM]``: the position as ``seat`` may see it (module docstring)."""
    return encode_batch(enc.encode(game, seat)[None])[0][0]


def action_tokens(game: Game, seat: int) -> np.ndarray:
    """Return ``float32[num_legal, ACTION_DIM]``, one token per legal action of ``seat`` in ``game.legal_actions()`` order."""
    legal = game.legal_actions() if game.current == seat else []
    return encode_batch(enc.encode(game, seat)[None])[1][0][legal]


__all__ = [
    "TOKENS_VERSION",
    "ACTION_DIM", "CARD", "CARD2", "CARD_VOCAB", "FACE_DOWN", "NUM_DENSE", "NUM_IDS", "N_TOKENS", "POS", "POS_VOCAB", "SEAT",
    "SEAT_VOCAB", "TOKEN_DIM", "TYPE", "TYPE_VOCAB", "action_tokens", "encode_batch", "state_tokens",
]
