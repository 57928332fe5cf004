"""Shared helpers of the Gnoming tests: rigged decks in the contract's card notation, random play."""

from __future__ import annotations

from collections import Counter

import numpy as np

from grinch_env.gnoming.cards import COPIES, DECK, DECK_SIZE, HAZARD, MULLIGAN
from grinch_env.gnoming.game import Game

# Kinds by printed value: 3..8 are kinds 0..5, -1..-4 kinds 6..9; H and M as in the contract.
KIND = {"3": 0, "4": 1, "5": 2, "6": 3, "7": 4, "8": 5, "-1": 6, "-2": 7, "-3": 8, "-4": 9, "H": HAZARD, "M": MULLIGAN}


def ks(text: str) -> list[int]:
    """Return the kinds of a card string such as ``"5 5 5 / 7 -2 M / 7 H 3"`` (slashes ignored)."""
    return [KIND[t] for t in text.replace("/", " ").replace("−", "-").split()]


def deck_for(layouts: list[str], turned: str, draws: str = "") -> list[int]:
    """Return a 110-card deck (top card last) that deals ``layouts`` (seat order, slots 0..8),
    then turns ``turned`` for the discard piles, then gives ``draws`` from the top of the draw pile.

    The rest of the deck lies below, highest kind at the bottom, so the draws that follow are
    3s, then 4s, ... (no Hazard or Mulligan turns up unplanned).
    """
    pops = [k for lay in layouts for k in ks(lay)] + ks(turned) + ks(draws)
    used = Counter(pops)
    assert all(used[k] <= COPIES[k] for k in used), f"more copies than the deck holds: {used}"
    rest = sorted((Counter(DECK) - used).elements(), reverse=True)
    deck = rest + pops[::-1]
    assert len(deck) == DECK_SIZE
    return deck


def rigged(num_players: int, layouts: list[str], turned: str, draws: str = "", **options) -> Game:
    """Return a game whose round 0 was dealt from :func:`deck_for` (its rng, seed 0, is not used by the deal)."""
    game = Game(num_players, rng=0, _start=False, **options)
    game._start_round(deck_for(layouts, turned, draws))
    game._play_forced()
    return game


def play(game: Game, *actions: int) -> None:
    for a in actions:
        game.step(a)


def cards_in_play(game: Game) -> int:
    """Return every card accounted for: layouts, piles, draw pile, held card, removed Hazards."""
    return sum(map(len, game.layouts)) + sum(map(len, game.piles)) + len(game.draw_pile) + (game.held is not None) + len(game.removed)


def random_game(n: int, seed: int, steps: int | None = None, **options) -> Game:
    """Return a game played ``steps`` random legal actions from seed ``seed`` (to the end by default)."""
    game = Game(n, rng=seed, **options)
    rng = np.random.default_rng(seed + 10_000)
    k = 0
    while not game.done and (steps is None or k < steps):
        legal = game.legal_actions()
        game.step(legal[rng.integers(len(legal))])
        k += 1
    return game
