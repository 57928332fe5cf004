"""Gnoming no leak: two games that differ only in hidden cards (face-down slots, the draw pile's order)
give identical observations and masks to every seat until one of those cards is revealed."""

import numpy as np
import pytest
from gnoming_helpers import random_game

from grinch_env.gnoming.encoding import action_mask, encode
from grinch_env.gnoming.game import Game


def public(g: Game) -> tuple:
    """Return every public fact of §5 (the face-up cards, piles, held card, sizes, flow and scores)."""
    shown = [[k if u else None for k, u in zip(lay, up)] for lay, up in zip(g.layouts, g.face_up)]
    reshuffled = sorted(g.draw_pile) if g.reshuffled else None
    return (
        shown, g.piles, g.held, g.held_source, g.removed, len(g.draw_pile), reshuffled, g.phase, g.current,
        g.turn_player, g.filled, g.went_out, g.final_turns, g.turns_this_round, g.round, g.totals, g.round_scores,
    )


def swap_hidden(g: Game, rng: np.random.Generator) -> Game | None:
    """Return a copy of ``g`` with two hidden cards of different kinds swapped (None if there are none)."""
    spots = [("slot", s, p) for s in range(g.num_players) for p in range(9) if not g.face_up[s][p]]
    if not g.reshuffled:
        spots += [("draw", None, i) for i in range(len(g.draw_pile))]
    if len(spots) < 2 or not any(spot[0] == "slot" for spot in spots):
        return None
    h = g.clone()

    def get(x, spot):
        kind, s, i = spot
        return x.layouts[s][i] if kind == "slot" else x.draw_pile[i]

    def put(x, spot, k):
        kind, s, i = spot
        if kind == "slot":
            x.layouts[s][i] = k
        else:
            x.draw_pile[i] = k

    slots = sum(1 for spot in spots if spot[0] == "slot")
    for _ in range(50):
        # One face-down slot (revealed by the end of the round at the latest) and any other hidden card.
        i, j = int(rng.integers(slots)), int(rng.integers(len(spots)))
        a, b = get(h, spots[i]), get(h, spots[j])
        if i != j and a != b:
            put(h, spots[i], b)
            put(h, spots[j], a)
            return h
    return None


def same_view(a: Game, b: Game) -> bool:
    return all(
        np.array_equal(encode(a, s), encode(b, s)) and np.array_equal(action_mask(a, s), action_mask(b, s))
        for s in range(a.num_players)
    )


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_hidden_cards_change_no_observation_until_revealed(n):
    rng = np.random.default_rng(n)
    compared = diverged = 0
    for seed in range(10):
        a = random_game(n, seed, steps=seed * 23)
        b = swap_hidden(a, rng)
        if b is None:
            continue
        assert a.layouts != b.layouts or a.draw_pile != b.draw_pile
        while not a.done:
            if public(a) != public(b):
                diverged += 1  # a hidden card that differs was revealed: the games may now look different
                break
            assert same_view(a, b), f"seat views differ with the same public state (n={n}, seed={seed})"
            compared += 1
            legal = a.legal_actions()
            assert legal == b.legal_actions()
            action = legal[rng.integers(len(legal))]
            a.step(action)
            b.step(action)
    assert compared > 100 and diverged >= 7


def test_a_reveal_is_what_tells_the_games_apart():
    # Swap the top of the draw pile with a face-down card of another kind: DRAW shows the difference at once.
    a = random_game(4, 1, steps=8)
    assert a.phase == "draw"
    b = a.clone()
    top = b.draw_pile[-1]
    s, p = next((s, p) for s in range(4) for p in range(9) if not b.face_up[s][p] and b.layouts[s][p] != top)
    b.draw_pile[-1], b.layouts[s][p] = b.layouts[s][p], top
    assert same_view(a, b)
    a.step(9)
    b.step(9)
    assert not np.array_equal(encode(a, 0), encode(b, 0))
