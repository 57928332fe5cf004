"""No leak: games that differ only in what a player cannot see give that player identical
observations, until the player could see the difference."""

import numpy as np
import pytest

from grinch_env.grinch.encoding import action_mask, encode
from grinch_env.grinch.game import DRAW_PILE_ACTION, PHASE_SCORE, Game


def random_state(n: int, seed: int, steps: int) -> Game:
    game = Game(n, rng=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        legal = game.legal_actions()
        game.step(legal[rng.integers(len(legal))])
    return game


def hidden_from(game: Game, seat: int) -> list[tuple[int, int]]:
    """Return (seat, card) for every card of another hand that ``seat`` cannot locate."""
    return [(p, c) for p in range(game.num_players) if p != seat for c in game.hands[p] if c not in game.known[p]]


def same_view(a: Game, b: Game, seat: int) -> bool:
    return np.array_equal(encode(a, seat), encode(b, seat)) and np.array_equal(action_mask(a, seat), action_mask(b, seat))


def play_common_actions(a: Game, b: Game, seat: int, rng: np.random.Generator) -> tuple[int, int]:
    """Play actions legal in both games while ``seat`` could not tell them apart; return (steps, steps with a real difference)."""
    steps = differing = 0
    while a.phase != PHASE_SCORE and not a.done and sorted(a.hands[seat]) == sorted(b.hands[seat]):
        # ``seat`` sees its own hand; once the hands differ (it drew a different card) it could see the difference.
        assert same_view(a, b, seat), f"seat {seat} sees a difference after {steps} common steps"
        differing += (a.hands != b.hands) or (a.draw_pile != b.draw_pile)
        common = sorted(set(a.legal_actions()) & set(b.legal_actions()))
        if not common:
            break
        action = common[rng.integers(len(common))]
        a.step(action)
        b.step(action)
        steps += 1
    return steps, differing


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_permuting_the_draw_pile_is_invisible_until_the_player_draws(n):
    rng = np.random.default_rng(n)
    total = 0
    for seed in range(12):
        a = random_state(n, seed, steps=int(rng.integers(0, 3 * n)))
        for seat in range(n):
            b = a.clone()
            b.draw_pile = [b.draw_pile[i] for i in rng.permutation(len(b.draw_pile))]
            assert b.draw_pile != a.draw_pile
            steps, differing = play_common_actions(a.clone(), b, seat, rng)
            total += steps
            assert differing >= 1
    assert total >= 25 * n  # common steps compared, all seats together


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_swapping_hidden_cards_between_other_hands_is_invisible(n):
    rng = np.random.default_rng(10 + n)
    checked = 0
    for seed in range(15):
        a = random_state(n, seed, steps=int(rng.integers(0, 4 * n)))
        for seat in range(n):
            hidden = hidden_from(a, seat)
            pairs = [(x, y) for x in hidden for y in hidden if x[0] < y[0]]
            if not pairs:
                continue
            (p, c), (q, d) = pairs[rng.integers(len(pairs))]
            b = a.clone()
            b.hands[p][b.hands[p].index(c)] = d
            b.hands[q][b.hands[q].index(d)] = c
            assert same_view(a, b, seat)
            # Others see it: p and q hold different hands now.
            assert not np.array_equal(encode(a, p), encode(b, p)) and not np.array_equal(encode(a, q), encode(b, q))
            play_common_actions(a.clone(), b, seat, rng)
            checked += 1
    assert checked > 40


def test_swapping_a_hidden_card_with_the_draw_pile_is_invisible():
    rng = np.random.default_rng(3)
    for seed in range(20):
        a = random_state(4, seed, steps=int(rng.integers(0, 40)))
        for seat in range(4):
            hidden = hidden_from(a, seat)
            if not hidden or not a.draw_pile:
                continue
            p, c = hidden[rng.integers(len(hidden))]
            b = a.clone()
            i = int(rng.integers(len(b.draw_pile)))
            b.hands[p][b.hands[p].index(c)], b.draw_pile[i] = b.draw_pile[i], c
            assert same_view(a, b, seat)


def test_resampled_states_look_the_same_to_the_player():
    rng = np.random.default_rng(5)
    for n in range(2, 7):
        for seed in range(10):
            a = random_state(n, seed, steps=int(rng.integers(0, 60)))
            for seat in range(n):
                b = a.resample_from_infostate(seat, np.random.default_rng(seed * 7 + seat))
                assert same_view(a, b, seat)


def test_what_the_player_can_see_does_change_its_observation():
    # Negative controls: the observation is not blind to the features that are public or its own.
    a = random_state(4, 1, steps=20)
    seat = a.current
    b = a.clone()
    mine = b.hands[seat][0]
    other = next(c for c in b.draw_pile if c != mine)
    b.hands[seat][0], b.draw_pile[b.draw_pile.index(other)] = other, mine
    assert not same_view(a, b, seat)  # its own hand
    c = a.clone()
    c.draw_pile.pop()
    assert not same_view(a, c, seat)  # the draw pile's size
    d = a.clone()
    pile_owner = next(p for p in range(4) if d.piles[p])
    d.piles[pile_owner][-1], d.draw_pile[0] = d.draw_pile[0], d.piles[pile_owner][-1]
    assert not same_view(a, d, seat)  # a discard pile's top


def test_the_grinch_draw_from_the_draw_pile_is_hidden_but_a_discard_pile_draw_is_public():
    n = 3
    base = random_state(n, 4, steps=0)
    while not (base.phase == "draw" and base.draws_made == 0):
        legal = base.legal_actions()
        base.step(legal[0])
    grinch = base.current
    watcher = (grinch + 1) % n
    a, b = base.clone(), base.clone()
    b.draw_pile[-1], b.draw_pile[0] = b.draw_pile[0], b.draw_pile[-1]
    a.step(DRAW_PILE_ACTION)
    b.step(DRAW_PILE_ACTION)
    assert a.hands[grinch] != b.hands[grinch] and same_view(a, b, watcher)
    assert not np.array_equal(encode(a, grinch), encode(b, grinch))
    j = next(j for j in range(n) if a.piles[(grinch + j) % n])
    a.step(49 + j)
    taken = a.hands[grinch][-1]
    obs = encode(a, watcher)
    rel = (grinch - watcher) % n
    assert obs[48 + 192 * rel + 144 + taken] == 1.0  # the watcher knows the Grinch holds the card it took
