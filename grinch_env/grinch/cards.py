"""The deck of *Grinch Grow Your Heart*: canonical card ids and their names.

A card is an ``int`` in ``0..47`` (the *canonical id*)::

    suit = c // 12            # 0 Wreaths, 1 Noise, 2 Ornaments, 3 Presents
    rank = (c % 12) // 2 + 1  # 1..6
    copy = c % 2              # two copies of every suit/rank

Every public interface of the project (actions, logs, ``game_state()``) uses
this id.  This module is pure Python: no numpy, gymnasium or torch.
"""

from __future__ import annotations

NUM_CARDS = 48
NUM_SUITS = 4
NUM_RANKS = 6
NUM_COPIES = 2
CARDS_PER_SUIT = NUM_RANKS * NUM_COPIES  # 12

WREATHS, NOISE, ORNAMENTS, PRESENTS = range(NUM_SUITS)
SUIT_NAMES = ("Wreaths", "Noise", "Ornaments", "Presents")
SUIT_LETTERS = ("W", "N", "O", "P")

# Lookup tables: indexing a tuple is faster than the arithmetic on hot paths.
SUIT = tuple(c // CARDS_PER_SUIT for c in range(NUM_CARDS))
RANK = tuple((c % CARDS_PER_SUIT) // NUM_COPIES + 1 for c in range(NUM_CARDS))
COPY = tuple(c % NUM_COPIES for c in range(NUM_CARDS))


def card_id(suit: int, rank: int, copy: int = 0) -> int:
    """Return the canonical id of the card with this suit (0..3), rank (1..6) and copy (0..1)."""
    if not 0 <= suit < NUM_SUITS:
        raise ValueError(f"suit must be in 0..{NUM_SUITS - 1}, got {suit!r}")
    if not 1 <= rank <= NUM_RANKS:
        raise ValueError(f"rank must be in 1..{NUM_RANKS}, got {rank!r}")
    if copy not in (0, 1):
        raise ValueError(f"copy must be 0 or 1, got {copy!r}")
    return suit * CARDS_PER_SUIT + (rank - 1) * NUM_COPIES + copy


def check_card(c: int) -> int:
    """Return ``c`` if it is a canonical card id, else raise ``ValueError``."""
    if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < NUM_CARDS:
        raise ValueError(f"a card id must be an int in 0..{NUM_CARDS - 1}, got {c!r}")
    return c


def card_name(c: int) -> str:
    """Return a short name such as ``"W3"`` (copy 0) or ``"W3'"`` (copy 1, the bonus copy in the standard layout)."""
    return SUIT_LETTERS[SUIT[c]] + str(RANK[c]) + ("'" if COPY[c] else "")


def parse_card(name: str) -> int:
    """Return the id of a card written as :func:`card_name` writes it (``"W3"``, ``"p6'"``)."""
    text = name.strip().upper()
    copy = 1 if text.endswith("'") else 0
    text = text.rstrip("'")
    if len(text) != 2 or text[0] not in SUIT_LETTERS or not text[1].isdigit():
        raise ValueError(f"cannot read card {name!r}: write a suit letter W/N/O/P, a rank 1-6 and an optional ', e.g. W3 or P6'")
    return card_id(SUIT_LETTERS.index(text[0]), int(text[1]), copy)
