"""Expert iteration with the learned network (training/learner/expert.py): exact resume, distillation, the checkpoint as an agent."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from grinch_env.agents import make_agent
from training.learner.expert import ExpertRun, load_config, main, train
from training.learner.rollout import greedy_actions

TINY = ["init=null", "net.d_model=16", "net.heads=2", "net.ff=32", "games_per_generation=1", "label_fraction=0.1", "search.samples=2",
        "search.top_k=2", "search.horizon=1", "epochs=1", "eval_games=0", "generations=2"]


def _cfg(tmp_path, name: str, extra: list[str] | None = None):
    return load_config("configs/learner_gnoming_expert.yaml", TINY + [f"checkpoint_dir={tmp_path}", f"run_name={name}"] + (extra or []))


def test_resume_continues_exactly(tmp_path):
    straight = train(ExpertRun(_cfg(tmp_path, "a")), quiet=True)
    first = train(ExpertRun(_cfg(tmp_path, "b")), generations=1, quiet=True)
    assert first.generation == 1
    resumed = train(ExpertRun.load(tmp_path / "b"), quiet=True)
    assert resumed.generation == straight.generation == 2
    for k, v in straight.net.state_dict().items():
        assert torch.equal(v, resumed.net.state_dict()[k]), k
    drop = ("cpu_seconds",)
    assert [{k: v for k, v in r.items() if k not in drop} for r in straight.log] == [{k: v for k, v in r.items() if k not in drop} for r in resumed.log]
    assert all(r["labels"] > 0 and r["decisions"] > r["labels"] for r in straight.log)


def test_distillation_fits_the_search_labels(tmp_path):
    """On 16 fixed positions labelled with one of their legal actions each, distillation makes it the network's choice at each."""
    from grinch_env.games import get_game

    run = ExpertRun(_cfg(tmp_path, "d", ["epochs=300", "minibatch_size=16", "learning_rate=0.003"]))
    engine = get_game("gnoming").vector(num_envs=16, num_players=3, seed=1)
    obs, mask, _ = engine.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(40):  # random play, to positions that differ
        obs, mask, _, _, _ = engine.step((rng.random(mask.shape) * mask).argmax(1))
    labels = np.array([np.flatnonzero(m)[i % int(m.sum())] for i, m in enumerate(mask)], np.int64)
    assert (mask.sum(1) >= 2).all() and len(set(labels.tolist())) >= 3
    data = {"obs": obs.astype(np.float16), "masks": mask.astype(np.int8), "labels": labels, "targets": np.zeros(16, np.float32)}
    before = greedy_actions(run.net, "gnoming", "ppo", obs, mask)
    assert not np.array_equal(before, labels)
    stats = run.distil(data)
    assert np.array_equal(greedy_actions(run.net, "gnoming", "ppo", obs, mask), labels)
    assert stats["label_agreement"] > 0.5


def test_the_checkpoint_is_a_harness_agent_and_bad_input_is_refused(tmp_path, capsys):
    run = train(ExpertRun(_cfg(tmp_path, "h", ["generations=1"])), quiet=True)
    agent = make_agent(str(tmp_path / "h"), num_players=3, game="gnoming")
    searched = make_agent(f"{tmp_path / 'h'}:search=1,samples=2,top_k=1", num_players=3, game="gnoming")
    from grinch_env.games import get_game

    engine = get_game("gnoming").vector(num_envs=4, num_players=3, seed=2)
    obs, mask, _ = engine.reset(seed=2)
    want = greedy_actions(run.net, "gnoming", "ppo", obs, mask)
    assert np.array_equal(agent.act_batch(obs, mask), want) and np.array_equal(searched.act_batch(obs, mask), want)
    with pytest.raises(ValueError, match="games_per_generation\n  Input should be greater than or equal to 1"):
        load_config("configs/learner_gnoming_expert.yaml", ["games_per_generation=0"])
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        load_config("configs/learner_gnoming_expert.yaml", ["samples=3"])
    with pytest.raises(ValueError, match="search.horizon must be an int >= 0, 'round' or 'end', got 'turn'"):
        load_config("configs/learner_gnoming_expert.yaml", ["search.horizon=turn"])
    assert main(["--config", "configs/learner_gnoming_expert.yaml", "--set", f"checkpoint_dir={tmp_path}", "--set", "run_name=h"]) == 2
    assert f"{tmp_path / 'h' / 'latest.pt'} exists" in capsys.readouterr().err
    assert main(["--resume", str(tmp_path / "nothing")]) == 2
    assert "cannot resume" in capsys.readouterr().err
