"""Benchmark: AEC steps per second of a user's random-play loop through ``env()``, ours next to PettingZoo's classic games.

Every environment runs exactly the loop of the README, the same code for all::

    env.reset(seed=...)          # the first game; then env.reset() (--reseed: reset(seed=...) every game)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else pick(obs["action_mask"])
        env.step(action)

A step is one ``env.step`` call, the ``None`` steps of terminated agents at
the end of each game included.  The loop's own cost (``agent_iter``,
unpacking ``last()``, the pick) is real and counted for every environment.
The references are PettingZoo's ``tictactoe_v3`` and ``connect_four_v3``
through their own ``env()`` (PettingZoo's classic wrapper stack).  Both of
our games run: *Grinch Grow Your Heart* (``--players``, target 4x
``tictactoe_v3``) and *Gnoming A Round* (``--gnoming-players``, target 3x).

The pick (``--pick``), the same for every environment:

* ``random`` (default): ``legal = np.flatnonzero(mask)`` then
  ``int(legal[rng.randrange(len(legal))])`` with a seeded ``random.Random``;
* ``numpy``: the same with a seeded ``np.random.Generator``'s
  ``integers(len(legal))`` (about 2 µs more per step: numpy's per-call cost);
* ``space``: PettingZoo's documented ``env.action_space(agent).sample(mask)``
  (spaces seeded when the env is made; several µs more per step).

A slower pick adds the same time to every environment's step, so it lowers
the ratio of a fast environment to a slow one; the README reports the
default.

Seeding: the first ``reset`` of each environment and round gets a seed from
the round's ``random.Random``, later games a plain ``reset()`` (a training
loop's pattern; the run is reproducible).  ``--reseed`` passes a fresh seed
to every ``reset`` instead: PettingZoo's tic-tac-toe and connect four ignore
the seed, while ours builds a generator from it (about 20 µs per game).

Time is CPU time of the process (``time.process_time``) by default: on a
shared machine, time spent waiting for a core is not the loop's cost.
``--clock wall`` uses ``time.perf_counter``.

After an untimed warm-up (``--warmup`` seconds per environment), rounds are
interleaved (each round runs every environment for ``--seconds`` in turn)
because the machine may be shared; each environment's figure is the median
over rounds, and its ratio the median of its per-round ratios to
``tictactoe_v3`` in the same round (min-max shown).

Usage::

    python benchmarks/bench_env.py                      # 9 rounds of 0.5 s per environment
    python benchmarks/bench_env.py --rounds 9 --seconds 2 --players 2 4 6 --gnoming-players 3 7 --pick numpy
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import numpy as np

PICKS = ("random", "numpy", "space")


def steps_per_second(
    make_env: Callable[[], object], seconds: float, seed: int = 0, pick: str = "random", reseed: bool = False, clock: str = "cpu"
) -> tuple[float, int]:
    """Return (AEC steps per second, games finished) of the user loop with random legal actions for about ``seconds`` of ``clock``."""
    env = make_env()
    rng = random.Random(seed)
    generator = np.random.default_rng(seed)
    flatnonzero = np.flatnonzero
    now = time.process_time if clock == "cpu" else time.perf_counter
    steps = games = 0
    start = now()
    deadline = start + seconds
    if pick == "space":
        for i, agent in enumerate(env.possible_agents):
            env.action_space(agent).seed(seed * 100 + i)
    while True:
        if games == 0 or reseed:
            env.reset(seed=rng.getrandbits(31))
        else:
            env.reset()
        for agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            elif pick == "random":
                legal = flatnonzero(obs["action_mask"])
                action = int(legal[rng.randrange(len(legal))])
            elif pick == "numpy":
                legal = flatnonzero(obs["action_mask"])
                action = int(legal[generator.integers(len(legal))])
            else:
                action = int(env.action_space(agent).sample(obs["action_mask"]))
            env.step(action)
            steps += 1
        games += 1
        if now() >= deadline:
            break
    return steps / (now() - start), games


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="time per environment and round (default 0.5)")
    parser.add_argument("--rounds", type=int, default=9, help="interleaved rounds over all environments; medians are reported (default 9)")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4, 6], help="Grinch table sizes to run (default 2 4 6)")
    parser.add_argument("--gnoming-players", type=int, nargs="+", default=[3, 5, 7], help="Gnoming A Round table sizes to run (default 3 5 7; 0 for none)")
    parser.add_argument("--warmup", type=float, default=0.5, help="untimed seconds per environment before the rounds (default 0.5)")
    parser.add_argument("--reseed", action="store_true", help="pass a fresh seed to every reset, not only the first")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="process CPU time (default) or wall-clock time")
    parser.add_argument("--pick", choices=PICKS, default="random", help="how the random legal action is drawn, the same for every environment (default random)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0 or args.warmup < 0:
        parser.error(f"--rounds must be >= 1, --seconds > 0 and --warmup >= 0, got {args.rounds}, {args.seconds} and {args.warmup}")

    from pettingzoo.classic import connect_four_v3, tictactoe_v3

    import grinch_env

    makers: dict[str, Callable[[], object]] = {"tictactoe_v3": tictactoe_v3.env, "connect_four_v3": connect_four_v3.env}
    for n in args.players:
        makers[f"grinch {n} players"] = lambda n=n: grinch_env.grinch.env(num_players=n)
    for n in args.gnoming_players:
        if n:
            makers[f"gnoming {n} players"] = lambda n=n: grinch_env.gnoming.env(num_players=n)

    # Untimed warm-up: imports, first-call and cache costs (all environments alike).
    if args.warmup > 0:
        for make in makers.values():
            steps_per_second(make, args.warmup, seed=1_000_000, pick=args.pick, reseed=args.reseed, clock=args.clock)
    # Interleaved rounds: on a shared machine the load changes over time, so every
    # environment sees every stretch, and ratios are taken within a round.
    rates: dict[str, list[float]] = {name: [] for name in makers}
    games: dict[str, int] = dict.fromkeys(makers, 0)
    for round_index in range(args.rounds):
        for name, make in makers.items():
            sps, finished = steps_per_second(make, args.seconds, seed=round_index, pick=args.pick, reseed=args.reseed, clock=args.clock)
            rates[name].append(sps)
            games[name] += finished

    reference = rates["tictactoe_v3"]
    seeding = "every reset seeded" if args.reseed else "first reset seeded"
    print(f"pick={args.pick}, {seeding}, {args.clock} time, {args.rounds} rounds of {args.seconds:g} s; medians over rounds")
    print(f"{'environment':<20} {'steps/s':>10} {'games':>7} {'x tictactoe_v3':>15}  {'min-max x':>13}")
    for name, values in rates.items():
        ratios = [v / r for v, r in zip(values, reference)]
        print(
            f"{name:<20} {statistics.median(values):>10,.0f} {games[name]:>7} {statistics.median(ratios):>15.2f}"
            f"  {min(ratios):>6.2f}-{max(ratios):<6.2f}"
        )


if __name__ == "__main__":
    main()
