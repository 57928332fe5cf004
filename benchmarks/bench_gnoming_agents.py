"""Benchmark: win rates (Wilson 95% intervals), mean totals and ms per decision of Gnoming agents, paired deals, seats rotated.

The line-up is ``--agents`` in seat order, the last one repeated to fill the
table: ``search,greedy`` at 5 players is one ``search`` seat against four
``greedy`` seats.  Every deal is
played ``n`` times with the line-up rotated one seat each time, so each agent
sits in every seat on the same shuffles (paired deals).  ``--games`` is rounded
up to whole rotations.  A shared win counts as ``1/k`` of a win.  Win rates
are per seat, so parity is ``1/n``.  Only decisions with two or more legal
actions are timed (a forced move returns at once), in wall-clock ms and in
CPU ms of the process (the steadier figure on a shared machine).

Usage::

    python benchmarks/bench_gnoming_agents.py --players 3 5 7 --games 420 --agents search,greedy
    python benchmarks/bench_gnoming_agents.py --players 4 --games 200 --agents greedy,random
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from grinch_env.agents import make_agent
from grinch_env.evaluation.ratings import wilson_interval
from grinch_env.gnoming.encoding import Encoder
from grinch_env.gnoming.game import Game

DEAL_STRIDE = 1_000_000


def _play_deals(specs: list[str], num_players: int, deals: list[int], seed: int) -> dict[str, dict[str, float]]:
    """Return per-spec sums ``{seat_games, wins, total, elapsed, decisions}`` over every rotation of ``deals``."""
    n = num_players
    base = specs + [specs[-1]] * (n - len(specs))
    agents = {spec: make_agent(spec, seed=0, game="gnoming", num_players=n) for spec in dict.fromkeys(base)}
    sums = {spec: defaultdict(float) for spec in agents}
    encoder = Encoder()
    for d in deals:
        for r in range(n):
            lineup = [base[(s - r) % n] for s in range(n)]
            game = Game(n, rng=seed * DEAL_STRIDE + d)
            for s, spec in enumerate(lineup):
                agents[spec].reset(int(np.random.SeedSequence([seed, d, r, s]).generate_state(1)[0]))
            while not game.done:
                seat = game.current
                view = encoder.observe(game, seat)
                start, cpu = time.perf_counter(), time.process_time()
                action = agents[lineup[seat]].act(view["observation"], view["action_mask"])
                if view["action_mask"].sum() > 1:
                    sums[lineup[seat]]["elapsed"] += time.perf_counter() - start
                    sums[lineup[seat]]["cpu"] += time.process_time() - cpu
                    sums[lineup[seat]]["decisions"] += 1
                game.step(action)
            winners = game.winners()
            for s, spec in enumerate(lineup):
                sums[spec]["seat_games"] += 1
                sums[spec]["total"] += game.totals[s]
                if s in winners:
                    sums[spec]["wins"] += 1 / len(winners)
    return {spec: dict(v) for spec, v in sums.items()}


def run(specs: list[str], num_players: int, games: int, seed: int = 0, processes: int = 1) -> dict[str, dict[str, float]]:
    """Return per-spec ``{games, seat_games, wins, win_rate, low, high, mean_total, ms, decisions}`` over the paired games.

    The result does not depend on ``processes``: every game's deal and agent seeds come from its deal and seat.
    """
    if len(specs) > num_players:
        raise ValueError(f"{len(specs)} agents given for a {num_players}-player table")
    deals = list(range(-(-games // num_players)))
    chunks = [deals[i::processes] for i in range(processes) if deals[i::processes]]
    if len(chunks) == 1:
        parts = [_play_deals(specs, num_players, deals, seed)]
    else:
        with ProcessPoolExecutor(len(chunks)) as pool:
            parts = list(pool.map(_play_deals, [specs] * len(chunks), [num_players] * len(chunks), chunks, [seed] * len(chunks)))
    out = {}
    for spec in parts[0]:
        total = defaultdict(float)
        for part in parts:
            for key, value in part[spec].items():
                total[key] += value
        seats = int(total["seat_games"])
        low, high = wilson_interval(total["wins"], seats)
        out[spec] = {"games": len(deals) * num_players, "seat_games": seats, "wins": total["wins"],
                     "win_rate": total["wins"] / seats, "low": low, "high": high, "mean_total": total["total"] / seats,
                     "ms": 1e3 * total["elapsed"] / max(1, total["decisions"]),
                     "cpu_ms": 1e3 * total["cpu"] / max(1, total["decisions"]), "decisions": int(total["decisions"])}
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", default="search,greedy", help="comma-separated agent specs by seat, the last one filling the other seats")
    parser.add_argument("--players", type=int, nargs="+", default=[3, 5, 7])
    parser.add_argument("--games", type=int, default=105, help="games per table size (rounded up to whole rotations)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--processes", type=int, default=1, help="worker processes (the figures do not depend on it)")
    args = parser.parse_args(argv)
    specs = [s.strip() for s in args.agents.split(",") if s.strip()]
    print(f"{'players':>7} {'agent':<22} {'games':>6} {'seats':>6} {'win rate':>8} {'95% interval':>15} {'parity':>6} "
          f"{'mean total':>10} {'ms/dec':>8} {'cpu ms':>8}")
    for n in args.players:
        t0 = time.perf_counter()
        result = run(specs, n, args.games, args.seed, args.processes)
        for spec, r in result.items():
            print(f"{n:>7} {spec:<22} {r['games']:>6} {r['seat_games']:>6} {r['win_rate']:>8.3f} "
                  f"[{r['low']:.3f}, {r['high']:.3f}] {1 / n:>6.3f} {r['mean_total']:>10.2f} {r['ms']:>8.3f} {r['cpu_ms']:>8.3f}", flush=True)
        print(f"{'':>7} ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
