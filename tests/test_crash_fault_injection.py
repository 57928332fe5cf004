"""Fast fault injection on real processes (benchmarks/fault_injection.py is the long version): SIGKILL, SIGTERM and SIGINT
land in a running training process right after a checkpoint; the resumed run ends on the uninterrupted run's bytes."""

import importlib.util
import signal
import sys
from pathlib import Path

import pytest

from training.checkpoint import committed_checkpoints, load_latest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("fault_injection", ROOT / "benchmarks" / "fault_injection.py")
fi = sys.modules.setdefault("fault_injection", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(fi)

SELFPLAY = fi.Family("selfplay", "training.train", "configs/smoke.yaml",
                     ["tensorboard=false", "eval.final_games=0", "total_updates=6", "save_every=2", "selfplay.snapshot_every=1", "eval.every=3", "eval.games=2"])
DISTILL = fi.Family("distill", "training.distill", "configs/distill_smoke.yaml", ["rounds=3", "games_per_round=3", "epochs=1", "eval.games=0"])


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    out = {}
    for fam in (SELFPLAY, DISTILL):
        run_dir = tmp_path_factory.mktemp("ref") / fam.name
        rc, log, _ = fi.run_to_end(fam.command(run_dir))
        assert rc == 0, log[-2000:]
        out[fam.name] = (run_dir, fi.final_state(fam, run_dir))
    return out


@pytest.mark.parametrize("signame, code", [("SIGKILL", -9), ("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_after_the_first_checkpoint_then_resume_gives_the_same_bytes(signame, code, references, tmp_path):
    run_dir = tmp_path / "run"
    rc, log = fi.run_and_signal_after_checkpoint(SELFPLAY.command(run_dir), run_dir, 1, getattr(signal, signame))
    assert rc == code, log[-2000:]
    if code > 0:  # finished the update in flight, saved it, said how to resume
        newest = committed_checkpoints(run_dir)[0]
        assert newest["label"].endswith(f"(saved on {signame})") and f"resume with: python -m training.train --resume {run_dir}" in log
    rc, log = fi.resume_to_end(SELFPLAY, run_dir)
    assert rc == 0, log[-2000:]
    assert fi.differences(fi.final_state(SELFPLAY, run_dir), references["selfplay"][1]) == []


def test_a_distillation_killed_after_a_round_reruns_to_the_same_students(references, tmp_path):
    run_dir = tmp_path / "run"
    rc, log = fi.run_and_signal_after_checkpoint(DISTILL.command(run_dir), run_dir, 1, signal.SIGKILL)
    assert rc == -9
    rc, log = fi.resume_to_end(DISTILL, run_dir)
    assert rc == 0 and "resuming" in log and "at round" in log, log[-2000:]
    assert fi.differences(fi.final_state(DISTILL, run_dir), references["distill"][1]) == []


def test_a_corrupted_data_round_is_detected_and_the_previous_round_resumes(references, tmp_path):
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(references["distill"][0], run_dir)
    data = run_dir / "data" / "round_2.npz"
    data.write_bytes(data.read_bytes()[:-10])
    lines = []
    state, info = load_latest(run_dir, report=lines.append)
    assert state["round"] == 1 and "skipped newer manifest_000003.json: data/round_2.npz has" in lines[0]


def test_a_distillation_stopped_after_saving_a_data_round_but_before_its_checkpoint_ends_on_the_same_state(references, tmp_path):
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(references["distill"][0], run_dir)
    # As a kill right after round 3's data were written leaves it: that round's checkpoint never committed.
    (run_dir / "manifest_000003.json").unlink()
    (run_dir / "resume" / "state_000003.pt").unlink()
    rc, log = fi.resume_to_end(DISTILL, run_dir)
    assert rc == 0 and "resuming" in log, log[-2000:]
    # The reused data round must not skip a draw from torch's stream that playing it made (the random states are compared too).
    assert fi.differences(fi.final_state(DISTILL, run_dir), references["distill"][1]) == []
