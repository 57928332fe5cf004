"""One agent in one seat against ``n - 1`` copies of an opponent: seat-rotated, paired deals, win rate by role.

``python -m training.match --agent search:playouts=64 --opponent expectimax --players 2 --games 600``

Cycle ``c`` deals the shuffles ``seed * 1_000_000 + c`` (as ``grinch_env.evaluation.tournament``)
and plays them ``n`` times, the agent in seat ``r = 0..n-1``: every deal is
played from every seat, so the agent plays each role equally often and the
opponents' luck is paired.  Seat 0 is the first Grinch.  A win counts ``1/w``
when ``w`` seats tie.  Agents with a ``see(game)`` method (the ``oracle``) are
shown the true game before each of their decisions.  Prints (and with
``--out``, writes as JSON) the agent's win rate with a 95% Wilson interval,
overall and by first role, its mean margin and its time per decision.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from grinch_env.agents import make_agent
from grinch_env.evaluation.tournament import agent_seed, deal_seed
from grinch_env.grinch.encoding import Encoder
from grinch_env.grinch.game import Game


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Return the 95% Wilson score interval of ``wins`` successes in ``n`` trials."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def play(agents: list[Any], num_players: int, deal: int, seeds: list[int], timed: int) -> tuple[list[int], float, float, int]:
    """Return (final totals, wall seconds and CPU seconds spent by seat ``timed``, its decisions) of one game."""
    game = Game(num_players, rng=deal)
    encoder = Encoder()
    for a, s in zip(agents, seeds):
        a.reset(s)
    spent, cpu, decisions = 0.0, 0.0, 0
    while not game.done:
        seat = game.current
        view = encoder.observe(game, seat)
        agent = agents[seat]
        t0, c0 = time.perf_counter(), time.process_time()
        if hasattr(agent, "see"):
            agent.see(game)
        action = int(agent.act(view["observation"], view["action_mask"]))
        if seat == timed:
            spent += time.perf_counter() - t0
            cpu += time.process_time() - c0
            decisions += 1
        game.step(action)
    return game.totals[:], spent, cpu, decisions


def run_match(agent_spec: str, opponent_spec: str, num_players: int, games: int, seed: int = 0, progress: bool = False) -> dict[str, Any]:
    """Return the match record (see the module docstring); ``games`` is rounded up to whole cycles of ``num_players`` games."""
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    agent = make_agent(agent_spec, num_players=num_players)
    opponents = [make_agent(opponent_spec, num_players=num_players) for _ in range(num_players - 1)]
    if "torch" in sys.modules:  # a network decides one observation at a time: extra threads only contend (2-3x slower here)
        sys.modules["torch"].set_num_threads(1)
    cycles = -(-games // num_players)
    score = {"all": [0.0, 0], "first_grinch": [0.0, 0], "first_who": [0.0, 0]}
    margin, spent, cpu, decisions = 0.0, 0.0, 0.0, 0
    t_start = time.perf_counter()
    for c in range(cycles):
        deal = deal_seed(seed, c)
        for r in range(num_players):
            index = c * num_players + r
            agents = opponents[:r] + [agent] + opponents[r:]
            seeds = [agent_seed(seed, index, s) for s in range(num_players)]
            totals, dt, dc, k = play(agents, num_players, deal, seeds, timed=r)
            spent += dt
            cpu += dc
            decisions += k
            best = max(totals)
            win = (totals[r] == best) / sum(t == best for t in totals)
            for key in ("all", "first_grinch" if r == 0 else "first_who"):
                score[key][0] += win
                score[key][1] += 1
            margin += totals[r] - (sum(totals) - totals[r]) / (num_players - 1)
        if progress and (c + 1) % max(1, cycles // 20) == 0:
            w, n = score["all"]
            print(f"  {n} games: {w / n:.3f}  ({time.perf_counter() - t_start:.0f} s)", file=sys.stderr, flush=True)
    out: dict[str, Any] = {"agent": agent_spec, "opponent": opponent_spec, "players": num_players, "games": score["all"][1], "seed": seed,
                           "parity": 1 / num_players, "mean_margin": margin / score["all"][1],
                           "ms_per_decision": 1000 * spent / max(decisions, 1),
                           "cpu_ms_per_decision": 1000 * cpu / max(decisions, 1), "seconds": time.perf_counter() - t_start}
    for key, (w, n) in score.items():
        out[key] = {"win_rate": w / n if n else float("nan"), "ci95": wilson(w, n), "games": n}
    return out


def format_match(m: dict[str, Any]) -> str:
    """Return one report line per role of a match record."""
    lines = [f"{m['agent']} vs {m['opponent']}, {m['players']} players, {m['games']} games (seed {m['seed']}, parity {m['parity']:.3f}): "
             f"mean margin {m['mean_margin']:+.2f}, {m['ms_per_decision']:.1f} ms per decision "
             f"({m.get('cpu_ms_per_decision', float('nan')):.1f} ms CPU), {m['seconds']:.0f} s"]
    for key in ("all", "first_grinch", "first_who"):
        r = m[key]
        lines.append(f"  {key:13s} {r['win_rate']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]  ({r['games']} games)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.match", description=__doc__.splitlines()[0])
    parser.add_argument("--agent", required=True, help="agent spec, e.g. search:playouts=64, oracle, a checkpoint path")
    parser.add_argument("--opponent", default="expectimax", help="opponent spec for the other seats (default expectimax)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--games", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the record as JSON to this file")
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args(argv)
    try:
        m = run_match(args.agent, args.opponent, args.players, args.games, args.seed, args.progress)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(format_match(m))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(m, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
