"""Pool the results of several seat-rotated matches of the same line-up into one, with one interval per agent.

A long match can be played in blocks (other seeds, other sessions or machines): each block is a balanced,
seat-rotated, paired-deal match of its own (``python -m grinch_env.evaluation ... --seed S --out DIR`` writes
``DIR/results.json``), and blocks with different seeds deal different cards, so their games add up::

    python -m grinch_env.evaluation.pool /tmp/block_4242/results.json /tmp/block_4243/results.json

Per agent it prints the pooled games, wins and win rate with its Wilson 95% interval, and the mean score with its
normal 95% interval.  Blocks must hold the same game, table size and agents, each balanced, with distinct seeds.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grinch_env.evaluation.ratings import mean_interval, wilson_interval


def pool(results: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Return per agent ``games``, ``wins``, ``win_rate``, ``win_rate_ci``, ``mean_score``, ``mean_score_ci`` of the pooled blocks.

    Raise ``ValueError`` naming what differs when the blocks are not one line-up's balanced matches on distinct seeds.
    """
    if not results:
        raise ValueError("pool needs at least one results.json")
    first = results[0]
    for key in ("game", "num_players", "agents"):
        for r in results[1:]:
            if r[key] != first[key]:
                raise ValueError(f"blocks differ in {key}: {first[key]!r} against {r[key]!r}; pool only blocks of one line-up")
    seeds = [r["seed"] for r in results]
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"blocks share a seed ({seeds}): they would count the same deals twice; give each block its own --seed")
    for r in results:
        if not r["balanced"]:
            raise ValueError(f"the block with seed {r['seed']} is not balanced ({r['num_games']} games is not a multiple of its "
                             f"{r['cycle_size']} line-ups): every agent must play every seat equally often")
    out: dict[str, dict[str, Any]] = {}
    for name in first["agents"]:
        games = sum(r["per_agent"][name]["seat_games"] for r in results)
        wins = sum(r["per_agent"][name]["wins"] for r in results)
        scores = [s for r in results for s in r["per_agent"][name]["scores"]]
        mean, lo, hi = mean_interval(scores)
        out[name] = {"games": games, "wins": wins, "win_rate": wins / games, "win_rate_ci": list(wilson_interval(wins, games)),
                     "mean_score": mean, "mean_score_ci": [lo, hi]}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grinch_env.evaluation.pool", description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", help="results.json files of the blocks (python -m grinch_env.evaluation ... --out DIR)")
    args = p.parse_args(argv)
    try:
        blocks = [json.loads(Path(f).read_text()) for f in args.results]
        pooled = pool(blocks)
    except (OSError, json.JSONDecodeError, KeyError, ValueError) as err:
        p.error(str(err))
    seeds = ", ".join(str(b["seed"]) for b in blocks)
    print(f"{blocks[0]['game']}, {blocks[0]['num_players']} players: {len(blocks)} blocks (seeds {seeds}), "
          f"{sum(b['num_games'] for b in blocks)} games")
    for name, a in pooled.items():
        lo, hi = a["win_rate_ci"]
        mlo, mhi = a["mean_score_ci"]
        print(f"  {name}: {a['games']} games, {a['wins']:g} wins, win rate {a['win_rate']:.3f} [{lo:.3f}, {hi:.3f}], "
              f"mean score {a['mean_score']:.1f} [{mlo:.1f}, {mhi:.1f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
