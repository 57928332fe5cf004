"""Scoring a hand: the seven rows of the score pad and the bonus cards.

Pure Python on small integers; no numpy, gymnasium or torch.

Rows (index 0..6)::

    0 Wreaths, 1 Noise, 2 Ornaments, 3 Presents   sum of the ranks of that suit
    4 Rainbow   sum over the suits of the highest rank held (0 for a suit not held)
    5 Match     most cards of one rank: 3 -> 10, 4 -> 20, 5+ -> 30, else 0
    6 Run       longest run of consecutive ranks, any suits: 4 -> 15, 5+ -> 25, else 0

A round's score is the chosen row's value plus every bonus of the hand whose
condition holds, whatever row is chosen (RULES.md, "Scoring a hand").
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np

from grinch_env.grinch.cards import CARDS_PER_SUIT, NUM_CARDS, NUM_RANKS, NUM_SUITS, RANK, SUIT, SUIT_NAMES, card_id, check_card

NUM_ROWS = 7
WREATHS_ROW, NOISE_ROW, ORNAMENTS_ROW, PRESENTS_ROW, RAINBOW_ROW, MATCH_ROW, RUN_ROW = range(NUM_ROWS)
ROW_NAMES = SUIT_NAMES + ("Rainbow", "Match", "Run")

# Match: points by the largest number of cards of one rank (index = count).
MATCH_POINTS = (0, 0, 0, 10, 20, 30, 30, 30, 30, 30, 30, 30, 30)
# Run: points by the length of the longest run of consecutive ranks.
RUN_POINTS = (0, 0, 0, 0, 15, 25, 25)
MAX_ROW_VALUE = 30  # Match with five of a kind; no other row reaches it


class Bonus(NamedTuple):
    """A bonus card's effect: ``points`` if the final hand holds ``count`` or more cards of ``suit``."""

    points: int
    suit: int
    count: int


def _standard_layout() -> tuple[Bonus | None, ...]:
    table: list[Bonus | None] = [None] * NUM_CARDS
    for s in range(NUM_SUITS):
        table[card_id(s, 1, 1)] = Bonus(10, (s + 1) % NUM_SUITS, 3)
        table[card_id(s, 2, 1)] = Bonus(5, (s + 2) % NUM_SUITS, 1)
        table[card_id(s, 3, 1)] = Bonus(5, (s + 3) % NUM_SUITS, 1)
    return tuple(table)


STANDARD_LAYOUT = _standard_layout()
NO_BONUS_LAYOUT: tuple[Bonus | None, ...] = (None,) * NUM_CARDS
NAMED_LAYOUTS = {"standard": STANDARD_LAYOUT, "none": NO_BONUS_LAYOUT}

Layout = tuple  # tuple of 48 entries, each ``Bonus`` or ``None``


def resolve_layout(layout: str | Mapping | tuple = "standard") -> tuple[Bonus | None, ...]:
    """Return the 48-entry bonus table for ``layout``.

    ``layout`` is ``"standard"``, ``"none"``, an already resolved 48-tuple, or a
    user table ``{card_id: (points, suit, count)}`` (``suit`` an index 0..3 or a
    suit name); cards not in the table carry no bonus.
    """
    if layout is STANDARD_LAYOUT or layout is NO_BONUS_LAYOUT:
        return layout  # already resolved (the environment passes its resolved layout at every reset)
    if isinstance(layout, str):
        if layout not in NAMED_LAYOUTS:
            raise ValueError(f"bonus_layout must be one of {sorted(NAMED_LAYOUTS)} or a table {{card_id: (points, suit, count)}}, got {layout!r}")
        return NAMED_LAYOUTS[layout]
    if isinstance(layout, tuple) and len(layout) == NUM_CARDS and all(b is None or isinstance(b, Bonus) for b in layout):
        return layout
    if not isinstance(layout, Mapping):
        raise ValueError(f"bonus_layout must be 'standard', 'none' or a mapping {{card_id: (points, suit, count)}}, got {type(layout).__name__}")
    table: list[Bonus | None] = [None] * NUM_CARDS
    for key, entry in layout.items():
        try:
            c = check_card(int(key) if isinstance(key, str) and key.isdigit() else key)
        except ValueError:
            raise ValueError(f"bonus_layout key {key!r} is not a card id in 0..{NUM_CARDS - 1}") from None
        if isinstance(entry, Mapping):
            entry = (entry.get("points"), entry.get("suit"), entry.get("count"))
        if not isinstance(entry, (tuple, list)) or len(entry) != 3:
            raise ValueError(f"bonus_layout[{key!r}] must be (points, suit, count), got {entry!r}")
        points, suit, count = entry
        if isinstance(suit, str):
            names = [n.lower() for n in SUIT_NAMES]
            if suit.lower() not in names:
                raise ValueError(f"bonus_layout[{key!r}]: suit must be 0..3 or one of {SUIT_NAMES}, got {suit!r}")
            suit = names.index(suit.lower())
        if not isinstance(points, int) or isinstance(points, bool) or points < 0:
            raise ValueError(f"bonus_layout[{key!r}]: points must be an int >= 0, got {points!r}")
        if not isinstance(suit, int) or isinstance(suit, bool) or not 0 <= suit < NUM_SUITS:
            raise ValueError(f"bonus_layout[{key!r}]: suit must be 0..3 or one of {SUIT_NAMES}, got {suit!r}")
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 5:
            raise ValueError(f"bonus_layout[{key!r}]: count must be an int in 1..5, got {count!r}")
        table[c] = Bonus(points, suit, count)
    return tuple(table)


def max_bonus(layout: tuple[Bonus | None, ...]) -> int:
    """Return an upper bound of one 5-card hand's bonus under ``layout`` (the five largest bonuses)."""
    return sum(sorted((b.points for b in layout if b is not None), reverse=True)[:5])


def _longest_run(rank_bits: int) -> int:
    best = run = 0
    for r in range(1, NUM_RANKS + 1):
        run = run + 1 if rank_bits >> r & 1 else 0
        best = max(best, run)
    return best


# Run points by the set of ranks held, as a bitmask (bit r for rank r): one lookup instead of a loop.
_RUN_BY_RANK_BITS = tuple(RUN_POINTS[_longest_run(bits)] for bits in range(1 << (NUM_RANKS + 1)))


def row_scores(cards: Iterable[int]) -> tuple[int, int, int, int, int, int, int]:
    """Return the value of ``cards`` in each of the seven rows (bonus not included)."""
    suit_sum = [0, 0, 0, 0]
    suit_max = [0, 0, 0, 0]
    rank_count = [0] * (NUM_RANKS + 1)
    rank_bits = 0
    for c in cards:
        s = SUIT[c]
        r = RANK[c]
        suit_sum[s] += r
        if r > suit_max[s]:
            suit_max[s] = r
        rank_count[r] += 1
        rank_bits |= 1 << r
    return (
        suit_sum[0],
        suit_sum[1],
        suit_sum[2],
        suit_sum[3],
        suit_max[0] + suit_max[1] + suit_max[2] + suit_max[3],
        MATCH_POINTS[max(rank_count)],
        _RUN_BY_RANK_BITS[rank_bits],
    )


def row_value(cards: Iterable[int], row: int) -> int:
    """Return ``row_scores(cards)[row]``, computing only that row (the suit rows and Rainbow directly)."""
    if row < RAINBOW_ROW:
        return sum([RANK[c] for c in cards if SUIT[c] == row])
    if row == RAINBOW_ROW:
        suit_max = [0, 0, 0, 0]
        for c in cards:
            r = RANK[c]
            if r > suit_max[SUIT[c]]:
                suit_max[SUIT[c]] = r
        return suit_max[0] + suit_max[1] + suit_max[2] + suit_max[3]
    return row_scores(cards)[row]


def bonus_points(cards: Iterable[int], layout: str | Mapping | tuple = "standard") -> int:
    """Return the sum of the bonuses of ``cards`` whose condition holds in this hand."""
    table = layout if type(layout) is tuple else resolve_layout(layout)
    if type(cards) is not list:
        cards = list(cards)
    suit_count = [0, 0, 0, 0]
    for c in cards:
        suit_count[SUIT[c]] += 1
    total = 0
    for c in cards:
        b = table[c]
        if b is not None and suit_count[b.suit] >= b.count:
            total += b.points
    return total


def hand_scores(cards: Iterable[int], layout: str | Mapping | tuple = "standard") -> tuple[int, ...]:
    """Return what scoring ``cards`` in each row would write on the pad (row value plus bonus)."""
    cards = list(cards)
    bonus = bonus_points(cards, layout)
    return tuple(v + bonus for v in row_scores(cards))


# ------------------------------------------------- packed tables (batched engines)
# The batched engine (vector.py) and its compiled kernels (_vector_numba.py) score hands from card bitmaps
# with these tables; they live here, beside the rules they encode, so both engines read one copy.
# A hand's scoring features from one lookup per suit: the table maps (suit, 12-bit chunk of that suit's cards)
# to bit fields that add up over the four suits without carries, because a hand holds at most 6 cards:
# bits 3r..3r+2 copies of rank r+1 (<= 6), 18..22 the suit's highest rank (sum <= 24),
# 23+3s.. cards of suit s (<= 6), 35+6s.. rank sum of suit s (<= 30).
COUNTS_BITS, TOP_AT, SUIT_COUNT_AT, RANK_SUM_AT = 18, 18, 23, 35


def _suit_feature_table() -> np.ndarray:
    """Return int64[4, 4096]: the packed scoring features of each suit's possible cards (see above)."""
    x = np.arange(1 << CARDS_PER_SUIT)
    bits = (x[:, None] >> np.arange(CARDS_PER_SUIT)) & 1
    ranks = np.array(RANK[:CARDS_PER_SUIT])
    per_rank = bits[:, 0::2] + bits[:, 1::2]  # [4096, 6] copies of each rank
    common = per_rank @ (1 << (3 * np.arange(6))) + ((bits * ranks).max(axis=1) << TOP_AT)
    return np.stack([common + (bits.sum(axis=1) << (SUIT_COUNT_AT + 3 * s)) + ((bits @ ranks) << (RANK_SUM_AT + 6 * s)) for s in range(NUM_SUITS)])


def _match_run_table() -> np.ndarray:
    """Return int64[2**18]: Match points + 64 * Run points for each packed per-rank count (3 bits per rank)."""
    counts = (np.arange(1 << COUNTS_BITS)[:, None] >> (3 * np.arange(6))) & 7
    present = counts > 0
    longest = np.zeros(len(counts), dtype=np.int64)
    run = np.zeros(len(counts), dtype=np.int64)
    for r in range(6):
        run = np.where(present[:, r], run + 1, 0)
        longest = np.maximum(longest, run)
    return np.array(MATCH_POINTS)[counts.max(axis=1)] + 64 * np.array(RUN_POINTS)[longest]


@functools.cache
def packed_tables() -> tuple[np.ndarray, np.ndarray]:
    """Return ``(suit_features, match_run)``: the raveled int64[4 * 4096] suit table and the int64[2**18] Match/Run table (built once)."""
    return _suit_feature_table().ravel(), _match_run_table()
