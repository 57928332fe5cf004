"""Fault injection: kill Ray workers of the afterstate learner mid-generation and check that the run fits the same values.

    OMP_NUM_THREADS=1 python benchmarks/fault_injection.py                 # 3 drills, about a minute on 2 cores
    OMP_NUM_THREADS=1 python benchmarks/fault_injection.py --drills 10 --games 200 --seed 7

The reference is the run in one process (:mod:`training.learner.afterstate_run`, the Grinch at 2 players by default,
shrunk so that a run takes seconds; ``--set`` changes its config).  Each drill trains the same run in a fresh
directory on ``--workers`` Ray actors while a second thread sends SIGKILL to one actor's process (a random one) at a
random instant of a random generation's play (drawn from ``--seed``); the dead actor's chunk of games is played
again by its replacement (:class:`training.distributed.RayCollector`).  Then every tensor of the drill's ``latest.pt``
``values`` is compared with the reference's, bit for bit.  A line per drill: where the kill landed, the actors
replaced, the wall seconds and ``identical`` or ``MISMATCH``; the exit status is 1 if any drill mismatched or no kill
landed.  ``--mode env`` instead uses the module's own hook (``GRINCH_DISTRIBUTED_KILL``: the actor exits on its k-th
chunk), the deterministic drill the tests run.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks.bench_distributed import same_values  # noqa: E402
from training.distributed import KILL_VARIABLE, init_ray, ray_available  # noqa: E402
from training.learner.afterstate_run import AfterstateRun, load_config, train  # noqa: E402


def killer(run: AfterstateRun, generation: int, delay: float, slot: int, done: threading.Event, landed: list[str]) -> None:
    """Wait until ``run`` plays ``generation`` on started actors, then SIGKILL actor ``slot``'s process after ``delay`` s."""
    while not done.is_set():
        workers = run.workers
        collector = None if workers is None else workers.collector
        if collector is not None and collector.actors and run.generation == generation:
            time.sleep(delay)
            if run.generation != generation or done.is_set():  # the generation ended first: no kill this drill
                return
            try:
                pid = collector.pids()[slot]
                os.kill(pid, signal.SIGKILL)
                landed.append(f"generation {generation}, actor {slot} (pid {pid}) after {delay:.2f} s")
            except Exception as exc:  # a replaced or closing actor: report it, the drill goes on
                landed.append(f"no kill ({type(exc).__name__})")
            return
        time.sleep(0.01)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--drills", type=int, default=3)
    p.add_argument("--games", type=int, default=120, help="games per generation")
    p.add_argument("--generations", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0, help="draws the kills (generation, actor, instant)")
    p.add_argument("--mode", choices=["sigkill", "env"], default="sigkill")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="more afterstate config overrides")
    args = p.parse_args(argv)
    if not ray_available():
        print("ray is not installed: pip install -e '.[ray]'", file=sys.stderr)
        return 2
    base = [f"games_per_generation={args.games}", f"generations={args.generations}", "value.steps=100", "value.width=32",
            "eval_games=0", "final_games=0", *args.set]
    if not any(s.startswith("game=gnoming") for s in args.set):
        base += ["later.steps=50", "later.width=8"]
    rng = np.random.default_rng(args.seed)
    bad = 0
    init_ray("local")
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        reference = train(AfterstateRun(load_config(None, [*base, f"checkpoint_dir={tmp}", "run_name=reference"])), quiet=True)
        ref_seconds = time.perf_counter() - start
        print(f"reference (one process): {ref_seconds:.2f} s")
        per_generation = ref_seconds / args.generations
        for d in range(args.drills):
            cfg = load_config(None, [*base, f"checkpoint_dir={tmp}", f"run_name=drill{d}", "backend=ray", f"workers={args.workers}"])
            run = AfterstateRun(cfg)
            generation, slot = int(rng.integers(args.generations)), int(rng.integers(args.workers))
            landed: list[str] = []
            done = threading.Event()
            thread = None
            if args.mode == "env":
                k = int(rng.integers(1, 3))
                os.environ[KILL_VARIABLE] = f"{slot}:{k}"
                landed.append(f"actor {slot} exits on its chunk {k}")
            else:
                os.environ.pop(KILL_VARIABLE, None)
                delay = float(rng.uniform(0.1, 0.6)) * per_generation
                thread = threading.Thread(target=killer, args=(run, generation, delay, slot, done, landed), daemon=True)
                thread.start()
            start = time.perf_counter()
            try:
                train(run, quiet=True)
            finally:
                done.set()
                os.environ.pop(KILL_VARIABLE, None)
                if thread is not None:
                    thread.join()
            seconds = time.perf_counter() - start
            same = same_values(reference.cfg.run_dir, run.cfg.run_dir)
            bad += (not same) or run.worker_replacements == 0
            where = landed[0] if landed else "no kill (the generation ended first)"
            print(f"drill {d}: {where}; replaced {run.worker_replacements}; {seconds:.2f} s; {'identical' if same else 'MISMATCH'}", flush=True)
    import ray

    ray.shutdown()
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
