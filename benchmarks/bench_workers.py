"""Benchmark: a match played by the harness's worker processes with one BLAS/OpenMP thread each (``worker_pool``) and,
as the reference in the same run, by plain spawned workers that keep the libraries' default of a thread per core.

The same seat-rotated paired deals both times (the results must match: the thread count changes the speed, not the
games).  The environment's thread settings (``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``) are
cleared first, as on a machine where nobody set them.  Run it on an idle machine: the figures are wall-clock times.

Usage::

    python benchmarks/bench_workers.py                                              # the 2-player network alone against expectimax
    python benchmarks/bench_workers.py --agents expectimax,greedy --games 200 --processes 2
"""

from __future__ import annotations

import argparse
import os
import time

if __name__ == "__main__":  # not in the spawned workers, which import this file as __mp_main__ before numpy
    for _key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy and torch read them
        os.environ.pop(_key, None)

import grinch_env.parallel as parallel  # noqa: E402
from grinch_env.evaluation.evaluate import evaluate  # noqa: E402


def timed(agents: list[str], games: int, processes: int, seed: int, one_thread: bool) -> tuple[float, float, dict]:
    """``(wall seconds, CPU seconds of the finished workers, per-agent results)`` of one match."""
    saved = parallel.THREAD_VARIABLES
    parallel.THREAD_VARIABLES = saved if one_thread else ()  # the reference: workers with the default threads
    try:
        start, children = time.perf_counter(), os.times()
        res = evaluate(agents, num_players=len(agents), num_games=games, seed=seed, processes=processes)
        after = os.times()
    finally:
        parallel.THREAD_VARIABLES = saved
    cpu = (after.children_user + after.children_system) - (children.children_user + children.children_system)
    return time.perf_counter() - start, cpu, res.per_agent


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", default="checkpoints/champion_grinch:play=value,expectimax",
                   help="comma-separated agent specs, one per seat (the Grinch)")
    p.add_argument("--games", type=int, default=100)
    p.add_argument("--processes", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    agents = args.agents.split(",")
    rows = [("plain spawned workers (reference)", *timed(agents, args.games, args.processes, args.seed, False)),
            ("worker_pool: one thread each", *timed(agents, args.games, args.processes, args.seed, True))]
    print(f"{args.games} games of {' vs '.join(agents)}, {args.processes} processes, {os.cpu_count()} cores")
    print(f"{'workers':<36}{'wall s':>9}{'worker CPU s':>14}{'games/s':>9}")
    for name, wall, cpu, _ in rows:
        print(f"{name:<36}{wall:>9.1f}{cpu:>14.1f}{args.games / wall:>9.2f}")
    print(f"speed-up {rows[0][1] / rows[1][1]:.2f}x; the same games: {rows[0][3] == rows[1][3]}")


if __name__ == "__main__":
    main()
