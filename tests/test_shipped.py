"""The committed policies load, play legal games and carry the config and report the README quotes."""

import json
from pathlib import Path

import pytest
import yaml

from grinch_env.evaluation.evaluate import evaluate
from training.checkpoint import load_agent, load_checkpoint
from training.config import DistillConfig, TrainConfig, load_config

ROOT = Path(__file__).resolve().parents[1]
GRINCH_REPORT = {"greedy@2p", "expectimax@2p", "greedy@4p", "expectimax@4p"}
GNOMING_REPORT = {"greedy@3p", "search@3p", "greedy@5p", "search@5p"}
# run -> (config schema, game, a table size, what its report must hold)
SHIPPED = {
    "distill_lookahead": (DistillConfig, "grinch", 2, GRINCH_REPORT),
    "distill_expectimax": (DistillConfig, "grinch", 2, GRINCH_REPORT),
    "selfplay_mixed": (TrainConfig, "grinch", 2, GRINCH_REPORT),
    "gnoming_distill": (DistillConfig, "gnoming", 3, GNOMING_REPORT),
    "gnoming_finetune": (TrainConfig, "gnoming", 3, GNOMING_REPORT),
}


@pytest.mark.parametrize("run", sorted(SHIPPED))
def test_shipped_policy_loads_plays_and_matches_its_config(run):
    schema, game, n, report = SHIPPED[run]
    run_dir = ROOT / "checkpoints" / run
    ckpt = load_checkpoint(run_dir / "best.pt")
    assert ckpt["optimizer"] is None and ckpt["config"]["run_name"] == run and ckpt["config"].get("game", "grinch") == game  # runs made before the game key are Grinch runs
    stored = schema.model_validate(yaml.safe_load((run_dir / "config.yaml").read_text()))
    assert stored == load_config(ROOT / "configs" / f"{run}.yaml", schema=schema)  # the config in configs/ made it
    result = evaluate([str(run_dir), "random"], num_players=n, num_games=2, seed=0, game=game)
    assert result.agents == [run, "random"] and result.num_games == 2
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    assert report <= set(summary)


def test_shipped_policy_is_the_one_the_readme_names():
    readme = (ROOT / "README.md").read_text()
    assert "**Shipped policy, `checkpoints/distill_lookahead/`**" in readme
    summary = json.loads((ROOT / "checkpoints" / "distill_lookahead" / "report" / "summary.json").read_text())
    for key in ("greedy@2p", "expectimax@2p", "greedy@4p", "expectimax@4p"):
        lo, hi = summary[key]["win_rate_ci"]
        assert f"{summary[key]['win_rate']:.3f} [{lo:.3f}, {hi:.3f}]" in readme, key
    assert load_agent(ROOT / "checkpoints" / "distill_lookahead").name == "distill_lookahead/best"
