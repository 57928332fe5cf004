"""Both games in PettingZoo's registry and Gymnasium's, and the one Gymnasium wrapper for both games."""

import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test

from grinch_env.gnoming.render import draw_table
from grinch_env.gym_env import GameGymEnv
from grinch_env.registry import AEC_IDS, ENV_IDS, register_envs

ROOT = Path(__file__).resolve().parents[1]


def run_fresh(code: str) -> str:
    """Return the stdout of ``code`` run in a fresh interpreter from the repository root."""
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def test_a_fresh_interpreter_makes_both_games_from_the_pettingzoo_registry():
    code = (
        "import grinch_env, pettingzoo\n"
        "env = pettingzoo.make('aec', 'grinch_env/gnoming-v0', num_players=5, render_mode='rgb_array')\n"
        "import numpy as np\n"
        "env.reset(seed=0)\n"
        "rng, frames = np.random.default_rng(0), []\n"
        "for i, agent in enumerate(env.agent_iter()):\n"
        "    obs, reward, term, trunc, info = env.last()\n"
        "    env.step(None if term or trunc else int(rng.choice(obs['action_mask'].nonzero()[0])))\n"
        "    if i % 50 == 0 or not env.agents:\n"  # a frame now and then: drawing every one takes 30 ms
        "        frames.append(env.render())\n"
        "g = pettingzoo.make('aec', 'grinch_env/grinch', num_players=3, bonus_layout='none')\n"  # no version: the newest
        "g.reset(seed=1)\n"
        "print(type(env.unwrapped).__module__, env.unwrapped.num_players, env.unwrapped.game.done, frames[-1].shape, frames[-1].dtype)\n"
        "print(type(g.unwrapped).__module__, g.num_agents, g.unwrapped.game.layout[1] is None)\n"
        "pettingzoo.pprint_registry()\n"
    )
    out = run_fresh(code).splitlines()
    assert out[0] == "grinch_env.gnoming.env 5 True (880, 1408, 3) uint8"
    assert out[1] == "grinch_env.grinch.env 3 True"
    aec = out[out.index("AEC environments:") + 1:out.index("Parallel environments:")]
    assert "  grinch_env/gnoming-v0" in aec and "  grinch_env/grinch-v0" in aec


def test_a_fresh_interpreter_makes_both_games_with_gymnasium():
    code = (
        "import grinch_env, gymnasium\n"
        "for env_id, n in (('grinch_env/GrinchGrowYourHeart-v0', 3), ('grinch_env/GnomingARound-v0', 4)):\n"
        "    env = gymnasium.make(env_id, num_players=n, opponents=['greedy'], learner_seat=1, render_mode='rgb_array')\n"
        "    obs, info = env.reset(seed=0)\n"
        "    done = False\n"
        "    while not done:\n"
        "        obs, reward, done, truncated, info = env.step(int(info['action_mask'].nonzero()[0][0]))\n"
        "    print(type(env.unwrapped).__name__, env.unwrapped.spec_game.name, obs.shape, env.render().shape, reward == env.unwrapped.game.rewards(env.unwrapped.reward_mode)[1])\n"
    )
    out = run_fresh(code).splitlines()
    assert out[0] == "GameGymEnv grinch (1337,) (512, 1408, 3) True"
    assert out[1] == "GameGymEnv gnoming (1046,) (880, 1408, 3) True"


def test_registering_again_changes_nothing_and_warns_nothing():
    before = (dict(pettingzoo.aec_registry), {k: gymnasium.registry[k] for k in ENV_IDS.values()})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        register_envs()
    assert before == (dict(pettingzoo.aec_registry), {k: gymnasium.registry[k] for k in ENV_IDS.values()})
    assert set(AEC_IDS.values()) <= set(pettingzoo.aec_registry) and not set(AEC_IDS.values()) & set(pettingzoo.parallel_registry)


@pytest.mark.parametrize(("env_id", "sizes"), [("grinch_env/grinch-v0", range(2, 7)), ("grinch_env/gnoming-v0", range(3, 8))])
def test_registered_envs_pass_the_pettingzoo_api_test_at_every_size(env_id, sizes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in sizes:
            api_test(pettingzoo.make("aec", env_id, num_players=n, render_mode="rgb_array"), num_cycles=100)


def test_kwargs_pass_through_to_the_game():
    env = pettingzoo.make("aec", "grinch_env/gnoming-v0", num_players=6, max_turns_per_player=12, render_seat=2)
    env.reset(seed=3)
    assert env.unwrapped.game.turn_cap == 72 and env.unwrapped.render_seat == 2
    with pytest.raises(ValueError, match=r"num_players must be an int in 2..6"):
        pettingzoo.make("aec", "grinch_env/grinch-v0", num_players=7)


# ------------------------------------------------------- the Gymnasium wrapper
def test_the_gnoming_wrapper_passes_gymnasiums_checker():
    check_env(GameGymEnv("gnoming", num_players=3, opponents="greedy"), skip_render_check=True)


@pytest.mark.parametrize("seat", [0, 3])
def test_a_gnoming_episode_is_the_learners_decisions_and_ends_with_its_reward(seat):
    env = gymnasium.make("grinch_env/GnomingARound-v0", num_players=4, opponents=["greedy", "random", "greedy"], learner_seat=seat).unwrapped
    obs, info = env.reset(seed=5)
    rng = np.random.default_rng(0)
    steps, done, reward = 0, False, None
    while not done:
        game = env.game
        assert game.current == seat and np.array_equal(info["action_mask"], env.action_masks().astype(np.int8))
        obs, reward, done, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        assert not truncated and obs.shape == (1046,)
        steps += 1
        if not done:
            assert reward == 0.0
    game = env.game
    assert game.done and reward == game.rewards("win")[seat]
    # Every decision of the game is in the AEC env's log: the learner's steps and the opponents'.
    log = env.aec_env.action_log
    assert sum(a == f"player_{seat}" for a, _ in log) == steps and len({a for a, _ in log}) == 4


def test_the_wrapper_renders_the_learners_view_by_default():
    env = GameGymEnv("gnoming", num_players=3, opponents=["random"], learner_seat=2, render_mode="rgb_array")
    env.reset(seed=1)
    raw = env.aec_env
    assert np.array_equal(env.render(), draw_table(env.game, 2, raw.last_action_text()))
    spectator = GameGymEnv("gnoming", num_players=3, opponents=["random"], learner_seat=2, render_mode="rgb_array", render_seat=None)
    spectator.reset(seed=1)
    assert np.array_equal(spectator.render(), draw_table(spectator.game, None, raw.last_action_text()))
    assert GameGymEnv("gnoming", num_players=3).render() is None


def test_wrapper_opponents_are_agent_specs_of_its_game():
    env = GameGymEnv("gnoming", num_players=5, opponents=["greedy", "random", "search:samples=4", "greedy"])
    assert [a.name for a in env.opponents] == ["greedy", "random", "search:samples=4", "greedy"]
    with pytest.raises(ValueError, match=r"unknown agent 'expectimax' for Gnoming A Round"):
        GameGymEnv("gnoming", num_players=3, opponents=["expectimax"])
    with pytest.raises(ValueError, match=r"unknown game 'chess': choose one of gnoming, grinch"):
        GameGymEnv("chess")
    with pytest.raises(ValueError, match=r"discard_take must be one of \('must_place', 'free'\)"):
        GameGymEnv("gnoming", discard_take="sometimes")
    with pytest.raises(ValueError, match=r"render_seat must be None \(the spectator, who sees every card\) or a seat in 0..3"):
        GameGymEnv("gnoming", render_seat=9)

