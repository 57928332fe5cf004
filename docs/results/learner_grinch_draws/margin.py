"""Agent 0's points over the other seats' mean, game by game, pooled over evaluations of one line-up.

``results.json`` files of ``python -m grinch_env.evaluation ... --out DIR`` (the agent under study first in
``--agents``; any table size, any seeds); this prints the games, the mean margin of agent 0's total over the mean
of the other seats' totals with 1.96 standard errors of the per-game margins, and agent 0's win share (a tie shared
among its winners).  A seat-rotated match plays each deal once per rotation, so games of one deal are not
independent; the rotations put the agent in every seat of each deal, which lowers the variance of the mean.
docs/results/learner_grinch.md, twenty-sixth session.

    python docs/results/learner_grinch_draws/margin.py A/results.json [B/results.json ...]
"""
import sys

import numpy as np
from paired import per_game  # this folder's paired.py: agent 0's win share, own and opponents' mean totals per game


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    games = [per_game(path) for path in sys.argv[1:]]
    win = np.concatenate([g[1] for g in games])
    m = np.concatenate([g[2] - g[3] for g in games])
    print(f"{len(m)} games: agent 0's total over the others' mean {m.mean():+.2f} ± {1.96 * m.std(ddof=1) / np.sqrt(len(m)):.2f} "
          f"points a game; win share {win.mean():.4f}")


if __name__ == "__main__":
    main()
