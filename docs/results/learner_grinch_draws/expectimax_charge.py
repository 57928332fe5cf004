"""The learned charge inside ``expectimax``'s search: does ``G`` add to a search that plays its own hand as well as ``V``?

``expectimax`` values every Who discard by its sampled futures of its own hand (points this round plus its rows' future
value, :mod:`grinch_env.grinch.agents.expectimax`); ``MODE``:

* ``charge``: that value less ``G``, the Grinch's points in the round after the discard, of afterstate run ``RUN``
  (a ``deny: true`` run; weight 1/(n-1)); every other decision is ``expectimax``'s own.
* ``mix``: the mean of ``expectimax``'s value and ``RUN``'s look-ahead worth (``play=lookahead``) of each discard, less
  ``G``; draws and rows are ``expectimax``'s.

One seat against ``expectimax`` in the others, seat-rotated paired deals, seed ``SEED``, ``GAMES`` games;
``OUT/results.json`` (as ``python -m grinch_env.evaluation --out``) pairs with any other evaluation of those deals
through ``paired.py``.  docs/results/learner_grinch.md, twenty-sixth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/expectimax_charge.py RUN MODE PLAYERS GAMES SEED PROCESSES OUT
"""
import sys

import numpy as np
import torch

from grinch_env.evaluation.evaluate import evaluate, write_report
from grinch_env.grinch.agents.expectimax import ExpectimaxAgent
from grinch_env.grinch.game import NUM_ACTIONS
from training.learner.afterstate import LaterValue, Value, denial_of, scorer

MODES = ("charge", "mix")


class ChargedExpectimax(ExpectimaxAgent):
    """``expectimax`` whose Who discards pay ``G`` (``mode`` ``charge``), or are valued half by ``RUN``'s look-ahead too (``mix``)."""

    def __init__(self, fitted: dict, mode: str, seed: int | None = None) -> None:
        super().__init__(seed)
        self.deny = denial_of(fitted)
        if self.deny is None:
            raise SystemExit("RUN fitted no G: it must be a deny: true run")
        self.look = scorer(Value.from_state(fitted["value"]), LaterValue(Value.from_state(fitted["later"])), "lookahead") if mode == "mix" else None
        self.mode, self.name, self._obs = mode, f"expectimax+G:{mode}", None

    def _act(self, observation: np.ndarray, legal: np.ndarray) -> int:
        self._obs = np.asarray(observation, np.float32)
        return super()._act(observation, legal)

    def _discard_values(self, view, legal, offsets):
        values = super()._discard_values(view, legal, offsets)
        if self._utility is not None:  # the last round's win chances: not points, so nothing to add them to
            return values
        if self.look is not None:
            mask = np.zeros(NUM_ACTIONS, bool)
            mask[legal] = True
            acts, worth = self.look.discards(self._obs, mask)
            values = (values + worth[np.searchsorted(acts, legal)]) / 2
        return values - self.deny(self._obs, legal)


def main() -> None:
    if len(sys.argv) != 8 or sys.argv[2] not in MODES:
        raise SystemExit(__doc__)
    run, mode, players, games, seed, processes, out = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7]), sys.argv[7]
    fitted = torch.load(f"{run}/latest.pt", weights_only=True)["values"][-1]
    agent = ChargedExpectimax(fitted, mode)
    res = evaluate([agent] + ["expectimax"] * (players - 1), num_players=players, num_games=games, seed=seed, game="grinch", processes=processes)
    write_report(res, out)
    print(res.table(), flush=True)


if __name__ == "__main__":
    main()
