"""End to end: a smoke training run writes checkpoints, resumes exactly, and its policy loads into an evaluation."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import training.train as train_module
from grinch_env.evaluation.evaluate import evaluate
from training.checkpoint import load_agent, load_checkpoint
from training.config import load_config
from training.train import Trainer, main

SMOKE = Path(__file__).resolve().parents[1] / "configs" / "smoke.yaml"


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("runs") / "smoke"
    assert main(["--config", str(SMOKE), "--run-dir", str(run_dir), "--no-progress"]) == 0
    return run_dir


def test_smoke_run_writes_checkpoints_config_logs_and_report(smoke_run, capsys):
    for name in ("latest.pt", "best.pt", "config.yaml", "report/summary.json", "report/summary.txt", "report/greedy_2p/results.json"):
        assert (smoke_run / name).is_file(), name
    assert list((smoke_run / "tb").glob("events.out.tfevents.*"))
    ckpt = load_checkpoint(smoke_run / "latest.pt")
    assert (ckpt["update"], ckpt["env_steps"]) == (4, 4 * 4 * 108)  # 4 updates x 4 games x the 3-player game's 108 steps
    assert (ckpt["obs_size"], ckpt["num_actions"], ckpt["env_version"]) == (1337, 62, "grinch_grow_your_heart_v0")
    assert ckpt["config"]["run_name"] == "smoke" and ckpt["optimizer"] is not None
    assert set(ckpt["rng"]) == {"python", "numpy", "torch"}
    assert load_checkpoint(smoke_run / "best.pt")["optimizer"] is None  # best.pt is for playing, latest.pt for resuming


def test_resume_continues_from_latest(smoke_run, tmp_path):
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    for name in ("latest.pt", "config.yaml"):
        (resumed / name).write_bytes((smoke_run / name).read_bytes())
    (resumed / "snapshots").mkdir()
    for snap in (smoke_run / "snapshots").iterdir():
        (resumed / "snapshots" / snap.name).write_bytes(snap.read_bytes())
    assert main(["--resume", str(resumed), "--set", "total_updates=6", "--no-progress", "--no-report"]) == 0
    assert load_checkpoint(resumed / "latest.pt")["update"] == 6


def test_report_only_on_a_run_that_holds_only_best_pt(smoke_run, tmp_path):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "best.pt").write_bytes((smoke_run / "best.pt").read_bytes())
    assert main(["--resume", str(shipped), "--report-only", "--set", "eval.final_games=2", "--set", "eval.final_opponents=[random]"]) == 0
    summary = json.loads((shipped / "report" / "summary.json").read_text())
    assert list(summary) == ["random@2p"] and summary["random@2p"]["games"] == 2
    assert set(summary["random@2p"]["roles"]) == {"game_as_first_grinch", "game_as_first_who", "round_as_grinch", "round_as_who"}


def test_n_updates_equal_half_then_resume_half_exactly(tmp_path):
    cfg = load_config(SMOKE, ["tensorboard=false"])  # periodic evaluation stays on: it must not disturb the random streams
    straight = Trainer(cfg, tmp_path / "a", progress=False)
    straight.train()
    first = Trainer(cfg, tmp_path / "b", progress=False)
    first.train(stop_after=2)
    second = Trainer(cfg, tmp_path / "b", progress=False)
    second.load(tmp_path / "b" / "latest.pt")
    assert second.update == 2
    second.train()
    a, b = straight.model.state_dict(), second.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert straight.env_steps == second.env_steps and straight.learner_steps == second.learner_steps


def test_trained_policy_loads_into_an_evaluation(smoke_run):
    result = evaluate([str(smoke_run), "random"], num_players=2, num_games=4, seed=0)
    assert result.num_games == 4 and len(result.per_agent) == 2
    agent = load_agent(smoke_run / "best.pt")
    obs = np.zeros(1337, np.float32)
    mask = np.zeros(62, np.int8)
    mask[[55, 60]] = 1
    assert agent.act(obs, mask) in (55, 60)
    sampler = load_agent(smoke_run, seed=3, deterministic=False)
    picks = sampler.act_batch(np.zeros((50, 1337), np.float32), np.broadcast_to(mask, (50, 62)))
    assert set(picks.tolist()) <= {55, 60}


def test_ctrl_c_saves_latest_and_exits(tmp_path, monkeypatch):
    calls = {"n": 0}
    real = train_module.collect_rollout

    def interrupt_on_second(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(train_module, "collect_rollout", interrupt_on_second)
    code = main(["--config", str(SMOKE), "--run-dir", str(tmp_path), "--no-progress", "--set", "tensorboard=false"])
    assert code == 130
    assert load_checkpoint(tmp_path / "latest.pt")["update"] == 1
    assert not list(tmp_path.glob(".*.tmp"))  # the atomic write left no temporary file


def test_missing_and_incompatible_checkpoints_are_clear_errors(smoke_run, tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_agent(tmp_path / "nothing.pt")
    with pytest.raises(FileNotFoundError, match="neither best.pt nor latest.pt"):
        load_agent(tmp_path)
    ckpt = torch.load(smoke_run / "best.pt", weights_only=True)
    ckpt["obs_size"] = 1000
    torch.save(ckpt, tmp_path / "old.pt")
    with pytest.raises(ValueError, match="observation size 1000"):
        load_agent(tmp_path / "old.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a readable torch checkpoint"):
        load_agent(tmp_path / "junk.pt")


def test_cli_reports_a_bad_config_key(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("run_name: x\nnum_envs: four\n")
    assert main(["--config", str(bad), "--run-dir", str(tmp_path / "run")]) == 2
    assert "num_envs: Input should be a valid integer" in capsys.readouterr().err


def test_init_checkpoint_starts_from_its_weights_with_fresh_counters(smoke_run, tmp_path):
    cfg = load_config(SMOKE, ["tensorboard=false", f"init_checkpoint={smoke_run / 'best.pt'}"])
    trainer = Trainer(cfg, tmp_path / "warm", progress=False)
    stored = load_checkpoint(smoke_run / "best.pt")["model"]
    assert all(torch.equal(trainer.model.state_dict()[k], stored[k]) for k in stored)
    assert (trainer.update, trainer.env_steps) == (0, 0)
    trainer.train(stop_after=1)
    assert load_checkpoint(tmp_path / "warm" / "latest.pt")["config"]["init_checkpoint"] == str(smoke_run / "best.pt")


def test_init_checkpoint_with_another_network_is_refused(smoke_run, tmp_path):
    cfg = load_config(SMOKE, [f"init_checkpoint={smoke_run}", "model.hidden_sizes=[16]"])
    with pytest.raises(ValueError, match=r"hidden_sizes \[32\].*the config's network has hidden_sizes \[16\]"):
        Trainer(cfg, tmp_path / "x", progress=False)
    cfg = load_config(SMOKE, [f"init_checkpoint={tmp_path / 'missing.pt'}"])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        Trainer(cfg, tmp_path / "y", progress=False)


def test_a_lookahead_network_trains_resumes_and_plays(tmp_path):
    run_dir = tmp_path / "lookahead"
    overrides = ["--set", "model.draw_lookahead=true", "--set", "total_updates=2", "--no-progress", "--no-report"]
    assert main(["--config", str(SMOKE), "--run-dir", str(run_dir), *overrides]) == 0
    ckpt = load_checkpoint(run_dir / "latest.pt")
    assert ckpt["draw_lookahead"] is True and ckpt["update"] == 2
    assert main(["--resume", str(run_dir), "--set", "total_updates=3", "--no-progress", "--no-report"]) == 0
    assert load_checkpoint(run_dir / "latest.pt")["update"] == 3
    agent = load_agent(run_dir)
    assert agent.net.draw_lookahead is True
    result = evaluate([str(run_dir), "random"], num_players=2, num_games=2, seed=0)
    assert result.num_games == 2


def test_resume_of_a_complete_run_says_so_and_changes_nothing(smoke_run, tmp_path, capsys):
    done = tmp_path / "done"
    shutil.copytree(smoke_run, done)
    before = {p: p.stat().st_mtime_ns for p in done.rglob("*")}
    assert main(["--resume", str(done), "--no-progress"]) == 0
    assert capsys.readouterr().out == (
        f"run {str(done)!r} is complete: 4 of 4 updates done, nothing to train.\n"
        f"To train it further, raise total_updates: python -m training.train --resume {done} --set total_updates=8\n"
        f"To write its evaluation report again: python -m training.train --resume {done} --report-only\n"
    )
    assert {p: p.stat().st_mtime_ns for p in done.rglob("*")} == before  # no latest.pt rewritten, no report, no logs


def test_resume_of_a_weights_only_run_says_why_and_what_to_do(smoke_run, tmp_path, capsys):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "best.pt").write_bytes((smoke_run / "best.pt").read_bytes())
    advice = (": it keeps the weights only (no optimizer or random state), so it cannot be resumed. To train on from its weights, "
              f"start a new run whose config sets init_checkpoint: {shipped} and the same model section (as configs/selfplay_finetune.yaml "
              f"does for checkpoints/distill_expectimax), e.g. python -m training.train --config CONFIG.yaml --set init_checkpoint={shipped} "
              "--set run_name=NEW_NAME\n")
    assert main(["--resume", str(shipped)]) == 2
    assert capsys.readouterr().err == f"error: run directory {str(shipped)!r} holds best.pt but no latest.pt" + advice
    assert main(["--resume", str(shipped / "best.pt")]) == 2
    assert capsys.readouterr().err == f"error: {str(shipped / 'best.pt')!r} is a weights-only checkpoint" + advice
    assert main(["--resume", str(tmp_path / "empty")]) == 2
    assert capsys.readouterr().err == f"error: --resume {str(tmp_path / 'empty')!r}: no such run directory or checkpoint\n"
    (tmp_path / "empty").mkdir()
    assert main(["--resume", str(tmp_path / "empty")]) == 2
    assert capsys.readouterr().err == (f"error: run directory {str(tmp_path / 'empty')!r} holds no latest.pt: there is nothing to resume "
                                       "(start the run with --config, without --resume)\n")
    assert list((tmp_path / "empty").iterdir()) == [] and sorted(p.name for p in shipped.iterdir()) == ["best.pt"]


def test_resume_of_the_shipped_distilled_policy_is_refused_before_its_config_is_read(capsys):
    shipped = Path(__file__).resolve().parents[1] / "checkpoints" / "distill_lookahead"
    assert main(["--resume", str(shipped)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: run directory {str(shipped)!r} holds best.pt but no latest.pt: it keeps the weights only")
