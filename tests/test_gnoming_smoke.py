"""Gnoming smoke: random games through the rules engine end, keep every card, and decode to the same observation."""

import numpy as np
import pytest

from grinch_env.gnoming.cards import DECK_SIZE
from grinch_env.gnoming.encoding import OBS_SIZE, decode_game, encode
from grinch_env.gnoming.game import Game, Phase


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_random_games_end_and_keep_110_cards(n):
    for seed in range(5):
        game = Game(n, rng=seed)
        rng = np.random.default_rng(seed)
        while not game.done:
            legal = game.legal_actions()
            assert len(legal) >= 2  # single legal actions are played by the engine
            game.step(legal[rng.integers(len(legal))])
            cards = sum(map(len, game.layouts)) + len(game.piles[0]) + len(game.piles[1]) + len(game.draw_pile)
            assert cards + (game.held is not None) + len(game.removed) == DECK_SIZE
        assert game.phase == Phase.DONE == "done" and game.current is None
        assert len(game.round_scores) == 3 and game.totals == [sum(r[s] for r in game.round_scores) for s in range(n)]
        obs = encode(game, 0)
        assert obs.shape == (OBS_SIZE,) and np.array_equal(encode(decode_game(obs, 0), 0), obs)
