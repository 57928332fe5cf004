"""The RLlib adapter: per-seat returns equal the env's own, RLlib iterations at 2 and 4 players play no illegal action, save/restore round trip, tournaments.

Skipped without the ``[ray]`` extra.  Ray starts once for the session (conftest.py).
"""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import torch  # noqa: E402
import yaml  # noqa: E402

from grinch_env.agents import make_agent  # noqa: E402
from grinch_env.evaluation.evaluate import evaluate  # noqa: E402
from grinch_env.grinch.game import terminal_rewards  # noqa: E402
from grinch_env.integrations.rllib import (  # noqa: E402
    GAMES,
    MaskedObservations,
    RLlibAgent,
    episode_matchup,
    game_env_factory,
    make_rllib_env,
    register_games,
)
from training import train_rllib  # noqa: E402
from training.bridges import load_config  # noqa: E402

RLLIB_PPO = Path(__file__).resolve().parents[1] / "configs" / "rllib_ppo.yaml"
TINY = ["rllib.hidden_sizes=[32]", "rllib.train_batch_size=300", "rllib.minibatch_size=100", "rllib.num_epochs=1", "rllib.iterations=1",
        "eval.final_games=2", "eval.final_opponents=[random]"]


def play_random(env, seed):
    """Play one game through the RLlib env with seeded random legal actions; return (summed rewards per agent, actions)."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    returns, actions = {}, []
    while True:
        (agent, o), = obs.items()
        assert set(o) == {"observations", "action_mask"} and o["observations"].ndim == 1
        actions.append(int(rng.choice(np.flatnonzero(o["action_mask"]))))
        obs, rewards, terminated, truncated, _ = env.step({agent: actions[-1]})
        for a, r in rewards.items():
            returns[a] = returns.get(a, 0.0) + r
        if terminated["__all__"]:
            assert not truncated["__all__"] and obs.keys() == returns.keys()
            return returns, actions


def replay_on_the_env(game, options, seed, actions):
    """Return every seat's return from the game's own AEC env replaying ``actions`` (the PettingZoo loop, summing ``last()``'s rewards)."""
    env = game_env_factory(game)(**options)
    env.reset(seed=seed)
    returns, moves = dict.fromkeys(env.possible_agents, 0.0), iter(actions)
    for agent in env.agent_iter():
        _, reward, termination, truncation, _ = env.last()
        returns[agent] += reward
        env.step(None if termination or truncation else next(moves))
    assert next(moves, None) is None
    return returns


CASES = [("grinch", 2, "win"), ("grinch", 4, "win"), ("grinch", 4, "margin"), ("grinch", 3, "margin"),
         ("gnoming", 3, "win"), ("gnoming", 7, "margin")]


@pytest.mark.parametrize("game, num_players, reward_mode", CASES)
def test_per_seat_returns_through_the_adapter_equal_the_envs_own(game, num_players, reward_mode):
    if game not in GAMES:
        pytest.skip(f"{game} is not in this checkout")
    options = {"num_players": num_players, "reward_mode": reward_mode}
    env = make_rllib_env(game, options)
    returns, actions = play_random(env, seed=11)
    own = replay_on_the_env(game, options, 11, actions)
    assert sorted(returns) == sorted(own) == [f"player_{i}" for i in range(num_players)]
    np.testing.assert_allclose([returns[a] for a in sorted(own)], [own[a] for a in sorted(own)], rtol=0, atol=1e-6)
    assert env.env.illegal_actions == 0 and len(actions) > 20 and any(own.values())
    if game == "grinch":  # and the env's own returns are the rules' terminal rewards of the final totals
        np.testing.assert_allclose([own[f"player_{i}"] for i in range(num_players)],
                                   terminal_rewards(env.env.unwrapped.game_state()["totals"], reward_mode), rtol=0, atol=1e-6)


def test_games_register_by_name_and_illegal_actions_are_counted():
    assert register_games() == list(GAMES) == ["grinch", "gnoming"]
    assert GAMES == {"grinch": "grinch_env.grinch.harness:env", "gnoming": "grinch_env.gnoming.harness:env"}
    env = make_rllib_env("grinch", {"num_players": 2})
    obs, _ = env.reset(seed=0)
    (agent, o), = obs.items()
    illegal = int(np.flatnonzero(o["action_mask"] == 0)[0])
    env.step({agent: illegal})  # the game's wrapper ends the game; the adapter counts it
    assert env.env.illegal_actions == 1
    with pytest.raises(ValueError, match=r"unknown game 'chess': registered games are \[.*'grinch'.*\]"):
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
    cfg = load_config(train_rllib.RLlibConfig, RLLIB_PPO, TINY + ["num_players=2", f"checkpoint.dir={tmp_path}"])
    run_dir = tmp_path / "rllib_ppo"
    assert cfg.run_dir == run_dir  # the run name is the config file's stem
    before = MaskedObservations.illegal_total
    algo = train_rllib.train(cfg, progress=False)
    try:
        assert algo.iteration == 1 and MaskedObservations.illegal_total == before  # no illegal action in the whole iteration
        saved = _learner_main(algo)
        # A run directory with an RLlib checkpoint loads as a tournament agent (trust=1: loading it unpickles code).
        agent = make_agent(f"{run_dir}:trust=1")
        assert isinstance(agent, RLlibAgent)
        loaded = _main_weights(agent.module)
        assert saved.keys() == loaded.keys() and all(torch.equal(saved[k], loaded[k]) for k in saved)
        algo.train()
        assert not all(torch.equal(saved[k], v) for k, v in _learner_main(algo).items())
        algo.restore_from_path(str((run_dir / train_rllib.CHECKPOINT).resolve()))
        restored = _learner_main(algo)
        assert algo.iteration == 1 and all(torch.equal(saved[k], restored[k]) for k in saved)
    finally:
        algo.stop()
    result = evaluate([agent, "random"], num_players=2, num_games=4, seed=0)
    assert result.num_games == 4 and result.agents == ["rllib_ppo/rllib", "random"]


def test_train_rllib_cli_at_4_players_then_report_and_resume(ray_session, tmp_path, capsys):
    before = MaskedObservations.illegal_total
    args = ["--config", str(RLLIB_PPO), "--quiet", "--set", f"checkpoint.dir={tmp_path}"] + [f"--set={s}" for s in TINY]
    assert train_rllib.main(args) == 0
    assert MaskedObservations.illegal_total == before
    run_dir = tmp_path / "rllib_ppo"
    out = capsys.readouterr().out
    assert f"saved {run_dir / train_rllib.CHECKPOINT} after 1 iterations\n" in out
    assert f"final evaluation of {run_dir / train_rllib.CHECKPOINT} (2 games per line, seats rotated)" in out
    assert "one rllib_ppo/main seat against 3 x random" in out
    log = [line for line in (run_dir / train_rllib.LOG).read_text().splitlines() if line]
    assert len(log) == 1 and '"iteration": 1' in log[0]
    assert (run_dir / "report" / "random_4p" / "results.json").is_file()
    written = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert written["rllib"]["iterations"] == 1 and written["checkpoint"] == {"dir": str(tmp_path), "run_name": "rllib_ppo"}
    assert train_rllib.main(args) == 2  # a fresh run does not overwrite the saved one
    assert capsys.readouterr().err == (f"error: {run_dir / train_rllib.CHECKPOINT} exists: go on with --resume, or pick another run name "
                                       "(--set checkpoint.run_name=NAME)\n")
    (run_dir / "report" / "summary.json").unlink()
    assert train_rllib.main(args + ["--report", "--set", "eval.final_games=1"]) == 0  # evaluate only
    assert "(1 games per line, seats rotated)" in capsys.readouterr().out and (run_dir / "report" / "summary.json").is_file()
    assert train_rllib.main(args + ["--resume", "--set", "eval.final_games=0"]) == 0  # done: restored at iteration 1 of 1, nothing to train
    assert capsys.readouterr().out == f"resumed {run_dir / train_rllib.CHECKPOINT} at iteration 1/1\nsaved {run_dir / train_rllib.CHECKPOINT} after 1 iterations\n"
    assert len((run_dir / train_rllib.LOG).read_text().splitlines()) == 1


def test_bad_rllib_configs_are_clear_errors(tmp_path, capsys):
    assert train_rllib.main(["--config", str(RLLIB_PPO), "--set", f"checkpoint.dir={tmp_path}", "--set", "game=chess"]) == 2
    assert capsys.readouterr().err == f"error: {RLLIB_PPO}: game: Input should be 'grinch' or 'gnoming' (got 'chess')\n"
    assert train_rllib.main(["--config", str(RLLIB_PPO), "--set", "rllib.opponent_probs={main: -1}"]) == 2
    assert capsys.readouterr().err == f"error: {RLLIB_PPO}: rllib.opponent_probs: opponent_probs must be non-negative with a positive sum, got {{'main': -1.0}}\n"
    assert train_rllib.main(["--config", str(RLLIB_PPO), "--set", "iterations=3"]) == 2
    assert capsys.readouterr().err == f"error: {RLLIB_PPO}: iterations: unknown key; did you mean rllib.iterations?\n"
    assert train_rllib.main(["--config", str(RLLIB_PPO), "--set", "rllib.ray.adress=auto"]) == 2
    assert "rllib.ray.adress: unknown key; did you mean rllib.ray.address?" in capsys.readouterr().err
    assert train_rllib.main(["--config", str(RLLIB_PPO), "--set", "num_players=8"]) == 2
    assert capsys.readouterr().err == f"error: {RLLIB_PPO}: num_players for Grinch Grow Your Heart must be an int in 2..6, got 8\n"
    for flag, what in (("--resume", "resume"), ("--report", "report")):
        assert train_rllib.main(["--config", str(RLLIB_PPO), "--set", f"checkpoint.dir={tmp_path}", flag]) == 2
        assert capsys.readouterr().err.startswith(f"error: nothing to {what}: {str(tmp_path / 'rllib_ppo' / train_rllib.CHECKPOINT)!r} does not exist")


def test_one_iteration_of_the_second_game(ray_session, tmp_path):
    before = MaskedObservations.illegal_total
    args = ["--config", str(RLLIB_PPO), "--quiet", "--set", f"checkpoint.dir={tmp_path}", "--set", "game=gnoming", "--set", "num_players=3",
            "--set", "rllib.opponent_probs={main: 0.5, frozen: 0.25, random: 0.25}"]
    assert train_rllib.main(args + [f"--set={s}" for s in TINY] + ["--set", "eval.final_games=0"]) == 0
    assert MaskedObservations.illegal_total == before and (tmp_path / "rllib_ppo" / train_rllib.CHECKPOINT / "learner_group").is_dir()
    assert not (tmp_path / "rllib_ppo" / "report").exists()
