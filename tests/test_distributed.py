"""Distributed collection on Ray workers: PPO self-play trains, checkpoints, resumes and evaluates; a killed worker loses nothing.

The Ray tests need the ``[ray]`` extra and are skipped without it; the config
and error tests run everywhere.  Ray starts once for the session
(``ray_session`` in conftest.py: 2 CPUs, a small object store, no dashboard).
"""

from pathlib import Path

import numpy as np
import pytest
import torch

from grinch_env.evaluation.evaluate import evaluate
from training import distill
from training.checkpoint import load_checkpoint
from training.config import DistillConfig, TrainConfig, config_from_dict, load_config
from training.distributed import make_collector, merge_rollouts, ray_available
from training.train import Trainer

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
SMOKE_RAY = CONFIGS / "smoke_ray.yaml"
needs_ray = pytest.mark.skipif(not ray_available(), reason="ray is not installed (pip install -e '.[ray]')")


def test_distributed_config_defaults_to_this_process_and_names_bad_keys():
    cfg = TrainConfig()
    assert (cfg.distributed.backend, cfg.distributed.num_workers, cfg.distributed.address) == ("local", 1, "local")
    with pytest.raises(ValueError, match=r"distributed.backend: Input should be 'local' or 'ray'"):
        config_from_dict({"distributed": {"backend": "spark"}})
    with pytest.raises(ValueError, match=r"distributed.num_workers: Input should be greater than or equal to 1"):
        config_from_dict({"distributed": {"backend": "ray", "num_workers": 0}})
    with pytest.raises(ValueError, match=r"distributed.workers: unknown key; did you mean distributed.num_workers\?"):
        config_from_dict({"distributed": {"workers": 2}})
    assert load_config(SMOKE_RAY).distributed.num_workers == 2


def test_ray_backend_without_ray_is_a_clear_error(monkeypatch):
    import training.distributed as distributed

    monkeypatch.setattr(distributed, "ray_available", lambda: False)
    with pytest.raises(ValueError, match=r"distributed.backend is 'ray' but ray is not installed: pip install -e '.\[ray\]'"):
        make_collector(load_config(SMOKE_RAY).distributed, dict, lambda context, shared, task: task)


def test_merged_rollouts_keep_every_decision_in_order():
    from training.selfplay import Rollout

    def part(start, n, rate):
        a = np.arange(start, start + n)
        return Rollout(obs=np.zeros((n, 3), np.float32) + a[:, None], masks=np.ones((n, 2), np.int8), feats=None, actions=a, logprobs=a * 0.5,
                       values=a * 1.0, advantages=-a * 1.0, returns=a * 2.0, env_steps=10 * n, games=n, win_rates={"random": rate})

    merged = merge_rollouts([part(0, 2, 1.0), part(2, 3, 0.5)])
    np.testing.assert_array_equal(merged.actions, [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(merged.obs[:, 0], [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(merged.returns, [0, 2, 4, 6, 8])
    assert (merged.env_steps, merged.games, merged.win_rates, merged.feats) == (50, 5, {"random": 0.75}, None)


@needs_ray
def test_two_worker_ppo_trains_checkpoints_resumes_and_evaluates_and_a_killed_worker_loses_nothing(ray_session, tmp_path):
    cfg = load_config(SMOKE_RAY)
    killed = Trainer(cfg, tmp_path / "killed", progress=False)
    try:
        killed.train(stop_after=2)
        ray_workers = killed.collector.collector
        # Kill worker 0 while update 3's batches are in flight: its batch is re-collected by a replacement.
        ray_workers._before_wait = lambda c: (c.kill(0), setattr(c, "_before_wait", None))
        killed.train()
        assert ray_workers.replacements == 1 and len(ray_workers.actors) == 2
    finally:
        killed.close()
    ckpt = load_checkpoint(tmp_path / "killed" / "latest.pt")
    # 4 updates x 2 workers x 4 games x the 3-player game's 108 steps: no update and no batch lost.
    assert (ckpt["update"], ckpt["env_steps"]) == (4, 4 * 2 * 4 * 108)
    assert ckpt["config"]["distributed"]["num_workers"] == 2

    first = Trainer(cfg, tmp_path / "resumed", progress=False)
    assert first.collector is None  # workers start with the first update (a report-only run never starts Ray)
    second = Trainer(cfg, tmp_path / "resumed", progress=False)
    try:
        first.train(stop_after=2)
        # The resumed trainer takes over the first one's workers (they hold no run state; starting new ones is what the
        # replacement above did), so the test pays for two worker start-ups, not four.
        second.collector, first.collector = first.collector, None
        second.load(tmp_path / "resumed" / "latest.pt")
        assert second.update == 2
        second.train()
    finally:
        first.close()
        second.close()
    # The run that lost a worker and the run that stopped and resumed end on the same weights, bit for bit.
    a, b = killed.model.state_dict(), second.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert (killed.env_steps, killed.learner_steps) == (second.env_steps, second.learner_steps)

    result = evaluate([str(tmp_path / "killed"), "random"], num_players=2, num_games=4, seed=0)
    assert result.num_games == 4 and result.agents == ["killed", "random"]


@needs_ray
def test_ray_distillation_plays_the_same_labelled_games_as_one_process(ray_session):
    cfg = load_config(CONFIGS / "distill_smoke.yaml", ["games_per_round=4", "rounds=2"], schema=DistillConfig)
    on_ray = cfg.model_copy(update={"distributed": load_config(SMOKE_RAY).distributed})
    student = distill.build_student(cfg)
    # A DAgger round: the student plays, the teacher labels (round 0, the teacher alone, runs the same worker code).
    local = distill.collect_round(cfg, 1, student, progress=False)
    remote = distill.collect_round(on_ray, 1, student, progress=False)
    for key in distill.FIELDS:
        np.testing.assert_array_equal(local[key], remote[key])
    np.testing.assert_array_equal(np.unique(remote["game"]), [0, 1, 2, 3])
    assert len(remote["action"]) > 4 * 20


@needs_ray
def test_gnoming_ppo_and_distillation_on_ray_workers(ray_session, tmp_path):
    cfg = load_config(CONFIGS / "gnoming_smoke.yaml", ["total_updates=2", "tensorboard=false", "eval.final_games=0"])
    cfg = cfg.model_copy(update={"distributed": load_config(SMOKE_RAY).distributed})
    trainer = Trainer(cfg, tmp_path / "gnoming", progress=False)
    try:
        trainer.train()
    finally:
        trainer.close()
    ckpt = load_checkpoint(tmp_path / "gnoming" / "latest.pt")
    # 2 updates x 2 workers x 4 games x Gnoming's 1200-decision rollout, on the Gnoming network.
    assert (ckpt["update"], ckpt["env_steps"]) == (2, 2 * 2 * 4 * 1200)
    assert (ckpt["obs_size"], ckpt["num_actions"], ckpt["config"]["game"]) == (1046, 15, "gnoming")

    dcfg = load_config(CONFIGS / "gnoming_distill.yaml", ["games_per_round=2", "model.hidden_sizes=[32]", "teacher=greedy"], schema=DistillConfig)
    on_ray = dcfg.model_copy(update={"distributed": load_config(SMOKE_RAY).distributed})
    student = distill.build_student(dcfg)
    local = distill.collect_round(dcfg, 1, student, progress=False)
    remote = distill.collect_round(on_ray, 1, student, progress=False)
    for key in distill.FIELDS:
        np.testing.assert_array_equal(local[key], remote[key])
    np.testing.assert_array_equal(np.unique(remote["game"]), [0, 1])
