"""Loading scalar Game states into the batched engine: it continues exactly as the scalar engine."""

import numpy as np
import pytest

from grinch_env.games import copy_generator
from grinch_env.grinch.encoding import Scales, action_mask, encode
from grinch_env.grinch.game import Game, terminal_rewards
from grinch_env.grinch.vector import VectorGrinch, per_game_decks

try:
    import numba  # noqa: F401

    BACKENDS = ["numpy", "numba"]
except ImportError:
    BACKENDS = ["numpy"]


def _advance(game, rng, steps):
    for _ in range(steps):
        legal = game.legal_actions()
        game.step(int(legal[rng.integers(len(legal))]))
    return game


@pytest.mark.parametrize("backend", BACKENDS)
def test_loaded_games_step_like_the_scalar_engine(backend):
    rng = np.random.default_rng(0)
    sizes = [2, 3, 4, 5, 6] * 4
    games = []
    for i, n in enumerate(sizes):
        g = Game(n, rng=np.random.default_rng([9, i]))
        games.append(_advance(g, rng, int(rng.integers(0, 60))))  # any phase, any round
    assert {g.phase for g in games} == {"discard", "draw", "score"}
    # The engine's later rounds come from the same generator streams as the scalar games'.
    venv = VectorGrinch(len(games), sizes, deck_source=per_game_decks([copy_generator(g.rng) for g in games]), backend=backend)
    obs, mask, seat = venv.load_games(games)
    scales = Scales(games[0].layout)
    finished = 0
    while finished < len(games):
        for i, g in enumerate(games):
            if g is None:
                continue
            assert seat[i] == g.current
            np.testing.assert_array_equal(obs[i], encode(g, g.current, scales), err_msg=f"game {i}")
            np.testing.assert_array_equal(mask[i], action_mask(g, g.current), err_msg=f"game {i}")
        actions = (rng.random(mask.shape) * mask).argmax(axis=1)
        obs, mask, seat, rewards, dones = venv.step(actions)
        for i, g in enumerate(games):
            if g is None:
                continue
            g.step(int(actions[i]))
            assert dones[i] == g.done
            if g.done:
                n = g.num_players
                np.testing.assert_array_equal(rewards[i], np.float32(terminal_rewards(g.totals) + [0.0] * (6 - n)))
                assert venv.last_totals[i].tolist() == g.totals + [0] * (6 - n)
                games[i] = None
                finished += 1


def test_load_into_some_slots_keeps_the_others():
    venv = VectorGrinch(3, 2, seed=1, backend="numpy")
    before = venv.reset()
    g = _advance(Game(2, rng=5), np.random.default_rng(1), 7)
    obs, mask, seat = venv.load_games([g], indices=[1])
    np.testing.assert_array_equal(obs[[0, 2]], before[0][[0, 2]])
    np.testing.assert_array_equal(obs[1], encode(g, g.current))
    assert seat[1] == g.current


def test_hand_values_of_a_constructed_hand():
    venv = VectorGrinch(1, 2)
    # W1 (card 0) W1' (1) W2 (2) N1 (12) N1' (13): Wreaths 1+1+2 = 4, Noise 2, Rainbow 2+1 = 3, Match three 1s = 20, no Run of 3; no bonus card (copy 1 of W1 needs three Noise).
    values, bonus = venv.hand_values(np.array([(1 << 0) | (1 << 1) | (1 << 2) | (1 << 12) | (1 << 13)], dtype=np.uint64))
    assert values[0].tolist() == [4, 2, 0, 0, 3, 20, 0] and bonus[0] == 0


def test_load_games_rejects_what_it_cannot_play():
    venv = VectorGrinch(2, 2)
    with pytest.raises(ValueError, match="has 3 players but slot 0 plays 2"):
        venv.load_games([Game(3, rng=0)])
    with pytest.raises(ValueError, match="first_grinch=1"):
        venv.load_games([Game(2, rng=0, first_grinch=1)])
    with pytest.raises(ValueError, match="one slot index per game"):
        venv.load_games([Game(2, rng=0)], indices=[0, 1])
    with pytest.raises(ValueError, match="distinct ints in 0..1"):
        venv.load_games([Game(2, rng=0), Game(2, rng=1)], indices=[1, 1])
    g = _advance(Game(2, rng=0, num_rounds=1), np.random.default_rng(0), 14)
    assert g.done
    with pytest.raises(ValueError, match="phase 'done'"):
        venv.load_games([g])
    with pytest.raises(ValueError, match="another bonus layout"):
        venv.load_games([Game(2, rng=0, bonus_layout="none")])


@pytest.mark.parametrize("backend", BACKENDS)
def test_copy_slots_from_another_engine_then_both_meet_the_same_chance(backend):
    """A game copied from one engine's slot into another engine's two slots: the copies' observations equal the
    original's, and stepping all three with the same legal actions to the round's end keeps them equal (the draw
    pile's order was copied too) and banks the same totals; the next round is dealt by each engine's own deck stream."""
    rng = np.random.default_rng(1)
    games = [_advance(Game(3, rng=s), rng, 11 + s) for s in range(2)]
    a = VectorGrinch(2, 3, seed=0, backend=backend)
    obs_a, mask_a, seat_a = a.load_games(games)
    b = VectorGrinch(3, 3, seed=5, backend=backend)
    b.reset()
    obs_b, mask_b, seat_b = b.copy_slots(np.array([1, 1]), np.array([0, 2]), source=a)
    for k in (0, 2):
        np.testing.assert_array_equal(obs_b[k], obs_a[1])
        np.testing.assert_array_equal(mask_b[k], mask_a[1])
    assert seat_b[0] == seat_a[1] == games[1].current
    start, steps = games[1].round, 0
    while a.rounds()[1] == start:
        act = int(np.flatnonzero(mask_a[1])[steps % int(mask_a[1].sum())])
        obs_a, mask_a = a.step(np.array([int(mask_a[0].argmax()), act]))[:2]
        obs_b, mask_b = b.step(np.array([act, int(mask_b[1].argmax()), act]))[:2]
        steps += 1
        assert (b.rounds()[[0, 2]] == a.rounds()[1]).all()
        assert (b.totals()[0] == a.totals()[1]).all() and (b.totals()[2] == a.totals()[1]).all()
        if a.rounds()[1] == start:
            np.testing.assert_array_equal(obs_b[0], obs_a[1])
            np.testing.assert_array_equal(obs_b[2], obs_a[1])
    assert steps >= 3 and a.totals()[1].sum() > sum(games[1].totals)
    assert not np.array_equal(obs_b[0], obs_a[1])  # the new round's hands come from each engine's own stream


def test_copy_slots_from_another_engine_rejects_a_mismatch():
    a = VectorGrinch(2, 3, seed=0)
    a.reset()
    with pytest.raises(ValueError, match="same table size"):
        VectorGrinch(1, 2, seed=0).copy_slots([0], [0], source=a)
    fresh = VectorGrinch(1, 3, seed=0)
    with pytest.raises(RuntimeError, match="on both engines"):
        fresh.copy_slots([0], [0], source=a)
    fresh.reset()
    with pytest.raises(ValueError, match=r"src and dst must be slot indices \(in 0..1 and 0..0\)"):
        fresh.copy_slots([1], [1], source=a)
    other = VectorGrinch(1, 3, seed=0, bonus_layout="none")
    other.reset()
    with pytest.raises(ValueError, match="same bonus layout"):
        other.copy_slots([0], [0], source=a)
