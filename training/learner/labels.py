"""Label quality: are the search's choices better than the network's own, in the real game against the real opponents?

Expert iteration distils the search's choices into the network; it can only help where those choices are better
than the network's.  This test settles that before any distillation.  The network alone plays one seat (seat-rotated,
paired deals) against ``n - 1`` copies of the opponent; at each of its decisions where the search looks at two or
more candidates, the search labels the position.  Where the label differs from the network's first choice, both
actions are played from the *true* position (not a determinisation: the hidden cards as they lie) to the round's
end: the learner's seat by the network's greedy policy, every other seat by a copy of its real agent (its random
state included), both branches with the same chance stream.  The leaf is the searcher's margin of the totals
(``Game.rewards("margin")``, the leaf of ``horizon=round``), so the difference of the two branches is the
difference of the round's margins, in the units the learner is trained on (points / 100).

The branch of the network's own action replays the real game to the round's end exactly (tested), so a positive
mean difference says the labels would have scored better where they disagree.  One branch pair per disagreement is
one draw of the hidden cards' consequences; the mean over many decisions is an unbiased estimate of the expected
gain, with a t interval::

    python -m training.learner.labels --agent checkpoints/learner_gnoming_league_373min \\
        --search samples=8,top_k=3,horizon=round --opponent search --players 3 --games 12
"""

from __future__ import annotations

import argparse
import copy
import math
from typing import Any

import numpy as np
import torch

from grinch_env.games import get_game

STUDENT_T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 10: 2.228, 20: 2.086, 30: 2.042, 60: 2.000}


def t_975(dof: int) -> float:
    """Return the two-sided 95% Student t quantile for ``dof`` degrees of freedom (table, then the normal's 1.96)."""
    if dof < 1:
        return math.inf
    for k in sorted(STUDENT_T_975):
        if dof <= k:
            return STUDENT_T_975[k]
    return 1.96


def branch_value(state: Any, action: int, me: int, learner: Any, agents: list[Any], spec: Any) -> float:
    """Return seat ``me``'s margin (``rewards("margin")``) when ``state``'s current round ends after ``action``.

    ``state`` is cloned (with a copy of its random generator); seat ``me`` plays on by ``learner(obs, mask)``, every
    other seat by a deep copy of ``agents[seat]`` (its random state too), so the branch of the action the real game
    took replays the real game.
    """
    game = state.clone()
    players = {s: copy.deepcopy(a) for s, a in enumerate(agents) if s != me}
    encoder = spec.encoder()
    start_round = game.round
    game.step(int(action))
    while not game.done and game.round == start_round:
        seat = game.current
        view = encoder.observe(game, seat)
        act = learner(view["observation"], view["action_mask"]) if seat == me else players[seat].act(view["observation"], view["action_mask"])
        game.step(int(act))
    return float(game.rewards("margin")[me])


def label_quality(agent: str, search: str = "samples=8,top_k=3,horizon=round", opponent: str = "search", num_players: int = 3,
                  games: int = 12, seed: int = 0, game: str | None = None, decisions: int | None = None,
                  labeller: str | None = None) -> list[dict[str, Any]]:
    """Return one record per decision the search labelled: phase, the network's action, the label and, where they
    differ, both branches' leaf values (``v_net``, ``v_label``).  ``decisions`` caps the labelled decisions.

    ``labeller`` (an agent name, e.g. ``greedy``) labels every decision with two or more legal actions by that agent's
    choice instead of the search's: a diagnostic of where the network departs from a baseline, and whether it gains."""
    from grinch_env.agents import make_agent
    from training.learner.search import load_learner

    _, cfg, _ = load_learner(agent)
    spec = get_game(game or cfg["game"])
    searcher = make_agent(f"{agent}:search=1,{search}", num_players=num_players, game=spec.name, seed=seed).search
    if labeller is None and searcher.horizon != "round":
        raise ValueError(f"label quality compares round margins: give the search horizon=round, got horizon={searcher.horizon}")
    judge = None if labeller is None else make_agent(labeller, num_players=num_players, game=spec.name, seed=seed)

    def network(obs: np.ndarray, mask: np.ndarray) -> int:
        return int(searcher.prior(np.asarray(obs, np.float32), np.asarray(mask).astype(bool))[0])

    rng = np.random.default_rng(seed)
    records: list[dict[str, Any]] = []
    for i in range(games):
        me, deal = i % num_players, seed * 100_003 + i // num_players  # seat-rotated, paired deals
        agents: list[Any] = [None] * num_players
        for s in range(num_players):
            if s != me:
                agents[s] = make_agent(opponent, num_players=num_players, game=spec.name, seed=deal * 10 + s)
                agents[s].reset(deal * 10 + s)
        state = spec.new_game(num_players, deal)
        encoder = spec.encoder()
        while not state.done:
            seat = state.current
            view = encoder.observe(state, seat)
            obs, mask = view["observation"], view["action_mask"]
            if seat != me:
                state.step(int(agents[seat].act(obs, mask)))
                continue
            action = network(obs, mask)
            if np.asarray(mask).sum() >= 2 and (decisions is None or len(records) < decisions):
                if judge is None:
                    label = searcher.choose(np.asarray(obs, np.float32), np.asarray(mask).astype(bool), rng)
                else:
                    label = int(judge.act(obs, mask))
                if judge is not None or len(searcher.last["candidates"]) > 1:
                    rec = {"game": i, "phase": str(getattr(state.phase, "value", state.phase)), "net": action, "label": label}
                    if label != action:
                        rec["v_net"] = branch_value(state, action, me, network, agents, spec)
                        rec["v_label"] = branch_value(state, label, me, network, agents, spec)
                    records.append(rec)
            state.step(action)
    return records


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the counts and the mean gain of the labels over the network's choices where they differ, with a 95% t interval."""
    diff = np.array([r["v_label"] - r["v_net"] for r in records if "v_label" in r])
    out: dict[str, Any] = {"labelled": len(records), "differ": len(diff), "better": int((diff > 0).sum()),
                           "worse": int((diff < 0).sum()), "equal": int((diff == 0).sum())}
    if len(diff):
        half = t_975(len(diff) - 1) * (diff.std(ddof=1) / math.sqrt(len(diff)) if len(diff) > 1 else math.inf)
        out.update(mean_gain=float(diff.mean()), ci=(float(diff.mean() - half), float(diff.mean() + half)))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.learner.labels", description=__doc__.split("\n\n")[0])
    p.add_argument("--agent", required=True, help="a learner checkpoint (run directory or .pt)")
    p.add_argument("--search", default="samples=8,top_k=3,horizon=round", help="the labelling search's options (horizon=round)")
    p.add_argument("--opponent", default="search", help="the agent in every other seat")
    p.add_argument("--labeller", default=None, metavar="AGENT", help="label by this agent's choices (e.g. greedy) instead of the search's")
    p.add_argument("--players", type=int, default=3)
    p.add_argument("--games", type=int, default=12)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--decisions", type=int, default=None, help="label at most this many decisions (default: all)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    try:
        records = label_quality(args.agent, args.search, args.opponent, args.players, args.games, args.seed, decisions=args.decisions,
                                labeller=args.labeller)
    except ValueError as exc:
        p.error(str(exc))
    s = summary(records)
    by = f"search {args.search}" if args.labeller is None else f"{args.labeller}'s choices"
    print(f"{args.agent} labelled by {by} against {args.players - 1} x {args.opponent}, {args.games} games (seed {args.seed})")
    print(f"  labelled decisions {s['labelled']}; the label differs from the network's choice in {s['differ']}")
    if s["differ"]:
        lo, hi = s["ci"]
        print(f"  where they differ, the label's round margin minus the network's: mean {100 * s['mean_gain']:+.2f} points "
              f"[95% CI {100 * lo:+.2f}, {100 * hi:+.2f}]; label better {s['better']}, worse {s['worse']}, equal {s['equal']}")
        by_phase: dict[str, list[float]] = {}
        for r in records:
            if "v_label" in r:
                by_phase.setdefault(r["phase"], []).append(r["v_label"] - r["v_net"])
        for phase, d in sorted(by_phase.items()):
            print(f"    {phase}: {len(d)} decisions, mean {100 * float(np.mean(d)):+.2f} points")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
