"""What training runs write stays out of ``git status``; the two shipped champions (checkpoints/champion_grinch and
checkpoints/champion_gnoming, ``make_agent("champion")``) stay tracked, and nothing else under checkpoints/ does."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAMPIONS = ("champion_grinch", "champion_gnoming")
SHIPPED = ("latest.pt", "config.yaml", "curve.csv", "curve.png", "report/summary.json")  # what a finished champion run commits


def ignored(path: str) -> bool:
    """Return whether git's ignore rules (not the index) exclude ``path``."""
    run = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode in (0, 1), run.stderr
    return run.returncode == 0


@pytest.mark.parametrize("champion", CHAMPIONS)
@pytest.mark.parametrize("file", (*SHIPPED, "report/vs_search.txt", "report/vs_greedy_4p.txt"))
def test_the_champions_files_are_not_ignored(champion, file):
    assert not ignored(f"checkpoints/{champion}/{file}")


@pytest.mark.parametrize("champion", CHAMPIONS)
def test_every_file_on_disk_in_a_champion_is_not_ignored_but_its_data_and_tmp(champion):
    run = ROOT / "checkpoints" / champion
    files = [p.relative_to(ROOT).as_posix() for p in run.rglob("*") if p.is_file()]
    assert {"latest.pt", "config.yaml", "report/summary.json"} <= {f.split("/", 2)[2] for f in files}
    kept = [f for f in files if "/data/" not in f and not f.endswith(".tmp")]
    assert [f for f in kept if ignored(f)] == []
    assert ignored(f"checkpoints/{champion}/data/gen0.npz") and ignored(f"checkpoints/{champion}/latest.pt.tmp")


@pytest.mark.parametrize("path", [
    "checkpoints/default/latest.pt", "checkpoints/default/config.yaml", "checkpoints/default/report/summary.json",
    "checkpoints/default/snapshots/update_000020.pt", "checkpoints/default/tb/events.out.tfevents.1", "checkpoints/my_run/curve.csv",
    "checkpoints/sb3_maskable_ppo/model.zip", "checkpoints/learner_grinch_afterstate_value/latest.pt", "checkpoints/learner_gnoming_long/latest.pt",
    "checkpoints/champion_other/latest.pt", "checkpoints/champion_grinch_4p/latest.pt", "checkpoints/champion/latest.pt",
    "checkpoints/loose.pt", "checkpoints/expert_iteration/gen_2/data/round_0.npz", "reports/eg4/results.json", "runs/x/events",
])
def test_any_other_run_is_ignored(path):
    assert ignored(path)


def test_every_other_directory_on_disk_under_checkpoints_is_ignored():
    others = [p for p in (ROOT / "checkpoints").iterdir() if p.name not in CHAMPIONS]
    assert [p.name for p in others if not ignored(p.relative_to(ROOT).as_posix() + ("/" if p.is_dir() else ""))] == []
