"""Crash-consistent training: a run killed or signalled at any point resumes to the uninterrupted run's weights, bit for bit.

The kills here are in-process and exact (a ``BaseException`` nothing catches, as SIGKILL leaves a run; real
SIGINT / SIGTERM sent to this process mid-update); tests/test_crash_fault_injection.py kills real processes.
"""

import os
import signal
from pathlib import Path

import pytest
import torch

import training.checkpoint as checkpoint
import training.train as train_module
from training.checkpoint import CheckpointError, committed_checkpoints, load_checkpoint, load_latest, save_checkpoint
from training.train import Trainer, main

SMOKE = Path(__file__).resolve().parents[1] / "configs" / "smoke.yaml"
# The issue's window, shrunk: a pool of 2, a snapshot every 2 updates, a save every 3: update 8's snapshot drops update 4's
# while latest.pt (update 6's) still names it; on main the file was deleted there and then.
ISSUE = ["total_updates=8", "save_every=3", "selfplay.snapshot_every=2", "tensorboard=false", "eval.every=0", "eval.final_games=0"]
SHORT = ["total_updates=6", "save_every=2", "selfplay.snapshot_every=1", "tensorboard=false", "eval.every=3", "eval.games=2", "eval.final_games=0"]


class Killed(BaseException):
    """What SIGKILL leaves: the process stops between two instructions, nothing runs after."""


def kill_after_update(monkeypatch, n):
    real = Trainer._one_update

    def one_update(self, bar):
        real(self, bar)
        if self.update == n:
            raise Killed

    monkeypatch.setattr(Trainer, "_one_update", one_update)


def flat_state(state):
    """Return every tensor and value of a resume state that must match (weights, optimizer, counters, pool, random streams)."""
    out = {}

    def walk(prefix, value):
        if isinstance(value, dict):
            for k in value:
                walk(f"{prefix}.{k}", value[k])
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(f"{prefix}[{i}]", v)
        else:
            out[prefix] = value

    for key in ("model", "optimizer", "update", "env_steps", "learner_steps", "best_metric", "pool", "rng"):
        walk(key, state[key])
    return out


def assert_same(a, b):
    fa, fb = flat_state(a), flat_state(b)
    assert fa.keys() == fb.keys()
    differ = [k for k in fa if not (torch.equal(fa[k], fb[k]) if isinstance(fa[k], torch.Tensor) else fa[k] == fb[k])]
    assert differ == []


@pytest.fixture(scope="module")
def issue_reference(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("ref") / "run"
    assert main(["--config", str(SMOKE), "--run-dir", str(run_dir), "--no-progress", "--no-report", *sum((["--set", s] for s in ISSUE), [])]) == 0
    return load_latest(run_dir, report=lambda _: None)[0]


@pytest.fixture(scope="module")
def short_reference(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("ref") / "short"
    assert main(["--config", str(SMOKE), "--run-dir", str(run_dir), "--no-progress", "--no-report", *sum((["--set", s] for s in SHORT), [])]) == 0
    return run_dir


def run(run_dir, sets, *extra):
    return main(["--config", str(SMOKE), "--run-dir", str(run_dir), "--no-progress", "--no-report", *sum((["--set", s] for s in sets), []), *extra])


def test_a_kill_between_a_snapshot_and_the_save_loses_no_snapshot_and_resumes_exactly(issue_reference, tmp_path, monkeypatch, capsys):
    kill_after_update(monkeypatch, 8)  # update 8's snapshot is written and update 4's left the pool; latest.pt is update 6's
    with pytest.raises(Killed):
        run(tmp_path, ISSUE)
    monkeypatch.undo()
    # The newest checkpoint's pool still names update 4's snapshot, and the file is there.
    newest = committed_checkpoints(tmp_path)[0]
    assert newest["label"] == "update 6 of 8 (saved every 3)"
    assert sorted(f for f in newest["files"] if f.startswith("snapshots/")) == ["snapshots/update_000004.pt", "snapshots/update_000006.pt"]
    assert (tmp_path / "snapshots" / "update_000004.pt").is_file()
    assert main(["--resume", str(tmp_path), "--no-progress", "--no-report"]) == 0
    assert "warning" not in capsys.readouterr().out
    assert_same(load_latest(tmp_path, report=lambda _: None)[0], issue_reference)
    # Update 4's snapshot leaves the disk only with the last checkpoint naming it: the kept ones (updates 6 and 8) name 4, 6 and 8.
    assert sorted(p.name for p in (tmp_path / "snapshots").iterdir()) == ["update_000004.pt", "update_000006.pt", "update_000008.pt"]


@pytest.mark.parametrize("signame, code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_mid_update_finishes_it_saves_it_labelled_and_resumes_exactly(signame, code, short_reference, tmp_path, monkeypatch, capsys):
    real, calls = train_module.ppo_update, {"n": 0}

    def signal_mid_update(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:  # update 3: its rollout is in, its gradient steps not yet
            os.kill(os.getpid(), getattr(signal, signame))
        return real(*args, **kwargs)

    monkeypatch.setattr(train_module, "ppo_update", signal_mid_update)
    assert run(tmp_path, SHORT) == code
    monkeypatch.undo()
    out = capsys.readouterr()
    assert committed_checkpoints(tmp_path)[0]["label"] == f"update 3 of 6 (saved on {signame})"
    assert load_checkpoint(tmp_path / "latest.pt")["update"] == 3  # the whole of update 3, not update 2's label on a half-applied 3
    assert (f"{signame}: stopped after update 3; checkpoint {tmp_path / 'resume' / 'state_000002.pt'} (also {tmp_path / 'latest.pt'}) holds "
            f"update 3 of 6 (saved on {signame}); resume with: python -m training.train --resume {tmp_path}\n") in out.err + out.out
    assert main(["--resume", str(tmp_path), "--no-progress", "--no-report"]) == 0
    assert_same(load_latest(tmp_path, report=lambda _: None)[0], load_latest(short_reference, report=lambda _: None)[0])


def test_a_second_signal_drops_the_update_in_flight_and_the_last_checkpoint_resumes_exactly(short_reference, tmp_path, monkeypatch, capsys):
    real, calls = train_module.ppo_update, {"n": 0}

    def two_signals(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)  # raises here: update 3 is dropped before any gradient step
        return real(*args, **kwargs)

    monkeypatch.setattr(train_module, "ppo_update", two_signals)
    assert run(tmp_path, SHORT) == 143
    monkeypatch.undo()
    out = capsys.readouterr()
    assert "SIGTERM: dropped update 3 in flight (nothing of it is saved)" in out.out + out.err
    assert committed_checkpoints(tmp_path)[0]["label"] == "update 2 of 6 (saved every 2)"
    assert main(["--resume", str(tmp_path), "--no-progress", "--no-report"]) == 0
    assert_same(load_latest(tmp_path, report=lambda _: None)[0], load_latest(short_reference, report=lambda _: None)[0])


def test_the_two_newest_checkpoints_are_kept_and_nothing_else(short_reference):
    assert sorted(p.name for p in short_reference.glob("manifest_*.json")) == ["manifest_000002.json", "manifest_000003.json"]
    assert sorted(p.name for p in (short_reference / "resume").iterdir()) == ["state_000002.pt", "state_000003.pt"]
    named = {f for info in committed_checkpoints(short_reference) for f in info["files"] if f.startswith("snapshots/")}
    assert {f"snapshots/{p.name}" for p in (short_reference / "snapshots").iterdir()} == named == {
        "snapshots/update_000003.pt", "snapshots/update_000004.pt", "snapshots/update_000005.pt", "snapshots/update_000006.pt"}
    assert os.path.samefile(short_reference / "latest.pt", short_reference / "resume" / "state_000003.pt")


def test_each_file_is_fsynced_before_its_rename_and_the_directory_after(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(("fsync", os.path.realpath(f"/proc/self/fd/{fd}")))
        return real_fsync(fd)

    def replace(src, dst):
        events.append(("replace", os.path.realpath(dst)))
        return real_replace(src, dst)

    (tmp_path / "snapshots").mkdir()
    (tmp_path / "snapshots" / "a.pt").write_bytes(b"x")
    monkeypatch.setattr(checkpoint.os, "fsync", fsync)
    monkeypatch.setattr(checkpoint.os, "replace", replace)
    save_checkpoint(tmp_path, {"n": torch.ones(2)}, ["snapshots/a.pt"], label="test")
    monkeypatch.undo()
    run_dir, state, manifest = str(tmp_path.resolve()), str((tmp_path / "resume" / "state_000001.pt").resolve()), str((tmp_path / "manifest_000001.json").resolve())
    replaced = [e[1] for e in events if e[0] == "replace"]
    assert replaced == [state, manifest, str((tmp_path / "latest.pt").resolve())]
    # The state's bytes are on disk before it is renamed into place, its directory after; then the same for the manifest (the commit).
    i_state, i_manifest = events.index(("replace", state)), events.index(("replace", manifest))
    assert events[i_state - 1][0] == "fsync" and events[i_state - 1][1].startswith(str((tmp_path / "resume").resolve()) + "/.state_000001.pt.")
    assert events[i_state + 1] == ("fsync", str((tmp_path / "resume").resolve()))
    assert events[i_manifest - 1][0] == "fsync" and events[i_manifest - 1][1].startswith(run_dir + "/.manifest_000001.json.")
    assert events[i_manifest + 1] == ("fsync", run_dir)


# ---------------------------------------------------------------- corruption
def copy_run(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


def flip(path, offset=None):
    data = bytearray(path.read_bytes())
    data[len(data) // 2 if offset is None else offset] ^= 0x5A
    path.unlink()  # latest.pt is a hard link of the newest state file: corrupt this name only
    path.write_bytes(bytes(data))


def test_a_flipped_byte_in_the_newest_state_falls_back_to_the_previous_checkpoint_and_says_so(short_reference, tmp_path, capsys):
    run_dir = copy_run(short_reference, tmp_path / "run")
    flip(run_dir / "resume" / "state_000003.pt")
    lines = []
    state, info = load_latest(run_dir, report=lines.append)
    assert (state["update"], info["seq"]) == (4, 2)
    assert lines == [f"checkpoint {run_dir / 'resume' / 'state_000002.pt'} verified against manifest_000002.json: update 4 of 6 (saved every 2) "
                     "(skipped newer manifest_000003.json: resume/state_000003.pt does not match its SHA-256 in the manifest "
                     "(the file was altered or corrupted))"]
    # latest.pt (a link to the unaltered state file) is fine; the altered name is refused when loaded by itself.
    with pytest.raises(CheckpointError, match="matches none of the SHA-256 sums"):
        load_checkpoint(run_dir / "resume" / "state_000003.pt")


def test_a_truncated_snapshot_falls_back_and_when_every_checkpoint_fails_the_error_names_each_file(short_reference, tmp_path):
    run_dir = copy_run(short_reference, tmp_path / "run")
    size = {n: (short_reference / "snapshots" / f"update_00000{n}.pt").stat().st_size for n in (4, 6)}
    for n in (6, 4):
        snap = run_dir / "snapshots" / f"update_00000{n}.pt"
        snap.write_bytes(snap.read_bytes()[:100])
        if n == 6:  # named by the newest checkpoint only: the previous one (update 4) resumes
            assert load_latest(run_dir, report=lambda _: None)[0]["update"] == 4
    with pytest.raises(CheckpointError) as err:
        load_latest(run_dir, report=lambda _: None)
    assert str(err.value) == (f"no checkpoint in {str(run_dir)!r} verifies: manifest_000003.json: snapshots/update_000006.pt has 100 bytes, the manifest "
                              f"recorded {size[6]} (truncated or replaced); manifest_000002.json: snapshots/update_000004.pt has 100 bytes, "
                              f"the manifest recorded {size[4]} (truncated or replaced)")
    assert main(["--resume", str(run_dir), "--no-progress", "--no-report"]) == 2


def test_a_swapped_snapshot_and_a_garbled_manifest_are_named(short_reference, tmp_path):
    run_dir = copy_run(short_reference, tmp_path / "run")
    (run_dir / "snapshots" / "update_000006.pt").unlink()
    (run_dir / "snapshots" / "update_000006.pt").write_bytes((run_dir / "snapshots" / "update_000005.pt").read_bytes())  # same size, other weights
    lines = []
    state, _ = load_latest(run_dir, report=lines.append)
    assert state["update"] == 4 and "snapshots/update_000006.pt does not match its SHA-256 in the manifest" in lines[0]
    (run_dir / "manifest_000002.json").write_text("{not json")
    with pytest.raises(CheckpointError, match=r"manifest_000002.json: manifest manifest_000002.json is unreadable"):
        load_latest(run_dir, report=lambda _: None)


def test_a_manifest_whose_flipped_byte_hits_a_key_is_named_damaged_and_the_older_one_resumes(short_reference, tmp_path):
    # The fault-injection harness found this one: "sha256" -> "sha2%6" still parses as JSON (it was a raw KeyError).
    run_dir = copy_run(short_reference, tmp_path / "run")
    newest = max(run_dir.glob("manifest_*.json"))
    newest.write_text(newest.read_text().replace('"sha256"', '"sha2%6"', 1))
    lines = []
    state, _ = load_latest(run_dir, report=lines.append)
    assert state["update"] == 4
    assert f"manifest {newest.name} is damaged: its entry for " in lines[0] and "lacks the file's size or SHA-256" in lines[0]


def test_a_flipped_byte_in_best_pt_or_an_unmanaged_checkpoint_is_refused_not_loaded_into_nans(short_reference, tmp_path):
    run_dir = copy_run(short_reference, tmp_path / "run")
    flip(run_dir / "best.pt")
    with pytest.raises(CheckpointError, match=r"best.pt' does not match the SHA-256 in best.pt.sha256: it was altered, truncated or corrupted"):
        load_checkpoint(run_dir / "best.pt")
    # A copied latest.pt far from its manifests: the weights' own SHA-256 catches a flip inside a tensor.
    lone = tmp_path / "lone"
    lone.mkdir()
    ckpt = load_checkpoint(short_reference / "latest.pt")
    ckpt["model"] = {k: v.clone() for k, v in ckpt["model"].items()}
    next(iter(ckpt["model"].values())).view(-1)[0] += 1.0  # as a flipped bit in the stored weights
    torch.save(ckpt, lone / "latest.pt")
    with pytest.raises(CheckpointError, match="its weights do not match the SHA-256 recorded when it was written"):
        load_checkpoint(lone / "latest.pt")


def test_orphan_tmp_files_are_removed_by_the_next_save_or_load(short_reference, tmp_path):
    run_dir = copy_run(short_reference, tmp_path / "run")
    orphans = [run_dir / ".latest.pt.abc123.tmp", run_dir / "resume" / ".state_000004.pt.x.tmp", run_dir / "snapshots" / ".update_000007.pt.y.tmp"]
    for p in orphans:
        p.write_bytes(b"half a file")
    load_latest(run_dir, report=lambda _: None)
    assert [p.exists() for p in orphans] == [False, False, False]


def test_a_write_that_fails_half_way_leaves_the_previous_checkpoints_and_no_tmp_file(short_reference, tmp_path, monkeypatch):
    run_dir = copy_run(short_reference, tmp_path / "run")

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(checkpoint.os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left"):
        save_checkpoint(run_dir, {"x": 1}, label="never")
    monkeypatch.undo()
    assert [info["seq"] for info in committed_checkpoints(run_dir)] == [3, 2]
    assert not list(run_dir.rglob("*.tmp"))
    assert load_latest(run_dir, report=lambda _: None)[0]["update"] == 6
