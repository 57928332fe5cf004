"""sb3-contrib MaskablePPO on the Gymnasium wrapper: a short run saves a .zip that plays as an agent."""

import numpy as np

from training.checkpoint import SB3Agent, load_agent
from training.config import SB3Config
from training.evaluate import evaluate
from training.train_sb3 import main, train_sb3


def test_sb3_smoke_run_saves_a_model_that_loads_as_an_agent(tmp_path):
    cfg = SB3Config(run_name="sb3_smoke", num_players=3, opponents=["random"], n_envs=2, total_timesteps=256,
                    n_steps=64, batch_size=64, n_epochs=1, net_arch=[32], eval_games=0)
    path = train_sb3(cfg, tmp_path / "sb3")
    assert path == tmp_path / "sb3" / "model.zip" and path.is_file()
    agent = load_agent(path, seed=0)
    assert isinstance(agent, SB3Agent) and agent.name == "sb3/model"
    mask = np.zeros(62, np.int8)
    mask[[4, 9, 40]] = 1
    for _ in range(5):
        assert agent.act(np.random.default_rng(0).random(1337).astype(np.float32), mask) in (4, 9, 40)
    result = evaluate([str(path), "random"], num_players=3, num_games=3, seed=0)
    assert result.num_games == 3 and sum(a["seat_games"] for a in result.per_agent.values()) == 9


def test_sb3_cli_rejects_an_unknown_key(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("total_steps: 10\n")
    assert main(["--config", str(bad)]) == 2
    assert "total_steps: unknown key; did you mean total_timesteps?" in capsys.readouterr().err
