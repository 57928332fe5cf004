"""Diagnose the search's value leaf on real positions: how the horizon-0 leaf, the leaf read at the searcher's own next turn, and the Monte-Carlo round margin rank the same candidates.

The network plays one seat against greedy opponents; at each of its decisions with two or more legal actions
the top_k candidates of its prior are valued on the same determinisations and chance streams three ways:

* ``h0_old``: the value head read right after the candidate, whoever is to act (the search before the fix);
* ``h0_own``: the other seats played on with the network's greedy policy until the searcher is to act again
  (or the round ends), then the value head (the search after the fix, ``horizon=0``);
* ``mc``: played on with the network's greedy policy to the round's end, the exact round margin (``horizon=round``).

It prints, per leaf, how often its argmax is the prior's first candidate and the MC argmax, and the Pearson
correlation of its values with the MC values (within each decision: deviations from the decision's mean)::

    python -m training.learner.leafdiag --agent /tmp/long167/latest.pt --games 4
"""

from __future__ import annotations

import argparse
import collections

import numpy as np
import torch

from training.learner.search import NetSearch, load_learner


def values_of(search: NetSearch, obs: np.ndarray, cands: np.ndarray, seeds: np.ndarray) -> tuple[np.ndarray, int]:
    """Return the candidates' mean leaf values under ``search`` and how many copies the candidate itself ended the round in."""
    games, me, start_round = search.candidate_games(obs, cands, seeds)
    ends = sum(g.round != start_round or g.done for g in games)
    return search.rollout(games, me, start_round).reshape(len(cands), len(seeds)).mean(1), ends


def main(argv: list[str] | None = None) -> int:
    from grinch_env.agents import make_agent
    from grinch_env.evaluation.evaluate import evaluate
    from grinch_env.gnoming.encoding import decode_game

    p = argparse.ArgumentParser(prog="python -m training.learner.leafdiag", description=__doc__.split("\n\n")[0])
    p.add_argument("--agent", required=True)
    p.add_argument("--games", type=int, default=4)
    p.add_argument("--samples", type=int, default=8)
    p.add_argument("--top_k", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--decisions", type=int, default=None, help="diagnose at most this many decisions, then play on without (default: all)")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    net, cfg, _ = load_learner(args.agent)
    net.eval()
    kw = dict(
        game=cfg["game"],
        algo=cfg["algo"],
        credit=cfg.get("credit", "game"),
        reward_mode=cfg.get("reward_mode", "margin"),
        samples=args.samples,
        top_k=args.top_k,
    )
    leaves = {
        "h0_old": NetSearch(net, horizon=0, **kw),
        "h0_own": NetSearch(net, horizon=0, **kw),
        "mc": NetSearch(net, horizon="round", **kw),
    }
    leaves["h0_old"].own_turn_leaf = False  # the search before the fix
    agent = make_agent(args.agent, seed=args.seed, num_players=3, game=cfg["game"])
    rows: list[dict] = []
    rng = np.random.default_rng(args.seed)
    orig = agent.act

    def act(observation, action_mask):
        obs, mask = np.asarray(observation, np.float32), np.asarray(action_mask).astype(bool)
        if mask.sum() >= 2 and (args.decisions is None or len(rows) < args.decisions):
            order = leaves["mc"].prior(obs, mask)
            cands = order[: args.top_k]
            seeds = rng.integers(2**62, size=args.samples)
            row = {"phase": str(decode_game(obs, np.random.default_rng(0)).phase), "n": len(cands)}
            for name, s in leaves.items():
                row[name], row["ends"] = values_of(s, obs, cands, seeds)
            rows.append(row)
        return orig(observation, action_mask)

    agent.act = act
    evaluate([agent, "greedy", "greedy"], num_players=3, num_games=args.games, seed=args.seed, game=cfg["game"])
    print(f"{len(rows)} decisions with >= 2 legal actions diagnosed, {args.games} games, samples={args.samples}, top_k={args.top_k}")
    by_phase = collections.Counter(r["phase"] for r in rows)
    mc_best = [int(np.argmax(r["mc"])) for r in rows]
    for name in ("h0_old", "h0_own", "mc"):
        best = [int(np.argmax(r[name])) for r in rows]
        dev_x = np.concatenate([r[name] - r[name].mean() for r in rows])
        dev_y = np.concatenate([r["mc"] - r["mc"].mean() for r in rows])
        corr = float(np.corrcoef(dev_x, dev_y)[0, 1]) if dev_x.std() > 0 else float("nan")
        raw = float(np.corrcoef(np.concatenate([r[name] for r in rows]), np.concatenate([r["mc"] for r in rows]))[0, 1])
        prior = np.mean([b == 0 for b in best])
        agree = np.mean([b == m for b, m in zip(best, mc_best)])
        phases = {ph: f"{np.mean([b == 0 for b, r in zip(best, rows) if r['phase'] == ph]):.2f}" for ph in by_phase}
        print(
            f"{name}: argmax = prior's first {prior:.3f}; = MC argmax {agree:.3f}; corr with MC: raw {raw:.3f}, within-decision {corr:.3f}; "
            f"prior kept by phase {phases}"
        )
        bias = np.mean([(r[name] - r["mc"]).mean() for r in rows])
        spread = np.mean([r[name].std() for r in rows])
        print(f"    mean (leaf - MC) {bias:+.4f}; mean spread of the candidates' values within a decision (std) {spread:.4f}")
    print("phases", dict(by_phase), "decisions where a candidate ends the round:", sum(r["ends"] > 0 for r in rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
