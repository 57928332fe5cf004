"""Benchmark: decisions per CPU-second of the Gnoming AEC env and the batched engine, in one run.

One run prints, for uniformly random legal play at one table size (observations
and masks built at every decision, the random choice included):

* the AEC env ``grinch_env.gnoming.env`` (``env.last()``, a random legal
  action, ``env.step``), counted in decisions (the ``None`` steps of
  terminated agents are not decisions) -- the reference every other row is
  divided by;
* :class:`grinch_env.gnoming.vector.VectorGnoming` with the scalar-loop
  backend (``"numpy"``) at 64 games;
* ``VectorGnoming`` with the numba backend at each batch size (default 1, 64,
  1024), with ``copy=True`` (new arrays every step) and, from 1024 games,
  ``copy=False``.

Rates are per CPU-second of this process (``time.process_time``), steadier on
a shared machine; ``--wall`` reports per wall-clock second instead.

Usage::

    python -m benchmarks.bench_gnoming_vector                     # about 20 s
    python -m benchmarks.bench_gnoming_vector --players 7 --sizes 1 64 1024 8192
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np


def _clock(wall: bool) -> Callable[[], float]:
    return time.perf_counter if wall else time.process_time


def aec_decisions_per_second(num_players: int, seconds: float, wall: bool, seed: int = 0) -> float:
    """Return decisions per second of random legal play through ``grinch_env.gnoming.env``."""
    import grinch_env.gnoming

    env = grinch_env.gnoming.env(num_players=num_players)
    rng = np.random.default_rng(seed)
    clock = _clock(wall)
    decisions = 0
    start = clock()
    while clock() - start < seconds:
        env.reset(seed=int(rng.integers(2**31)))
        for _agent in env.agent_iter():
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
                decisions += 1
            env.step(action)
    return decisions / (clock() - start)


def engine_decisions_per_second(engine, seconds: float, wall: bool, seed: int = 0) -> float:
    """Return decisions per second of ``engine`` (a VectorGnoming) under uniformly random legal play."""
    rng = np.random.default_rng(seed)
    _obs, mask, _seat = engine.reset(seed=seed)
    mask = engine.step((rng.random(mask.shape, dtype=np.float32) * mask).argmax(axis=1))[1]  # compile / warm up outside the timing
    clock = _clock(wall)
    steps = 0
    start = clock()
    while clock() - start < seconds:
        actions = (rng.random(mask.shape, dtype=np.float32) * mask).argmax(axis=1)  # uniform over legal actions
        _obs, mask, _seat, _rewards, _dones = engine.step(actions)
        steps += 1
    return steps * engine.num_envs / (clock() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement (default 2)")
    parser.add_argument("--players", type=int, default=4, help="table size, 3..7 (default 4)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024], help="batch sizes of the numba engine (default 1 64 1024)")
    parser.add_argument("--wall", action="store_true", help="per wall-clock second instead of per CPU-second")
    args = parser.parse_args(argv)

    from grinch_env.gnoming.vector import VectorGnoming

    n, sec, wall = args.players, args.seconds, args.wall
    rows: list[tuple[str, float]] = []
    aec = aec_decisions_per_second(n, sec, wall)
    rows.append(("AEC env (grinch_env.gnoming.env)", aec))
    rows.append(("VectorGnoming 64 games, numpy (scalar Game loop)", engine_decisions_per_second(VectorGnoming(64, n, backend="numpy"), sec, wall)))
    if VectorGnoming(1).backend == "numba":
        for b in args.sizes:
            rows.append((f"VectorGnoming {b} games, numba", engine_decisions_per_second(VectorGnoming(b, n, backend="numba"), sec, wall)))
            if b >= 1024:
                engine = VectorGnoming(b, n, backend="numba", copy=False)
                rows.append((f"VectorGnoming {b} games, numba, copy=False", engine_decisions_per_second(engine, sec, wall)))
    else:
        rows.append(("VectorGnoming numba backend: numba is not installed", float("nan")))

    unit = "per wall-clock second" if wall else "per CPU-second"
    print(f"Gnoming, {n} players, random legal play, decisions {unit} (x AEC env)")
    width = max(len(name) for name, _ in rows)
    for name, rate in rows:
        print(f"{name:<{width}}  {rate:>12,.0f}  {rate / aec:8.1f}x")


if __name__ == "__main__":
    main()
