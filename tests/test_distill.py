"""Distillation (DAgger) of a teacher agent into the policy network: data, determinism, checkpoints, errors."""

from pathlib import Path

import numpy as np
import pytest
import torch

from grinch_env.grinch.game import Game, terminal_rewards
from training import distill
from training.checkpoint import load_agent, load_checkpoint
from training.config import DistillConfig, load_config
from training.train import Trainer
from training.train import main as train_main

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
SMOKE = CONFIGS / "distill_smoke.yaml"


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("distill") / "run"
    assert distill.main(["--config", str(SMOKE), "--run-dir", str(run_dir), "--no-progress"]) == 0
    return run_dir


def round_data(run_dir, k):
    with np.load(run_dir / "data" / f"round_{k}.npz") as saved:
        return {key: saved[key] for key in distill.FIELDS}


def test_smoke_run_writes_student_data_log_and_report(smoke_run):
    for name in ("best.pt", "config.yaml", "distill_log.json", "data/round_0.npz", "data/round_1.npz", "report/summary.json", "report/random_2p/results.json"):
        assert (smoke_run / name).is_file(), name
    ckpt = load_checkpoint(smoke_run / "best.pt")
    assert ckpt["hidden_sizes"] == [32] and ckpt["config"]["teacher"] == "greedy" and ckpt["optimizer"] is None
    log = ckpt["distill_log"]
    assert [e["round"] for e in log] == [0, 1]
    sizes = [len(round_data(smoke_run, k)["action"]) for k in (0, 1)]
    assert [e["decisions"] for e in log] == sizes and log[1]["total_decisions"] == sum(sizes)
    agent = load_agent(smoke_run)
    mask = np.zeros(62, np.int8)
    mask[[3, 17]] = 1
    assert agent.act(np.zeros(1337, np.float32), mask) in (3, 17)


def test_round_zero_records_the_teachers_game_move_for_move(smoke_run):
    """With explore=0 the recorded labels are the moves played: replaying them from the game's seed reproduces the game and its margins."""
    cfg = load_config(SMOKE, schema=DistillConfig)
    assert cfg.explore == 0.03
    cfg = cfg.model_copy(update={"explore": 0.0})
    distill._init_worker(cfg.model_dump(), 0, None)
    for index in range(3):
        record = distill.play_data_game(index)
        rng = distill.game_seeds(cfg.seed, 0, index)
        n = int(cfg.table_sizes[rng.integers(len(cfg.table_sizes))])
        game = Game(n, rng=int(rng.integers(2**63)))
        labels = iter(record["action"].tolist())
        seats = []
        while not game.done:
            legal = game.legal_actions()
            if len(legal) == 1:
                game.step(legal[0])
                continue
            action = next(labels)
            assert action in legal
            seats.append(game.current)
            game.step(action)
        assert next(labels, None) is None  # every label was used: one per decision with a choice
        margins = terminal_rewards(game.totals, "margin")
        np.testing.assert_allclose(record["ret"], [margins[s] for s in seats], rtol=1e-6)
        assert (record["game"] == index).all() and record["obs"].dtype == np.float16


def test_labels_are_legal_and_forced_moves_are_not_recorded(smoke_run):
    for k in (0, 1):
        data = round_data(smoke_run, k)
        assert data["mask"][np.arange(len(data["action"])), data["action"].astype(np.int64)].all()
        assert (data["mask"].sum(1) >= 2).all()


def test_rerun_reuses_the_data_and_gives_the_same_student(smoke_run, tmp_path):
    copy = tmp_path / "again"
    (copy / "data").mkdir(parents=True)
    for k in (0, 1):
        (copy / "data" / f"round_{k}.npz").write_bytes((smoke_run / "data" / f"round_{k}.npz").read_bytes())
    assert distill.main(["--config", str(SMOKE), "--run-dir", str(copy), "--no-progress", "--no-report"]) == 0
    log = load_checkpoint(copy / "best.pt")["distill_log"]
    assert [e["data_reused"] for e in log] == [True, True]
    a, b = load_checkpoint(smoke_run / "best.pt")["model"], load_checkpoint(copy / "best.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    # A config that changes the games does not reuse them.
    assert distill.load_round(copy / "data" / "round_0.npz", load_config(SMOKE, ["seed=5"], schema=DistillConfig), 0) is None


def test_data_do_not_depend_on_the_number_of_processes(tmp_path):
    cfg = load_config(SMOKE, ["games_per_round=4", "rounds=1"], schema=DistillConfig)
    one = distill.collect_round(cfg, 0, None, progress=False)
    two = distill.collect_round(cfg.model_copy(update={"processes": 2}), 0, None, progress=False)
    for key in distill.FIELDS:
        np.testing.assert_array_equal(one[key], two[key])


def test_student_starts_a_ppo_run(smoke_run, tmp_path):
    smoke_train = CONFIGS / "smoke.yaml"
    args = ["--config", str(smoke_train), "--run-dir", str(tmp_path / "ppo"), "--no-progress", "--no-report",
            "--set", f"init_checkpoint={smoke_run}", "--set", "total_updates=1", "--set", "tensorboard=false"]
    assert train_main(args) == 0
    cfg = load_config(smoke_train, [f"init_checkpoint={smoke_run}"])
    student = load_checkpoint(smoke_run / "best.pt")["model"]
    trainer = Trainer(cfg, tmp_path / "fresh", progress=False)
    assert all(torch.equal(trainer.model.state_dict()[k], student[k]) for k in student)


def test_bad_configs_and_teachers_are_clear_errors(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("run_name: x\nepochs: many\n")
    assert distill.main(["--config", str(bad), "--run-dir", str(tmp_path / "r")]) == 2
    assert "epochs: Input should be a valid integer" in capsys.readouterr().err
    bad.write_text("run_name: x\nteachr: greedy\n")
    assert distill.main(["--config", str(bad), "--run-dir", str(tmp_path / "r")]) == 2
    assert "teachr: unknown key; did you mean teacher?" in capsys.readouterr().err
    assert distill.main(["--config", str(SMOKE), "--run-dir", str(tmp_path / "r"), "--set", "teacher=grandmaster"]) == 2
    assert "grandmaster" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()  # nothing was played


def test_report_only_evaluates_the_saved_student(smoke_run, tmp_path, capsys):
    copy = tmp_path / "shipped"
    copy.mkdir()
    (copy / "best.pt").write_bytes((smoke_run / "best.pt").read_bytes())
    assert distill.main(["--config", str(SMOKE), "--run-dir", str(copy), "--report-only", "--set", "eval.opponents=[greedy]"]) == 0
    assert "one distill_smoke/best seat against 1 x greedy" in capsys.readouterr().out
    assert (copy / "report" / "greedy_2p" / "results.json").is_file() and not (copy / "data").exists()
    assert distill.main(["--config", str(SMOKE), "--run-dir", str(tmp_path / "none"), "--report-only"]) == 2
    assert "none' does not exist" in capsys.readouterr().err
