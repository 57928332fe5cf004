"""Fault injection: kill training runs at random points, resume them, and compare with the uninterrupted run byte for byte.

    OMP_NUM_THREADS=1 nice python benchmarks/fault_injection.py --points-per-signal 20 --out docs/results/fault_injection.json

For every config family the shipped configs cover (self-play with an opponent
pool of snapshots, mixed table sizes, Gnoming, distillation with DAgger rounds,
expert iteration, Ray workers), shrunk with ``--set`` so that a run takes
seconds, the harness

1. runs the command once without interruption (the reference) and times it;
2. for each kill point, starts the same command in a fresh run directory,
   picks a random stretch of it (start to first checkpoint, or one checkpoint
   to the next, as the reference's progress marks show) and sends SIGKILL,
   SIGTERM or SIGINT at a random instant within it, then resumes it (``python -m training.train
   --resume RUN_DIR`` for PPO, the same command again for distillation and
   expert iteration, which pick up their checkpoints) until it completes;
3. compares the final state with the reference: every tensor of the weights
   and of the optimiser state (dtype, shape and bytes), the counters, the
   opponent pool (names and snapshot weights) and the random states; any
   difference is a mismatch.

It also corrupts copies of finished run directories (a flipped byte at three
random offsets, a truncation to half and to zero bytes, for each kind of file a
run writes: resume state, ``latest.pt``, opponent snapshot, manifest,
``best.pt``, a distillation data round, a round checkpoint) and checks that
loading each one either reports the named file (falling back to the previous
checkpoint or refusing with an error) or, where the flipped byte changed nothing
that is read, loads identical contents; "undetected" counts the rest.

Signal points: a point whose signal arrives before the trainer installed its
handlers (during the imports) or after the run finished is still resumed and
compared, and is counted separately in the summary.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from training.checkpoint import CheckpointError, committed_checkpoints, load_checkpoint, load_latest  # noqa: E402

SIGNALS = {"SIGKILL": signal.SIGKILL, "SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT}
GRACEFUL = {signal.SIGTERM: 143, signal.SIGINT: 130}


@dataclass
class Family:
    """One config family: the command's module, its shipped config and the ``--set`` overrides that make it tiny."""

    name: str
    module: str
    config: str
    sets: list[str] = field(default_factory=list)

    def command(self, run_dir: Path) -> list[str]:
        sets = [arg for s in self.sets for arg in ("--set", s)]
        return [sys.executable, "-m", self.module, "--config", str(ROOT / self.config), *sets, "--run-dir", str(run_dir), "--no-progress", "--no-report"]

    def resume_command(self, run_dir: Path) -> list[str]:
        """Return what a user runs after an interruption: PPO resumes its run directory; distillation and expert iteration run again."""
        if self.module == "training.train" and committed_checkpoints(run_dir):
            return [sys.executable, "-m", "training.train", "--resume", str(run_dir), "--no-progress", "--no-report"]
        return self.command(run_dir)


_TINY_PPO = ["tensorboard=false", "eval.final_games=0"]
FAMILIES = [
    Family("selfplay_snapshots", "training.train", "configs/smoke.yaml",
           [*_TINY_PPO, "total_updates=10", "save_every=3", "selfplay.snapshot_every=2", "selfplay.pool_size=2", "eval.every=4", "eval.games=2"]),
    Family("selfplay_mixed", "training.train", "configs/selfplay_mixed.yaml",
           [*_TINY_PPO, "num_envs=5", "total_updates=6", "save_every=2", "selfplay.snapshot_every=2", "selfplay.pool_size=2",
            "model.hidden_sizes=[32,32]", "ppo.update_epochs=1", "ppo.minibatch_size=512", "eval.every=0"]),
    Family("gnoming_finetune", "training.train", "configs/gnoming_finetune.yaml",
           [*_TINY_PPO, "num_players=[3,5]", "num_envs=2", "total_updates=3", "save_every=1", "selfplay.snapshot_every=1", "selfplay.pool_size=2",
            "ppo.update_epochs=1", "ppo.minibatch_size=512", "eval.every=0"]),
    Family("distill_dagger", "training.distill", "configs/distill_smoke.yaml", ["rounds=3", "games_per_round=4", "eval.games=0"]),
    Family("expert_iteration", "training.expert_iteration", "configs/expert_iteration_smoke.yaml", ["eval.games=0"]),
    Family("ray_workers", "training.train", "configs/smoke_ray.yaml",
           [*_TINY_PPO, "total_updates=6", "save_every=2", "selfplay.snapshot_every=2", "eval.every=3", "eval.games=2"]),
]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    return env


def run_to_end(cmd: list[str], timeout: float = 900) -> tuple[int, str, float]:
    """Run ``cmd`` to its end; return (exit status, output, seconds)."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - t0


def _progress(run_dir: Path, seen: set[str]) -> int:
    """Return how far a run has got: 0 once it wrote its config.yaml, then one more per checkpoint it committed (manifests in any subdirectory)."""
    if run_dir.is_dir():
        seen.update(str(p) for p in run_dir.rglob("manifest_*.json"))
    return (1 if (run_dir / "config.yaml").exists() else 0) + len(seen) - 1


def run_watching(cmd: list[str], run_dir: Path, timeout: float = 900) -> tuple[int, str, list[float]]:
    """Run ``cmd`` to its end; return (exit status, output, seconds at which progress 0, 1, 2, ... was reached)."""
    seen: set[str] = set()
    times: list[float] = []
    with tempfile.TemporaryFile("w+") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=out, stderr=subprocess.STDOUT, text=True)
        while proc.poll() is None:
            while _progress(run_dir, seen) >= len(times):
                times.append(time.perf_counter() - t0)
            time.sleep(0.02)
        end = time.perf_counter() - t0
        while _progress(run_dir, seen) >= len(times):  # what the last moments committed
            times.append(end)
        out.seek(0)
        return proc.returncode, out.read(), times + [end]


def run_and_signal_at(cmd: list[str], run_dir: Path, progress: int, delay: float, signum: int, timeout: float = 900) -> tuple[int, str, bool]:
    """Start ``cmd``; once it reached ``progress`` (see :func:`_progress`), wait ``delay`` seconds and send ``signum``.

    Return (exit status, output, whether it was still running when signalled).
    """
    seen: set[str] = set()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=out, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + timeout
        while proc.poll() is None and _progress(run_dir, seen) < progress and time.monotonic() < deadline:
            time.sleep(0.02)
        try:
            proc.wait(timeout=delay)
            running = False
        except subprocess.TimeoutExpired:
            running = True
            proc.send_signal(signum)
        rc = proc.wait(timeout=timeout)
        out.seek(0)
        return rc, out.read(), running


def run_and_signal_after_checkpoint(cmd: list[str], run_dir: Path, seq: int, signum: int, timeout: float = 900) -> tuple[int, str]:
    """Start ``cmd``, send ``signum`` as soon as its checkpoint number ``seq`` is committed; return (exit status, output)."""
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=out, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + timeout
        while not (run_dir / f"manifest_{seq:06d}.json").exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"{cmd} ended or timed out before checkpoint {seq}")
            time.sleep(0.02)
        proc.send_signal(signum)
        rc = proc.wait(timeout=timeout)
        out.seek(0)
        return rc, out.read()


def resume_to_end(family: Family, run_dir: Path, attempts: int = 3) -> tuple[int, str]:
    """Resume (or rerun) until the run completes; return the last exit status and every attempt's output."""
    logs = []
    for _ in range(attempts):
        rc, out, _ = run_to_end(family.resume_command(run_dir))
        logs.append(out)
        if rc == 0:
            break
    return rc, "\n".join(logs)


# ------------------------------------------------------------------ final states
def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k in sorted(value, key=str):
            _flatten(f"{prefix}.{k}", value[k], out)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _flatten(f"{prefix}[{i}]", v, out)
    else:
        out[prefix] = value


def final_state(family: Family, run_dir: Path) -> dict[str, Any]:
    """Return every value that must match between an interrupted-and-resumed run and the reference, flattened by key."""
    out: dict[str, Any] = {}
    if family.module == "training.train":
        state, info = load_latest(run_dir, report=lambda _: None)
        for key in ("model", "optimizer", "update", "env_steps", "learner_steps", "best_metric", "pool", "rng", "config"):
            _flatten(key, state[key], out)
        for name in state["pool"]:
            _flatten(f"snapshot.{name}", torch.load(run_dir / "snapshots" / f"{name}.pt", map_location="cpu", weights_only=True), out)
    elif family.module == "training.distill":
        for path in sorted(run_dir.glob("round_*.pt")) + [run_dir / "best.pt"]:
            _flatten(path.name, load_checkpoint(path)["model"], out)
        state, _ = load_latest(run_dir, report=lambda _: None)
        _flatten("rng", state["rng"], out)
    else:
        for gen in sorted(run_dir.glob("gen_*")):
            for path in sorted(gen.glob("round_*.pt")) + [gen / "best.pt"]:
                _flatten(f"{gen.name}/{path.name}", load_checkpoint(path)["model"], out)
    out.pop("config.run_name", None)
    out.pop("config.checkpoint_dir", None)
    return out


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Return the keys whose values differ (tensors: dtype, shape and bytes)."""
    diff = sorted(set(a) ^ set(b))
    for key in sorted(set(a) & set(b)):
        x, y = a[key], b[key]
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            same = (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.dtype == y.dtype and x.shape == y.shape
                    and x.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() == y.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
        else:
            same = x == y or (isinstance(x, float) and isinstance(y, float) and np.isnan(x) and np.isnan(y))
        if not same:
            diff.append(key)
    return diff


# ------------------------------------------------------------------ kill points
def kill_points(families: list[Family], per_signal: int, seed: int, work: Path, log: Any = None) -> dict[str, Any]:
    """Run the references, then ``per_signal`` kill points per signal spread over ``families``; return the records."""
    log = log or (lambda line: print(line, flush=True))
    rng = np.random.default_rng(seed)
    refs: dict[str, dict[str, Any]] = {}
    for fam in families:
        run_dir = work / fam.name / "reference"
        shutil.rmtree(run_dir, ignore_errors=True)
        rc, out, times = run_watching(fam.command(run_dir), run_dir)
        if rc != 0:
            raise RuntimeError(f"reference run of {fam.name} failed ({rc}):\n{out[-3000:]}")
        refs[fam.name] = {"state": final_state(fam, run_dir), "seconds": times[-1], "times": times, "dir": run_dir}
        log(f"reference {fam.name}: {times[-1]:.1f} s, {len(refs[fam.name]['state'])} values compared, progress marks at "
            + ", ".join(f"{t:.1f}" for t in times[:-1]) + " s")
    records = []
    for sig_name, signum in SIGNALS.items():
        for i in range(per_signal):
            fam = families[i % len(families)]
            ref = refs[fam.name]
            # A random stretch of the run: from its start (progress 0: config written) or one of its checkpoints to the next
            # mark, and a random instant within it, timed as the reference took it (so the signal lands inside the run,
            # however loaded the machine is: a kill timed from the process start mostly landed after its end).
            times = ref["times"]
            stretch = int(rng.integers(len(times) - 1))
            delay = float(rng.uniform(0.0, 1.0) * (times[stretch + 1] - times[stretch]))
            run_dir = work / fam.name / f"{sig_name}_{i:02d}"
            shutil.rmtree(run_dir, ignore_errors=True)
            rc, out, running = run_and_signal_at(fam.command(run_dir), run_dir, stretch, delay, signum)
            graceful = running and signum in GRACEFUL and rc == GRACEFUL[signum]
            said_how = ("resume" in out or "start the run again with the same command" in out) if graceful else None  # before the first checkpoint there is nothing to resume
            stopped = [line for line in out.splitlines() if line.startswith(("SIGINT", "SIGTERM", "interrupted"))]
            rrc, rout = resume_to_end(fam, run_dir)
            diff = differences(final_state(fam, run_dir), ref["state"]) if rrc == 0 else ["<resume failed>"]
            record = {"family": fam.name, "signal": sig_name, "after_progress": stretch, "delay_s": round(delay, 2), "signalled_while_running": running, "exit": rc,
                      "graceful_exit": graceful, "printed_resume_command": said_how, "message": stopped[-1] if stopped else "",
                      "resume_exit": rrc, "mismatches": len(diff), "differing": diff[:10]}
            if rrc != 0:
                record["resume_output"] = rout[-2000:]
            records.append(record)
            log(f"{sig_name} #{i} {fam.name}: {delay:.1f} s after progress mark {stretch}, exit {rc}, resumed {rrc}, {len(diff)} mismatches"
                + (f" {diff[:5]}" if diff else "") + (f"  [{stopped[-1][:110]}]" if stopped else ""))
            shutil.rmtree(run_dir, ignore_errors=True)
    return {"references": {k: {"seconds": round(v["seconds"], 1), "values": len(v["state"]), "progress_marks_s": [round(t, 1) for t in v["times"][:-1]]}
                           for k, v in refs.items()}, "points": records,
            "reference_dirs": {k: str(v["dir"]) for k, v in refs.items()}}


# ------------------------------------------------------------------ corruption
def _corruptions(size: int, rng: np.random.Generator) -> list[tuple[str, Any]]:
    offsets = sorted({int(x) for x in rng.integers(0, max(size, 1), size=3)})
    out: list[tuple[str, Any]] = [(f"flip byte {o} of {size}", ("flip", o, int(rng.integers(1, 256)))) for o in offsets]
    return out + [(f"truncate to {size // 2} of {size} bytes", ("truncate", size // 2)), ("truncate to 0 bytes", ("truncate", 0))]


def _apply(path: Path, how: tuple) -> None:
    data = bytearray(path.read_bytes())
    if how[0] == "flip":
        data[how[1]] ^= how[2]
    else:
        del data[how[1]:]
    path.unlink()  # a new inode: latest.pt and its state file are hard links, corrupted one at a time
    path.write_bytes(bytes(data))


def _targets(run_dir: Path, module: str) -> list[tuple[str, str]]:
    """Return (kind, relative path) of one file of each kind the run wrote."""
    infos = committed_checkpoints(run_dir)
    newest = infos[0]
    out = [("resume state", newest["state"]), ("manifest", f"manifest_{newest['seq']:06d}.json"), ("latest.pt", "latest.pt"), ("best.pt", "best.pt")]
    snaps = [rel for rel in newest["files"] if rel.startswith("snapshots/")]
    if snaps:
        out.append(("opponent snapshot", snaps[-1]))
    data = [rel for rel in newest["files"] if rel.startswith("data/")]
    if data:
        out += [("data round", data[-1]), ("round checkpoint", "round_0.pt")]
    return out


def _probe(run_dir: Path, rel: str, module: str) -> tuple[str, str]:
    """Load what a user would after the corruption of ``rel``; return (verdict, message)."""
    name = Path(rel).name
    lines: list[str] = []
    try:
        if rel in ("best.pt", "latest.pt") or rel.startswith("round_"):
            load_checkpoint(run_dir / rel)
            return "loaded", ""
        load_latest(run_dir, report=lines.append)
    except (CheckpointError, ValueError) as err:
        return ("detected" if name in str(err) else "error without the file's name"), str(err)
    except Exception as err:  # noqa: BLE001 - a raw traceback is what the harness looks for
        return "raw exception", f"{type(err).__name__}: {err}"
    message = " ".join(lines)
    return ("detected" if name in message and "skipped" in message else "loaded"), message


def corruption_checks(reference_dirs: dict[str, str], seed: int, work: Path, log: Any = None) -> list[dict[str, Any]]:
    """Corrupt copies of the reference run directories (see the module docstring); return one record per corruption."""
    log = log or (lambda line: print(line, flush=True))
    rng = np.random.default_rng(seed + 1)
    records = []
    for fam_name, module in (("selfplay_snapshots", "training.train"), ("distill_dagger", "training.distill")):
        if fam_name not in reference_dirs:
            continue
        ref = Path(reference_dirs[fam_name])
        for kind, rel in _targets(ref, module):
            size = (ref / rel).stat().st_size
            for what, how in _corruptions(size, rng):
                copy = work / "corrupt" / fam_name
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(ref, copy)
                _apply(copy / rel, how)
                verdict, message = _probe(copy, rel, module)
                if verdict == "loaded":
                    # Nothing reported: harmless only if every value read is the reference's (a flipped byte the reader never uses).
                    same = _same_contents(ref, copy, rel, module)
                    verdict = "harmless (identical contents)" if same else "UNDETECTED"
                records.append({"family": fam_name, "file": rel, "kind": kind, "corruption": what, "verdict": verdict, "message": message[:300]})
                log(f"corrupt {fam_name} {kind} ({rel}), {what}: {verdict}: {message[:140]}")
        shutil.rmtree(work / "corrupt", ignore_errors=True)
    return records


def _same_contents(ref: Path, copy: Path, rel: str, module: str) -> bool:
    if rel in ("best.pt", "latest.pt") or rel.startswith("round_"):
        a, b = {}, {}
        _flatten("c", load_checkpoint(ref / rel), a)
        _flatten("c", load_checkpoint(copy / rel), b)
        return not differences(a, b)
    fam = Family("x", module, "")
    return not differences(final_state(fam, ref), final_state(fam, copy))


def summarise(result: dict[str, Any]) -> str:
    points, corrupt = result["points"], result["corruption"]
    lines = [f"kill points: {len(points)}; mismatches: {sum(p['mismatches'] > 0 for p in points)}; resumes that failed: {sum(p['resume_exit'] != 0 for p in points)}"]
    for sig in SIGNALS:
        mine = [p for p in points if p["signal"] == sig]
        running = sum(p["signalled_while_running"] for p in mine)
        line = (f"  {sig}: {len(mine)} points, {sum(p['mismatches'] > 0 for p in mine)} mismatches, {running} landed while the run was running, "
                f"{len(mine) - running} after it had finished")
        if sig != "SIGKILL":
            graceful = [p for p in mine if p["graceful_exit"]]
            line += (f"; {len(graceful)} graceful exits ({GRACEFUL[SIGNALS[sig]]}), every one printing the resume command: "
                     f"{all(p['printed_resume_command'] for p in graceful)}; {running - len(graceful)} landed outside the handled loop (imports, or the final writes after the last checkpoint)")
        lines.append(line)
    fams = sorted({p["family"] for p in points})
    lines.append("  per family: " + ", ".join(f"{f} {sum(p['family'] == f for p in points)} ({sum(p['family'] == f and p['mismatches'] > 0 for p in points)} mismatches)" for f in fams))
    verdicts: dict[str, int] = {}
    for c in corrupt:
        verdicts[c["verdict"]] = verdicts.get(c["verdict"], 0) + 1
    lines.append(f"corruptions: {len(corrupt)}; " + ", ".join(f"{v}: {n}" for v, n in sorted(verdicts.items())))
    lines.append("reference seconds: " + ", ".join(f"{k} {v['seconds']}" for k, v in result["references"].items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points-per-signal", type=int, default=20, help="kill points per signal (SIGKILL, SIGTERM, SIGINT), spread over the families")
    parser.add_argument("--families", default=",".join(f.name for f in FAMILIES), help="comma-separated family names")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill delays and the corruptions")
    parser.add_argument("--work", default=None, help="scratch directory (default: a temporary one)")
    parser.add_argument("--out", default=None, help="write every record and the summary as JSON here")
    args = parser.parse_args(argv)
    chosen = [f for f in FAMILIES if f.name in args.families.split(",")]
    unknown = set(args.families.split(",")) - {f.name for f in FAMILIES}
    if unknown:
        parser.error(f"unknown families {sorted(unknown)}; choose from {[f.name for f in FAMILIES]}")
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="fault_injection_"))
    t0 = time.perf_counter()
    result = kill_points(chosen, args.points_per_signal, args.seed, work)
    result["corruption"] = corruption_checks(result.pop("reference_dirs"), args.seed, work)
    result["seconds"] = round(time.perf_counter() - t0)
    result["summary"] = summarise(result)
    print(result["summary"])
    print(f"total {result['seconds']} s")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    bad = sum(p["mismatches"] > 0 for p in result["points"]) + sum(c["verdict"] == "UNDETECTED" or c["verdict"] == "raw exception" for c in result["corruption"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
