"""The committed policies load, play legal games and carry the config and report the README quotes."""

import json
from pathlib import Path

import pytest
import yaml

from training.checkpoint import load_agent, load_checkpoint
from training.config import DistillConfig, TrainConfig, load_config
from training.evaluate import evaluate

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = {"distill_lookahead": DistillConfig, "distill_expectimax": DistillConfig, "selfplay_mixed": TrainConfig}


@pytest.mark.parametrize("run", sorted(SHIPPED))
def test_shipped_policy_loads_plays_and_matches_its_config(run):
    run_dir = ROOT / "checkpoints" / run
    ckpt = load_checkpoint(run_dir / "best.pt")
    assert ckpt["optimizer"] is None and ckpt["config"]["run_name"] == run
    stored = SHIPPED[run].model_validate(yaml.safe_load((run_dir / "config.yaml").read_text()))
    assert stored == load_config(ROOT / "configs" / f"{run}.yaml", schema=SHIPPED[run])  # the config in configs/ made it
    result = evaluate([str(run_dir), "random"], num_players=2, num_games=2, seed=0)
    assert result.agents == [run, "random"] and result.num_games == 2
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    assert {"greedy@2p", "expectimax@2p", "greedy@4p", "expectimax@4p"} <= set(summary)


def test_shipped_policy_is_the_one_the_readme_names():
    readme = (ROOT / "README.md").read_text()
    assert "**Shipped policy, `checkpoints/distill_lookahead/`**" in readme
    summary = json.loads((ROOT / "checkpoints" / "distill_lookahead" / "report" / "summary.json").read_text())
    for key in ("greedy@2p", "expectimax@2p", "greedy@4p", "expectimax@4p"):
        lo, hi = summary[key]["win_rate_ci"]
        assert f"{summary[key]['win_rate']:.3f} [{lo:.3f}, {hi:.3f}]" in readme, key
    assert load_agent(ROOT / "checkpoints" / "distill_lookahead").name == "distill_lookahead/best"
