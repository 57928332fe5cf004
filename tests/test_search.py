"""The search agent: determinisations agree with the observation, constructed positions have hand-checked values."""

import numpy as np
import pytest

from grinch_env.agents import make_agent
from grinch_env.grinch.agents.base import decode
from grinch_env.grinch.agents.search import SearchAgent, determinise, game_from_view
from grinch_env.grinch.encoding import action_mask, encode
from grinch_env.grinch.game import SCORE_BASE, Game


def _random_state(n, seed, steps):
    game = Game(n, rng=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        legal = game.legal_actions()
        game.step(int(legal[rng.integers(len(legal))]))
    return game


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_every_determinisation_shows_the_same_observation(n):
    for seed in range(6):
        game = _random_state(n, seed, steps=7 * seed + 3)
        seat = game.current
        obs = encode(game, seat)
        view = decode(obs)
        template, me = game_from_view(view, game.layout)
        for g in determinise(template, me, view, np.random.default_rng(seed), 5):
            np.testing.assert_array_equal(encode(g, me), obs)
            every = sorted([c for h in g.hands for c in h] + [c for p in g.piles for c in p] + g.draw_pile)
            assert every == list(range(48))
            assert len(g.draw_pile) == len(game.draw_pile) and [len(h) for h in g.hands] == [len(h) for h in _rotate(game.hands, seat - me)]


def _rotate(hands, shift):
    n = len(hands)
    return [hands[(p + shift) % n] for p in range(n)]


def _place(game, seat, cards):
    """Give ``seat`` exactly ``cards``, swapping each missing card with one of its others wherever that card lies."""
    hand = game.hands[seat]
    spare = [c for c in hand if c not in cards]
    places = [game.draw_pile] + [h for p, h in enumerate(game.hands) if p != seat] + game.piles
    for c in cards:
        if c in hand:
            continue
        out = spare.pop()
        for place in places:
            if c in place:
                place[place.index(c)] = out
                break
        hand[hand.index(out)] = c
    game.known = [[] for _ in game.hands]


def _last_round_score_position(my_total):
    """2 players, last round, scoring: seat 0 (Who) scored and has 110; seat 1 (the Grinch) holds W1 W1' W2 N1 N1' with Noise and Match unused."""
    game = _random_state(2, 3, steps=5 * 14 + 13)
    assert (game.round, game.phase, game.current, game.grinch) == (5, "score", 1, 1)
    _place(game, 1, [0, 1, 2, 12, 13])  # rows: Wreaths 4, Noise 2, Rainbow 3, Match 20 (three 1s); no bonus
    game.score_sheet = [[10, 20, 30, 20, 10, 10, 10], [10, None, 20, 20, 20, None, 5]]
    game.totals = [110, my_total]
    return game


@pytest.mark.parametrize("my_total, noise, match", [
    (95, 0 + 1e-4 * (97 - 110), 1 + 1e-4 * (115 - 110)),   # Match wins (115 > 110), Noise loses
    (90, 0 + 1e-4 * (92 - 110), 0.5 + 0.0),                # Match ties at 110: half the win
])
def test_last_round_scoring_is_valued_exactly(my_total, noise, match):
    game = _last_round_score_position(my_total)
    agent = SearchAgent(seed=0, playouts=4)
    action = agent.act(encode(game, 1), action_mask(game, 1))
    assert action == SCORE_BASE + 5
    np.testing.assert_allclose(agent.last_values, [noise, match], rtol=0, atol=1e-12)


def test_row_policy_discards_to_the_best_unused_row():
    # 2 players, last round, turn 3: seat 0 (a Who) holds W1' W4 W5 W6 W6' P6 with Wreaths and Presents unused.
    game = _random_state(2, 3, steps=5 * 14 + 8)
    assert (game.round, game.turn, game.phase, game.current) == (5, 3, "discard", 0)
    _place(game, 0, [1, 6, 8, 10, 11, 46])
    game.score_sheet[0] = [None, 10, 10, None, 10, 10, 10]
    agent = SearchAgent(seed=0, playouts=2)
    # Discarding P6 keeps Wreaths 1+4+5+6+6 = 22; discarding W1' keeps 21, any other Wreath less; no bonus applies.
    obs = encode(game, 0)[None]
    assert agent.policy(obs, action_mask(game, 0)[None]).tolist() == [46]


def test_make_agent_builds_search_with_options():
    agent = make_agent("search:playouts=8", seed=1)
    assert isinstance(agent, SearchAgent) and agent.playouts == 8 and agent.name == "search:playouts=8"
    with pytest.raises(ValueError, match="playouts must be an int in 1..65536"):
        make_agent("search:playouts=0")
    with pytest.raises(ValueError, match="bad options"):
        make_agent("search:depth=2")


def test_search_plays_whole_games_legally():
    from grinch_env.evaluation.tournament import play_game

    rec = play_game([make_agent("search:playouts=4"), make_agent("greedy"), make_agent("expectimax:samples=4")], 3, deal=1, seeds=[0, 1, 2])
    assert len(rec["totals"]) == 3 and all(t > 0 for t in rec["totals"])
