"""What training runs write stays out of ``git status``; the shipped policies stay tracked."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def ignored(path: str) -> bool:
    """Return whether git's ignore rules (not the index) exclude ``path``."""
    run = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode in (0, 1), run.stderr
    return run.returncode == 0


@pytest.mark.parametrize("path", [
    "checkpoints/default/latest.pt", "checkpoints/default/best.pt", "checkpoints/default/snapshots/update_000020.pt",
    "checkpoints/default/tb/events.out.tfevents.1", "checkpoints/default/report/summary.txt",
    "checkpoints/sb3_maskable_ppo/model.zip", "checkpoints/sb3_maskable_ppo/config.yaml", "checkpoints/my_run/best.pt",
    "checkpoints/distill_lookahead/latest.pt", "checkpoints/distill_lookahead/round_0.pt", "checkpoints/distill_lookahead/data/round_0.npz",
    "checkpoints/selfplay_mixed/snapshots/update_000800.pt", "checkpoints/expert_iteration/gen_2/data/round_0.npz", "checkpoints/gnoming_distill/data/round_0.npz",
    "checkpoints/gnoming_finetune/latest.pt", "checkpoints/gnoming_finetune/snapshots/update_000010.pt", "checkpoints/gnoming_finetune/tb/x",
    "checkpoints/expert_iteration/gen_2/round_0.pt", "reports/eg4/results.json", "checkpoints/learner_grinch_afterstate_value/data/gen0.npz",
])
def test_run_outputs_are_ignored(path):
    assert ignored(path)


def test_every_tracked_file_under_checkpoints_is_kept():
    tracked = subprocess.run(["git", "ls-files", "checkpoints"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    assert {p.split("/")[1] for p in tracked} == {"distill_expectimax", "distill_lookahead", "expert_iteration", "gnoming_distill", "gnoming_finetune", "learner_gnoming_long", "learner_gnoming_long_106min", "learner_gnoming_long_237min", "learner_gnoming_afterstate", "learner_gnoming_league", "learner_gnoming_league_373min", "learner_grinch_afterstate_deny", "learner_grinch_afterstate_deny_4p", "learner_grinch_afterstate_distilled", "learner_grinch_afterstate_tables", "learner_grinch_afterstate_value", "learner_grinch_afterstate_value_4p", "learner_grinch_cards", "learner_grinch_long", "selfplay_mixed"}
    assert [p for p in tracked if ignored(p)] == []


def test_the_long_learner_runs_resume_point_is_tracked():
    assert not ignored("checkpoints/learner_gnoming_long/latest.pt")
    assert not ignored("checkpoints/learner_gnoming_long_106min/latest.pt")  # the shipped snapshots of the long run
    assert not ignored("checkpoints/learner_gnoming_long_237min/latest.pt")
    assert not ignored("checkpoints/learner_gnoming_league/latest.pt")  # the league branch of the long run, in pieces
    assert not ignored("checkpoints/learner_gnoming_league_373min/latest.pt")  # and its shipped snapshot
    assert not ignored("checkpoints/learner_grinch_long/latest.pt")  # the Grinch long run, in pieces like the Gnoming one
    assert not ignored("checkpoints/learner_grinch_cards/latest.pt")  # the shipped Grinch run from scratch (a finished 12-minute run)
    assert not ignored("checkpoints/learner_grinch_afterstate_value/latest.pt")  # the Grinch's afterstate values from random play
    assert not ignored("checkpoints/learner_grinch_afterstate_value_4p/latest.pt")  # and at 4 players
    assert not ignored("checkpoints/learner_grinch_afterstate_deny/latest.pt")  # and with G, the charge of a Who's discard
    assert ignored("checkpoints/learner_grinch_afterstate_deny/data/gen0.npz")
    assert not ignored("checkpoints/learner_grinch_afterstate_deny_4p/latest.pt")  # and at 4 players
    assert ignored("checkpoints/learner_grinch_afterstate_deny_4p/data/gen3.npz")
    assert not ignored("checkpoints/learner_grinch_afterstate_distilled/latest.pt")  # the 2-player network alone, its V distilled
    assert not ignored("checkpoints/learner_grinch_afterstate_tables/latest.pt")  # one set of values for 2-6 players
    assert ignored("checkpoints/learner_grinch_afterstate_tables/data/gen3.npz")
    assert not ignored("checkpoints/learner_gnoming_afterstate/latest.pt")  # Gnoming's afterstate values from random play
    assert ignored("checkpoints/learner_gnoming_long/report/summary.json") is False  # its report is committed when it ends
    assert ignored("checkpoints/learner_other/latest.pt")
