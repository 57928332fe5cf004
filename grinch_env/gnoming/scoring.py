"""Scoring of *Gnoming A Round* (RULES_GNOMING.md §4.3-§4.6), pure functions of kinds and scores.

A layout is 9 kinds in slots ``p = 3*row + col``.  A *line* (a row or a column,
no diagonals) is **matched** when it holds no negative card and no Hazard, at
least one positive card, and all its positive cards have one value ``v``; its
Mulligans count as ``v``.  A matched line scores ``-v``; a card lying in at
least one matched line scores nothing else; every other card scores its
points (:data:`~grinch_env.gnoming.cards.POINTS`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

from grinch_env.gnoming.cards import IS_POSITIVE, MULLIGAN, NUM_KINDS, POINTS, POSITIVE, VALUES

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8))
LINE_NAMES = ("row 0", "row 1", "row 2", "column 0", "column 1", "column 2")
MULLIGAN_LINES = ("independent", "single")
GOING_OUT_BONUS = 5


def _check_layout(kinds9: Sequence[int]) -> list[int]:
    kinds = list(kinds9)
    if len(kinds) != 9 or any(isinstance(k, bool) or not 0 <= int(k) < NUM_KINDS or int(k) != k for k in kinds):
        raise ValueError(f"a layout is 9 card kinds in 0..{NUM_KINDS - 1}, got {kinds9!r}")
    return [int(k) for k in kinds]


def _line_value(kinds: Sequence[int], line: tuple[int, int, int]) -> int | None:
    """Return the kind whose value a line matches (Mulligans wild), or ``None`` if it is not matched."""
    value = None
    for p in line:
        k = kinds[p]
        if k == MULLIGAN:
            continue
        if not IS_POSITIVE[k] or (value is not None and k != value):
            return None  # a negative card or a Hazard, or two different values
        value = k
    return value  # None for a line of three Mulligans: a wild card completes a set, it cannot create one


def matched_lines(kinds9: Sequence[int]) -> list[tuple[int, int]]:
    """Return ``(line index, matched kind)`` for every matched line, Mulligans independent in each line (lines as :data:`LINES`)."""
    kinds = _check_layout(kinds9)
    return [(i, v) for i, line in enumerate(LINES) if (v := _line_value(kinds, line)) is not None]


def _score_matches(kinds: Sequence[int], matches: list[tuple[int, int]]) -> int:
    covered = [False] * 9
    score = 0
    for i, v in matches:
        score -= VALUES[v]
        for p in LINES[i]:
            covered[p] = True
    return score + sum(POINTS[k] for p, k in enumerate(kinds) if not covered[p])


def score_layout(kinds9: Sequence[int], mulligan_lines: str = "independent") -> int:
    """Return the round score of a fully revealed layout (§4.3).

    ``mulligan_lines="independent"`` (default) lets a Mulligan take a value per
    line; matching then never raises the score, so it is unique.  ``"single"``
    gives each Mulligan one value for its row and its column, and the score is
    the lowest over every choice of values.
    """
    kinds = _check_layout(kinds9)
    if mulligan_lines == "independent":
        return _score_matches(kinds, [(i, v) for i, line in enumerate(LINES) if (v := _line_value(kinds, line)) is not None])
    if mulligan_lines != "single":
        raise ValueError(f"mulligan_lines must be one of {MULLIGAN_LINES}, got {mulligan_lines!r}")
    mulligans = [p for p, k in enumerate(kinds) if k == MULLIGAN]
    best = None
    # Each Mulligan becomes one positive kind; a value that matches nothing is the same as any other non-matching one.
    for values in product(POSITIVE, repeat=len(mulligans)):
        trial = kinds[:]
        for p, v in zip(mulligans, values):
            trial[p] = v
        matches = []
        for i, line in enumerate(LINES):
            real = [kinds[p] for p in line if kinds[p] != MULLIGAN]
            if not real:
                continue  # no positive card of its own: the line is not matched
            v = _line_value(trial, line)
            if v is not None:
                matches.append((i, v))
        # Cards keep their own points: a Mulligan outside every matched line scores 0, not its chosen value.
        score = _score_matches(kinds, matches)
        best = score if best is None else min(best, score)
    return best


def round_scores(raw_scores: Sequence[int], went_out: int | None, capped: bool) -> list[int]:
    """Return the round scores after the going-out adjustment of §4.4.

    The player ``went_out`` gets -5 if their raw score is at most every other
    player's (a tie counts as lowest), else +5; there is no adjustment when
    nobody went out or the round ended at the turn cap.
    """
    scores = [int(s) for s in raw_scores]
    if went_out is None or capped:
        return scores
    if not 0 <= went_out < len(scores):
        raise ValueError(f"went_out must be a seat in 0..{len(scores) - 1} or None, got {went_out!r}")
    others = min(s for j, s in enumerate(scores) if j != went_out)
    scores[went_out] += -GOING_OUT_BONUS if scores[went_out] <= others else GOING_OUT_BONUS
    return scores


def winners(totals: Sequence[int], last_round: Sequence[int] | None = None) -> list[int]:
    """Return the winning seats (§4.6): the lowest total; among tied leaders, the lowest ``last_round`` score; else all of them."""
    best = min(totals)
    leaders = [p for p, t in enumerate(totals) if t == best]
    if len(leaders) > 1 and last_round is not None:
        low = min(last_round[p] for p in leaders)
        leaders = [p for p in leaders if last_round[p] == low]
    return leaders


__all__ = ["GOING_OUT_BONUS", "LINES", "LINE_NAMES", "MULLIGAN_LINES", "matched_lines", "round_scores", "score_layout", "winners"]
