"""Recording and replay: a seed plus the (agent, action) log reproduces a game exactly."""

import numpy as np
import pytest

import grinch_env
from grinch_env.grinch.replay import log_from_json, log_to_json, play_log


def play_random(env, seed: int, rng_seed: int) -> list[bytes]:
    """Play a random game after reset(seed); return every observation the acting agents saw."""
    rng = np.random.default_rng(rng_seed)
    env.reset(seed=seed)
    seen = []
    for _agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        seen.append(obs["observation"].tobytes() + obs["action_mask"].tobytes())
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    return seen


def observations_along(env, log) -> list[bytes]:
    seen = []
    for agent, action in log:
        assert env.agent_selection == agent
        obs = env.observe(agent)
        seen.append(obs["observation"].tobytes() + obs["action_mask"].tobytes())
        env.step(action)
    return seen


@pytest.mark.parametrize("n", [2, 4, 6])
def test_replaying_the_log_reproduces_the_game(n):
    env = grinch_env.env(num_players=n, reward_mode="margin")
    seen = play_random(env, seed=n, rng_seed=100 + n)
    log = list(env.unwrapped.action_log)
    assert len(log) == len(seen) and all(isinstance(a, int) for _, a in log)
    final = env.unwrapped.game_state()
    again = play_log(n, log, num_players=n, reward_mode="margin")
    assert again.game_state() == final and again.action_log == log
    assert again.terminations == dict.fromkeys(again.possible_agents, True)
    expected = grinch_env.terminal_rewards(final["totals"], "margin")
    assert [again._cumulative_rewards[a] for a in again.possible_agents] == pytest.approx(expected)
    fresh = grinch_env.raw_env(num_players=n, reward_mode="margin")
    fresh.reset(seed=n)
    assert observations_along(fresh, log) == seen  # every observation on the way is the same


def test_game_seed_replays_a_later_game_of_a_sequence():
    env = grinch_env.raw_env(num_players=3)
    play_random(env, seed=1, rng_seed=0)
    play_random(env, seed=None, rng_seed=1)  # the second game of the seeded sequence
    log, game_seed, final = list(env.action_log), env.game_seed, env.game_state()
    assert play_log(None, log, game_seed=game_seed, num_players=3).game_state() == final
    with pytest.raises(ValueError, match=r"log entry 0 \(player_1, \d+\): illegal action"):
        play_log(1, log, num_players=3)  # seed 1 deals the first game of the sequence, where this log does not fit


def test_json_round_trip():
    env = grinch_env.raw_env(num_players=2, first_grinch=1)
    play_random(env, seed=8, rng_seed=8)
    text = log_to_json(env.action_log, seed=8, num_players=2, first_grinch=1)
    seed, log, kwargs = log_from_json(text)
    assert (seed, log, kwargs) == (8, env.action_log, {"num_players": 2, "first_grinch": 1})
    assert play_log(seed, log, **kwargs).game_state() == env.game_state()


def test_a_partial_log_replays_a_position():
    env = grinch_env.raw_env(num_players=4)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(30):
        legal = env.legal_actions()
        env.step(legal[rng.integers(len(legal))])
    assert play_log(3, env.action_log, num_players=4).game_state() == env.game_state()


def test_bad_logs_are_rejected_with_the_entry_named():
    env = grinch_env.raw_env(num_players=2)
    play_random(env, seed=0, rng_seed=0)
    log = list(env.action_log)
    with pytest.raises(ValueError, match="needs the reset seed or the game_seed"):
        play_log(None, log, num_players=2)
    with pytest.raises(ValueError, match=r"log entry 0 \(player_0, .*\): player_1 is to act, not player_0"):
        play_log(0, [("player_0", log[0][1])], num_players=2)
    with pytest.raises(ValueError, match=r"log entry 1 \(player_0, 55\): illegal action 55 \(score Wreaths\) for seat 0 in phase 'draw'"):
        play_log(0, [log[0], ("player_0", 55)], num_players=2)
    with pytest.raises(ValueError, match="log entry 1 must be a pair"):
        play_log(0, [log[0], "oops"], num_players=2)
    with pytest.raises(ValueError, match=f"log entry {len(log) + 2}.*the game is already over"):
        last, other = log[-1][0], ({"player_0", "player_1"} - {log[-1][0]}).pop()
        play_log(0, log + [(last, None), (other, None), ("player_0", 1)], num_players=2)  # terminated agents step None
