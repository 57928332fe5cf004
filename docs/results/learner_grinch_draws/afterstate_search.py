"""The afterstate values of ``afterstate_pi.py`` (target ``td``) with the rules at the round's end: the last discard
and the Grinch's last draws valued by the final hand's best row, ``W`` after it and the bonus
(``RulesLeafValue``), and with ``LOOKAHEAD`` a Who's second discard by every pair of cards it may draw next.
Refits generation ``GEN``'s ``V`` and ``W`` from ``afterstate_pi.py``'s cached games (the same fit, so the same
networks), then plays them against each opponent in ``OPPONENTS``: 2 players, seat-rotated paired deals, seed 4242.
docs/results/learner_grinch.md, nineteenth session.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_grinch_draws/afterstate_search.py NETWORK GAMES GEN VARIANTS OPPONENTS MATCH_GAMES

``VARIANTS``: comma-separated from ``value`` (``V`` and ``W`` alone), ``leaf`` (the rules at the round's end) and
``lookahead`` (and the Who's second discard by the next pair), ``lookahead2`` (and its first discard by the next
pair and ``V``); ``OPPONENTS`` e.g. ``greedy,expectimax``.  With
``OPPONENTS`` ``timing``, each variant plays ``MATCH_GAMES`` games against `expectimax` with both agents' decisions
timed one at a time (CPU time of this process): milliseconds a decision of each.
"""
import sys
import time
from pathlib import Path

import numpy as np
import torch
from afterstate_pi import RulesLeafValue, ValueAgent, fit_generation
from afterstate_value import ARGS, match

VARIANTS = ("value", "leaf", "lookahead", "lookahead2")


class Timed:
    """An agent whose decisions are timed (CPU seconds, one decision at a time)."""

    def __init__(self, agent) -> None:
        self.agent, self.name, self.seconds, self.decisions = agent, agent.name, 0.0, 0

    def reset(self, seed=None):
        self.agent.reset(seed)

    def act(self, observation, action_mask):
        start = time.process_time()
        action = self.agent.act(observation, action_mask)
        self.seconds += time.process_time() - start
        self.decisions += 1
        return action


def timing(agent, games: int) -> str:
    from grinch_env.agents import make_agent
    from grinch_env.evaluation.evaluate import evaluate

    ours, theirs = Timed(agent), Timed(make_agent("expectimax", num_players=2, game="grinch"))
    evaluate([ours, theirs], num_players=2, num_games=games, seed=4242, game="grinch")
    return (f"{1000 * ours.seconds / ours.decisions:.1f} ms a decision over {ours.decisions}; `expectimax` "
            f"{1000 * theirs.seconds / theirs.decisions:.1f} over {theirs.decisions}")


def main() -> None:
    torch.set_num_threads(1)
    network, games, gen = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    variants, opponents, match_games = sys.argv[4].split(","), sys.argv[5].split(","), int(sys.argv[6])
    if set(variants) - set(VARIANTS):
        raise SystemExit(f"VARIANTS must come from {', '.join(VARIANTS)}, got {sys.argv[4]}")
    ARGS["network"] = network
    name = Path(network).name
    paths = [Path(f"/tmp/afterstate_value_{name}_{games}_rows.npz")] + [
        Path(f"/tmp/afterstate_pi_{name}_{games}_td_gen{g}.npz") for g in range(1, gen + 1)]
    gens = [dict(np.load(p)) for p in paths]
    value, later = fit_generation(gens, "td", gen)
    for variant in variants:
        v = value if variant == "value" else RulesLeafValue(value, later, variant != "leaf", variant == "lookahead2")
        for opponent in opponents:
            if opponent == "timing":
                print(f"generation {gen}, {variant}: {timing(ValueAgent(v, network, True, f'V{gen} {variant}', later), match_games)}", flush=True)
                continue
            start = time.process_time()
            res = match(ValueAgent(v, network, True, f"V{gen} {variant}", later), opponent, match_games)
            print(f"generation {gen}, {variant}: against {opponent}, {match_games} games: {res} "
                  f"({time.process_time() - start:.0f} CPU-s)", flush=True)


if __name__ == "__main__":
    main()
