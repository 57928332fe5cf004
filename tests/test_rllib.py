"""The RLlib adapter: per-seat returns equal the env's own, RLlib iterations at 2 and 4 players play no illegal action, save/restore round trip, tournaments.

Skipped without the ``[ray]`` extra.  Ray starts once for the session (conftest.py).
"""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import torch  # noqa: E402

from grinch_env.agents import make_agent  # noqa: E402
from grinch_env.env import terminal_rewards  # noqa: E402
from grinch_env.integrations.rllib import GAMES, MaskedObservations, RLlibAgent, episode_matchup, make_rllib_env, register_games  # noqa: E402
from training import train_rllib  # noqa: E402
from training.config import load_config  # noqa: E402
from training.evaluate import evaluate  # noqa: E402

RLLIB_PPO = Path(__file__).resolve().parents[1] / "configs" / "rllib_ppo.yaml"
TINY = ["hidden_sizes=[32]", "train_batch_size=300", "minibatch_size=100", "num_epochs=1", "iterations=1", "eval.games=2", "eval.opponents=[random]"]


def play_random(env, seed):
    """Play one game through the RLlib env with seeded random legal actions; return (summed rewards per agent, steps)."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    returns, steps = {}, 0
    while True:
        (agent, o), = obs.items()
        assert set(o) == {"observations", "action_mask"} and o["observations"].shape == (1337,)
        obs, rewards, terminated, truncated, _ = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        steps += 1
        for a, r in rewards.items():
            returns[a] = returns.get(a, 0.0) + r
        if terminated["__all__"]:
            assert not truncated["__all__"] and obs.keys() == returns.keys()
            return returns, steps


@pytest.mark.parametrize("num_players, reward_mode", [(2, "win"), (4, "win"), (4, "margin"), (3, "margin")])
def test_per_seat_returns_through_the_adapter_equal_the_envs_own(num_players, reward_mode):
    env = make_rllib_env("grinch", {"num_players": num_players, "reward_mode": reward_mode})
    returns, steps = play_random(env, seed=11)
    totals = env.env.unwrapped.game_state()["totals"]
    own = terminal_rewards(totals, reward_mode)
    assert sorted(returns) == [f"player_{i}" for i in range(num_players)]
    np.testing.assert_allclose([returns[f"player_{i}"] for i in range(num_players)], own, rtol=0, atol=1e-6)
    assert env.env.illegal_actions == 0 and steps > 50


def test_games_register_by_name_and_illegal_actions_are_counted():
    assert register_games() == list(GAMES) == ["grinch"]
    env = make_rllib_env("grinch", {"num_players": 2})
    obs, _ = env.reset(seed=0)
    (agent, o), = obs.items()
    illegal = int(np.flatnonzero(o["action_mask"] == 0)[0])
    env.step({agent: illegal})  # the game's wrapper ends the game; the adapter counts it
    assert env.env.illegal_actions == 1
    with pytest.raises(ValueError, match=r"unknown game 'chess': registered games are \['grinch'\]"):
        make_rllib_env("chess")


def test_matchups_are_a_pure_function_of_the_episode():
    probs = {"main": 0.5, "frozen": 0.25, "greedy": 0.25}
    draws = [episode_matchup(f"ep{i}", 0, probs) for i in range(400)]
    assert draws == [episode_matchup(f"ep{i}", 0, probs) for i in range(400)]
    kinds = [d[0] for d in draws]
    assert {None, "frozen", "greedy"} == set(kinds) and 150 < kinds.count(None) < 250


def _main_weights(module):
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def _learner_main(algo):
    """Return the learner's ``main`` weights (what a checkpoint saves; the env runner's inference copy may lag it)."""
    state = algo.learner_group.get_state(components="learner/rl_module/main")["learner"]["rl_module"]["main"]
    return {k: torch.as_tensor(np.asarray(v)) for k, v in state.items()}


def test_one_iteration_at_2_players_save_restore_round_trip_and_tournament(ray_session, tmp_path):
    cfg = load_config(RLLIB_PPO, TINY + ["num_players=2"], schema=train_rllib.RLlibConfig)
    before = MaskedObservations.illegal_total
    algo = train_rllib.train(cfg, tmp_path, progress=False)
    try:
        assert algo.iteration == 1 and MaskedObservations.illegal_total == before  # no illegal action in the whole iteration
        saved = _learner_main(algo)
        agent = make_agent(str(tmp_path))  # a run directory with an RLlib checkpoint loads as a tournament agent
        assert isinstance(agent, RLlibAgent)
        loaded = _main_weights(agent.module)
        assert saved.keys() == loaded.keys() and all(torch.equal(saved[k], loaded[k]) for k in saved)
        algo.train()
        assert not all(torch.equal(saved[k], v) for k, v in _learner_main(algo).items())
        algo.restore_from_path(str((tmp_path / train_rllib.CHECKPOINT).resolve()))
        restored = _learner_main(algo)
        assert algo.iteration == 1 and all(torch.equal(saved[k], restored[k]) for k in saved)
    finally:
        algo.stop()
    result = evaluate([agent, "random"], num_players=2, num_games=4, seed=0)
    assert result.num_games == 4 and result.agents == [f"{tmp_path.name}/rllib", "random"]


def test_train_rllib_cli_at_4_players(ray_session, tmp_path, capsys):
    before = MaskedObservations.illegal_total
    assert train_rllib.main(["--config", str(RLLIB_PPO), "--run-dir", str(tmp_path), "--no-progress"] + [f"--set={s}" for s in TINY]) == 0
    assert MaskedObservations.illegal_total == before
    out = capsys.readouterr().out
    assert "one rllib_ppo/main seat against 3 x random" in out
    log = [line for line in (tmp_path / train_rllib.LOG).read_text().splitlines() if line]
    assert len(log) == 1 and '"iteration": 1' in log[0]
    assert (tmp_path / "report" / "random_4p" / "results.json").is_file()


def test_bad_rllib_configs_are_clear_errors(tmp_path, capsys):
    assert train_rllib.main(["--config", str(RLLIB_PPO), "--run-dir", str(tmp_path), "--set", "game=chess"]) == 2
    assert "game: unknown game 'chess'" in capsys.readouterr().err
    assert train_rllib.main(["--config", str(RLLIB_PPO), "--run-dir", str(tmp_path), "--set", "opponent_probs={main: -1}"]) == 2
    assert "opponent_probs must be non-negative" in capsys.readouterr().err
