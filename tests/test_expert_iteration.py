"""Expert iteration end to end on a tiny config: two generations, each a checkpoint with its report."""

import json

import pytest

from training.checkpoint import load_agent
from training.config import config_from_dict
from training.expert_iteration import ExpertIterationConfig, main, teacher_spec


def test_two_tiny_generations(tmp_path):
    assert main(["--config", "configs/expert_iteration_smoke.yaml", "--run-dir", str(tmp_path), "--no-progress"]) == 0
    gens = json.loads((tmp_path / "generations.json").read_text())
    assert [g["generation"] for g in gens] == [1, 2]
    assert gens[0]["teacher"] == "search:playouts=2,policy=rows"
    assert gens[1]["teacher"] == f"search:playouts=2,policy={tmp_path / 'gen_1' / 'best.pt'}"  # generation 2 rolls out with generation 1's network
    assert gens[1]["init_checkpoint"] == str(tmp_path / "gen_1" / "best.pt")
    for g in gens:
        assert [m["agent"].startswith("search:playouts=1,policy=") for m in g["matches"]] == [False, True]  # the network alone, then search with it
        assert all(m["games"] == 2 and m["players"] == 2 for m in g["matches"])
        assert g["distill_log"][0]["decisions"] > 0
    assert load_agent(tmp_path / "gen_2").name.endswith("best")
    # A rerun finds both generations done and plays nothing.
    mtime = (tmp_path / "gen_2" / "best.pt").stat().st_mtime
    assert main(["--config", "configs/expert_iteration_smoke.yaml", "--run-dir", str(tmp_path), "--no-progress"]) == 0
    assert (tmp_path / "gen_2" / "best.pt").stat().st_mtime == mtime


def test_config_errors_name_the_key():
    with pytest.raises(ValueError, match="playouts"):
        config_from_dict({"playouts": 0}, schema=ExpertIterationConfig)
    with pytest.raises(ValueError, match="search_budget"):
        config_from_dict({"search_budget": 3}, schema=ExpertIterationConfig)
    cfg = config_from_dict({"network_rollouts": False, "playouts": 9}, schema=ExpertIterationConfig)
    assert teacher_spec(cfg, None) == teacher_spec(cfg, "gen_1/best.pt") == "search:playouts=9,policy=rows"  # no network rollouts
