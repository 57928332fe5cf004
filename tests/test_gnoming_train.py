"""End to end for Gnoming: a smoke training run on VectorGnoming writes checkpoints, resumes exactly, and its policy plays an evaluation."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from grinch_env.evaluation.evaluate import evaluate
from training.checkpoint import load_agent, load_checkpoint
from training.config import load_config
from training.train import Trainer, main

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
SMOKE = CONFIGS / "gnoming_smoke.yaml"


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("runs") / "gnoming_smoke"
    assert main(["--config", str(SMOKE), "--run-dir", str(run_dir), "--no-progress"]) == 0
    return run_dir


def test_smoke_run_writes_checkpoints_and_report(smoke_run):
    for name in ("latest.pt", "best.pt", "config.yaml", "report/summary.json", "report/random_3p/results.json", "report/greedy_3p/results.json"):
        assert (smoke_run / name).is_file(), name
    ckpt = load_checkpoint(smoke_run / "latest.pt")
    assert (ckpt["update"], ckpt["env_steps"]) == (4, 4 * 4 * 1200)  # 4 updates x 4 games x Gnoming's 1200-decision rollout
    assert (ckpt["obs_size"], ckpt["num_actions"], ckpt["env_version"]) == (1046, 15, "gnoming_a_round_v0")
    assert ckpt["config"]["game"] == "gnoming" and ckpt["config"]["reward_mode"] == "win"
    summary = json.loads((smoke_run / "report" / "summary.json").read_text())
    assert set(summary) == {"random@3p", "greedy@3p"} and all(v["games"] == 2 for v in summary.values())


def test_resume_continues_from_latest(smoke_run, tmp_path):
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    for name in ("latest.pt", "config.yaml"):
        (resumed / name).write_bytes((smoke_run / name).read_bytes())
    (resumed / "snapshots").mkdir()
    for snap in (smoke_run / "snapshots").iterdir():
        (resumed / "snapshots" / snap.name).write_bytes(snap.read_bytes())
    assert main(["--resume", str(resumed), "--set", "total_updates=5", "--no-progress", "--no-report"]) == 0
    assert load_checkpoint(resumed / "latest.pt")["update"] == 5


def test_half_then_resume_half_equals_straight(tmp_path):
    cfg = load_config(SMOKE, ["tensorboard=false", "eval.final_games=0", "total_updates=2"])
    straight = Trainer(cfg, tmp_path / "a", progress=False)
    straight.train()
    first = Trainer(cfg, tmp_path / "b", progress=False)
    first.train(stop_after=1)
    second = Trainer(cfg, tmp_path / "b", progress=False)
    second.load(tmp_path / "b" / "latest.pt")
    assert second.update == 1
    second.train()
    a, b = straight.model.state_dict(), second.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert straight.env_steps == second.env_steps and straight.learner_steps == second.learner_steps


def test_trained_policy_plays_an_evaluation(smoke_run):
    result = evaluate([str(smoke_run), "random", "greedy"], num_players=3, num_games=3, seed=0, game="gnoming")
    assert result.num_games == 3 and len(result.per_agent) == 3
    agent = load_agent(smoke_run / "best.pt")
    mask = np.zeros(15, np.int8)
    mask[[2, 9]] = 1
    assert agent.act(np.zeros(1046, np.float32), mask) in (2, 9)


@pytest.mark.parametrize("name", ["gnoming_default.yaml", "gnoming_mixed.yaml", "gnoming_smoke.yaml", "gnoming_finetune.yaml"])
def test_gnoming_configs_load(name):
    cfg = load_config(CONFIGS / name)
    assert cfg.game == "gnoming" and cfg.model.action_features == (name != "gnoming_smoke.yaml")  # the smoke run: a plain MLP
    assert all(3 <= n <= 7 for n in cfg.table_sizes + cfg.eval.num_players)


DISTILL = CONFIGS / "gnoming_distill.yaml"
DISTILL_SMOKE = ["games_per_round=2", "epochs=1", "model.hidden_sizes=[32]", "eval.games=2", "eval.opponents=[random]", "eval.num_players=[3]",
                 "processes=1", "eval.processes=1"]


def test_gnoming_distill_config_distils_the_search_agent(tmp_path):
    from training import distill
    from training.config import DistillConfig

    run_dir = tmp_path / "gnoming_distill"
    args = ["--config", str(DISTILL), "--run-dir", str(run_dir), "--no-progress"]
    for override in DISTILL_SMOKE:
        args += ["--set", override]
    assert distill.main(args) == 0
    ckpt = load_checkpoint(run_dir / "best.pt")
    assert (ckpt["obs_size"], ckpt["num_actions"], ckpt["env_version"]) == (1046, 15, "gnoming_a_round_v0")
    assert ckpt["config"]["game"] == "gnoming" and ckpt["config"]["teacher"] == "search"
    assert [e["round"] for e in ckpt["distill_log"]] == [0, 1]
    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    assert set(summary) == {"random@3p"} and summary["random@3p"]["games"] == 2

    # With explore=0, round 0's labels are the search agent's own moves: replaying them from the game's seed replays the game.
    cfg = load_config(DISTILL, DISTILL_SMOKE + ["explore=0.0"], schema=DistillConfig)
    distill._init_worker(cfg.model_dump(), 0, None)
    record = distill.play_data_game(0)
    rng = distill.game_seeds(cfg.seed, 0, 0)
    n = int(cfg.table_sizes[rng.integers(len(cfg.table_sizes))])
    game = cfg.spec.new_game(n, int(rng.integers(2**63)))
    labels = iter(record["action"].tolist())
    seats = []
    while not game.done:
        assert len(game.legal_actions()) >= 2  # Gnoming's Game plays single-legal-action decisions itself: every decision left is labelled
        seats.append(game.current)
        game.step(next(labels))
    assert next(labels, None) is None and len(seats) == len(record["action"])
    margins = game.rewards("margin")
    np.testing.assert_allclose(record["ret"], [margins[s] for s in seats], rtol=1e-6)


def test_gnoming_action_features_are_greedys_option_values_and_start_the_policy_at_greedy(tmp_path):
    from grinch_env.gnoming.agents import GreedyAgent, GreedyPolicy, decode
    from grinch_env.gnoming.encoding import Encoder
    from grinch_env.gnoming.features import greedy_features
    from grinch_env.gnoming.game import Game
    from training.model import PolicyValueNet

    encoder, policy, rng = Encoder(), GreedyPolicy(), np.random.default_rng(5)
    obs, masks = [], []
    for n in (3, 5, 7):
        game = Game(n, rng=n)
        for _ in range(150):
            view = encoder.observe(game, game.current)
            obs.append(view["observation"])
            masks.append(view["action_mask"])
            game.step(int(rng.choice(game.legal_actions())))
    obs, masks = np.stack(obs), np.stack(masks)
    feats = greedy_features(obs, masks)
    greedy = GreedyAgent().act_batch(obs, masks)
    for i in range(len(obs)):
        legal = np.flatnonzero(masks[i]).tolist()
        values = policy.option_values(decode(obs[i]), legal)
        best = min(values.values())
        np.testing.assert_allclose(feats[i, legal, 0], [min((values[a] - best) / 10, 5.0) for a in legal], rtol=1e-6)
        assert values[greedy[i]] == best  # greedy's choice is always a best option by these values
        assert np.flatnonzero(feats[i, :, 1]).tolist() == [greedy[i]]
        assert not feats[i, masks[i] == 0].any()  # illegal actions: zeros
    torch.manual_seed(0)
    net = PolicyValueNet(hidden_sizes=[32], action_features=True, game="gnoming")
    assert net.feature_shape == (15, 2)
    dist, _value, _feats = net.distribution_np(obs, masks)
    np.testing.assert_array_equal(dist.probs.argmax(-1).numpy(), greedy)  # the untrained network plays greedy's move

    cfg = load_config(SMOKE, ["model.action_features=true", "total_updates=1", "tensorboard=false", "eval.final_games=0"])
    trainer = Trainer(cfg, tmp_path / "feats", progress=False)
    trainer.train()
    assert load_checkpoint(tmp_path / "feats" / "latest.pt")["action_features"] is True
