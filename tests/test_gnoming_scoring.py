"""Gnoming scoring against the contract's hand-computed answers: every worked example of §4.3,
the ±5 of §4.4, the tie-breaks and rewards of §4.6, and the deck facts of §1."""

import pytest

from grinch_env.gnoming.cards import COPIES, DECK, DECK_SIZE, HAZARD, MULLIGAN, NEGATIVE, POINTS, POSITIVE, kind_name
from grinch_env.gnoming.game import terminal_rewards
from grinch_env.gnoming.scoring import matched_lines, round_scores, score_layout, winners

M, H = MULLIGAN, HAZARD
# Kinds by printed value: 3..8 are kinds 0..5, -1..-4 are kinds 6..9.
P = {3: 0, 4: 1, 5: 2, 6: 3, 7: 4, 8: 5, -1: 6, -2: 7, -3: 8, -4: 9}



def lay(text: str) -> list[int]:
    """Return kinds from a contract layout string such as ``"5 5 5 / 7 -2 M / 7 H 3"``."""
    out = []
    for tok in text.replace("/", " ").replace("−", "-").split():
        out.append(M if tok == "M" else H if tok == "H" else P[int(tok)])
    assert len(out) == 9
    return out


def test_deck_facts_of_section_1():
    assert DECK_SIZE == len(DECK) == 110
    assert sum(COPIES[k] for k in POSITIVE) == 82 and sum(COPIES[k] for k in NEGATIVE) == 22
    assert COPIES[H] == COPIES[M] == 3
    assert sum(POINTS[k] * COPIES[k] for k in POSITIVE) == 447
    assert sum(POINTS[k] * COPIES[k] for k in NEGATIVE) == -49
    assert sum(POINTS[k] * COPIES[k] for k in range(12)) == 428
    assert kind_name(0) == "positive 3" and kind_name(9) == "negative -4" and kind_name(H) == "Hazard" and kind_name(M) == "Mulligan"
    for bad in (12, -1, 1.0, True, None):
        with pytest.raises(ValueError, match=r"a card kind is an int in 0\.\.11"):
            kind_name(bad)


# Every worked example of §4.3: (layout, independent score, single score).
WORKED = [
    ("5 5 5 / 7 -2 M / 7 H 3", 20, 20),
    ("4 4 M / 6 -1 7 / 3 5 7", 2, 14),
    ("6 6 6 / 6 6 6 / 6 6 6", -36, -36),
    ("M M 8 / 3 4 5 / -4 -4 -4", -8, -8),
    ("M M M / 3 4 5 / 3 4 5", -12, -12),
    ("8 8 8 / 8 3 3 / 8 3 3", -4, -4),
    ("3 3 3 / M -1 H / 3 3 3", 0, 0),
    ("8 7 6 / 5 4 3 / 8 7 6", 54, 54),
]


@pytest.mark.parametrize("text,independent,single", WORKED)
def test_worked_examples_of_section_4_3(text, independent, single):
    assert score_layout(lay(text)) == independent
    assert score_layout(lay(text), mulligan_lines="independent") == independent
    assert score_layout(lay(text), mulligan_lines="single") == single


def test_matched_lines_name_the_lines_and_values():
    # 4 4 M / 6 -1 7 / 3 5 7: row 0 as 4s, column 2 as 7s (the Mulligan takes both values).
    assert matched_lines(lay("4 4 M / 6 -1 7 / 3 5 7")) == [(0, P[4]), (5, P[7])]
    assert matched_lines(lay("M M M / 3 4 5 / 3 4 5")) == [(3, P[3]), (4, P[4]), (5, P[5])]
    assert matched_lines(lay("8 7 6 / 5 4 3 / 8 7 6")) == []


def test_more_hand_computed_layouts():
    # Three Hazards on a diagonal and six 8s: nothing matched, 78 (the top of §4.5's range before +5).
    assert score_layout(lay("H 8 8 / 8 H 8 / 8 8 H")) == 78
    # Nine 8s: six lines of -8 (the bottom, -48).
    assert score_layout([P[8]] * 9) == -48
    # A single Mulligan row with one positive: M M 3 matches as 3s (-3); rest 4+5+6+7+(-1)+(-2) = 19.
    assert score_layout(lay("M M 3 / 4 5 6 / 7 -1 -2")) == 16
    # single: a Mulligan shared by a 4-row and a 5-column takes one value; best is the 5s column (-5) with row 4+4=8.
    # layout 4 4 M / 6 6 5 / 7 7 5 -> independent: row0 -4, col2 -5, rest 6+6+7+7 = 26 -> 17
    assert score_layout(lay("4 4 M / 6 6 5 / 7 7 5")) == 17
    # single: M=4 -> -4 + 5+5 + 26 = 32; M=5 -> -5 + 4+4 + 26 = 29
    assert score_layout(lay("4 4 M / 6 6 5 / 7 7 5"), mulligan_lines="single") == 29


def test_bad_layouts_and_options_are_refused():
    with pytest.raises(ValueError, match="9 card kinds"):
        score_layout([0] * 8)
    with pytest.raises(ValueError, match="9 card kinds"):
        score_layout([0] * 8 + [12])
    with pytest.raises(ValueError, match=r"mulligan_lines must be one of \('independent', 'single'\)"):
        score_layout([0] * 9, mulligan_lines="double")


# §4.4: (raw scores, went_out, capped, expected)
GOING_OUT = [
    ([12, 12, 20], 0, False, [7, 12, 20]),  # the contract's example: a tie counts as lowest
    ([13, 12, 20], 0, False, [18, 12, 20]),  # the contract's example: not lowest, +5
    ([30, 25, 11, 40], 2, False, [30, 25, 6, 40]),
    ([30, 25, 26, 40], 2, False, [30, 25, 31, 40]),
    ([-3, -3, -3], 1, False, [-3, -8, -3]),
    ([-36, 0, 5, 9, 12], 0, False, [-41, 0, 5, 9, 12]),
    ([13, 12, 20], None, False, [13, 12, 20]),  # nobody went out
    ([13, 12, 20], None, True, [13, 12, 20]),  # capped: no adjustment
]


@pytest.mark.parametrize("raw,went_out,capped,expected", GOING_OUT)
def test_going_out_adjustment_of_section_4_4(raw, went_out, capped, expected):
    assert round_scores(raw, went_out, capped) == expected


# §4.6: (totals, third-round scores, winners, win rewards)
TIE_BREAKS = [
    ([50, 60, 70], [10, 5, 0], [0], [1.0, -0.5, -0.5]),
    ([50, 50, 70], [10, 5, 0], [1], [-0.5, 1.0, -0.5]),  # tied leaders: the lower third round wins
    ([50, 50, 70, 80], [5, 5, 0, 0], [0, 1], [0.5, 0.5, -0.5, -0.5]),  # still tied: shared
    ([50, 50, 50], [5, 5, 5], [0, 1, 2], [0.0, 0.0, 0.0]),  # everyone ties: 0
    ([50, 50, 50], [7, 5, 5], [1, 2], [-1.0, 0.5, 0.5]),
    ([40, 50, 40, 60, 40], [9, -2, 3, -10, 3], [2, 4], [-1 / 3, -1 / 3, 0.5, -1 / 3, 0.5]),  # only leaders' third rounds count
]


@pytest.mark.parametrize("totals,last,expected,rewards", TIE_BREAKS)
def test_winners_and_rewards_of_section_4_6(totals, last, expected, rewards):
    assert winners(totals, last) == expected
    assert terminal_rewards(totals, last, "win") == pytest.approx(rewards)
    assert sum(terminal_rewards(totals, last, "win")) == pytest.approx(0.0)


def test_margin_rewards():
    # (mean of the others - own) / 100: seat 0: (60+70)/2 - 50 = 15 -> 0.15
    assert terminal_rewards([50, 60, 70], [0, 0, 0], "margin") == pytest.approx([0.15, 0.0, -0.15])
    assert sum(terminal_rewards([-12, 33, 7, 101], None, "margin")) == pytest.approx(0.0)
    with pytest.raises(ValueError, match=r"reward_mode must be one of \('win', 'margin'\)"):
        terminal_rewards([1, 2, 3], None, "win_loss")
