"""The Gnoming batched engine against the scalar rules module: same shuffles, same actions, same everything."""

import re

import numpy as np
import pytest
from vector_common import check_recycled_buffers_are_never_held, random_legal

from grinch_env.gnoming.encoding import DISCARDER, HELD_SOURCE, OBS_SIZE, PHASE, RESHUFFLED_FLAG, WENT_OUT, Encoder, action_mask, encode
from grinch_env.gnoming.game import NUM_ACTIONS, Game
from grinch_env.gnoming.scoring import score_layout
from grinch_env.gnoming.vector import VectorGnoming, per_game_decks

try:
    import numba  # noqa: F401

    BACKENDS = ["numpy", "numba"]
except ImportError:  # the numba kernels are optional; the scalar-loop backend is always checked
    BACKENDS = ["numpy"]
needs_numba = pytest.mark.skipif("numba" not in BACKENDS, reason="numba is not installed")
FAST = BACKENDS[-1]  # the backend under test against the scalar Game: numba where installed


def _differential(sizes, num_envs, min_games, seed, backend=FAST, reward_mode="win", **options):
    """Play random legal games through the batched engine and scalar Games; return (finished games, decisions, coverage counts)."""
    gens = [np.random.default_rng([seed, i]) for i in range(num_envs)]
    twins = [np.random.default_rng([seed, i]) for i in range(num_envs)]
    venv = VectorGnoming(num_envs, sizes, reward_mode=reward_mode, deck_source=per_game_decks(gens), backend=backend, **options)
    assert venv.backend == backend
    games = [Game(int(n), rng=twins[i], **options) for i, n in enumerate(venv.num_players)]
    obs, mask, seat = venv.reset()
    rng = np.random.default_rng(seed)
    finished = decisions = 0
    seen = dict(reshuffled=0, hazard_response=0, bounce=0, went_out=0, capped_rounds=0)
    encoders = [Encoder() for _ in range(num_envs)]  # the AEC env's observer, one per slot (it caches one game's pieces)
    step = 0
    while finished < min_games:
        # Every step against the env's Encoder; every 10th step also against the plain encode() and action_mask().
        views = [e.observe(g, g.current) for e, g in zip(encoders, games)]
        expected = np.stack([v["observation"] for v in views])
        if step % 10 == 0:
            np.testing.assert_array_equal(expected, np.stack([encode(g, g.current) for g in games]))
            np.testing.assert_array_equal(mask, np.stack([action_mask(g, g.current) for g in games]))
        step += 1
        if not np.array_equal(obs, expected):
            i = int(np.flatnonzero((obs != expected).any(axis=1))[0])
            raise AssertionError(f"game {i}: observation entries {np.flatnonzero(obs[i] != expected[i]).tolist()} differ; {games[i].state_dict()}")
        np.testing.assert_array_equal(mask, np.stack([v["action_mask"] for v in views]))
        np.testing.assert_array_equal(seat, [g.current for g in games])
        assert (mask.sum(axis=1) >= 2).all()  # single-legal-action decisions are played inside
        seen["reshuffled"] += int(obs[:, RESHUFFLED_FLAG].sum())
        seen["hazard_response"] += int(obs[:, DISCARDER:DISCARDER + 7].sum())
        seen["bounce"] += int(obs[:, HELD_SOURCE + 3].sum())
        seen["went_out"] += int(obs[:, WENT_OUT:WENT_OUT + 7].sum())
        actions = random_legal(rng, mask)
        obs, mask, seat, rewards, dones = venv.step(actions)
        decisions += num_envs
        for i, g in enumerate(games):
            g.step(int(actions[i]))
            assert dones[i] == g.done
            if g.done:
                n = g.num_players
                np.testing.assert_array_equal(rewards[i], np.float32(g.rewards(reward_mode) + [0.0] * (7 - n)))
                assert venv.last_totals[i].tolist() == g.totals + [0] * (7 - n)
                seen["capped_rounds"] += sum(g.round_capped)
                games[i] = Game(n, rng=twins[i], **options)  # the next game of the slot continues the same stream
                finished += 1
            else:
                assert not rewards[i].any()
    return finished, decisions, seen


def test_differential_thousand_mixed_games():
    finished, decisions, seen = _differential([3, 4, 5, 6, 7], num_envs=50, min_games=1000, seed=1)
    assert finished >= 1000 and decisions > 500_000
    # Every branch of the rules occurs: decisions after a reshuffle (rare in random play: 120 here), in Hazard
    # responses, bounces, after someone went out (random play reaches the turn cap only rarely; test_differential_options often).
    assert seen["reshuffled"] > 50 and min(seen["hazard_response"], seen["bounce"], seen["went_out"]) > 10_000


@pytest.mark.parametrize(
    "options",
    [
        dict(reward_mode="margin", discard_take="free", mulligan_lines="single"),
        dict(start_rotation="fixed", first_player=2, max_turns_per_player=10),  # the turn cap ends rounds
    ],
)
def test_differential_options(options):
    finished, _, seen = _differential([3, 5, 7], num_envs=12, min_games=40, seed=2, **options)
    assert finished >= 40
    if options.get("max_turns_per_player") == 10:
        assert seen["capped_rounds"] > 10


@needs_numba
def test_numba_matches_scalar_backend_on_seeded_games():
    """Both backends consume the default per-slot generators the same way, so a seed gives the same games."""
    engines = [VectorGnoming(10, [3, 4, 5, 6, 7], seed=9, reward_mode="margin", backend=b) for b in ("numpy", "numba")]
    outs = [e.reset() for e in engines]
    rng = np.random.default_rng(0)
    ended = 0
    for t in range(1500):
        for x, y in zip(*outs):
            np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(engines[0].last_totals, engines[1].last_totals)
        if t % 50 == 0:  # the true states too (hidden cards, draw pile order), in Game.state_dict()'s keys
            for i in range(10):
                fast, scalar = engines[1].state_dict(i), engines[0].state_dict(i)
                assert fast == {key: scalar[key] for key in fast}, i
        actions = random_legal(rng, outs[0][1])
        outs = [e.step(actions) for e in engines]
        ended += outs[0][4].sum()
    assert ended >= 10


@needs_numba
def test_numba_scoring_matches_scoring_module():
    from grinch_env.gnoming._vector_numba import score_layout as fast_score

    examples = {  # §4.3's worked examples (rows top to bottom; kinds: 0..5 = 3..8, 7 = -2, 8 = -3, 10 = Hazard, 11 = Mulligan)
        (2, 2, 2, 4, 7, 11, 4, 10, 0): (20, 20),
        (1, 1, 11, 3, 6, 4, 0, 2, 4): (2, 14),
        (3,) * 9: (-36, -36),
        (11, 11, 5, 0, 1, 2, 9, 9, 9): (-8, -8),
        (11, 11, 11, 0, 1, 2, 0, 1, 2): (-12, -12),
        (5, 5, 5, 5, 0, 0, 5, 0, 0): (-4, -4),
        (0, 0, 0, 11, 6, 10, 0, 0, 0): (0, 0),
        (5, 4, 3, 2, 1, 0, 5, 4, 3): (54, 54),
    }
    for kinds, (independent, single) in examples.items():
        assert fast_score(np.array(kinds), False) == independent == score_layout(kinds)
        assert fast_score(np.array(kinds), True) == single == score_layout(kinds, "single")
    rng = np.random.default_rng(3)
    # Few kinds per layout, Mulligans often (at most the deck's 3): many matched lines and Mulligan choices.
    for _ in range(2000):
        kinds = rng.choice(rng.choice([0, 1, 5, 6, 10, 11], size=3), size=9)
        kinds[np.flatnonzero(kinds == 11)[3:]] = 0
        kinds = kinds.tolist()
        for mode in ("independent", "single"):
            assert fast_score(np.array(kinds), mode == "single") == score_layout(kinds, mode), (kinds, mode)


@pytest.mark.parametrize("backend", BACKENDS)
def test_illegal_action_raises_and_changes_nothing(backend):
    venv, twin = VectorGnoming(4, [3, 6], seed=1, backend=backend), VectorGnoming(4, [3, 6], seed=1, backend=backend)
    with pytest.raises(RuntimeError, match="call reset"):
        venv.step(np.zeros(4, dtype=np.int64))
    _, mask, seat = venv.reset()
    twin.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):  # into the game, past the reveal
        actions = random_legal(rng, mask)
        _, mask, seat, _, _ = venv.step(actions)
        twin.step(actions)
    actions = random_legal(rng, mask)
    bad = actions.copy()
    bad[2] = int(np.flatnonzero(mask[2] == 0)[0])
    legal = np.flatnonzero(mask[2]).tolist()
    message = re.escape(f"illegal action {bad[2]} (") + ".*" + re.escape(f") for game 2 (seat {seat[2]} to act); legal actions: {legal} (")
    with pytest.raises(ValueError, match=message):
        venv.step(bad)
    bad[2] = NUM_ACTIONS
    with pytest.raises(ValueError, match=rf"illegal action {NUM_ACTIONS} \(outside 0..14\) for game 2"):
        venv.step(bad)
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        venv.step(np.zeros(5, dtype=np.int64))
    with pytest.raises(ValueError, match="integer array"):
        venv.step(np.zeros(4, dtype=np.float32))
    for x, y in zip(venv.step(actions), twin.step(actions)):  # the failed calls changed no game
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_envs=0), "num_envs must be an int >= 1"),
        (dict(num_envs=4, num_players=2), r"num_players must be an int in 3..7"),
        (dict(num_envs=4, num_players=[3, 8]), r"num_players must be an int in 3..7"),
        (dict(num_envs=4, num_players=[]), "or a non-empty sequence"),
        (dict(num_envs=4, reward_mode="win_loss"), "reward_mode must be one of"),
        (dict(num_envs=4, backend="cuda"), "backend must be one of"),
        (dict(num_envs=4, discard_take="never"), "discard_take must be one of"),
        (dict(num_envs=4, mulligan_lines="both"), "mulligan_lines must be one of"),
        (dict(num_envs=4, max_turns_per_player=5), "max_turns_per_player must be an int >= 10"),
        (dict(num_envs=4, num_players=[3, 7], first_player=3), "first_player must be a seat in 0..2"),
        (dict(num_envs=4, deck_source=7), "deck_source must be a callable"),
    ],
)
def test_invalid_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        VectorGnoming(**kwargs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_deck_source(backend):
    with pytest.raises(ValueError, match=r"a permutation of range\(110\)"):
        VectorGnoming(2, 3, deck_source=lambda game, length: np.zeros(length, dtype=np.int64), backend=backend).reset()


@pytest.mark.parametrize("backend", BACKENDS)
def test_shapes_seeding_and_batch_independence(backend):
    venv = VectorGnoming(3, 5, seed=0, backend=backend)
    obs, mask, seat = venv.reset()
    assert obs.shape == (3, OBS_SIZE) and obs.dtype == np.float32
    assert mask.shape == (3, NUM_ACTIONS) and mask.dtype == np.int8
    assert seat.dtype == np.int64 and seat.tolist() == [0, 0, 0]  # seat 0 starts round 0 with its first reveal
    assert (obs[:, PHASE] == 1).all() and (mask[:, :9] == 1).all() and mask[:, 9:].sum() == 0  # reveal: any of 9 face-down slots
    out = venv.step(np.array([4, 0, 8]))
    assert [x.shape for x in out] == [(3, OBS_SIZE), (3, NUM_ACTIONS), (3,), (3, 7), (3,)]
    assert out[3].dtype == np.float32 and out[4].dtype == bool
    assert out[1][:, [4, 0, 8]].tolist() == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]  # the slot just turned up is no longer offered

    def trace(envs, seed, reseed=None):
        v = VectorGnoming(envs, [3, 7], seed=seed, backend=backend)
        obs, mask, _ = v.reset(seed=reseed)
        rng = np.random.default_rng(5)
        out = [obs[:2].copy()]
        for _ in range(300):
            actions = random_legal(rng, mask)
            obs, mask, _, _, _ = v.step(actions)
            out.append(obs[:2].copy())
        return np.stack(out)

    np.testing.assert_array_equal(trace(2, 7), trace(2, None, reseed=7))
    assert not np.array_equal(trace(2, 7), trace(2, 8))
    # Game slot i's shuffles depend on (seed, i) only, not on the batch size.
    v2, v6 = VectorGnoming(2, [3, 7], seed=7, backend=backend), VectorGnoming(6, [3, 7], seed=7, backend=backend)
    np.testing.assert_array_equal(v2.reset()[0], v6.reset()[0][:2])


@pytest.mark.parametrize("backend", BACKENDS)
def test_copy_false_returns_the_engine_buffers(backend):
    shared, fresh = VectorGnoming(6, [3, 6], seed=4, copy=False, backend=backend), VectorGnoming(6, [3, 6], seed=4, backend=backend)
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


@needs_numba
def test_backend_choice():
    assert VectorGnoming(1).backend == "numba"
    assert VectorGnoming(1, backend="numpy").backend == "numpy"


@needs_numba
def test_recycled_observation_buffers_are_never_ones_the_caller_holds():
    venv, plain = VectorGnoming(6, [3, 7], seed=5, backend="numba"), VectorGnoming(6, [3, 7], seed=5, backend="numpy")
    check_recycled_buffers_are_never_held(venv, plain)
