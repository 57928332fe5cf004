"""The deck of *Gnoming A Round* (``../shared/RULES_GNOMING.md`` §1): 110 cards in 12 kinds.

Copies of one kind are identical, so the **kind index** ``k`` is the canonical
card id of every public interface (observations, logs, ``game_state()``)::

    k  0..5   positive 3, 4, 5, 6, 7, 8   (14, 14, 14, 14, 13, 13 copies)
    k  6..9   negative -1, -2, -3, -4      (6, 8, 5, 3 copies)
    k  10     Hazard: +10 at scoring, never matches    (3 copies)
    k  11     Mulligan: wild in scoring, else 0        (3 copies)

The values and counts are the publisher's (RULES_GNOMING.md §1 [decision]).
This module is pure Python: no numpy, gymnasium or torch.
"""

from __future__ import annotations

import operator

NUM_KINDS = 12
HAZARD = 10
MULLIGAN = 11
POSITIVE = range(0, 6)
NEGATIVE = range(6, 10)
IS_POSITIVE = tuple(k in POSITIVE for k in range(NUM_KINDS))
IS_NEGATIVE = tuple(k in NEGATIVE for k in range(NUM_KINDS))

KIND_NAMES = (
    "positive 3", "positive 4", "positive 5", "positive 6", "positive 7", "positive 8",
    "negative -1", "negative -2", "negative -3", "negative -4",
    "Hazard", "Mulligan",
)
# Two-character names for the 3x3 grids of render().
SHORT_NAMES = (" 3", " 4", " 5", " 6", " 7", " 8", "-1", "-2", "-3", "-4", " H", " M")
# The card's value (None for the Hazard, which has none; 0 stands for the wild Mulligan's own points).
VALUES = (3, 4, 5, 6, 7, 8, -1, -2, -3, -4, None, None)
# Points when the card lies in no matched line.
POINTS = (3, 4, 5, 6, 7, 8, -1, -2, -3, -4, 10, 0)
COPIES = (14, 14, 14, 14, 13, 13, 6, 8, 5, 3, 3, 3)
DECK_SIZE = sum(COPIES)
assert DECK_SIZE == 110 and sum(COPIES[k] for k in POSITIVE) == 82 and sum(COPIES[k] for k in NEGATIVE) == 22
# The deck as a tuple of kinds; a shuffle is ``DECK[i] for i in rng.permutation(DECK_SIZE)``.
DECK = tuple(k for k in range(NUM_KINDS) for _ in range(COPIES[k]))
MAX_COPIES = max(COPIES)  # 14, the scale of every count in the observation


def kind_name(k: int) -> str:
    """Return the name of kind ``k`` (``"positive 3"`` .. ``"Mulligan"``); raise ``ValueError`` outside 0..11."""
    try:
        index = operator.index(k)  # ints and numpy integers; not floats
    except TypeError:
        index = -1
    if isinstance(k, bool) or not 0 <= index < NUM_KINDS:
        raise ValueError(f"a card kind is an int in 0..{NUM_KINDS - 1}, got {k!r}")
    return KIND_NAMES[index]


__all__ = [
    "COPIES", "DECK", "DECK_SIZE", "HAZARD", "IS_NEGATIVE", "IS_POSITIVE", "KIND_NAMES", "MAX_COPIES", "MULLIGAN",
    "NEGATIVE", "NUM_KINDS", "POINTS", "POSITIVE", "SHORT_NAMES", "VALUES", "kind_name",
]
