"""Pool the results of several seat-rotated matches of the same line-up into one, with one interval per agent.

A long match can be played in blocks (other seeds, other sessions or machines): each block is a balanced,
seat-rotated, paired-deal match of its own (``python -m grinch_env.evaluation ... --seed S --out DIR`` writes
``DIR/results.json``), and blocks with different seeds deal different cards, so their games add up::

    python -m grinch_env.evaluation.pool /tmp/block_4242/results.json /tmp/block_4243/results.json

A ``.jsonl`` file holds many blocks, one ``results.json`` object per line (a batch of small blocks played on many
cores at once writes them so).
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


def read_blocks(path: str | Path) -> list[dict[str, Any]]:
    """The blocks in ``path``: one ``results.json`` object, or one per non-empty line of a ``.jsonl`` file."""
    text = Path(path).read_text()
    if str(path).endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(text)]


def _seed_list(seeds: list[int]) -> str:
    """``seeds 0, 1, 5`` for a few seeds; ``66 seeds from 4300 to 4515`` for many."""
    return "seeds " + ", ".join(map(str, seeds)) if len(seeds) <= 8 else f"{len(seeds)} seeds from {min(seeds)} to {max(seeds)}"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m grinch_env.evaluation.pool", description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", help="results.json files of the blocks (python -m grinch_env.evaluation ... --out DIR), "
                   "or .jsonl files with one such object per line")
    args = p.parse_args(argv)
    try:
        blocks = [b for f in args.results for b in read_blocks(f)]
        pooled = pool(blocks)
    except (OSError, json.JSONDecodeError, KeyError, ValueError) as err:
        p.error(str(err))
    seeds = _seed_list([b["seed"] for b in blocks])
    print(f"{blocks[0]['game']}, {blocks[0]['num_players']} players: {len(blocks)} blocks ({seeds}), "
          f"{sum(b['num_games'] for b in blocks)} games")
    for name, a in pooled.items():
        lo, hi = a["win_rate_ci"]
        mlo, mhi = a["mean_score_ci"]
        print(f"  {name}: {a['games']} games, {a['wins']:g} wins, win rate {a['win_rate']:.3f} [{lo:.3f}, {hi:.3f}], "
              f"mean score {a['mean_score']:.1f} [{mlo:.1f}, {mhi:.1f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
