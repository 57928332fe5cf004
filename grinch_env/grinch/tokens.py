"""Rules-level token encodings of a Grinch position, for set/attention networks (``training.learner``).

The tokens are computed from the observation (:mod:`grinch_env.grinch.encoding`),
so they carry exactly what the seat may know (its own hand, the discard piles,
cards known to be in other hands, public counts and score pads) and nothing
hidden.  ``grinch_env.gnoming.tokens`` has the same functions and the same
column layout (``TYPE, CARD, SEAT, POS`` ids, then ``NUM_DENSE`` dense
features), so one network reads both games.

State tokens, ``float32[N_TOKENS, TOKEN_DIM]``:

=======  =====  ======================================================================
type     count  content
=======  =====  ======================================================================
global   1      round, rounds left, turn, phase, first draw made, draw pile size,
                own hand's row values and bonus (the observation's), to act;
                the banked margin (own total - mean of the others') / 100
seat     6      seat = relative seat; is the Grinch, hand size, rows used, row points,
                total / 100, lead over the best other seat (total - their best) / 100
card     48     card = id + 1; pos = where it is (``LOC_*``), seat = whose pile/hand;
                suit, rank, its printed bonus (points, required suit and count)
=======  =====  ======================================================================

Action tokens, ``float32[NUM_ACTIONS, ACTION_DIM]`` (``TYPE, CARD, CARD2,
POS`` then dense): a discard names the card and gives the row values and
bonus of the hand it leaves (the afterstate); a draw from a discard pile names
the card it takes, the card it uncovers and the pile's relative seat, with the
row values of the hand plus that card; the draw pile has the current hand's
(before chance); a score action names the row and the points it writes.  Row
values are the scoring rules applied to the afterstate hand, exactly as the
observation gives them for the current hand: no maxima, weights or guesses
about unseen cards.  Since version 3 a discard's or draw's row values are
those of the rows the seat can still write: a row already used on its score
pad reads 0 (the rules forbid writing it again).  With ``encode_batch``'s
``action_cards`` (a network's ``net.token_options``; off by default, the
version unchanged) a discard's and a pile draw's token also carry the moved
card's suit, rank and bonus columns; with ``extend``, every discard and draw
token, per open row, the count of unseen cards that would raise that row of
its afterstate hand.

Version 2 (``TOKENS_VERSION``) reads the score pads in points / 100 (the
margin reward's scale; version 1 gave the observation's total / 450, where
one round's points moved a total by under 0.1), adds each seat's lead over the
best other seat and puts the banked margin on the global token: the score so
far, which decides most of a game's outcome, is now legible.

Version 3 zeroes the used rows in the discard and draw tokens' row values.
Measured on version 2 (docs/results/ppo_tokens.md): where the best
afterstate over all rows and the best over the open rows differ, the
150-minute network took either about equally often (158 and 152 of 329
decisions), that is, it did not connect the action's row values to the score
pad's used rows; ``greedy`` takes the open-rows best every time.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from grinch_env.grinch import encoding as enc
from grinch_env.grinch.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS, RANK, SUIT
from grinch_env.grinch.game import DRAW_DISCARD_BASE, DRAW_PILE_ACTION, MARGIN_SCALE, MAX_PLAYERS, NUM_ACTIONS, SCORE_BASE, Game
from grinch_env.grinch.scoring import MATCH_POINTS, MAX_ROW_VALUE, NUM_ROWS, RUN_POINTS, resolve_layout
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

TOKENS_VERSION = 3  # bump when any token column changes: checkpoints record it and refuse another
TOKEN_OPTIONS = ("action_cards", "card_after", "extend")  # encode_batch's input options a network may read (net.token_options)

# ------------------------------------------------------------ column layout (shared with grinch_env.gnoming.tokens)
NO_SEAT = 7

PAD, GLOBAL, SEAT_T, CARD_T = 0, 1, 2, 3
G0, S0 = 0, 1
C0 = S0 + MAX_PLAYERS  # 7
N_TOKENS = C0 + NUM_CARDS  # 55
# Where a card is, as the observer knows it (card tokens' POS column).
LOC_UNSEEN, LOC_HAND, LOC_PILE, LOC_TOP, LOC_SECOND, LOC_KNOWN = range(6)
G_MARGIN = 29  # the global token's dense column of the banked margin (after the observation's 29 global features)
C_AFTER = 11  # card tokens' first dense column of the afterstate values (encode_batch's card_after; 8 columns)
S_HAND = 18  # seat tokens' first dense column of the hand values (encode_batch's seat_hands; 9 columns)
A_CARD = 12  # action tokens' first dense column of the moved card's rules columns (encode_batch's action_cards; CARD_COLS columns)
A_EXTEND = 23  # action tokens' first dense column of the unseen cards that would raise each open row (encode_batch's extend; 7 columns)
CARD_COLS = 11  # a card's own rules columns (suit one-hot, rank / 6, bonus / 10, the bonus's suit one-hot, count / 3): card tokens' first

A_DISCARD, A_DRAW_PILE, A_DRAW_DISCARD, A_SCORE = 1, 2, 3, 4

_RANK = np.array(RANK[:NUM_CARDS], dtype=np.int64)
_SUIT = np.array(SUIT[:NUM_CARDS], dtype=np.int64)
_SUIT_RANK = np.zeros((NUM_CARDS, NUM_SUITS), np.float32)
_SUIT_RANK[np.arange(NUM_CARDS), _SUIT] = _RANK
_SUIT_ONE = np.zeros((NUM_CARDS, NUM_SUITS), np.float32)
_SUIT_ONE[np.arange(NUM_CARDS), _SUIT] = 1
_RANK_ONE = np.zeros((NUM_CARDS, NUM_RANKS), np.float32)
_RANK_ONE[np.arange(NUM_CARDS), _RANK - 1] = 1
_MATCH = np.array(MATCH_POINTS, dtype=np.float32)
_RUN = np.array(RUN_POINTS, dtype=np.float32)


class _Layout:
    """A bonus layout as arrays, with the observation's scales."""

    def __init__(self, layout: tuple) -> None:
        self.table = layout
        self.scales = enc.Scales(layout)
        self.points = np.array([0 if b is None else b.points for b in layout], np.float32)
        self.suit = np.array([0 if b is None else b.suit for b in layout], np.int64)
        self.count = np.array([99 if b is None else b.count for b in layout], np.float32)
        card_dense = np.zeros((NUM_CARDS, CARD_COLS), np.float32)
        card_dense[np.arange(NUM_CARDS), _SUIT] = 1
        card_dense[:, 4] = _RANK / NUM_RANKS
        card_dense[:, 5] = self.points / 10.0
        has = self.points > 0
        card_dense[np.flatnonzero(has), 6 + self.suit[has]] = 1
        card_dense[:, 10] = np.where(has, self.count, 0) / 3.0
        self.card_dense = card_dense


_LAYOUTS: dict[int, tuple[tuple, _Layout]] = {}


def _layout(bonus_layout: str | Mapping | tuple) -> _Layout:
    table = resolve_layout(bonus_layout)
    hit = _LAYOUTS.get(id(table))
    if hit is None or hit[0] is not table:
        hit = _LAYOUTS[id(table)] = (table, _Layout(table))
    return hit[1]


def hand_values(hands: np.ndarray, bonus_layout: str | Mapping | tuple = "standard") -> tuple[np.ndarray, np.ndarray]:
    """Return ``(float32[..., 7] row values, float32[...] bonus)`` of hands given as 0/1 ``[..., 48]`` card indicators.

    The rules of ``grinch_env.grinch.scoring`` (``row_scores``, ``bonus_points``), vectorised.
    """
    lay = _layout(bonus_layout)
    h = np.asarray(hands, dtype=np.float32)
    shape = h.shape[:-1]
    h = h.reshape(-1, NUM_CARDS)
    rows = np.empty((h.shape[0], NUM_ROWS), np.float32)
    rows[:, :NUM_SUITS] = h @ _SUIT_RANK
    rows[:, 4] = (h.reshape(-1, NUM_SUITS, NUM_CARDS // NUM_SUITS) * _RANK.reshape(NUM_SUITS, -1)).max(-1).sum(-1)
    counts = h @ _RANK_ONE  # [K, 6]
    rows[:, 5] = _MATCH[counts.max(-1).astype(np.int64)]
    run = np.zeros(h.shape[0], np.float32)
    best = np.zeros(h.shape[0], np.float32)
    for r in range(NUM_RANKS):
        run = (run + 1) * (counts[:, r] > 0)
        best = np.maximum(best, run)
    rows[:, 6] = _RUN[best.astype(np.int64)]
    suit_counts = h @ _SUIT_ONE  # [K, 4]
    bonus = (h * (suit_counts[:, lay.suit] >= lay.count)) @ lay.points
    return rows.reshape(*shape, NUM_ROWS), bonus.reshape(shape)


def _open_values(hands: np.ndarray, used: np.ndarray, lay: _Layout) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(rows, bonus)`` of 0/1 hands ``[..., 48]`` (:func:`hand_values`), a row the seat has used (``used[..., 7]``,
    broadcast against the hands' leading axes) reading 0: the rows the rules still let it write."""
    rows, bonus = hand_values(hands, lay.table)
    return rows * (used < 0.5), bonus


def encode_batch(obs: np.ndarray, masks: np.ndarray | None = None, bonus_layout: str | Mapping | tuple = "standard",
                 seat_hands: bool = False, card_after: bool = False, action_cards: bool = False,
                 extend: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(state float32[B, N_TOKENS, TOKEN_DIM], actions float32[B, NUM_ACTIONS, ACTION_DIM])`` of observations ``[B, 1337]``.

    Illegal actions get tokens too (the network masks them); ``masks`` is
    accepted for the same signature as Gnoming's and not needed.

    ``seat_hands`` (an asymmetric critic's input, training only): every seat
    token also gets the rules-level values of that seat's hand as the
    observation gives it (the own hand; another seat's "known in hand" block,
    which ``VectorGrinch.reveal_hands`` fills with the whole hand), in the
    columns ``S_HAND`` on: the row values of the rows the seat can still write
    (a used row reads 0, as in the action tokens), the bonus, and the points
    its best open row would write.  Off (the default) those columns are 0: an
    agent's tokens never carry them.

    ``card_after`` (an input under study, ``docs/results/learner_grinch_draws/bc_teacher.py``, and a network
    option, ``net.token_options``; not in any shipped network): every card token also gets the row values (open rows only, as the action tokens) and bonus
    of the observer's hand with that card added, or removed for a card in the hand, in the columns ``C_AFTER`` on:
    the rules applied to each possible next hand, for attention over the unseen cards to average into a blind
    draw's worth (no average is computed here).

    ``action_cards`` (a network option, ``net.token_options``; off in the tokens every network read before it):
    every discard's token and every discard-pile draw's token also carry the card it moves as that card's own state
    token describes it (suit, rank, printed bonus: the same 11 columns), in the columns ``A_CARD`` on; the draw pile
    and the score actions read 0 there.  Which card an action moves, as rules-level columns that a network without
    action card ids (``net.action_card_ids: false``) can still read and generalise over.

    ``extend`` (a network option, ``net.token_options``): every discard's, draw-pile and pile-draw token also carries,
    per row the seat can still write, how many of the cards it cannot locate (unseen: not in its hand, any pile or
    known in a hand) would raise that row of the action's afterstate hand if added to it, / 12, in the columns
    ``A_EXTEND`` on (0 for a used row and for the score actions).  Counts of public facts under the scoring rules, no
    expectation: what the kept cards could still become (``_extend_counts``).
    """
    obs = np.asarray(obs, dtype=np.float32)
    if obs.ndim != 2 or obs.shape[1] != enc.OBS_SIZE:
        raise ValueError(f"obs must have shape [B, {enc.OBS_SIZE}], got {obs.shape}")
    lay = _layout(bonus_layout)
    b = obs.shape[0]
    st = np.zeros((b, N_TOKENS, TOKEN_DIM), np.float32)
    d = NUM_IDS
    present = obs[:, enc.AT_TABLE:enc.AT_TABLE + MAX_PLAYERS] > 0
    hand = obs[:, :NUM_CARDS]
    seats = obs[:, enc.SEAT_BLOCK:enc.AT_TABLE].reshape(b, MAX_PLAYERS, 4, NUM_CARDS)
    contents, top, second, known = (seats[:, :, i] for i in range(4))

    g = st[:, G0]
    g[:, TYPE] = GLOBAL
    g[:, SEAT] = NO_SEAT
    dense = np.concatenate([obs[:, enc.ROUND:enc.ROW_USED], obs[:, enc.OWN_ROW_VALUES:enc.OBS_SIZE]], axis=1)
    g[:, d:d + dense.shape[1]] = dense
    assert dense.shape[1] == G_MARGIN
    totals = seat_totals(obs, lay)  # points, 0 for absent seats
    g[:, d + G_MARGIN] = banked_margin(obs, lay)

    s = st[:, S0:C0]
    s[..., TYPE] = np.where(present, SEAT_T, PAD)
    s[..., SEAT] = np.arange(MAX_PLAYERS)
    s[..., d] = obs[:, enc.GRINCH_SEAT:enc.GRINCH_SEAT + MAX_PLAYERS]
    s[..., d + 1] = obs[:, enc.HAND_SIZE:enc.HAND_SIZE + MAX_PLAYERS]
    s[..., d + 2:d + 9] = obs[:, enc.ROW_USED:enc.ROW_POINTS].reshape(b, MAX_PLAYERS, NUM_ROWS)
    s[..., d + 9:d + 16] = obs[:, enc.ROW_POINTS:enc.TOTALS].reshape(b, MAX_PLAYERS, NUM_ROWS)
    s[..., d + 16] = totals / MARGIN_SCALE
    others_best = _others_best(np.where(present, totals, -np.inf))
    s[..., d + 17] = np.where(present, totals - others_best, 0) / MARGIN_SCALE
    if seat_hands:
        held = known.copy()
        held[:, 0] = hand
        rows, bonus = _open_values(held, obs[:, enc.ROW_USED:enc.ROW_POINTS].reshape(b, MAX_PLAYERS, NUM_ROWS), lay)  # [B, 6, 7], [B, 6]
        s[..., d + S_HAND:d + S_HAND + NUM_ROWS] = rows / MAX_ROW_VALUE
        s[..., d + S_HAND + NUM_ROWS] = bonus / lay.scales.bonus
        s[..., d + S_HAND + NUM_ROWS + 1] = (rows.max(-1) + bonus) / lay.scales.points
    s *= present[..., None]

    c = st[:, C0:]
    c[..., TYPE] = CARD_T
    c[..., CARD] = np.arange(NUM_CARDS) + 1
    # Location, later facts overriding earlier ones: deeper pile < second < top; known in a hand; own hand.
    loc = np.full((b, NUM_CARDS), LOC_UNSEEN, np.float32)
    owner = np.full((b, NUM_CARDS), NO_SEAT, np.float32)
    seat_ids = np.arange(MAX_PLAYERS, dtype=np.float32)[None, :, None]
    for block, code in ((contents, LOC_PILE), (second, LOC_SECOND), (top, LOC_TOP), (known, LOC_KNOWN)):
        there = block.max(1) > 0  # [B, 48]
        loc = np.where(there, code, loc)
        owner = np.where(there, (block * seat_ids).sum(1) / np.maximum(block.sum(1), 1), owner)
    mine = hand > 0
    loc = np.where(mine, LOC_HAND, loc)
    owner = np.where(mine, 0, owner)
    c[..., POS] = loc
    c[..., SEAT] = owner
    c[..., d:d + lay.card_dense.shape[1]] = lay.card_dense
    if card_after:
        eye = np.eye(NUM_CARDS, dtype=np.float32)
        after = np.abs(hand[:, None, :] - eye[None])  # [B, 48, 48]: the hand with card c added, or removed if held
        rows, bonus = _open_values(after, obs[:, None, enc.ROW_USED:enc.ROW_USED + NUM_ROWS], lay)
        c[..., d + C_AFTER:d + C_AFTER + NUM_ROWS] = rows / MAX_ROW_VALUE
        c[..., d + C_AFTER + NUM_ROWS] = bonus / lay.scales.bonus

    after = _afterstate_hands(hand, top)
    at = _action_tokens(obs, after, top, second, lay)
    if action_cards:
        cols = slice(d + A_CARD, d + A_CARD + lay.card_dense.shape[1])
        at[:, :DRAW_PILE_ACTION, cols] = lay.card_dense
        at[:, DRAW_DISCARD_BASE:SCORE_BASE, cols] = top @ lay.card_dense  # a pile's top card (0 for an empty pile)
    if extend:
        used = obs[:, None, enc.ROW_USED:enc.ROW_USED + NUM_ROWS] > 0.5
        at[:, :SCORE_BASE, d + A_EXTEND:d + A_EXTEND + NUM_ROWS] = _extend_counts(after, (loc == LOC_UNSEEN).astype(np.float32)) * ~used / 12.0
    return st, at


_CELL = np.zeros((NUM_CARDS, NUM_SUITS, NUM_RANKS), np.float32)  # card -> its suit x rank cell
_CELL[np.arange(NUM_CARDS), _SUIT, _RANK - 1] = 1


def _extend_counts(hands: np.ndarray, unseen: np.ndarray) -> np.ndarray:
    """``float32[B, H, 7]``: per 0/1 hand ``hands[B, H, 48]`` and row, how many cards of ``unseen[B, 48]`` would raise
    that row's value if added to the hand (the rules of :func:`hand_values`, by suit x rank cell: a row's value depends
    on the cells' counts, not on which copy)."""
    cells = _CELL.reshape(NUM_CARDS, -1)
    g = (hands @ cells).reshape(*hands.shape[:2], NUM_SUITS, NUM_RANKS)  # [B, H, 4, 6]: the hand's counts per cell
    u = (unseen @ cells).reshape(-1, NUM_SUITS, NUM_RANKS)  # [B, 4, 6]: unseen cards per cell
    out = np.empty(hands.shape[:2] + (NUM_ROWS,), np.float32)
    out[..., :NUM_SUITS] = u.sum(-1)[:, None, :]  # a suit's row: any card of that suit adds its rank
    ranks = np.arange(1, NUM_RANKS + 1, dtype=np.float32)
    top_rank = (ranks * (g > 0)).max(-1)  # [B, H, 4]: the highest rank held per suit (0: none)
    out[..., 4] = (u[:, None] * (ranks > top_rank[..., None])).sum((-1, -2))  # Rainbow: a higher rank of its suit
    counts = g.sum(2).astype(np.int64)  # [B, H, 6]: cards per rank
    now = _MATCH[counts.max(-1)]  # [B, H]
    u_rank = u.sum(1)[:, None, :]  # [B, 1, 6]
    out[..., 5] = (u_rank * (_MATCH[counts + 1] > now[..., None])).sum(-1)  # Match: one more of a rank (MATCH_POINTS covers 0..12)
    present = counts > 0
    below = np.zeros(counts.shape, np.int64)  # consecutive held ranks just under each rank
    above = np.zeros(counts.shape, np.int64)
    for r in range(1, NUM_RANKS):
        below[..., r] = (below[..., r - 1] + 1) * present[..., r - 1]
        above[..., NUM_RANKS - 1 - r] = (above[..., NUM_RANKS - r] + 1) * present[..., NUM_RANKS - r]
    run = np.zeros(counts.shape[:2], np.int64)
    length = np.zeros(counts.shape[:2], np.int64)
    for r in range(NUM_RANKS):
        length = (length + 1) * present[..., r]
        run = np.maximum(run, length)
    new = np.maximum(run[..., None], np.where(present, run[..., None], below + 1 + above))  # the longest run with one more of a rank
    out[..., 6] = (u_rank * (_RUN[new] > _RUN[run][..., None])).sum(-1)  # Run (runs are at most 6 long: RUN_POINTS covers them)
    return out


def seat_totals(obs: np.ndarray, lay: _Layout | None = None) -> np.ndarray:
    """Return ``float32[B, 6]``: every relative seat's score-pad total in points (the observation's total x its scale, rounded)."""
    lay = lay or _layout("standard")
    return np.rint(np.asarray(obs[:, enc.TOTALS:enc.OWN_ROW_VALUES], np.float64) * lay.scales.total).astype(np.float32)


def banked_margin(obs: np.ndarray, lay: _Layout | None = None) -> np.ndarray:
    """Return ``float32[B]``: the observer's banked margin ``(own total - mean of the others' totals) / 100``.

    The margin reward (``grinch_env.grinch.game.terminal_rewards``) of the
    score pads as they stand: after the last round it is the game's reward.
    """
    return banked_points(obs, 1.0, lay)


def banked_points(obs: np.ndarray, others: float = 0.0, lay: _Layout | None = None) -> np.ndarray:
    """Return ``float32[B]``: ``(own total - others x mean of the others' totals) / 100``; ``others=1`` is :func:`banked_margin`."""
    totals = seat_totals(obs, lay).astype(np.float64)
    n = (np.asarray(obs[:, enc.AT_TABLE:enc.AT_TABLE + MAX_PLAYERS]) > 0).sum(1)
    return ((totals[:, 0] - others * (totals.sum(1) - totals[:, 0]) / np.maximum(n - 1, 1)) / MARGIN_SCALE).astype(np.float32)


def _others_best(totals: np.ndarray) -> np.ndarray:
    """Return, per seat, the best total among the other seats (``totals`` has ``-inf`` at absent seats)."""
    order = np.sort(totals, axis=1)
    best, second = order[:, -1:], order[:, -2:-1]
    top = totals.argmax(1)[:, None] == np.arange(totals.shape[1])
    return np.where(top, second, best)


def _afterstate_hands(hand: np.ndarray, top: np.ndarray) -> np.ndarray:
    """``[B, 55, 48]``: the hand after each of the 48 discards, the draw pile (the hand before chance) and the 6 pile draws."""
    eye = np.eye(NUM_CARDS, dtype=np.float32)
    discards = hand[:, None, :] * (1 - eye)[None]  # [B, 48, 48]
    draws = np.minimum(hand[:, None, :] + top, 1)  # [B, 6, 48]
    return np.concatenate([discards, hand[:, None, :], draws], axis=1)


def _action_tokens(obs: np.ndarray, after: np.ndarray, top: np.ndarray, second: np.ndarray, lay: _Layout) -> np.ndarray:
    b = obs.shape[0]
    d = NUM_IDS
    at = np.zeros((b, NUM_ACTIONS, ACTION_DIM), np.float32)
    rows, bonus = _open_values(after, obs[:, None, enc.ROW_USED:enc.ROW_USED + NUM_ROWS], lay)  # the rows this seat can still write (v3)
    feats = np.concatenate([rows / MAX_ROW_VALUE, (bonus / lay.scales.bonus)[..., None]], axis=-1)  # [B, 55, 8]
    at[:, :SCORE_BASE, d:d + 8] = feats
    at[:, :DRAW_PILE_ACTION, TYPE] = A_DISCARD
    at[:, :DRAW_PILE_ACTION, CARD] = np.arange(NUM_CARDS) + 1
    at[:, DRAW_PILE_ACTION, TYPE] = A_DRAW_PILE
    at[:, DRAW_PILE_ACTION, POS] = 7
    top_id = np.where(top.max(-1) > 0, top.argmax(-1) + 1, NO_CARD)  # [B, 6]
    second_id = np.where(second.max(-1) > 0, second.argmax(-1) + 1, NO_CARD)
    dd = slice(DRAW_DISCARD_BASE, SCORE_BASE)
    at[:, dd, TYPE] = A_DRAW_DISCARD
    at[:, dd, CARD] = top_id
    at[:, dd, CARD2] = second_id  # the card the draw uncovers
    at[:, dd, POS] = np.arange(MAX_PLAYERS)
    own_rows = obs[:, enc.OWN_ROW_VALUES:enc.OWN_BONUS] * MAX_ROW_VALUE  # the observation's own row values (points)
    own_bonus = obs[:, enc.OWN_BONUS] * lay.scales.bonus
    sc = at[:, SCORE_BASE:]
    sc[..., TYPE] = A_SCORE
    sc[..., POS] = np.arange(NUM_ROWS)
    sc[..., d] = own_rows / MAX_ROW_VALUE
    sc[..., d + 7] = (own_bonus / lay.scales.bonus)[:, None]
    sc[..., d + 8] = (own_rows + own_bonus[:, None]) / lay.scales.points  # the points this row would write
    sc[..., d + 9] = own_rows == 0  # a scratch
    return at


def state_tokens(game: Game, seat: int) -> np.ndarray:
    """Return ``float32[N_TOKENS, TOKEN_DIM]``: the position as ``seat`` may see it (module docstring)."""
    return encode_batch(enc.encode(game, seat)[None], bonus_layout=game.layout)[0][0]


def action_tokens(game: Game, seat: int) -> np.ndarray:
    """Return ``float32[num_legal, ACTION_DIM]``, one token per legal action of ``seat`` in ``game.legal_actions()`` order."""
    legal = game.legal_actions() if game.current == seat else []
    return encode_batch(enc.encode(game, seat)[None], bonus_layout=game.layout)[1][0][legal]


__all__ = [
    "TOKENS_VERSION", "TOKEN_OPTIONS",
    "ACTION_DIM", "CARD", "CARD2", "CARD_VOCAB", "NUM_DENSE", "NUM_IDS", "N_TOKENS", "POS", "POS_VOCAB", "SEAT", "SEAT_VOCAB",
    "TOKEN_DIM", "TYPE", "TYPE_VOCAB", "action_tokens", "banked_margin", "banked_points", "encode_batch", "hand_values", "seat_totals", "state_tokens",
]
