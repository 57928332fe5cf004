"""sb3-contrib MaskablePPO on the Gymnasium wrapper: a short run saves a .zip that plays as an agent; the bridge's config and CLI."""

import json
import sys

import numpy as np
import pytest
import yaml
from sb3_contrib import MaskablePPO

import grinch_env.gym_env as gym_env
from grinch_env.evaluation.evaluate import evaluate
from training.bridges import validate
from training.checkpoint import SB3Agent, load_agent
from training.train_sb3 import SB3Config, main, train_sb3


def _cfg(tmp_path, **top):
    """A tiny SB3Config in ``tmp_path`` (``top``: top-level keys; ``sb3``: the section's keys over the tiny ones)."""
    sb3 = {"opponents": ["random"], "n_envs": 2, "total_timesteps": 256, "n_steps": 64, "batch_size": 64, "n_epochs": 1, "net_arch": [32],
           **top.pop("sb3", {})}
    data = {"game": "grinch", "num_players": 3, "checkpoint": {"dir": str(tmp_path), "run_name": "sb3"}, "eval": {"final_games": 0},
            "sb3": sb3, **top}
    return validate(SB3Config, data)


def test_sb3_smoke_run_saves_a_model_that_loads_as_an_agent(tmp_path):
    path = train_sb3(_cfg(tmp_path))
    assert path == tmp_path / "sb3" / "model.zip" and path.is_file()
    assert validate(SB3Config, yaml.safe_load((tmp_path / "sb3" / "config.yaml").read_text())) == _cfg(tmp_path)  # reads back
    agent = load_agent(path, seed=0, trust=True)  # an SB3 .zip is unpickled: loading it needs the opt-in
    assert isinstance(agent, SB3Agent) and agent.name == "sb3/model"
    mask = np.zeros(62, np.int8)
    mask[[4, 9, 40]] = 1
    for _ in range(5):
        assert agent.act(np.random.default_rng(0).random(1337).astype(np.float32), mask) in (4, 9, 40)
    result = evaluate([f"{path}:trust=1", "random"], num_players=3, num_games=3, seed=0)
    assert result.num_games == 3 and sum(a["seat_games"] for a in result.per_agent.values()) == 9


def test_sb3_trains_gnoming_and_its_model_plays_gnoming_only(tmp_path):
    path = train_sb3(_cfg(tmp_path, game="gnoming", sb3={"total_timesteps": 128, "net_arch": [16]}))
    agent = load_agent(path, seed=0, trust=True)
    assert agent.game == "gnoming" and MaskablePPO.load(str(path)).observation_space.shape == (1046,)
    mask = np.zeros(15, np.int8)
    mask[[2, 11]] = 1
    assert agent.act(np.zeros(1046, np.float32), mask) in (2, 11)
    result = evaluate([agent, "random"], num_players=3, num_games=3, seed=0, game="gnoming")
    assert result.num_games == 3 and sum(a["seat_games"] for a in result.per_agent.values()) == 9
    with pytest.raises(ValueError, match=r"plays Gnoming A Round \(game 'gnoming'\), not Grinch Grow Your Heart"):
        evaluate([f"{path}:trust=1", "random"], num_players=3, num_games=1, seed=0)


def test_sb3_config_checks_the_table_size_options_and_opponents_against_its_game(tmp_path):
    with pytest.raises(ValueError, match=r"^config: num_players for Gnoming A Round must be an int in 3\.\.7, got 2$"):
        _cfg(tmp_path, game="gnoming", num_players=2)
    with pytest.raises(ValueError, match=r"^config: sb3\.bonus_layout: Gnoming A Round has no bonus cards; leave sb3\.bonus_layout at 'standard'$"):
        _cfg(tmp_path, game="gnoming", sb3={"bonus_layout": "none"})
    with pytest.raises(ValueError, match=r"in 2\.\.6, got 7$"):
        _cfg(tmp_path, num_players=7)
    with pytest.raises(ValueError, match=r"sb3\.opponents: give 1 spec \(every other seat\) or num_players - 1 = 2, got 3"):
        _cfg(tmp_path, sb3={"opponents": ["random"] * 3})
    with pytest.raises(ValueError, match=r"eval\.final_opponents: unknown agent 'gredy'"):
        _cfg(tmp_path, eval={"final_opponents": ["gredy"]})
    assert _cfg(tmp_path, game="gnoming").game_options() == {} and _cfg(tmp_path).game_options() == {"bonus_layout": "standard"}


def test_sb3_cli_names_bad_keys_and_other_commands_configs(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: grinch\nnum_players: 2\ntotal_timesteps: 10\nsb3: {total_steps: 10, n_envs: 0}\n")
    assert main(["--config", str(bad)]) == 2
    assert capsys.readouterr().err == (f"error: {bad}:\n  sb3.n_envs: Input should be greater than or equal to 1 (got 0)\n"
                                       "  sb3.total_steps: unknown key; did you mean sb3.total_timesteps?\n"
                                       "  total_timesteps: unknown key; did you mean sb3.total_timesteps?\n")
    assert main(["--config", "configs/rllib_ppo.yaml"]) == 2
    assert capsys.readouterr().err == ("error: configs/rllib_ppo.yaml is a config for python -m training.train_rllib (it has a top-level rllib: key), "
                                       "not for python -m training.train_sb3; run: python -m training.train_rllib --config configs/rllib_ppo.yaml\n")
    assert main(["--config", "configs/sb3_maskable_ppo.yaml", "--set", "seed"]) == 2
    assert "--set takes KEY=VALUE" in capsys.readouterr().err


def test_the_shipped_config_validates_in_the_new_shape():
    from training.bridges import load_config

    cfg = load_config(SB3Config, "configs/sb3_maskable_ppo.yaml")
    assert (cfg.game, cfg.num_players, cfg.run_dir.as_posix(), cfg.sb3.opponents, cfg.sb3.total_timesteps) == (
        "grinch", 4, "checkpoints/sb3_maskable_ppo", ["greedy"], 300_000)
    assert cfg.eval.final_opponents == ["random", "greedy"] and cfg.eval.final_games == 200


def _tiny_config(tmp_path, total=256):
    path = tmp_path / "tiny.yaml"
    path.write_text(f"game: grinch\nnum_players: 2\ncheckpoint: {{dir: {tmp_path}}}\neval: {{final_games: 0}}\n"
                    f"sb3: {{opponents: [random], n_envs: 2, total_timesteps: {total}, n_steps: 64, batch_size: 64, n_epochs: 1, net_arch: [16]}}\n")
    return path


def test_progress_bar_needs_no_rich_and_ctrl_c_saves_then_resume_finishes_then_report(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "rich", None)  # as on a machine without rich, where SB3's own bar raises ImportError
    config, run_dir = _tiny_config(tmp_path), tmp_path / "tiny"  # the run name is the config file's stem
    real_step, calls = gym_env.GameGymEnv.step, {"n": 0}

    def interrupt_at_step_200(self, action):
        calls["n"] += 1
        if calls["n"] == 200:
            raise KeyboardInterrupt
        return real_step(self, action)

    monkeypatch.setattr(gym_env.GameGymEnv, "step", interrupt_at_step_200)
    assert main(["--config", str(config)]) == 130
    err = capsys.readouterr().err
    # 2 envs x 64 steps per rollout: call 200 is the second env of the 36th vector step of the second rollout: 128 + 35 x 2 counted.
    assert f"interrupted after 198 of 256 timesteps: saved {run_dir / 'model.zip'}\n" in err
    assert err.endswith(f"resume with: python -m training.train_sb3 --config {config} --resume\n")
    assert "tiny:" in err  # the progress bar ran (plain tqdm)
    assert MaskablePPO.load(str(run_dir / "model.zip")).num_timesteps == 198
    assert not list(run_dir.glob(".*.tmp.zip"))

    monkeypatch.setattr(gym_env.GameGymEnv, "step", real_step)
    assert main(["--config", str(config)]) == 2  # a fresh run does not overwrite the run's model
    assert capsys.readouterr().err == (f"error: {run_dir / 'model.zip'} exists: go on with --resume, or pick another run name "
                                       "(--set checkpoint.run_name=NAME)\n")
    assert main(["--config", str(config), "--resume", "--quiet"]) == 0
    assert capsys.readouterr().out == f"saved {run_dir / 'model.zip'}\n"
    assert MaskablePPO.load(str(run_dir / "model.zip")).num_timesteps == 198 + 128  # whole rollouts: one more of 2 x 64
    assert main(["--config", str(config), "--resume"]) == 0
    assert capsys.readouterr().out == (
        f"run {str(run_dir)!r} is complete: 326 of 256 timesteps done, nothing to train.\n"
        f"To train it further, raise sb3.total_timesteps: python -m training.train_sb3 --config {config} --resume --set sb3.total_timesteps=582\n"
    )
    none = ["--set", "checkpoint.run_name=none"]
    assert main(["--config", str(config), "--resume"] + none) == 2
    assert capsys.readouterr().err == f"error: nothing to resume: {str(tmp_path / 'none' / 'model.zip')!r} does not exist (start the run without --resume)\n"
    assert main(["--config", str(config), "--report"] + none) == 2
    assert "error: nothing to report" in capsys.readouterr().err
    assert main(["--config", str(config), "--report"]) == 2
    assert capsys.readouterr().err == "error: --report with eval.final_games: 0 plays no games; give --set eval.final_games=N\n"

    assert main(["--config", str(config), "--report", "--set", "eval.final_games=2", "--set", "eval.final_opponents=[random]"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"final evaluation of {run_dir / 'model.zip'} (2 games per line, seats rotated)\n")
    assert "one tiny/model seat against 1 x random" in out
    assert json.loads((run_dir / "report" / "summary.json").read_text())["random@2p"]["games"] == 2
