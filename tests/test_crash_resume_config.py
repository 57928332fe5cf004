"""Resume never ignores a config silently: a --config or an edited config.yaml that differs from the checkpoint's is refused, naming the keys, unless the user says which wins."""

import shutil
from pathlib import Path

import pytest
import yaml

from training import distill
from training.checkpoint import load_latest
from training.train import main

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
SMOKE = CONFIGS / "smoke.yaml"
SETS = ["total_updates=2", "save_every=1", "tensorboard=false", "eval.every=0", "eval.final_games=0"]


@pytest.fixture(scope="module")
def two_updates(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("cfg") / "run"
    assert main(["--config", str(SMOKE), "--run-dir", str(run_dir), "--no-progress", "--no-report", *sum((["--set", s] for s in SETS), [])]) == 0
    return run_dir


def edited_copy(src, dst, **changes):
    shutil.copytree(src, dst)
    cfg = yaml.safe_load((dst / "config.yaml").read_text())
    for dotted, value in changes.items():
        node = cfg
        *sections, key = dotted.split("__")
        for part in sections:
            node = node[part]
        node[key] = value
    (dst / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return dst


def stored(run_dir):
    return load_latest(run_dir, report=lambda _: None)[0]["config"]


def test_an_edited_config_yaml_is_refused_naming_the_keys(two_updates, tmp_path, capsys):
    run_dir = edited_copy(two_updates, tmp_path / "run", ppo__learning_rate=0.002, total_updates=3)
    before = (run_dir / "config.yaml").read_text()
    assert main(["--resume", str(run_dir), "--no-progress", "--no-report"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"checkpoint {run_dir / 'resume' / 'state_000002.pt'} verified against manifest_000002.json: update 2 of 2 (saved every 1)\n")
    assert (f"error: the config of checkpoint {run_dir / 'resume' / 'state_000002.pt'} differs from {run_dir / 'config.yaml'}:\n"
                          f"  {run_dir / 'config.yaml'}: keys ppo.learning_rate, total_updates (ppo.learning_rate: 0.002 in {run_dir / 'config.yaml'}, "
                          f"0.001 in the checkpoint; total_updates: 3 in {run_dir / 'config.yaml'}, 2 in the checkpoint)\n") in err
    assert "--override-config" in err and "--checkpoint-config" in err
    assert (run_dir / "config.yaml").read_text() == before  # neither ignored nor overwritten


def test_override_config_continues_with_the_edited_values(two_updates, tmp_path, capsys):
    run_dir = edited_copy(two_updates, tmp_path / "run", ppo__learning_rate=0.002, total_updates=3)
    assert main(["--resume", str(run_dir), "--override-config", "--no-progress", "--no-report"]) == 0
    assert "--override-config: continuing with" in capsys.readouterr().out
    cfg = stored(run_dir)
    assert (cfg["ppo"]["learning_rate"], cfg["total_updates"]) == (0.002, 3)
    assert load_latest(run_dir, report=lambda _: None)[0]["update"] == 3
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["ppo"]["learning_rate"] == 0.002


def test_checkpoint_config_keeps_the_stored_values_and_rewrites_config_yaml_saying_so(two_updates, tmp_path, capsys):
    run_dir = edited_copy(two_updates, tmp_path / "run", ppo__learning_rate=0.002)
    assert main(["--resume", str(run_dir), "--checkpoint-config", "--set", "total_updates=3", "--no-progress", "--no-report"]) == 0
    assert f"rewrote {run_dir / 'config.yaml'} from the checkpoint's config" in capsys.readouterr().out
    assert stored(run_dir)["ppo"]["learning_rate"] == 0.001
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["ppo"]["learning_rate"] == 0.001


def test_a_differing_config_given_with_resume_is_refused_and_an_equal_one_is_fine(two_updates, tmp_path, capsys):
    run_dir = tmp_path / "run"
    shutil.copytree(two_updates, run_dir)
    other = tmp_path / "other.yaml"
    data = yaml.safe_load(SMOKE.read_text())
    data.update(total_updates=2, save_every=1, tensorboard=False, num_envs=6)
    data["eval"].update(every=0, final_games=0)
    other.write_text(yaml.safe_dump(data))
    assert main(["--config", str(other), "--resume", str(run_dir), "--no-progress", "--no-report"]) == 2
    assert f"  --config {other}: keys num_envs (num_envs: 6 in --config {other}, 4 in the checkpoint)\n" in capsys.readouterr().err
    data["num_envs"] = 4
    other.write_text(yaml.safe_dump(data))
    assert main(["--config", str(other), "--resume", str(run_dir), "--no-progress", "--no-report"]) == 0  # complete: nothing differs
    assert "is complete: 2 of 2 updates done" in capsys.readouterr().out


def test_the_choice_flags_need_resume(capsys):
    with pytest.raises(SystemExit):
        main(["--config", str(SMOKE), "--override-config"])
    assert "give --resume too" in capsys.readouterr().err


def test_distillation_refuses_to_overwrite_an_edited_config_yaml(tmp_path, capsys):
    run_dir = tmp_path / "d"
    run_dir.mkdir()
    cfg = yaml.safe_load((CONFIGS / "distill_smoke.yaml").read_text())
    cfg["epochs"] = 3
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg))
    assert distill.main(["--config", str(CONFIGS / "distill_smoke.yaml"), "--run-dir", str(run_dir), "--no-progress", "--no-report"]) == 2
    err = capsys.readouterr().err
    assert f"{run_dir / 'config.yaml'} differs from the given config in keys epochs (epochs: 2 given, 3 in config.yaml)" in err
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["epochs"] == 3
