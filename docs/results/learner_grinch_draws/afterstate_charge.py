"""Does the charge of ``G`` carry to another run's values?  ``V`` and ``W`` of one afterstate run, ``G`` of another.

The agent of run ``VALUES`` (``play=lookahead``) with the Who discards charged ``WEIGHT x G``, ``G`` the last
generation's of run ``CHARGE`` (a ``deny: true`` run), plays `expectimax`: 2 players, seat-rotated paired deals,
seed 4242, ``GAMES`` games; ``OUT/results.json`` (as ``python -m grinch_env.evaluation --out``) pairs with any other
evaluation of those deals through ``paired.py``.  ``WEIGHT`` 0 plays ``VALUES`` alone.  docs/results/learner_grinch.md,
twenty-first session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/afterstate_charge.py VALUES CHARGE WEIGHT GAMES PROCESSES OUT
"""
import sys

import torch

from grinch_env.evaluation.evaluate import evaluate, write_report
from training.learner.afterstate import AfterstateAgent, LaterValue, Value, denial_of


def main() -> None:
    if len(sys.argv) != 7:
        raise SystemExit(__doc__)
    values, charge, weight, games, processes, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
    fitted = torch.load(f"{values}/latest.pt", weights_only=True)["values"][-1]
    deny = denial_of(torch.load(f"{charge}/latest.pt", weights_only=True)["values"][-1], weight)
    agent = AfterstateAgent(Value.from_state(fitted["value"]), LaterValue(Value.from_state(fitted["later"])), "lookahead",
                            f"{values.rstrip('/').split('/')[-1]}+G{weight:g}", [2], deny=deny if weight else None)
    res = evaluate([agent, "expectimax"], num_players=2, num_games=games, seed=4242, game="grinch", processes=processes)
    write_report(res, out)
    print(res.table(), flush=True)


if __name__ == "__main__":
    main()
