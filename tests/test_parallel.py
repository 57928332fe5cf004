"""grinch_env.parallel.worker_pool: spawned workers with one BLAS and OpenMP thread each; this process's environment kept."""

import os

import pytest

from grinch_env.parallel import THREAD_VARIABLES, worker_pool


def _threads() -> tuple[str | None, ...]:
    return tuple(os.environ.get(k) for k in THREAD_VARIABLES)


def test_workers_start_with_one_thread_and_the_parent_keeps_its_setting(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "4")
    with worker_pool(2) as pool:
        seen = pool.starmap(_threads, [()] * 4)
        pids = set(pool.starmap(os.getpid, [()] * 4))
    assert seen == [("1", "1", "1")] * 4 and os.getpid() not in pids
    assert _threads() == ("2", None, "4")  # as it was


def test_bad_process_counts_say_what_is_allowed():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match=f"processes must be an int >= 1, got {bad!r}"):
            worker_pool(bad)
