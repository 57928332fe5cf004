"""Benchmark: milliseconds per decision of each agent, by decision kind, in self-play games.

Every agent plays all seats of ``--games`` seeded games driven through
:class:`grinch_env.grinch.game.Game`; only calls with two or more legal actions are
timed (a forced move returns at once).  Run it on an idle machine: the figures
are wall-clock times.

Usage::

    python benchmarks/bench_agents.py                       # random, greedy, expectimax at 2 and 4 players
    python benchmarks/bench_agents.py --agents expectimax:samples=64 --players 4 --games 20
    python benchmarks/bench_agents.py --agents champion,expectimax --players 2 3 4 5 6 --games 4   # the champion's cost
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import numpy as np

from grinch_env.agents import make_agent
from grinch_env.grinch.encoding import Scales, action_mask, encode
from grinch_env.grinch.game import Game


def time_agent(spec: str, num_players: int, games: int) -> dict[str, tuple[float, int]]:
    """Return ``{kind: (mean ms per decision, decisions)}`` for kinds discard, draw, score and all."""
    agent = make_agent(spec, seed=0, num_players=num_players, game="grinch")
    times: dict[str, list[float]] = defaultdict(list)
    for g in range(games):
        game = Game(num_players, rng=g)
        scales = Scales(game.layout)
        agent.reset(g)
        while not game.done:
            seat = game.current
            obs, mask = encode(game, seat, scales), action_mask(game, seat)
            start = time.perf_counter()
            action = agent.act(obs, mask)
            elapsed = time.perf_counter() - start
            if mask.sum() > 1:
                times[game.phase].append(elapsed)
                times["all"].append(elapsed)
            game.step(action)
    return {kind: (1e3 * float(np.mean(v)), len(v)) for kind, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", default="random,greedy,expectimax")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--games", type=int, default=10)
    args = parser.parse_args()
    print(f"{'agent':<24} {'players':>7} {'all ms':>8} {'discard':>8} {'draw':>8} {'score':>8} {'decisions':>9}")
    for spec in args.agents.split(","):
        for n in args.players:
            r = time_agent(spec, n, args.games)
            cells = " ".join(f"{r.get(k, (float('nan'), 0))[0]:>8.3f}" for k in ("all", "discard", "draw", "score"))
            print(f"{spec:<24} {n:>7} {cells} {r['all'][1]:>9}")


if __name__ == "__main__":
    main()
