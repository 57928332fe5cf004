"""Determinisation: Game.clone() and Game.resample_from_infostate(seat, rng)."""

from collections import Counter

import numpy as np
import pytest

from grinch_env.grinch.cards import NUM_CARDS
from grinch_env.grinch.encoding import encode
from grinch_env.grinch.game import PHASE_DONE, Game


def random_state(n: int, seed: int, steps: int) -> Game:
    game = Game(n, rng=seed)
    rng = np.random.default_rng(seed + 1000)
    for _ in range(steps):
        if game.done:
            break
        legal = game.legal_actions()
        game.step(legal[rng.integers(len(legal))])
    return game


def public_and_own(game: Game, seat: int) -> dict:
    """Everything ``seat`` knows about the state."""
    return {
        "own hand": sorted(game.hands[seat]),
        "piles in order": [p[:] for p in game.piles],
        "known in hands": [sorted(k) for k in game.known],
        "hand sizes": [len(h) for h in game.hands],
        "draw pile size": len(game.draw_pile),
        "pads": [s[:] for s in game.score_sheet],
        "totals": game.totals[:],
        "flow": (game.round, game.turn, game.phase, game.grinch, game.current, game.pos, game.draws_made, game.order),
    }


def hidden(game: Game, seat: int) -> list[int]:
    """Return the sorted cards ``seat`` cannot locate (unknown cards of other hands and the draw pile)."""
    cards = [c for p in range(game.num_players) if p != seat for c in game.hands[p] if c not in game.known[p]]
    return sorted(cards + game.draw_pile)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_sample_agrees_with_what_the_player_knows_and_differs_only_in_hidden_cards(n):
    for seed in range(8):
        game = random_state(n, seed, steps=seed * 9)
        for seat in range(n):
            before = public_and_own(game, seat), [h[:] for h in game.hands], game.draw_pile[:]
            sample = game.resample_from_infostate(seat, np.random.default_rng(seed))
            assert public_and_own(sample, seat) == public_and_own(game, seat)
            assert np.array_equal(encode(sample, seat), encode(game, seat))
            assert hidden(sample, seat) == hidden(game, seat)  # the same unseen cards, dealt again
            for p in range(n):
                assert set(sample.known[p]) <= set(sample.hands[p])  # known cards stay where they are known to be
            everything = sorted([c for h in sample.hands for c in h] + [c for p in sample.piles for c in p] + sample.draw_pile)
            assert everything == list(range(NUM_CARDS))
            assert (public_and_own(game, seat), [h[:] for h in game.hands], game.draw_pile[:]) == before  # the original is untouched


def test_samples_differ_across_generators():
    game = random_state(4, 3, steps=10)
    for seat in range(4):
        samples = {
            (tuple(tuple(sorted(h)) for h in s.hands), tuple(s.draw_pile))
            for s in (game.resample_from_infostate(seat, np.random.default_rng(k)) for k in range(20))
        }
        assert len(samples) == 20
        assert all(tuple(s[0][seat]) == tuple(sorted(game.hands[seat])) for s in samples)


def test_hidden_cards_are_spread_over_the_hidden_places():
    # 2 players, start of the game: seat 1 holds 4 cards, seat 0 sees 2 own cards and nothing else.
    game = Game(2, rng=0)
    assert [len(h) for h in game.hands] == [2, 4] and game.current == 1
    counts = Counter()
    trials = 400
    for k in range(trials):
        sample = game.resample_from_infostate(0, np.random.default_rng(k))
        counts.update(sample.hands[1])
    unseen = hidden(game, 0)
    assert len(unseen) == 46 and set(counts) <= set(unseen)
    # every unseen card has probability 4/46 to be in seat 1's hand: about 35 times in 400 samples
    assert len(counts) == 46 and max(counts.values()) < 70 and min(counts.values()) > 10


def test_sample_plays_on_as_a_normal_game():
    for n in (2, 5):
        game = random_state(n, 2, steps=25)
        sample = game.resample_from_infostate(1, np.random.default_rng(9))
        rng = np.random.default_rng(0)
        while not sample.done:
            legal = sample.legal_actions()
            sample.step(legal[rng.integers(len(legal))])
        assert sample.phase == PHASE_DONE
        assert [sum(v is not None for v in row) for row in sample.score_sheet] == [sample.num_rounds] * n


def test_later_rounds_of_a_sample_are_fresh_shuffles_from_its_generator():
    game = random_state(2, 4, steps=0)
    a = game.resample_from_infostate(0, np.random.default_rng(1))
    b = game.resample_from_infostate(0, np.random.default_rng(1))
    c = game.resample_from_infostate(0, np.random.default_rng(2))
    for g in (a, b, c):
        while g.round == 0:
            g.step(g.legal_actions()[0])
    assert a.hands == b.hands and a.draw_pile == b.draw_pile
    assert a.hands != c.hands


def test_clone_is_independent_and_continues_identically():
    game = random_state(4, 6, steps=30)
    twin = game.clone()
    assert twin.state_dict() == game.state_dict() and twin.draw_pile == game.draw_pile
    twin.hands[0].append(99)
    twin.piles[1].append(98)
    twin.score_sheet[2][0] = 5
    assert 99 not in game.hands[0] and 98 not in game.piles[1] and game.score_sheet[2][0] is None
    twin = game.clone()
    rng = np.random.default_rng(0)
    while not game.done:  # the clone's generator is a copy: the next rounds' deals are the same
        legal = game.legal_actions()
        assert twin.legal_actions() == legal
        action = legal[rng.integers(len(legal))]
        game.step(action)
        twin.step(action)
        assert twin.state_dict() == game.state_dict()


def test_resample_of_a_finished_game_is_a_copy():
    game = random_state(2, 1, steps=10_000)
    assert game.done
    sample = game.resample_from_infostate(0, np.random.default_rng(0))
    assert sample.state_dict() == game.state_dict()
