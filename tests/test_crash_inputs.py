"""Safe loading and clear errors at the edges: env actions, JSON game logs, unpickling checkpoints, a Ray address with no cluster."""

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import grinch_env.gnoming.replay as gnoming_replay
import grinch_env.grinch.replay as grinch_replay
from grinch_env.aec import log_from_json
from grinch_env.agents import make_agent
from grinch_env.games import get_game
from training.checkpoint import UntrustedCheckpointError, load_agent

ROOT = Path(__file__).resolve().parents[1]
GAMES = [("grinch", 62), ("gnoming", 15)]


def fresh(game, raw=False):
    spec = get_game(game)
    e = (spec.raw_env if raw else spec.env)()
    e.reset(seed=0)
    return e


def legal(e):
    return np.flatnonzero(e.observe(e.agent_selection)["action_mask"])


@pytest.mark.parametrize("game, n", GAMES)
def test_the_wrapper_takes_what_discrete_takes_as_a_python_int(game, n):
    e = fresh(game)
    first = legal(e)[0]
    e.step(np.array(first))  # a 0-d array, as tensor.argmax().numpy() gives
    second = legal(e)[0]
    e.step(np.int16(second))
    log = e.unwrapped.action_log
    assert [a for _, a in log] == [int(first), int(second)] and [type(a) for _, a in log] == [int, int]


@pytest.mark.parametrize("game, n", GAMES)
def test_the_wrapper_refuses_bools_floats_arrays_and_huge_ints_with_the_space_error(game, n):
    agent = fresh(game).agent_selection
    for bad, shown in ((True, "True (bool: a bool is not an action)"), (np.True_, "np.True_ (bool: a bool is not an action)"),
                       (2**70, f"{2**70} (int)"), (n, f"{n} (int)"), (1.0, "1.0 (float)"), (np.float32(1), "np.float32(1.0) (float32)"),
                       (np.array(True), "array(True) (ndarray)"), (np.array([1]), "array([1]) (ndarray)"), (np.array(1.0), "array(1.) (ndarray)")):
        e = fresh(game)
        with pytest.raises(AssertionError) as err:
            e.step(bad)
        assert str(err.value) == f"action is not in action space: got {shown} for {agent}; allowed: an int in 0..{n - 1} (Discrete({n}))"
        assert e.unwrapped.action_log == [] and not any(e.terminations.values())  # refused, not played as an illegal move


@pytest.mark.parametrize("game, n", GAMES)
def test_raw_env_takes_a_0d_array_and_step_none_after_the_end_is_a_no_op(game, n):
    e = fresh(game, raw=True)
    while e.agents:
        agent = e.agent_selection
        if e.terminations[agent]:
            e.step(None)
        else:
            e.step(np.array(legal(e)[0]))
    rewards = dict(e.rewards)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        e.step(None)  # every agent is done: nothing happens (it raised KeyError)
    assert e.agents == [] and e.rewards == rewards


@pytest.mark.parametrize("module", [grinch_replay, gnoming_replay])
def test_a_float_action_in_a_json_log_is_an_error_not_truncated(module):
    text = json.dumps({"seed": 0, "env_kwargs": {}, "log": [["player_0", 3.7]]})
    with pytest.raises(ValueError) as err:
        module.log_from_json(text)
    assert str(err.value) == "log entry 0 (player_0, 3.7): the action must be a JSON integer, got float 3.7"
    with pytest.raises(ValueError, match="got bool True"):
        log_from_json(json.dumps({"seed": 0, "log": [["player_0", True]]}))
    assert log_from_json(json.dumps({"seed": 1, "log": [["player_0", 3]]}))[1] == [("player_0", 3)]


# ------------------------------------------------------------- unpickling
def test_an_sb3_zip_or_rllib_checkpoint_is_refused_without_the_opt_in_saying_why(tmp_path, monkeypatch):
    monkeypatch.setenv("GRINCH_ENV_TRUST_CHECKPOINTS", "0")  # recorded, so that what the test sets is undone after it
    monkeypatch.delenv("GRINCH_ENV_TRUST_CHECKPOINTS")
    model = tmp_path / "model.zip"
    model.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip: refused before anything reads it
    why = "loading it unpickles Python objects, which can run arbitrary code"
    with pytest.raises(UntrustedCheckpointError, match=why):
        load_agent(model)
    with pytest.raises(ValueError) as err:
        make_agent(str(model))
    assert str(err.value) == (f"SB3 model {str(model)!r} is not loaded: {why}, so load only files you made or trust. To load it, pass "
                              f"--trust-checkpoint to the command, or add the option trust=1 to the agent spec ({model}:trust=1); "
                              "our own .pt checkpoints need neither (they are read with weights_only=True)")
    rllib = tmp_path / "rl"
    (rllib / "learner_group").mkdir(parents=True)
    with pytest.raises(ValueError, match=f"RLlib checkpoint {str(rllib)!r} is not loaded: {why}"):
        make_agent(str(rllib))
    # With the opt-in the file is read (and this one is no model): the error is SB3's, not the refusal.
    with pytest.raises(ValueError) as err:
        make_agent(f"{model}:trust=1")
    assert "is not loaded" not in str(err.value)
    with pytest.raises(ValueError, match="a checkpoint path takes only trust=1"):
        make_agent(f"{model}:samples=3")


def test_the_trust_flag_of_the_evaluation_cli_reaches_the_loader(tmp_path, monkeypatch, capsys):
    from grinch_env.evaluation.evaluate import main as evaluate_main

    monkeypatch.setenv("GRINCH_ENV_TRUST_CHECKPOINTS", "0")  # recorded, so that what the test sets is undone after it
    monkeypatch.delenv("GRINCH_ENV_TRUST_CHECKPOINTS")
    model = tmp_path / "model.zip"
    model.write_bytes(b"PK\x05\x06" + bytes(18))
    with pytest.raises(SystemExit):
        evaluate_main(["--agents", f"{model},random", "--players", "2", "--games", "2", "--no-progress"])
    assert "--trust-checkpoint" in capsys.readouterr().err
    with pytest.raises((SystemExit, ValueError)):
        evaluate_main(["--agents", f"{model},random", "--players", "2", "--games", "2", "--no-progress", "--trust-checkpoint"])
    assert os.environ["GRINCH_ENV_TRUST_CHECKPOINTS"] == "1"
    assert "is not loaded" not in capsys.readouterr().err


# ------------------------------------------------------------------ Ray
def test_ray_address_auto_with_no_cluster_is_a_clear_error_not_a_traceback(tmp_path, monkeypatch, capsys):
    # Ray raises this when `auto` finds no cluster (it finds any Ray running on the machine, so the test makes the call fail
    # the way it does on a machine without one instead of depending on what else runs here).
    import ray

    from training.train import main

    def no_cluster(*args, **kwargs):
        raise ConnectionError("Could not find any running Ray instance. Please specify the one to connect to by setting `--address` flag "
                              "or `RAY_ADDRESS` environment variable.")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", no_cluster)
    assert main(["--config", str(ROOT / "configs" / "smoke_afterstate.yaml"), "--set", f"checkpoint.dir={tmp_path}",
                 "--set", "distributed.backend=ray", "--set", "distributed.num_workers=2", "--set", "distributed.address=auto", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == ("error: address 'auto': no Ray cluster is running on this machine (Could not find any running Ray instance. "
                   "Please specify the one to connect to by setting `--address` flag or `RAY_ADDRESS` environment variable.). Start one with "
                   "`ray start --head` (then address: auto), give the head node's address (host:6379 or ray://host:10001), or set "
                   "address: local for a private instance on this machine\n")
