"""sb3-contrib MaskablePPO on the Gymnasium wrapper: a short run saves a .zip that plays as an agent."""

import sys

import numpy as np
import pytest
from sb3_contrib import MaskablePPO

import grinch_env.gym_env as gym_env
from grinch_env.evaluation.evaluate import evaluate
from training.checkpoint import SB3Agent, load_agent
from training.config import SB3Config
from training.train_sb3 import main, train_sb3


def test_sb3_smoke_run_saves_a_model_that_loads_as_an_agent(tmp_path):
    cfg = SB3Config(run_name="sb3_smoke", num_players=3, opponents=["random"], n_envs=2, total_timesteps=256,
                    n_steps=64, batch_size=64, n_epochs=1, net_arch=[32], eval_games=0)
    path = train_sb3(cfg, tmp_path / "sb3")
    assert path == tmp_path / "sb3" / "model.zip" and path.is_file()
    agent = load_agent(path, seed=0, trust=True)  # an SB3 .zip is unpickled: loading it needs the opt-in
    assert isinstance(agent, SB3Agent) and agent.name == "sb3/model"
    mask = np.zeros(62, np.int8)
    mask[[4, 9, 40]] = 1
    for _ in range(5):
        assert agent.act(np.random.default_rng(0).random(1337).astype(np.float32), mask) in (4, 9, 40)
    result = evaluate([f"{path}:trust=1", "random"], num_players=3, num_games=3, seed=0)
    assert result.num_games == 3 and sum(a["seat_games"] for a in result.per_agent.values()) == 9


def test_sb3_trains_gnoming_and_its_model_plays_gnoming_only(tmp_path):
    cfg = SB3Config(game="gnoming", run_name="sb3_gnoming", num_players=3, opponents=["random"], n_envs=2, total_timesteps=128,
                    n_steps=64, batch_size=64, n_epochs=1, net_arch=[16], eval_games=0)
    path = train_sb3(cfg, tmp_path / "sb3g")
    agent = load_agent(path, seed=0, trust=True)
    assert agent.game == "gnoming" and MaskablePPO.load(str(path)).observation_space.shape == (1046,)
    mask = np.zeros(15, np.int8)
    mask[[2, 11]] = 1
    assert agent.act(np.zeros(1046, np.float32), mask) in (2, 11)
    result = evaluate([agent, "random"], num_players=3, num_games=3, seed=0, game="gnoming")
    assert result.num_games == 3 and sum(a["seat_games"] for a in result.per_agent.values()) == 9
    with pytest.raises(ValueError, match=r"plays Gnoming A Round \(game 'gnoming'\), not Grinch Grow Your Heart"):
        evaluate([f"{path}:trust=1", "random"], num_players=3, num_games=1, seed=0)


def test_sb3_config_checks_the_table_size_and_options_against_its_game():
    with pytest.raises(ValueError, match=r"table sizes must be an int or a non-empty list of ints in 3\.\.7 \(Gnoming A Round\), got 2"):
        SB3Config(game="gnoming", num_players=2)
    with pytest.raises(ValueError, match="bonus_layout: Gnoming A Round has no bonus cards"):
        SB3Config(game="gnoming", num_players=3, bonus_layout="none")
    with pytest.raises(ValueError, match=r"in 2\.\.6, got 7"):
        SB3Config(num_players=7)


def test_sb3_cli_rejects_an_unknown_key(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("total_steps: 10\n")
    assert main(["--config", str(bad)]) == 2
    assert "total_steps: unknown key; did you mean total_timesteps?" in capsys.readouterr().err


def _tiny_config(tmp_path, total=256):
    path = tmp_path / "tiny.yaml"
    path.write_text(f"run_name: tiny\nnum_players: 2\nopponents: [random]\nn_envs: 2\ntotal_timesteps: {total}\n"
                    "n_steps: 64\nbatch_size: 64\nn_epochs: 1\nnet_arch: [16]\neval_games: 0\n")
    return path


def test_progress_bar_needs_no_rich_and_ctrl_c_saves_then_resume_finishes(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "rich", None)  # as on a machine without rich, where SB3's own bar raises ImportError
    config, run_dir = _tiny_config(tmp_path), tmp_path / "run"
    real_step, calls = gym_env.GameGymEnv.step, {"n": 0}

    def interrupt_at_step_200(self, action):
        calls["n"] += 1
        if calls["n"] == 200:
            raise KeyboardInterrupt
        return real_step(self, action)

    monkeypatch.setattr(gym_env.GameGymEnv, "step", interrupt_at_step_200)
    assert main(["--config", str(config), "--run-dir", str(run_dir)]) == 130
    err = capsys.readouterr().err
    # 2 envs x 64 steps per rollout: call 200 is the second env of the 36th vector step of the second rollout: 128 + 35 x 2 counted.
    assert f"interrupted after 198 of 256 timesteps: saved {run_dir / 'model.zip'}\n" in err
    assert err.endswith(f"resume with: python -m training.train_sb3 --config {config} --run-dir {run_dir} --resume\n")
    assert "tiny:" in err  # the progress bar ran (plain tqdm)
    assert MaskablePPO.load(str(run_dir / "model.zip")).num_timesteps == 198
    assert not list(run_dir.glob(".*.tmp.zip"))

    monkeypatch.setattr(gym_env.GameGymEnv, "step", real_step)
    assert main(["--config", str(config), "--run-dir", str(run_dir), "--resume", "--no-progress"]) == 0
    assert capsys.readouterr().out == f"saved {run_dir / 'model.zip'}\n"
    assert MaskablePPO.load(str(run_dir / "model.zip")).num_timesteps == 198 + 128  # whole rollouts: one more of 2 x 64
    assert main(["--config", str(config), "--run-dir", str(run_dir), "--resume"]) == 0
    assert capsys.readouterr().out == (
        f"run {str(run_dir)!r} is complete: 326 of 256 timesteps done, nothing to train.\n"
        f"To train it further, raise total_timesteps: python -m training.train_sb3 --config {config} --run-dir {run_dir} --resume --set total_timesteps=582\n"
    )
    assert main(["--config", str(config), "--run-dir", str(tmp_path / "none"), "--resume"]) == 2
    assert capsys.readouterr().err == f"error: nothing to resume: {str(tmp_path / 'none' / 'model.zip')!r} does not exist (start the run without --resume)\n"
