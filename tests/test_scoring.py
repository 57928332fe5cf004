"""Scoring: hand-computed rows and bonuses, edge cases, user layouts, and property tests of the invariants."""

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grinch_env.grinch.cards import RANK, SUIT, card_id, parse_card
from grinch_env.grinch.scoring import (
    MAX_ROW_VALUE,
    STANDARD_LAYOUT,
    Bonus,
    bonus_points,
    hand_scores,
    max_bonus,
    resolve_layout,
    row_scores,
)


def cards(text: str) -> list[int]:
    return [parse_card(name) for name in text.split()]


# ---------------------------------------------------------------- the rows
# (hand, (Wreaths, Noise, Ornaments, Presents, Rainbow, Match, Run)), computed by hand.
ROW_CASES = [
    ("W1 W3 N2 O6 P4", (4, 2, 6, 4, 3 + 2 + 6 + 4, 0, 15)),  # run 1-2-3-4
    ("W5 W5' N5 N5' O5", (10, 10, 5, 0, 15, 30, 0)),  # five of a kind; Presents empty
    ("N2 N2' O2 P2 W6", (6, 4, 2, 2, 6 + 2 + 2 + 2, 20, 0)),  # four of a kind
    ("W3 N3 O3 P1 P2", (3, 3, 3, 3, 11, 10, 0)),  # three of a kind; run 1-2-3 is too short
    ("W1 N2 N2' O3 P4", (1, 4, 3, 4, 10, 0, 15)),  # a run of 4 through a duplicate
    ("W1 N2 O3 P4 W5", (6, 2, 3, 4, 14, 0, 25)),  # run of 5
    ("W1 N2 O3 P4 W5 N6", (6, 8, 3, 4, 5 + 6 + 3 + 4, 0, 25)),  # run of 6 still scores 25
    ("W1 W2 W3 W4 W6", (16, 0, 0, 0, 6, 0, 15)),  # three empty suits in Rainbow
    ("W1 W2 W3 W5 W6", (17, 0, 0, 0, 6, 0, 0)),  # runs of 3 and 2 only
    ("P6 P6' O6 O6' N6", (0, 6, 12, 12, 18, 30, 0)),  # the largest Match
    ("W4 W4' N4 N4' O1", (8, 8, 1, 0, 9, 20, 0)),
    ("", (0, 0, 0, 0, 0, 0, 0)),  # an empty hand
]


@pytest.mark.parametrize(("hand", "expected"), ROW_CASES)
def test_row_scores_hand_computed(hand, expected):
    assert row_scores(cards(hand)) == expected


def test_row_scores_accepts_any_iterable():
    hand = cards("W1 N2 O3 P4 W5")
    assert row_scores(iter(hand)) == row_scores(tuple(hand)) == (6, 2, 3, 4, 14, 0, 25)


# ------------------------------------------------------------- the bonuses
# Every standard bonus card, its condition just met and just missed (the other cards carry no bonus).
BONUS_CASES = [
    # rank 1, copy 1: +10 with at least 3 cards of the next suit
    ("W1' N1 N2 N3 W6", 10), ("W1' N1 N2 O3 W6", 0),
    ("N1' O1 O2 O4 N6", 10), ("N1' O1 O2 P4 N6", 0),
    ("O1' P1 P2 P4 O6", 10), ("O1' P1 P2 W4 O6", 0),
    ("P1' W1 W2 W4 P6", 10), ("P1' W1 W2 N4 P6", 0),
    # rank 2, copy 1: +5 with at least 1 card of the suit two further on
    ("W2' O6 W4 W5 W6", 5), ("W2' N6 W4 W5 W6", 0),
    ("N2' P6 N4 N5 N6", 5), ("N2' W6 N4 N5 N6", 0),
    ("O2' W6 O4 O5 O6", 5), ("O2' N6 O4 O5 O6", 0),
    ("P2' N6 P4 P5 P6", 5), ("P2' O6 P4 P5 P6", 0),
    # rank 3, copy 1: +5 with at least 1 card of the suit three further on
    ("W3' P6 W4 W5 W6", 5), ("W3' O6 W4 W5 W6", 0),
    ("N3' W6 N4 N5 N6", 5), ("N3' P6 N4 N5 N6", 0),
    ("O3' N6 O4 O5 O6", 5), ("O3' P6 O4 O5 O6", 0),
    ("P3' O6 P4 P5 P6", 5), ("P3' W6 P4 P5 P6", 0),
]


@pytest.mark.parametrize(("hand", "expected"), BONUS_CASES)
def test_each_standard_bonus_met_and_missed(hand, expected):
    assert bonus_points(cards(hand)) == expected
    assert bonus_points(cards(hand), "standard") == expected
    assert bonus_points(cards(hand), "none") == 0


def test_standard_layout_has_exactly_twelve_bonus_cards():
    bonuses = {c: b for c, b in enumerate(STANDARD_LAYOUT) if b is not None}
    assert sorted(bonuses) == [1, 3, 5, 13, 15, 17, 25, 27, 29, 37, 39, 41]
    assert sorted(b.points for b in bonuses.values()) == [5] * 8 + [10] * 4
    assert all(b.suit != SUIT[c] for c, b in bonuses.items())  # a bonus never names its own suit
    assert bonuses[card_id(0, 1, 1)] == Bonus(10, 1, 3)
    assert bonuses[card_id(3, 3, 1)] == Bonus(5, 2, 1)
    assert max_bonus(STANDARD_LAYOUT) == 10 + 10 + 10 + 10 + 5


def test_several_bonuses_add_up_and_are_added_to_every_row():
    # W1' needs 3 Noise (met), N2' needs a Presents card (met), N3' needs a Wreaths card (met).
    hand = cards("W1' N2' N3' N5 P4")
    assert bonus_points(hand) == 10 + 5 + 5
    assert row_scores(hand) == (1, 10, 0, 4, 1 + 5 + 4, 0, 25)  # ranks 1, 2, 3, 5, 4: a run of 5
    assert hand_scores(hand) == (21, 30, 20, 24, 30, 20, 45)
    assert hand_scores(hand, "none") == row_scores(hand)


def test_both_copies_differ_only_by_the_bonus():
    assert row_scores(cards("W1 N1 N2 N3 W6")) == row_scores(cards("W1' N1 N2 N3 W6"))
    assert bonus_points(cards("W1 N1 N2 N3 W6")) == 0


# ------------------------------------------------------------ user layouts
def test_user_layout_bonus_naming_its_own_suit_counts_itself():
    layout = {parse_card("W4"): (7, "Wreaths", 2)}
    assert bonus_points(cards("W4 N1 N2 O3 P5"), layout) == 0  # one Wreaths card: itself
    assert bonus_points(cards("W4 W6 N2 O3 P5"), layout) == 7  # itself and W6
    assert bonus_points(cards("W4"), {parse_card("W4"): (3, 0, 1)}) == 3  # count 1: itself suffices


def test_user_layout_forms():
    by_index = resolve_layout({parse_card("O2"): (4, 3, 2)})
    by_name = resolve_layout({str(parse_card("O2")): {"points": 4, "suit": "presents", "count": 2}})
    assert by_index == by_name
    assert by_index[parse_card("O2")] == Bonus(4, 3, 2)
    assert sum(b is not None for b in by_index) == 1
    assert resolve_layout(by_index) is by_index  # an already resolved table passes through
    assert bonus_points(cards("O2 P1 P2"), by_index) == 4
    assert bonus_points(cards("O2 P1 W2"), by_index) == 0
    assert resolve_layout({}) == (None,) * 48


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ("fancy", "bonus_layout must be one of"),
        ([1, 2, 3], "bonus_layout must be 'standard', 'none' or a mapping"),
        ({48: (5, 0, 1)}, "not a card id in 0..47"),
        ({-1: (5, 0, 1)}, "not a card id in 0..47"),
        ({"W3": (5, 0, 1)}, "not a card id in 0..47"),
        ({3: (5, 0)}, r"must be \(points, suit, count\)"),
        ({3: 5}, r"must be \(points, suit, count\)"),
        ({3: (-1, 0, 1)}, "points must be an int >= 0"),
        ({3: (True, 0, 1)}, "points must be an int >= 0"),
        ({3: (5, 4, 1)}, "suit must be 0..3"),
        ({3: (5, "Stars", 1)}, "suit must be 0..3"),
        ({3: (5, 0, 0)}, "count must be an int in 1..5"),
        ({3: (5, 0, 6)}, "count must be an int in 1..5"),
    ],
)
def test_bad_layouts_are_rejected(layout, message):
    with pytest.raises(ValueError, match=message):
        resolve_layout(layout)


# ------------------------------------------------------- property tests
hands = st.lists(st.integers(0, 47), unique=True, max_size=6)
five_card_hands = st.lists(st.integers(0, 47), unique=True, min_size=5, max_size=5)


def reference_match_and_run(hand: list[int]) -> tuple[int, int]:
    """Match and Run by a direct reading of the rules (Counter and a set of ranks)."""
    most = max(Counter(RANK[c] for c in hand).values(), default=0)
    match = 30 if most >= 5 else 20 if most == 4 else 10 if most == 3 else 0
    ranks = {RANK[c] for c in hand}
    longest = max((length for start in range(1, 7) for length in range(1, 8 - start) if all(r in ranks for r in range(start, start + length))), default=0)
    run = 25 if longest >= 5 else 15 if longest == 4 else 0
    return match, run


@settings(max_examples=300, deadline=None)
@given(hands)
def test_row_invariants(hand):
    rows = row_scores(hand)
    assert sum(rows[:4]) == sum(RANK[c] for c in hand)  # every card counts once in its suit row
    for s in range(4):
        assert rows[s] == sum(RANK[c] for c in hand if SUIT[c] == s)
    assert max((RANK[c] for c in hand), default=0) <= rows[4] <= sum(rows[:4])  # Rainbow
    assert rows[4] == sum(max((RANK[c] for c in hand if SUIT[c] == s), default=0) for s in range(4))
    assert (rows[5], rows[6]) == reference_match_and_run(hand)
    assert rows[5] in (0, 10, 20, 30) and rows[6] in (0, 15, 25)
    assert all(0 <= v <= MAX_ROW_VALUE for v in rows)


@settings(max_examples=200, deadline=None)
@given(hands, st.randoms(use_true_random=False))
def test_scores_do_not_depend_on_card_order(hand, random):
    shuffled = hand[:]
    random.shuffle(shuffled)
    assert row_scores(shuffled) == row_scores(hand)
    assert bonus_points(shuffled) == bonus_points(hand)


@settings(max_examples=200, deadline=None)
@given(five_card_hands, st.integers(0, 47))
def test_bonus_bounds_and_monotonicity(hand, extra):
    bonus = bonus_points(hand)
    assert 0 <= bonus <= max_bonus(STANDARD_LAYOUT)
    assert bonus % 5 == 0
    assert bonus_points(hand, "none") == 0
    assert hand_scores(hand) == tuple(v + bonus for v in row_scores(hand))
    if extra not in hand:
        assert bonus_points(hand + [extra]) >= bonus  # conditions are "at least", so a card never removes a bonus
