import numpy as np

from grinch_env.game import Game, decisions_per_game


def test_random_game_has_exact_length_and_conserves_cards():
    for n in range(2, 7):
        game = Game(n, rng=n)
        rng = np.random.default_rng(0)
        steps = 0
        while not game.done:
            legal = game.legal_actions()
            game.step(legal[rng.integers(len(legal))])
            steps += 1
            assert sum(map(len, game.hands)) + sum(map(len, game.piles)) + len(game.draw_pile) == 48
        assert steps == decisions_per_game(n)
