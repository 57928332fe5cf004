"""The oracle's view of the future draws (hand-checked deck positions) and the one-seat match harness."""

import numpy as np
import pytest

from grinch_env.agents import make_agent
from grinch_env.grinch.agents.oracle import future_draws
from grinch_env.grinch.encoding import action_mask, encode
from grinch_env.grinch.game import Game
from training.match import run_match, wilson


def test_future_draws_of_a_who_and_of_the_grinch():
    game = Game(2, rng=3)
    d = game.draw_pile[::-1]  # top first, after seat 1 (the Who) drew its first two cards
    assert (game.current, game.phase, game.turn) == (1, "discard", 1)
    # The Grinch draws d0 d1 this turn; turn 2: me d2 d3, Grinch d4 d5; turn 3: me d6 d7.
    assert future_draws(game) == [d[2], d[3], d[6], d[7]]
    game.step(game.legal_actions()[0])
    assert (game.current, game.phase) == (0, "draw")
    # Now d0 d1; turn 2: Who d2 d3, me d4 d5; turn 3: Who d6 d7, me d8 d9.
    assert future_draws(game) == [d[0], d[1], d[4], d[5], d[8], d[9]]
    game.step(48)
    assert future_draws(game)[:1] == [d[1]]
    game = Game(2, rng=3)
    # If the Grinch takes its first draw of this turn from a discard pile and its second from the draw pile: it takes d0 only,
    # so turn 2 gives me d1 d2; then the Grinch (all from the draw pile by default after the flags run out) d3 d4; turn 3 me d5 d6.
    assert future_draws(game, [False, True]) == [d[1], d[2], d[5], d[6]]
    assert future_draws(game, [False] * 6) == [d[0], d[1], d[2], d[3]]


def test_oracle_refuses_to_play_blind():
    game = Game(2, rng=3)
    oracle = make_agent("oracle", seed=0)
    with pytest.raises(RuntimeError, match="call see"):
        oracle.act(encode(game, 1), action_mask(game, 1))
    oracle.see(game)
    assert oracle.act(encode(game, 1), action_mask(game, 1)) in game.legal_actions()


def test_match_rotates_the_seat_and_counts_ties():
    m = run_match("greedy", "random", 3, 5, seed=0)
    assert m["games"] == 6 and m["first_grinch"]["games"] == 2 and m["first_who"]["games"] == 4  # rounded up to 2 cycles of 3 seats
    assert m["all"]["win_rate"] == 1.0 and m["mean_margin"] > 30  # greedy beats random every time (1.000 over 2,000 games)


def test_wilson_interval_by_hand():
    lo, hi = wilson(50, 100)
    assert (round(lo, 4), round(hi, 4)) == (0.4038, 0.5962)
    assert np.isclose(wilson(0, 10)[0], 0.0)
