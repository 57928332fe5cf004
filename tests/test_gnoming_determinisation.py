"""Gnoming determinisation: decode_game rebuilds a game that encodes to the same observation,
and Game.resample_from_infostate keeps every public fact and redeals only the hidden cards."""

from collections import Counter

import numpy as np
import pytest
from gnoming_helpers import cards_in_play, random_game
from test_gnoming_no_leak import public

from grinch_env.gnoming.encoding import action_mask, decode_game, encode
from grinch_env.gnoming.game import Game

OPTIONS = [{}, {"discard_take": "free", "start_rotation": "fixed", "first_player": 1}, {"mulligan_lines": "single", "max_turns_per_player": 12}]


def hidden(g: Game) -> list[int]:
    """Return the sorted hidden cards: every face-down slot and (unless reshuffled) the draw pile."""
    cards = [k for lay, up in zip(g.layouts, g.face_up) for k, u in zip(lay, up) if not u]
    return sorted(cards + ([] if g.reshuffled else g.draw_pile))


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_decode_game_re_encodes_to_the_same_observation(n):
    rng = np.random.default_rng(n)
    checked = acting = 0
    for seed in range(3):
        options = OPTIONS[seed % 3]
        game = Game(n, rng=seed, **options)
        step = 0
        while not game.done:
            if step % 9 == 0:
                for seat in range(n):
                    obs = encode(game, seat)
                    det = decode_game(obs, rng, **options)
                    assert det.num_players == n and cards_in_play(det) == 110
                    assert np.array_equal(encode(det, 0), obs)
                    if seat == game.current:
                        # The observer acts in the rebuilt game too, with the same legal actions.
                        assert det.current == 0 and np.array_equal(action_mask(det, 0), action_mask(game, seat))
                        acting += 1
                    checked += 1
            legal = game.legal_actions()
            game.step(legal[rng.integers(len(legal))])
            step += 1
        obs = encode(game, 1)
        assert np.array_equal(encode(decode_game(obs, rng, **options), 0), obs)
    assert checked > 150 and acting > 25


def test_decode_game_continues_as_a_playable_game():
    rng = np.random.default_rng(0)
    game = random_game(5, 2, steps=200)
    det = decode_game(encode(game, game.current), rng)
    while not det.done:
        legal = det.legal_actions()
        det.step(legal[rng.integers(len(legal))])
    assert len(det.round_scores) == 3


def test_decode_game_refuses_bad_input():
    obs = encode(Game(3, rng=0), 0)
    with pytest.raises(ValueError, match=r"observation must have shape \(1046,\)"):
        decode_game(obs[:-1])
    with pytest.raises(ValueError, match="num_players comes from the observation"):
        decode_game(obs, 0, num_players=3)


@pytest.mark.parametrize("n", [3, 5, 7])
def test_resample_keeps_every_public_fact_and_redeals_only_hidden_cards(n):
    moved = 0
    for seed in range(10):
        game = random_game(n, seed, steps=seed * 53 + 7)
        before = game.state_dict()
        seat = seed % n
        sample = game.resample_from_infostate(seat, np.random.default_rng(seed))
        assert game.state_dict() == before  # the original is untouched
        assert public(sample) == public(game)
        assert hidden(sample) == hidden(game)  # the same multiset, redealt
        assert np.array_equal(encode(sample, seat), encode(game, seat))
        assert sample.legal_actions() == game.legal_actions()
        if game.reshuffled:
            assert Counter(sample.draw_pile) == Counter(game.draw_pile)
        moved += sample.layouts != game.layouts
        assert cards_in_play(sample) == 110
    assert moved >= 8


def test_resample_after_a_reshuffle_shuffles_the_known_draw_pile():
    for seed in range(86, 100):  # reshuffles are rare in random play: 86 is the first such 7-player seed
        rng = np.random.default_rng(seed)
        game = Game(7, rng=seed)
        while not game.done and not game.reshuffled:
            legal = game.legal_actions()
            game.step(legal[rng.integers(len(legal))])
        if not game.done:
            break
    assert game.reshuffled and len(game.draw_pile) > 5
    orders = set()
    for i in range(5):
        sample = game.resample_from_infostate(1, np.random.default_rng(i))
        assert Counter(sample.draw_pile) == Counter(game.draw_pile) and public(sample) == public(game)
        assert hidden(sample) == hidden(game)
        orders.add(tuple(sample.draw_pile))
        obs = encode(game, 2)
        det = decode_game(obs, np.random.default_rng(i))
        assert np.array_equal(encode(det, 0), obs) and Counter(det.draw_pile) == Counter(game.draw_pile)
    assert len(orders) == 5


def test_resample_deals_the_never_seen_cards_uniformly():
    # Over many samples, each face-down slot holds each kind about as often as the never-seen counts say.
    game = random_game(4, 7, steps=30)
    seen = Counter()
    counts = Counter(hidden(game))
    total = sum(counts.values())
    rng = np.random.default_rng(1)
    slot = next((s, p) for s in range(4) for p in range(9) if not game.face_up[s][p])
    draws = 4000
    for _ in range(draws):
        seen[game.resample_from_infostate(0, rng).layouts[slot[0]][slot[1]]] += 1
    for k, c in counts.items():
        expected = draws * c / total
        assert abs(seen[k] - expected) < 5 * np.sqrt(expected) + 1, (k, seen[k], expected)


def test_clone_is_independent_and_continues_the_same_way():
    game = random_game(4, 3, steps=100)
    twin = game.clone()
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    while not game.done:
        legal = game.legal_actions()
        assert twin.legal_actions() == legal
        a = legal[rng_a.integers(len(legal))]
        game.step(a)
        twin.step(legal[rng_b.integers(len(legal))])
    assert twin.state_dict() == game.state_dict()
    assert random_game(4, 3, steps=100).state_dict() != game.state_dict()


@pytest.mark.parametrize("n", [3, 5, 7])
def test_the_envs_cached_encoder_equals_encode_whatever_the_gaps_between_calls(n):
    from grinch_env.gnoming.encoding import Encoder

    rng = np.random.default_rng(n)
    encoder = Encoder()
    checked = 0
    for seed in range(6):
        game = Game(n, rng=seed, **OPTIONS[seed % 3])
        while True:
            if rng.random() < 0.5 or game.done:  # observe at irregular gaps, from any seat
                for seat in {game.current if game.current is not None else 0, int(rng.integers(n))}:
                    got = encoder.observe(game, seat)
                    assert np.array_equal(got["observation"], encode(game, seat))
                    assert np.array_equal(got["action_mask"], action_mask(game, seat))
                    assert got["observation"].flags.writeable and got["action_mask"].flags.writeable
                    checked += 1
            if game.done:
                break
            legal = game.legal_actions()
            game.step(legal[rng.integers(len(legal))])
    assert checked > 1000
