"""Where the network alone loses to its look-ahead: the discards on which ``V`` and the look-ahead disagree, and what it costs.

Run ``RUN``'s agent with its look-ahead (``play=lookahead``) plays ``GAMES`` games against ``expectimax`` (2 players,
seat-rotated paired deals, seed 4242). At each of its discards that the look-ahead values by the rules (the last
discard of a round, which leaves the final hand; and a Who's second discard, valued over every pair it may draw next)
it also asks ``V`` alone (``play=value``) for its pick, and records whether the two agree and the look-ahead's worth
lost by ``V``'s pick (points, the look-ahead's own valuation). docs/results/learner_grinch.md, twenty-sixth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/alone_vs_lookahead.py RUN GAMES
"""
import sys

import numpy as np
import torch

from grinch_env.evaluation.evaluate import evaluate
from grinch_env.grinch import encoding as enc
from grinch_env.grinch.cards import NUM_CARDS
from training.learner.afterstate import AfterstateAgent, LaterValue, Value, denial_of, discard_worths, scorer


class Watched(AfterstateAgent):
    """The look-ahead agent, noting ``V``'s pick beside its own on the discards the look-ahead changes."""

    def __init__(self, fitted: dict) -> None:
        value, later = Value.from_state(fitted["value"]), LaterValue(Value.from_state(fitted["later"]))
        super().__init__(value, later, "lookahead", "lookahead(watched)", [2], deny=denial_of(fitted))
        self.alone = scorer(value, later, "value")
        self.log: dict[str, list[tuple[bool, float]]] = {"last discard (final hand)": [], "a Who's second discard": []}

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        obs, mask = np.asarray(observation, np.float32), np.asarray(action_mask).astype(bool)
        size = int((obs[:NUM_CARDS] > 0.5).sum()) - 1
        kind = "last discard (final hand)" if size == 5 else "a Who's second discard" if size == 4 and obs[enc.GRINCH_SEAT] < 0.5 else None
        if kind is None or not mask[:NUM_CARDS].any() or mask.sum() < 2:
            return super().act(observation, action_mask)
        acts, look = discard_worths(self.scorer, self.deny, obs, mask)
        _, alone = discard_worths(self.alone, self.deny, obs, mask)
        mine, its = int(np.argmax(look)), int(np.argmax(alone))
        self.log[kind].append((mine == its, float(look[mine] - look[its])))
        return int(acts[mine])


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    run, games = sys.argv[1], int(sys.argv[2])
    agent = Watched(torch.load(f"{run}/latest.pt", weights_only=True)["values"][-1])
    res = evaluate([agent, "expectimax"], num_players=2, num_games=games, seed=4242, game="grinch", processes=1)
    print(f"{games} games, the look-ahead agent's win share {res.per_agent[res.agents[0]]['win_rate']:.3f} against expectimax")
    for kind, rows in agent.log.items():
        agree = np.array([a for a, _ in rows])
        lost = np.array([c for _, c in rows])
        per_game = lost.sum() / games
        print(f"{kind}: {len(rows)} decisions, V alone picks the look-ahead's discard {agree.mean():.3f}; "
              f"where it does not, it gives up {lost[~agree].mean():.2f} points (look-ahead's worth); "
              f"{per_game:.2f} points a game in all")


if __name__ == "__main__":
    main()
