"""Paired differences between two evaluations of the same deals: game by game, agent 0 of each against the rest.

Two ``results.json`` files of ``python -m grinch_env.evaluation ... --out DIR`` (the same table size, seed and game
count, the agent under study first in ``--agents``) hold the same deals in the same order; this prints, for agent 0
of A minus agent 0 of B, the mean difference in win share (a tie shared among its winners), in its own total and in
the opponents' mean total, each with 1.96 standard errors of the game-by-game differences.
docs/results/learner_grinch.md, twenty-first session (2 players) and twenty-fourth (any table size).

    python docs/results/learner_grinch_draws/paired.py A/results.json B/results.json
"""
import json
import sys

import numpy as np


def per_game(path: str) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
    """``(deals, win share, own total, the opponents' mean total)`` of agent 0, per game."""
    res = json.load(open(path))
    deals, win, own, opp = [], [], [], []
    for g in res["games"]:
        seat = g["lineup"].index(0)
        deals.append((g["deal"], tuple(g["lineup"])))
        win.append(1.0 / len(g["winners"]) if seat in g["winners"] else 0.0)
        own.append(g["totals"][seat])
        opp.append(np.mean([t for s, t in enumerate(g["totals"]) if s != seat]))
    return deals, np.array(win), np.array(own, float), np.array(opp, float)


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    a, b = per_game(sys.argv[1]), per_game(sys.argv[2])
    if a[0] != b[0]:
        raise SystemExit("the two evaluations did not play the same deals in the same seats: give the same --seed, --games and line-up order")
    n = len(a[0])
    for name, i in (("win share", 1), ("own total", 2), ("opponents' total", 3)):
        d = a[i] - b[i]
        print(f"{name:>17}: {d.mean():+.3f} ± {1.96 * d.std(ddof=1) / np.sqrt(n):.3f} (A {a[i].mean():.3f}, B {b[i].mean():.3f}, {n} games)")


if __name__ == "__main__":
    main()
