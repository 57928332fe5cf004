"""The Gymnasium single-agent wrapper: API checkers, registration, exact episode structure."""

import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from stable_baselines3.common.env_checker import check_env

import grinch_env
from grinch_env.grinch.game import terminal_rewards
from grinch_env.gym_env import ENV_IDS, GameGymEnv

ENV_ID = ENV_IDS["grinch"]


def test_passes_sb3_and_gymnasium_checkers():
    check_env(GameGymEnv(num_players=3, opponents=["greedy"]))
    from gymnasium.utils.env_checker import check_env as gym_check_env

    gym_check_env(GameGymEnv(num_players=2, opponents="random"), skip_render_check=True)


def test_registered_with_gymnasium_on_import():
    assert grinch_env.ENV_VERSION and ENV_ID in gymnasium.registry
    env = gymnasium.make(ENV_ID, num_players=4, opponents=["greedy"])
    obs, info = env.reset(seed=0)
    assert obs.shape == (1337,) and obs.dtype == np.float32
    assert env.action_space.n == 62 and info["action_mask"].dtype == np.int8
    assert env.unwrapped.action_masks().tolist() == (info["action_mask"] == 1).tolist()


def test_make_with_the_module_prefix_needs_no_import_of_grinch_env():
    # Gymnasium 1.0 removed entry-point plugins; "module:env_id" is its way to make an env from a package not yet imported.
    code = (
        "import sys, gymnasium\n"
        "assert 'grinch_env' not in sys.modules\n"
        "env = gymnasium.make('grinch_env:grinch_env/GrinchGrowYourHeart-v0', num_players=2, opponents=['random'])\n"
        "obs, info = env.reset(seed=0)\n"
        "print(type(env.unwrapped).__name__, env.unwrapped.num_players, obs.shape, int(info['action_mask'].sum()) > 0)\n"
    )
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert run.stdout == "GameGymEnv 2 (1337,) True\n"


@pytest.mark.parametrize("seat", [0, 2])
def test_a_four_player_episode_has_22_learner_decisions_and_the_seats_reward(seat):
    # Per round a Who decides 3 discards + 1 score = 4 times, the Grinch 3 x (2 draws + 1 discard) + 1 score = 10;
    # over 4 rounds the learner is the Grinch once: 3 x 4 + 10 = 22 decisions.
    env = GameGymEnv(num_players=4, opponents=["greedy", "random", "greedy"], learner_seat=seat)
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    steps, done, reward = 0, False, None
    while not done:
        assert env.game.current == seat and obs[1336] == 1.0  # always the learner's own decision
        legal = np.flatnonzero(env.action_masks())
        obs, reward, done, truncated, info = env.step(int(rng.choice(legal)))
        assert not truncated
        steps += 1
        if not done:
            assert reward == 0.0
    assert steps == 22
    assert env.game.done and reward == terminal_rewards(env.game.totals)[seat]
    assert not env.action_masks().any()


def test_reset_with_a_seed_replays_the_same_game():
    env = GameGymEnv(num_players=3, opponents=["random"])
    a, _ = env.reset(seed=11)
    seat_a = env.learner_seat
    b, _ = env.reset(seed=11)
    assert np.array_equal(a, b) and env.learner_seat == seat_a


def test_illegal_action_ends_the_episode_with_minus_one():
    env = GameGymEnv(num_players=2, opponents=["random"], learner_seat=0)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, done, _, info = env.step(illegal)
    assert (reward, done, info["illegal_action"]) == (-1.0, True, True)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="opponents must hold 1 or num_players - 1 = 3"):
        GameGymEnv(num_players=4, opponents=["random", "greedy"])
    with pytest.raises(ValueError, match="learner_seat must be None or a seat in 0..1"):
        GameGymEnv(num_players=2, learner_seat=2)
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        GameGymEnv(num_players=2, opponents=["nobody"])
    with pytest.raises(ValueError, match="num_players must be an int in 2..6"):
        GameGymEnv(num_players=7)
