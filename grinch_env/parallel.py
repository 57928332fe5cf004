"""Worker processes for the harness and the trainers: spawned, one BLAS and OpenMP thread each.

A pool's workers run side by side, one per core; left to their defaults, numpy's OpenBLAS and torch's OpenMP each
start a thread per core in every worker, and on a 2-core machine two workers then run four busy threads: a
distillation game of the afterstate learner took 0.62-0.70 CPU-seconds instead of 0.23 (measured by
benchmarks/bench_workers.py).  Spawned, not forked: a forked copy of a process that has used torch's threads can hang.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from multiprocessing.pool import Pool
from typing import Any

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def worker_pool(processes: int, initializer: Callable[..., Any] | None = None, initargs: Sequence[Any] = ()) -> Pool:
    """A ``multiprocessing`` pool of ``processes`` spawned workers, each started with one BLAS and OpenMP thread
    (:data:`THREAD_VARIABLES` set to 1 in its environment; this process's own is left as it was)."""
    if not isinstance(processes, int) or isinstance(processes, bool) or processes < 1:
        raise ValueError(f"processes must be an int >= 1, got {processes!r}")
    saved = {k: os.environ.get(k) for k in THREAD_VARIABLES}
    os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))
    try:  # the workers start here, each with a copy of the environment as it is now
        return multiprocessing.get_context("spawn").Pool(processes, initializer, tuple(initargs))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


__all__ = ["THREAD_VARIABLES", "worker_pool"]
