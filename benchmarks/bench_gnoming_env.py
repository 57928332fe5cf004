"""Benchmark: Gnoming AEC steps per second through ``env()``, next to PettingZoo's ``tictactoe_v3`` in the same run.

Every environment runs the same loop: ``env.last()`` (the observation and its
mask are built), a uniformly random legal action from the mask, ``env.step``.
A step is one ``env.step`` call, including the ``None`` steps of terminated
agents at the end of each game.  The reference is PettingZoo's own
``tictactoe_v3`` through its ``env()`` (the standard wrapper stack).  The
issue's target: Gnoming at >= 3x tictactoe.

Usage::

    python benchmarks/bench_gnoming_env.py                  # 3 rounds of 1 s per environment
    python benchmarks/bench_gnoming_env.py --seconds 2 --rounds 5 --players 3 5 7
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np


def steps_per_second(make_env: Callable[[], object], seconds: float, seed: int = 0, clock: str = "cpu") -> tuple[float, int]:
    """Return (AEC steps per second of ``clock`` time, games finished) of random legal play for about ``seconds``."""
    env = make_env()
    rng = np.random.default_rng(seed)
    steps = games = 0
    timer = time.process_time if clock == "cpu" else time.perf_counter
    start = timer()
    deadline = time.perf_counter() + seconds
    while True:
        env.reset(seed=int(rng.integers(2**31)))
        for _agent in env.agent_iter():
            obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
            env.step(action)
            steps += 1
        games += 1
        if time.perf_counter() >= deadline:
            break
    return steps / (timer() - start), games


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per environment and round (default 1)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over all environments; the best round counts (default 3)")
    parser.add_argument("--players", type=int, nargs="+", default=[3, 5, 7], help="table sizes to run (default 3 5 7)")
    parser.add_argument(
        "--clock", choices=["cpu", "wall"], default="cpu",
        help="divide by this process's CPU time (default: steadier on a shared machine) or by wall time",
    )
    args = parser.parse_args(argv)

    from pettingzoo.classic import tictactoe_v3

    import grinch_env.gnoming

    makers: dict[str, Callable[[], object]] = {"tictactoe_v3": tictactoe_v3.env}
    for n in args.players:
        makers[f"gnoming {n} players"] = lambda n=n: grinch_env.gnoming.env(num_players=n)

    # Interleaved rounds, best round per environment: on a shared machine the
    # load changes over time, and the best round is the least disturbed one.
    best: dict[str, tuple[float, int]] = {}
    for round_index in range(args.rounds):
        for name, make in makers.items():
            sps, games = steps_per_second(make, args.seconds, seed=round_index, clock=args.clock)
            if name not in best or sps > best[name][0]:
                best[name] = (sps, games)

    ref = best["tictactoe_v3"][0]
    print(f"{'environment':<20} {'steps/s':>10} {'games':>7}  x tictactoe_v3   ({args.clock} time, best of {args.rounds} rounds)")
    for name, (sps, games) in best.items():
        print(f"{name:<20} {sps:>10,.0f} {games:>7}  {sps / ref:6.2f}x")


if __name__ == "__main__":
    main()
