"""Which of the afterstate agent's decisions cost it against `expectimax`?  Swap one kind of decision at a time.

The agent of an afterstate run (``training.learner.afterstate_run``; ``RUN`` a run directory, ``PLAY`` its play option)
decides the discards, the draws and the rows; each composite hands one kind of decision (or a role's) to `expectimax`
and plays `expectimax` itself: 2 players, seat-rotated paired deals, seed 4242.  A composite that does better than the
agent alone points at the decisions the agent gets wrong.  docs/results/learner_grinch.md, twentieth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/afterstate_swap.py RUN PLAY GAMES [PROCESSES] [COMPOSITES]

``COMPOSITES``: comma-separated from ``none`` (the agent alone), ``discards``, ``draws``, ``rows`` (that kind by
`expectimax`), ``grinch``, ``who`` (every decision in that role by `expectimax`); default all.
"""
import sys

import numpy as np

from grinch_env.agents import make_agent
from grinch_env.evaluation.evaluate import evaluate
from grinch_env.grinch import encoding as enc
from grinch_env.grinch.game import DRAW_PILE_ACTION, SCORE_BASE

COMPOSITES = ("none", "discards", "draws", "rows", "grinch", "who")


class Composite:
    """The afterstate agent with the decisions of kind ``swap`` made by `expectimax` (same seed every game)."""

    def __init__(self, run: str, play: str, swap: str) -> None:
        self.ours = make_agent(f"{run}:play={play}", num_players=2, game="grinch")
        self.theirs = make_agent("expectimax", num_players=2, game="grinch")
        self.swap, self.name = swap, f"afterstate, {swap} by expectimax" if swap != "none" else "afterstate"

    def reset(self, seed=None):
        self.ours.reset(seed)
        self.theirs.reset(seed)

    def act(self, observation, action_mask):
        mask = np.asarray(action_mask).astype(bool)
        kind = "discards" if mask[:DRAW_PILE_ACTION].any() else "draws" if mask[DRAW_PILE_ACTION:SCORE_BASE].any() else "rows"
        role = "grinch" if observation[enc.GRINCH_SEAT] > 0.5 else "who"
        if self.swap in (kind, role):
            return self.theirs.act(observation, action_mask)
        return self.ours.act(observation, action_mask)


def main() -> None:
    run, play, games = sys.argv[1], sys.argv[2], int(sys.argv[3])
    processes = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    composites = sys.argv[5].split(",") if len(sys.argv) > 5 else list(COMPOSITES)
    if set(composites) - set(COMPOSITES):
        raise SystemExit(f"COMPOSITES must come from {', '.join(COMPOSITES)}, got {sys.argv[5]}")
    for swap in composites:
        res = evaluate([Composite(run, play, swap), "expectimax"], num_players=2, num_games=games, seed=4242, game="grinch", processes=processes)
        a, b = (res.per_agent[x] for x in res.agents)
        lo, hi = a["win_rate_ci"]
        print(f"{swap:>8} by expectimax: {a['win_rate']:.3f} [{lo:.3f}, {hi:.3f}], mean total {a['mean_score']:.1f} against "
              f"{b['mean_score']:.1f}; as Grinch {a['grinch']['mean_round_points']:.2f} ({b['grinch']['mean_round_points']:.2f}), as Who {a['who']['mean_round_points']:.2f} ({b['who']['mean_round_points']:.2f}) a round", flush=True)


if __name__ == "__main__":
    main()
