"""Benchmark: PPO training samples/s on Ray workers (1 and 2) beside the single-process trainer, in one run (needs ``.[ray]``).

Each line runs the real trainer (:class:`training.train.Trainer`, the
``configs/default.yaml`` network and PPO settings, periodic evaluation off)
for ``--updates`` timed updates after one warm-up update (worker start-up and
first-call costs are not timed), and prints:

* samples/s: env steps (every seat's decisions) per wall-clock second of whole
  updates, collection and learning together;
* collect s / update: the wall time of collecting one update's rollouts (on
  Ray: send the weights, every worker plays ``num_envs`` games, merge);
* per-worker rate: env steps per second of collection divided by the workers;
* learn s / update and the learner's rate: the PPO update on the driver, in
  learner decisions (samples in the batch) per second.

With Ray, every worker runs its own batched engine of ``num_envs`` games, so
an update with N workers trains on N times the batch.  The last lines project,
on paper, the throughput of a synchronous run at 8, 64 and 512 workers from the
measured per-worker rate and learner rate (see NOTES_ray.md).

On the project's 2-core shared machine the workers and the learner share two
cores with everything else: the 2-worker line is CPU-bound, not a measure of a
cluster.  Usage::

    python benchmarks/bench_distributed.py                 # about 2 minutes
    python benchmarks/bench_distributed.py --updates 2 --num-envs 32
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from training.config import load_config  # noqa: E402
from training.distributed import init_ray, ray_available  # noqa: E402
from training.train import Trainer  # noqa: E402


def measure(cfg, updates: int) -> dict[str, float]:
    """Return samples/s, collection and learning seconds per update, and the learner's decisions per update, after one warm-up update."""
    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(cfg, Path(tmp), progress=False)
        try:
            trainer.train(stop_after=1)  # warm-up: starts the workers
            stats = {"rollout_seconds": 0.0, "update_seconds": 0.0}
            original = trainer._log

            def log(s, bar):
                stats["rollout_seconds"] += s["rollout_seconds"]
                stats["update_seconds"] += s["update_seconds"]
                original(s, bar)

            trainer._log = log
            steps0, learner0 = trainer.env_steps, trainer.learner_steps
            t0 = time.perf_counter()
            trainer.train(stop_after=updates)
            wall = time.perf_counter() - t0
        finally:
            trainer.close()
    steps, learner = trainer.env_steps - steps0, trainer.learner_steps - learner0
    return {"samples_per_s": steps / wall, "collect_s": stats["rollout_seconds"] / updates, "learn_s": stats["update_seconds"] / updates,
            "steps_per_update": steps / updates, "learner_per_update": learner / updates}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=3, help="timed updates per line")
    parser.add_argument("--num-envs", type=int, default=64, help="games per engine (per worker on Ray)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="Ray worker counts to measure")
    args = parser.parse_args(argv)
    if not ray_available():
        print("ray is not installed: pip install -e '.[ray]'", file=sys.stderr)
        return 2
    overrides = [f"num_envs={args.num_envs}", "eval.every=0", "tensorboard=false", "save_every=100000", "total_updates=100000"]
    base = load_config(ROOT / "configs" / "default.yaml", overrides)
    init_ray("local", num_cpus=max(2, max(args.workers)), object_store_mb=256)
    print(f"PPO updates on configs/default.yaml's network, {base.table_sizes} players, {args.num_envs} games per engine, "
          f"{args.updates} timed updates per line; 2 shared cores: CPU-bound")
    print(f"{'collector':<18} {'samples/s':>10} {'collect s':>10} {'learn s':>8} {'steps/upd':>10} {'per-worker steps/s':>19} {'learner samples/s':>18}")
    rows = []
    for label, workers in [("single process", 0)] + [(f"ray, {w} worker{'s' * (w > 1)}", w) for w in args.workers]:
        cfg = base if workers == 0 else load_config(ROOT / "configs" / "default.yaml", overrides + [
            "distributed.backend=ray", f"distributed.num_workers={workers}", "distributed.address=local"])
        m = measure(cfg, args.updates)
        per_worker = m["steps_per_update"] / m["collect_s"] / max(1, workers)
        learner_rate = m["learner_per_update"] / m["learn_s"]
        rows.append((workers, m, per_worker, learner_rate))
        print(f"{label:<18} {m['samples_per_s']:>10.0f} {m['collect_s']:>10.2f} {m['learn_s']:>8.2f} {m['steps_per_update']:>10.0f} "
              f"{per_worker:>19.0f} {learner_rate:>18.0f}", flush=True)

    # On paper: a synchronous update takes (one worker's collection) + (the learner's pass over N workers' batches).
    _, m1, per_worker, learner_rate = rows[1]
    steps_per_worker = m1["steps_per_update"]
    learner_share = m1["learner_per_update"] / m1["steps_per_update"]  # learner decisions per env step (seats not played by the learner)
    collect_s = steps_per_worker / per_worker
    print(f"\non paper (from the 1-worker line: {per_worker:.0f} env steps/s per worker, learner {learner_rate:.0f} samples/s, "
          f"{steps_per_worker:.0f} env steps per worker per update):")
    print(f"{'workers':>8} {'collect s':>10} {'learn s':>8} {'samples/s':>10} {'learner busy':>13}")
    for n in (8, 64, 512):
        learn_s = n * steps_per_worker * learner_share / learner_rate
        print(f"{n:>8} {collect_s:>10.2f} {learn_s:>8.2f} {n * steps_per_worker / (collect_s + learn_s):>10.0f} {learn_s / (collect_s + learn_s):>12.0%}")
    print(f"the learner's ceiling: {learner_rate / learner_share:.0f} env steps/s; it equals the workers' collection at "
          f"{learner_rate / learner_share / per_worker:.1f} workers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
