"""The batched engine against the scalar rules module: same decks, same actions, same everything."""

import re

import numpy as np
import pytest
from vector_common import check_recycled_buffers_are_never_held, random_legal

from grinch_env.grinch.encoding import OBS_SIZE, Scales, action_mask, encode
from grinch_env.grinch.game import NUM_ACTIONS, Game, decisions_per_game, terminal_rewards
from grinch_env.grinch.scoring import bonus_points, resolve_layout, row_scores
from grinch_env.grinch.vector import VectorGrinch, per_game_decks

try:
    import numba  # noqa: F401

    BACKENDS = ["numpy", "numba"]
except ImportError:  # the numba kernel is optional; the numpy backend is always checked
    BACKENDS = ["numpy"]


def _differential(sizes, num_envs, min_games, seed, reward_mode="win", bonus_layout="standard", backend="numpy"):
    """Play random legal games through both engines; return the number of finished games."""
    gens = [np.random.default_rng([seed, i]) for i in range(num_envs)]
    twins = [np.random.default_rng([seed, i]) for i in range(num_envs)]
    venv = VectorGrinch(num_envs, sizes, bonus_layout=bonus_layout, reward_mode=reward_mode, deck_source=per_game_decks(gens), backend=backend)
    assert venv.backend == backend
    games = [Game(int(n), rng=twins[i], bonus_layout=bonus_layout) for i, n in enumerate(venv.num_players)]
    scales = Scales(games[0].layout)
    obs, mask, seat = venv.reset()
    rng = np.random.default_rng(seed)
    finished = 0
    steps = np.zeros(num_envs, dtype=np.int64)
    while finished < min_games:
        for i, g in enumerate(games):
            assert seat[i] == g.current
            np.testing.assert_array_equal(obs[i], encode(g, g.current, scales), err_msg=f"game {i}")
            np.testing.assert_array_equal(mask[i], action_mask(g, g.current), err_msg=f"game {i}")
        actions = random_legal(rng, mask)
        obs, mask, seat, rewards, dones = venv.step(actions)
        steps += 1
        for i, g in enumerate(games):
            g.step(int(actions[i]))
            assert dones[i] == g.done
            if g.done:
                n = g.num_players
                assert steps[i] == decisions_per_game(n)
                np.testing.assert_array_equal(rewards[i], np.float32(terminal_rewards(g.totals, reward_mode) + [0.0] * (6 - n)))
                np.testing.assert_array_equal(venv.last_totals[i], g.totals + [0] * (6 - n))
                games[i] = Game(n, rng=twins[i], bonus_layout=bonus_layout)
                steps[i] = 0
                finished += 1
            else:
                assert not rewards[i].any()
    return finished


@pytest.mark.parametrize("backend", BACKENDS)
def test_differential_mixed_sizes_win_reward(backend):
    assert _differential([2, 3, 4, 5, 6], num_envs=40, min_games=1000, seed=1, backend=backend) >= 1000


@pytest.mark.parametrize("backend", BACKENDS)
def test_differential_margin_reward_other_layouts(backend):
    assert _differential(4, num_envs=8, min_games=40, seed=2, reward_mode="margin", bonus_layout="none", backend=backend) >= 40
    table = {0: (7, 0, 2), 47: (3, "Noise", 1)}  # a bonus naming its own suit counts the card itself
    assert _differential(3, num_envs=8, min_games=40, seed=3, bonus_layout=table, backend=backend) >= 40


@pytest.mark.parametrize("layout", ["standard", {5: (9, 0, 2), 30: (4, 3, 1), 46: (6, 1, 5)}])
def test_hand_values_match_scoring_module(layout):
    venv = VectorGrinch(1, 2, bonus_layout=layout)
    table = resolve_layout(layout)
    rng = np.random.default_rng(4)
    hands = [rng.choice(48, size=int(rng.integers(1, 7)), replace=False) for _ in range(3000)]
    masks = np.array([sum(1 << int(c) for c in h) for h in hands], dtype=np.uint64)
    values, bonus = venv._hand_values(masks)
    assert values.tolist() == [list(row_scores(h.tolist())) for h in hands]
    assert bonus.tolist() == [bonus_points(h.tolist(), table) for h in hands]
    assert bonus.max() > 0 and values[:, 5].max() >= 10 and values[:, 6].max() >= 15  # bonuses, Match and Run all occur


@pytest.mark.parametrize(
    "mode, totals, n, expected",
    [
        ("win", [10, 10, 5, 0, 0, 0], 3, [0.5, 0.5, -1.0, 0, 0, 0]),
        ("win", [12, 3, 4, 3, 0, 0], 4, [1.0, -1 / 3, -1 / 3, -1 / 3, 0, 0]),
        ("win", [7, 7, 0, 0, 0, 0], 2, [0, 0, 0, 0, 0, 0]),  # everyone ties
        ("margin", [30, 10, 20, 0, 0, 0], 3, [0.15, -0.15, 0.0, 0, 0, 0]),
        ("margin", [40, 10, 0, 0, 0, 0], 2, [0.3, -0.3, 0, 0, 0, 0]),
    ],
)
def test_rewards_by_hand(mode, totals, n, expected):
    venv = VectorGrinch(1, n, reward_mode=mode)
    got = venv._rewards(np.array([totals]), np.array([n]))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got[0], expected, rtol=1e-6)
    np.testing.assert_array_equal(got[0, :n], np.float32(terminal_rewards(totals[:n], mode)))


def test_backend_choice():
    if "numba" in BACKENDS:
        assert VectorGrinch(1).backend == "numba"
    else:
        assert VectorGrinch(1).backend == "numpy"
        with pytest.raises(ValueError, match="backend 'numba' needs the numba package"):
            VectorGrinch(1, backend="numba")
    assert VectorGrinch(1, backend="numpy").backend == "numpy"


@pytest.mark.parametrize("backend", BACKENDS)
def test_copy_false_returns_the_engine_buffers(backend):
    shared, fresh = VectorGrinch(8, [3, 6], seed=4, copy=False, backend=backend), VectorGrinch(8, [3, 6], seed=4, backend=backend)
    a, b = shared.reset(), fresh.reset()
    rng = np.random.default_rng(0)
    for _ in range(200):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
        actions = random_legal(rng, b[1])
        before = a
        a, b = shared.step(actions), fresh.step(actions)
        assert all(x is y for x, y in zip(a[:3], before[:3]))  # same buffers, overwritten in place
        assert not any(x is y for x, y in zip(b[:3], before[:3]))


def test_shapes_and_dtypes():
    venv = VectorGrinch(3, 5, seed=0)
    obs, mask, seat = venv.reset()
    assert obs.shape == (3, OBS_SIZE) and obs.dtype == np.float32
    assert mask.shape == (3, NUM_ACTIONS) and mask.dtype == np.int8
    assert seat.dtype == np.int64 and seat.tolist() == [1, 1, 1]  # seat 0 is the first Grinch, seat 1 acts first
    out = venv.step(random_legal(np.random.default_rng(0), mask))
    assert [x.shape for x in out] == [(3, OBS_SIZE), (3, NUM_ACTIONS), (3,), (3, 6), (3,)]
    assert out[3].dtype == np.float32 and out[4].dtype == bool
    assert venv.num_players.tolist() == [5, 5, 5] and venv.num_players.dtype == np.int64


def test_seeding_reproducible():
    def play(seed, reseed=None):
        venv = VectorGrinch(16, [2, 4, 6], seed=seed)
        obs, mask, _ = venv.reset(seed=reseed)
        rng = np.random.default_rng(5)
        trace = [obs.sum(axis=1)]
        for _ in range(300):
            obs, mask, seat, rewards, dones = venv.step(random_legal(rng, mask))
            trace.append(obs.sum(axis=1))
            trace.append(rewards.sum(axis=1))
        return np.concatenate(trace)

    np.testing.assert_array_equal(play(7), play(7))
    np.testing.assert_array_equal(play(None, reseed=7), play(7))
    assert not np.array_equal(play(7), play(8))


def test_auto_reset_is_a_fresh_game():
    gens = [np.random.default_rng(11)]
    twin = np.random.default_rng(11)
    venv = VectorGrinch(1, 2, deck_source=per_game_decks(gens))
    obs, mask, seat = venv.reset()
    game = Game(2, rng=twin)
    rng = np.random.default_rng(0)
    for k in range(decisions_per_game(2)):
        assert not game.done
        a = random_legal(rng, mask)
        game.step(int(a[0]))
        obs, mask, seat, rewards, dones = venv.step(a)
        assert dones[0] == (k == decisions_per_game(2) - 1)
    assert game.done
    assert rewards[0].tolist() == terminal_rewards(game.totals) + [0.0] * 4
    assert venv.last_totals[0].tolist() == game.totals + [0] * 4
    fresh = Game(2, rng=twin)  # the next deck of the same stream
    assert fresh.round == 0 and fresh.totals == [0, 0]
    assert seat[0] == fresh.current == 1
    np.testing.assert_array_equal(obs[0], encode(fresh, 1))
    np.testing.assert_array_equal(mask[0], action_mask(fresh, 1))


def test_masks_always_offer_a_legal_action():
    venv = VectorGrinch(64, [2, 3, 4, 5, 6], seed=3)
    obs, mask, seat = venv.reset()
    rng = np.random.default_rng(1)
    for _ in range(400):
        assert (mask.sum(axis=1) >= 1).all()
        assert (obs[:, -1] == 1).all()  # "it is the observer's turn to act"
        obs, mask, seat, rewards, dones = venv.step(random_legal(rng, mask))


def test_mixed_sizes_keep_their_own_game_length():
    sizes = [2, 3, 4, 5, 6]
    venv = VectorGrinch(5, sizes, seed=0)
    _, mask, _ = venv.reset()
    rng = np.random.default_rng(0)
    ends = [[] for _ in sizes]
    for t in range(1, 2 * max(decisions_per_game(n) for n in sizes) + 1):
        _, mask, _, _, dones = venv.step(random_legal(rng, mask))
        for i in np.flatnonzero(dones):
            ends[i].append(t)
    # Per round 3 discards per Who, 6 draws + 3 discards for the Grinch, n scorings: 2 players 6 x 14 = 84 decisions,
    # 3: 6 x 18 = 108, 4: 4 x 22 = 88, 5: 5 x 26 = 130, 6: 6 x 30 = 180.
    assert ends == [[84, 168, 252, 336], [108, 216, 324], [88, 176, 264, 352], [130, 260], [180, 360]]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_envs=0), "num_envs must be an int >= 1"),
        (dict(num_envs=2.5), "num_envs must be an int >= 1"),
        (dict(num_envs=4, num_players=7), "num_players must be an int in 2..6"),
        (dict(num_envs=4, num_players=[2, 1]), "num_players must be an int in 2..6"),
        (dict(num_envs=4, num_players=[]), "num_players must be an int in 2..6 or a non-empty sequence"),
        (dict(num_envs=4, reward_mode="score"), "reward_mode must be one of"),
        (dict(num_envs=4, bonus_layout="fancy"), "bonus_layout must be one of"),
        (dict(num_envs=4, backend="cuda"), "backend must be one of"),
    ],
)
def test_invalid_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        VectorGrinch(**kwargs)


def test_bad_deck_source():
    with pytest.raises(ValueError, match="each row a permutation of 0..47"):
        VectorGrinch(2, 3, deck_source=lambda idx: np.zeros((len(idx), 48), dtype=np.int64)).reset()
    with pytest.raises(ValueError, match=r"the deck source must return int\[2, 48\]"):
        VectorGrinch(2, 3, deck_source=lambda idx: np.tile(np.arange(48), (1, 1))).reset()


def test_invalid_actions():
    venv = VectorGrinch(3, 4, seed=0)
    with pytest.raises(RuntimeError, match="call reset"):
        venv.step(np.zeros(3, dtype=np.int64))
    _, mask, _ = venv.reset()
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        venv.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="integer array"):
        venv.step(np.zeros(3, dtype=np.float32))
    actions = random_legal(np.random.default_rng(0), mask)
    actions[1] = 48  # a Who may not draw
    legal = np.flatnonzero(mask[1]).tolist()
    with pytest.raises(ValueError, match=re.escape(f"illegal action 48 (draw from the draw pile) for game 1 (seat 1 to act); legal actions: {legal} (")):
        venv.step(actions)
    actions[1] = 62
    with pytest.raises(ValueError, match=r"illegal action 62 \(outside 0..61\) for game 1"):
        venv.step(actions)


def test_reference_engine_agrees():
    from grinch_env.grinch._vector_reference import ReferenceVectorGrinch

    engines = [cls(6, [2, 5, 6], reward_mode="margin", deck_source=per_game_decks([np.random.default_rng(i) for i in range(6)]))
               for cls in (VectorGrinch, ReferenceVectorGrinch)]
    fast, ref = [e.reset() for e in engines]
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(250):
        for x, y in zip(fast, ref):
            np.testing.assert_array_equal(x, y)
        actions = random_legal(rng, fast[1])
        fast, ref = [e.step(actions) for e in engines]
        ended += fast[4].sum()
    assert ended == 2 * 2 + 2 + 2  # 2 players: 84 decisions a game, 5: 130, 6: 180


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba is not installed")
@pytest.mark.parametrize("reward_mode", ["win", "margin"])
def test_numba_transitions_match_numpy_transitions(reward_mode):
    """The numba backend's compiled step and the numpy transitions agree on everything, seeded shuffles included."""
    engines = [VectorGrinch(24, [2, 3, 4, 5, 6], seed=9, reward_mode=reward_mode, backend=b) for b in ("numpy", "numba")]
    outs = [e.reset() for e in engines]
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(400):
        for x, y in zip(*outs):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(engines[0].last_totals, engines[1].last_totals)
        actions = random_legal(rng, outs[0][1])
        outs = [e.step(actions) for e in engines]
        ended += outs[0][4].sum()
    assert ended >= 24


@pytest.mark.parametrize("backend", BACKENDS)
def test_illegal_action_leaves_the_state_unchanged(backend):
    venv, twin = VectorGrinch(4, 3, seed=1, backend=backend), VectorGrinch(4, 3, seed=1, backend=backend)
    _, mask, _ = venv.reset()
    twin.reset()
    actions = random_legal(np.random.default_rng(0), mask)
    bad = actions.copy()
    bad[2] = 48  # a Who may not draw
    with pytest.raises(ValueError, match="for game 2"):
        venv.step(bad)
    for x, y in zip(venv.step(actions), twin.step(actions)):
        np.testing.assert_array_equal(x, y)


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba is not installed")
def test_numba_row_values_match_scoring_module():
    from grinch_env.grinch._vector_numba import _features, _row_value

    rng = np.random.default_rng(6)
    hands = [rng.choice(48, size=int(rng.integers(1, 7)), replace=False) for _ in range(1500)]
    got = [[int(_row_value(_features(np.uint64(sum(1 << int(c) for c in h))), row)) for row in range(7)] for h in hands]
    assert got == [list(row_scores(h.tolist())) for h in hands]
    assert max(v[5] for v in got) >= 10 and max(v[6] for v in got) >= 15  # Match and Run both occur


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba is not installed")
def test_recycled_observation_buffers_are_never_ones_the_caller_holds(monkeypatch):
    import grinch_env.grinch.vector as vector

    monkeypatch.setattr(vector, "_RECYCLE_BYTES", 0)  # recycle at any size (by default only large batches do)
    venv, plain = VectorGrinch(6, [2, 4], seed=5, backend="numba"), VectorGrinch(6, [2, 4], seed=5, backend="numpy")
    assert venv._recycle and not plain._recycle
    check_recycled_buffers_are_never_held(venv, plain)
