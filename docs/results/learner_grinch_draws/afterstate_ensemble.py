"""Several fits' values averaged: is the mean of ``V`` (and of ``W`` and ``G``) over fits a better network than one fit?

``MEMBERS`` is a comma-separated list of ``RUN@FIT`` (a ``deny: true`` afterstate run's directory and one of its fitted
generations); the agent values every afterstate by the mean of the members' ``V`` (rows by their mean ``W``, a Who's
discards charged their mean ``G`` at the first member's weight) and plays ``PLAY`` (``value``: the network alone;
``lookahead``).  One seat against ``OPPONENT`` in the others, seat-rotated paired deals, seed ``SEED``, ``GAMES`` games;
``OUT/results.json`` pairs with any other evaluation of those deals through ``paired.py``.
docs/results/learner_grinch.md, twenty-sixth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/afterstate_ensemble.py MEMBERS PLAY OPPONENT PLAYERS GAMES SEED PROCESSES OUT
"""
import sys

import numpy as np
import torch

from grinch_env.evaluation.evaluate import evaluate, write_report
from training.learner.afterstate import AfterstateAgent, Denial, LaterValue, Value, denial_of


class MeanValue(Value):
    """The mean of several :class:`Value` of the same inputs."""

    def __init__(self, members: list[Value]) -> None:
        self.members, self.table = members, members[0].table

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return np.mean([m(x) for m in self.members], axis=0)


def main() -> None:
    if len(sys.argv) != 9:
        raise SystemExit(__doc__)
    members, play, opponent, out = sys.argv[1].split(","), sys.argv[2], sys.argv[3], sys.argv[8]
    players, games, seed, processes = map(int, sys.argv[4:8])
    fits = []
    for spec in members:
        run, fit = spec.rsplit("@", 1)
        fits.append(torch.load(f"{run}/latest.pt", weights_only=True)["values"][int(fit)])
    value = MeanValue([Value.from_state(f["value"]) for f in fits])
    later = LaterValue(MeanValue([Value.from_state(f["later"]) for f in fits]))
    denials = [denial_of(f) for f in fits]
    deny = Denial(MeanValue([d.value for d in denials]), denials[0].weight)
    name = "mean(" + ",".join(m.rstrip("/").split("/")[-1] for m in members) + ")" + ("" if play == "lookahead" else f":play={play}")
    agent = AfterstateAgent(value, later, play, name, [players], deny=deny)
    res = evaluate([agent] + [opponent] * (players - 1), num_players=players, num_games=games, seed=seed, game="grinch", processes=processes)
    write_report(res, out)
    print(res.table(), flush=True)


if __name__ == "__main__":
    main()
