"""The one trainer (python -m training.train): both families from a config, the run directory it writes, exact resume
(also after kill -9), --set with --resume, and clear errors for bad input."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from training.config import TrainConfig, from_runner, load_config, validate
from training.train import main, stored

ROOT = Path(__file__).resolve().parents[1]
SMOKE_AFTERSTATE = str(ROOT / "configs" / "smoke_afterstate.yaml")
SMOKE_PPO = str(ROOT / "configs" / "smoke_ppo.yaml")


def _tensors(run_dir: Path) -> list[torch.Tensor]:
    """Every tensor latest.pt holds (the fitted values, or the network and optimiser), in a fixed order."""
    ckpt = torch.load(run_dir / "latest.pt", map_location="cpu", weights_only=False)
    out: list[torch.Tensor] = []

    def walk(x):
        if isinstance(x, torch.Tensor):
            out.append(x)
        elif isinstance(x, dict):
            for k in sorted(x, key=str):
                walk(x[k])
        elif isinstance(x, list | tuple):
            for v in x:
                walk(v)

    walk(ckpt.get("values") if "values" in ckpt else {"model": ckpt["model"], "optimizer": ckpt["optimizer"]})
    return out


def _same(a: Path, b: Path) -> bool:
    ta, tb = _tensors(a), _tensors(b)
    return len(ta) == len(tb) > 0 and all(torch.equal(x, y) for x, y in zip(ta, tb, strict=True))


def test_every_config_in_configs_validates_and_names_its_family():
    algos = {}
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        if "algo" not in data:  # the bridges' configs (training.train_sb3, training.train_rllib) have their own schemas
            assert "sb3" in data or "rllib" in data, path.name
            continue
        cfg = load_config(path)
        algos[path.name] = cfg.algo
        assert cfg.checkpoint.run_name == path.stem
    assert algos == {"champion_gnoming.yaml": "afterstate", "champion_grinch.yaml": "afterstate", "gnoming.yaml": "afterstate",
                     "grinch.yaml": "afterstate", "ppo_gnoming.yaml": "ppo", "ppo_grinch.yaml": "ppo",
                     "smoke_afterstate.yaml": "afterstate", "smoke_ppo.yaml": "ppo"}
    assert len(list((ROOT / "configs").glob("*"))) <= 14


def test_the_quick_start_config_trains_grinch_two_players_and_reports_against_the_strongest_baseline():
    runner = load_config(ROOT / "configs" / "grinch.yaml").runner()
    assert (runner.game, runner.num_players, runner.generations, runner.games_per_generation) == ("grinch", 2, 4, 6000)
    assert runner.final_opponents == ["random", "greedy", "expectimax"] and runner.final_games == 400 and runner.workers == 2


def test_an_afterstate_run_writes_its_directory_and_report(tmp_path, capsys):
    assert main(["--config", SMOKE_AFTERSTATE, "--set", f"checkpoint.dir={tmp_path}", "--quiet"]) == 0
    run = tmp_path / "smoke_afterstate"
    assert sorted(p.name for p in run.iterdir()) == ["config.yaml", "curve.csv", "curve.png", "data", "latest.pt", "report"]
    # config.yaml is the config the run trained under, in the schema it was given in
    written = validate(yaml.safe_load((run / "config.yaml").read_text()))
    assert written == load_config(SMOKE_AFTERSTATE, [f"checkpoint.dir={tmp_path}"])
    summary = json.loads((run / "report" / "summary.json").read_text())
    assert sorted(summary) == ["greedy", "random"] and {v["games"] for v in summary.values()} == {4}
    assert [line.split(",")[0] for line in (run / "curve.csv").read_text().splitlines()[1:]] == ["0", "1", "2"]  # random start, 2 fits
    # what the checkpoint stores reads back as the same config
    data, algo, _ = stored(run)
    assert algo == "afterstate" and validate(data).runner() == written.runner()


def test_a_ppo_run_trains_to_its_sample_budget_and_reports(tmp_path):
    assert main(["--config", SMOKE_PPO, "--set", f"checkpoint.dir={tmp_path}", "--quiet"]) == 0
    run = tmp_path / "smoke_ppo"
    ckpt = torch.load(run / "latest.pt", map_location="cpu", weights_only=False)
    assert ckpt["samples"] >= 3000 and ckpt["iteration"] == 2 and ckpt["config"]["game"] == "gnoming"
    assert sorted(json.loads((run / "report" / "summary.json").read_text())) == ["random"]
    assert validate(yaml.safe_load((run / "config.yaml").read_text())).algo == "ppo"


@pytest.mark.parametrize("config, piece", [(SMOKE_AFTERSTATE, ["--generations", "1"]), (SMOKE_PPO, ["--set", "budget.max_samples=1000"])])
def test_a_run_in_two_pieces_ends_on_the_same_weights_as_one(config, piece, tmp_path):
    assert main(["--config", config, "--set", f"checkpoint.dir={tmp_path / 'one'}", "--set", "eval.final_games=0", "--quiet"]) == 0
    two = ["--config", config, "--set", f"checkpoint.dir={tmp_path / 'two'}", "--set", "eval.final_games=0", "--quiet"]
    assert main(two + piece) == 0
    name = Path(config).stem
    assert not _same(tmp_path / "one" / name, tmp_path / "two" / name)  # the first piece stopped early
    # the second piece: --resume with the same config (and the same --set) is no change, the budget goes back to the config's
    rest = ["--resume", str(tmp_path / "two" / name), "--config", config, "--set", f"checkpoint.dir={tmp_path / 'two'}",
            "--set", "eval.final_games=0", "--quiet"]
    assert main(rest) == 0
    assert _same(tmp_path / "one" / name, tmp_path / "two" / name)


def test_resume_with_the_runs_own_config_and_a_set_is_accepted_and_a_fixed_key_is_refused(tmp_path, capsys):
    base = ["--set", f"checkpoint.dir={tmp_path}", "--set", "budget.generations=1", "--set", "eval.final_games=0", "--quiet"]
    assert main(["--config", SMOKE_AFTERSTATE, *base]) == 0
    run = str(tmp_path / "smoke_afterstate")
    # the effective config (file + --set) equals the checkpoint's: nothing to change, the run is done
    assert main(["--config", SMOKE_AFTERSTATE, "--resume", run, *base]) == 0
    capsys.readouterr()
    assert main(["--resume", run, "--set", "afterstate.temperature=2.0"]) == 2
    assert "cannot change temperature on resume" in capsys.readouterr().err
    # a larger budget goes on
    assert main(["--resume", run, "--set", "budget.generations=2", "--quiet"]) == 0
    assert len(torch.load(Path(run) / "latest.pt", weights_only=False)["values"]) == 2
    assert main(["--resume", run, "--config", SMOKE_PPO]) == 2
    assert "holds an afterstate run; --config" in capsys.readouterr().err


def _start(config: str, run_dir: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "training.train", "--config", config, "--set", f"checkpoint.dir={run_dir}",
                             "--set", "eval.final_games=0", "--quiet", *extra], env=env, cwd=ROOT)


@pytest.mark.parametrize("config, extra", [
    (SMOKE_AFTERSTATE, ["--set", "budget.generations=4", "--set", "afterstate.value.steps=400"]),
    (SMOKE_PPO, ["--set", "budget.max_samples=8000", "--set", "checkpoint.save_every_seconds=0.5"]),
])
def test_kill_9_after_a_checkpoint_then_resume_gives_the_same_weights(config, extra, tmp_path):
    name = Path(config).stem
    straight = _start(config, tmp_path / "straight", *extra)
    assert straight.wait(timeout=300) == 0
    victim = _start(config, tmp_path / "killed", *extra)
    latest = tmp_path / "killed" / name / "latest.pt"
    deadline = time.monotonic() + 120
    while not latest.exists() and time.monotonic() < deadline and victim.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)  # into the next piece of work, past the first save
    assert victim.poll() is None, "the run ended before it could be killed: make the test run longer"
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert not _same(tmp_path / "straight" / name, tmp_path / "killed" / name)
    resumed = subprocess.run([sys.executable, "-m", "training.train", "--resume", str(tmp_path / "killed" / name), "--quiet"],
                             env={**os.environ, "OMP_NUM_THREADS": "1"}, cwd=ROOT, timeout=300)
    assert resumed.returncode == 0
    assert _same(tmp_path / "straight" / name, tmp_path / "killed" / name)
    assert not list((tmp_path / "killed" / name).glob("*.tmp"))


def test_bad_input_says_what_is_wrong_and_what_is_allowed(tmp_path, capsys):
    def error(*argv: str) -> str:
        assert main(list(argv)) == 2
        return capsys.readouterr().err

    assert "config file nowhere.yaml does not exist" in error("--config", "nowhere.yaml")
    assert "no checkpoint at checkpoints/nope" in error("--resume", "checkpoints/nope")
    assert "no checkpoint at checkpoints/nope" in error("--report", "checkpoints/nope")
    assert "give --config FILE" in error()
    assert "--set takes key=value" in error("--config", SMOKE_AFTERSTATE, "--set", "budget")
    assert "afterstate.valuee" in error("--config", SMOKE_AFTERSTATE, "--set", "afterstate.valuee.width=3")
    assert "budget.max_seconds is not a setting of algo 'afterstate'" in error("--config", SMOKE_AFTERSTATE, "--set", "budget.max_seconds=9")
    assert "--generations is not a piece of an ppo run" in error("--config", SMOKE_PPO, "--set", f"checkpoint.dir={tmp_path}", "--generations", "1")
    assert "algo is 'ppo' but the config has a afterstate: section" in error("--config", SMOKE_AFTERSTATE, "--set", "algo=ppo")
    assert "num_players for Gnoming A Round must be an int in 3..7, got 2" in error("--config", SMOKE_PPO, "--set", "num_players=2")
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: grinch\nnum_players: 2\n")
    assert "no algo: key" in error("--config", str(bad))
    bad.write_text("- a list\n")
    assert "a training config is a YAML mapping, got list" in error("--config", str(bad))
    assert main(["--config", SMOKE_AFTERSTATE, "--set", f"checkpoint.dir={tmp_path}", "--set", "budget.generations=1",
                 "--set", "eval.final_games=0", "--quiet"]) == 0
    assert f"{tmp_path / 'smoke_afterstate' / 'latest.pt'} exists: go on with --resume" in error("--config", SMOKE_AFTERSTATE, "--set", f"checkpoint.dir={tmp_path}")


def test_a_checkpoints_stored_settings_map_back_to_the_config_they_came_from():
    cfg = load_config(ROOT / "configs" / "champion_grinch.yaml")
    back = validate(from_runner(cfg.runner().model_dump(), "afterstate"))
    assert back == cfg
    ppo = load_config(ROOT / "configs" / "ppo_grinch.yaml")
    again = validate(from_runner(ppo.runner().model_dump(), "ppo"))
    assert again.runner() == ppo.runner()
    assert again.checkpoint.save_every_seconds == 120.0 and ppo.checkpoint.save_every_seconds is None  # the runner's default, written out
    assert isinstance(back, TrainConfig)
