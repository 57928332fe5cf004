"""Benchmark: the learner's network search in tournaments, one game at a time beside ``G`` games at a time (lockstep).

It plays the same seat-rotated, paired-deal games twice, ``evaluate(..., lockstep=1)`` and
``evaluate(..., lockstep=G)``, with a learner checkpoint plus search in one seat and ``--opponent`` in the others,
and prints for each the CPU seconds per game and per learner decision (this process, one torch thread), the
network calls' mean batch, and whether the two played the same games.

Usage::

    python benchmarks/bench_lockstep.py                                               # fresh Gnoming net, 3 players, 6 games
    python benchmarks/bench_lockstep.py --checkpoint checkpoints/learner_gnoming_long_237min --games 12 --lockstep 12
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402

from grinch_env.evaluation.evaluate import evaluate  # noqa: E402
from training.learner import search as search_module  # noqa: E402
from training.learner.net import TokenNet  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python benchmarks/bench_lockstep.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", default=None, help="a learner run directory or .pt (default: a fresh Gnoming net from configs/learner_gnoming.yaml)")
    p.add_argument("--options", default="search=1,samples=4,top_k=2,horizon=round", help="the search options of the learner's spec")
    p.add_argument("--opponent", default="greedy")
    p.add_argument("--players", type=int, default=3)
    p.add_argument("--games", type=int, default=6)
    p.add_argument("--lockstep", type=int, default=6, help="games at once in the second pass (default 6)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.checkpoint
        if path is None:
            from training.learner.config import load_config
            from training.learner.run import Trainer

            trainer = Trainer(load_config("configs/learner_gnoming.yaml", [f"checkpoint_dir={tmp}", "run_name=fresh", f"num_players={args.players}"]))
            trainer.save()
            path = os.path.join(tmp, "fresh")
        _, cfg, _ = search_module.load_learner(path)
        spec = f"{path}:{args.options}"
        calls: list[int] = []
        forward = TokenNet.forward

        def counted(self, state, actions):
            calls.append(int(state.shape[0]))
            return forward(self, state, actions)

        TokenNet.forward = counted
        rows, games = {}, {}
        try:
            for width in (1, args.lockstep):
                search_module.TIMING.clear()
                calls.clear()
                start = time.process_time()
                res = evaluate([spec] + [args.opponent] * (args.players - 1), num_players=args.players, num_games=args.games, seed=args.seed,
                               game=cfg["game"], lockstep=width)
                cpu = time.process_time() - start
                decisions = sum(d for d, _ in search_module.TIMING.values())
                games[width] = [g["totals"] for g in res.games]
                rows[width] = (cpu / args.games, 1000 * cpu / max(1, decisions), sum(calls) / max(1, len(calls)), decisions)
        finally:
            TokenNet.forward = forward
    print(f"{cfg['game']}, {args.players} players, {args.games} games against {args.opponent}, learner {spec}")
    print(f"{'lockstep':>8} {'CPU-s/game':>11} {'ms/decision':>12} {'rows/call':>10} {'decisions':>10}")
    for width, (per_game, per_decision, batch, decisions) in rows.items():
        print(f"{width:>8} {per_game:>11.2f} {per_decision:>12.1f} {batch:>10.1f} {decisions:>10}")
    first, last = rows[1][1], rows[args.lockstep][1]
    print(f"speed-up per decision: {first / last:.2f}x; same games: {games[1] == games[args.lockstep]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
