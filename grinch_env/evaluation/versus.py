"""One agent against baselines: the evaluations a trainer runs (periodic win rates, the final report), for every game.

:func:`evaluate_against` plays one seat of ``agent`` against ``n - 1`` copies
of each opponent at each table size; :func:`role_results` splits its results
by the role of its seat in the first round (the game's ``roles``: the first
Grinch / a Who, the first starter / another seat) and by round role;
:func:`write_final_report` writes the report directory a run ships with.
Needs no torch: the random streams of torch are only guarded when torch is loaded.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from grinch_env.evaluation.ratings import wilson_interval
from grinch_env.games import DEFAULT_GAME, get_game

REPORT_DIR = "report"


class GlobalRngGuard:
    """Keep evaluations from consuming a trainer's global random streams (so a resumed run stays exact)."""

    def __enter__(self) -> None:
        self._py = random.getstate()
        self._np = np.random.get_state()
        torch = sys.modules.get("torch")
        self._torch = torch.get_rng_state() if torch is not None else None

    def __exit__(self, *exc: object) -> None:
        random.setstate(self._py)
        np.random.set_state(self._np)
        if self._torch is not None:
            sys.modules["torch"].set_rng_state(self._torch)


def evaluate_against(agent: Any, opponents: list[str], table_sizes: list[int], games: int, seed: int, processes: int = 1,
                     game: str = DEFAULT_GAME) -> dict[str, Any]:
    """Return ``{"<opponent>@<n>p": result}``: ``agent`` in one seat, ``opponent`` in the others (seats rotated by the evaluator)."""
    from grinch_env.evaluation.evaluate import evaluate

    results = {}
    with GlobalRngGuard():
        for n in table_sizes:
            for opp in opponents:
                results[f"{opp}@{n}p"] = evaluate([agent] + [opp] * (n - 1), num_players=n, num_games=games, seed=seed, processes=processes, game=game)
    return results


def learner_win_rate(result: Any, agent_index: int = 0) -> float:
    """Return the win rate of the agent at ``agent_index`` from an :class:`EvalResult`."""
    return float(result.per_agent[result.agents[agent_index]]["win_rate"])


def _round_winners(points: list[int], highest_wins: bool) -> list[int]:
    best = max(points) if highest_wins else min(points)
    return [s for s, p in enumerate(points) if p == best]


def role_results(result: Any, agent_index: int = 0) -> dict[str, dict[str, float]]:
    """Return the agent's results by role, with Wilson 95% intervals.

    For the Grinch (roles Grinch/Who): ``game_as_first_grinch`` /
    ``game_as_first_who``, its game win rate split by whether it was the first
    round's Grinch (seat 0 in the evaluator) or a Who; ``round_as_grinch`` /
    ``round_as_who``, its share of round wins (best points in that round, ties
    split) in the rounds it played in that role.  Other games name the keys
    after their roles (Gnoming: ``game_as_first_starter``, ``round_as_other``, ...).
    """
    spec = get_game(getattr(result, "game", DEFAULT_GAME))
    first, other = (r.lower() for r in spec.roles)
    keys = (f"game_as_first_{first}", f"game_as_first_{other}", f"round_as_{first}", f"round_as_{other}")
    tallies = {key: [0.0, 0] for key in keys}
    for rec in result.games:
        seats = [s for s, a in enumerate(rec["lineup"]) if a == agent_index]
        for s in seats:
            key = keys[0] if s == 0 else keys[1]
            tallies[key][0] += 1.0 / len(rec["winners"]) if s in rec["winners"] else 0.0
            tallies[key][1] += 1
            for rnd in rec["rounds"]:
                if not rnd[s]:
                    continue
                winners = _round_winners([e["points"] for e in rnd], spec.highest_total_wins)
                key = f"round_as_{rnd[s]['role'].lower()}"
                tallies[key][0] += 1.0 / len(winners) if s in winners else 0.0
                tallies[key][1] += 1
    out = {}
    for key, (wins, n) in tallies.items():
        lo, hi = wilson_interval(wins, n)
        out[key] = {"rate": wins / n if n else float("nan"), "ci": [lo, hi], "n": n}
    return out


def format_roles(roles: dict[str, dict[str, float]]) -> str:
    """Return one text line of :func:`role_results`."""
    return "  ".join(f"{k.replace('_', ' ')} {v['rate']:.3f} [{v['ci'][0]:.3f}, {v['ci'][1]:.3f}] (n={v['n']})" for k, v in roles.items())


def write_final_report(run_dir: Path, agent: Any, opponents: list[str], table_sizes: list[int], games: int, seed: int, processes: int = 1,
                       evaluator: Callable[..., dict[str, Any]] = evaluate_against, game: str = DEFAULT_GAME,
                       checkpoint_name: str = "best.pt") -> str:
    """Evaluate ``agent`` (one seat) against each opponent at each table size; write ``<run_dir>/report/`` and return the text."""
    from grinch_env.evaluation.evaluate import write_report

    results = evaluator(agent, opponents, table_sizes, games, seed=seed, processes=processes, game=game)
    lines = [f"final evaluation of {Path(run_dir) / checkpoint_name} ({games} games per line, seats rotated)"]
    summary = {}
    for key, result in results.items():
        out = Path(run_dir) / REPORT_DIR / key.replace(":", "_").replace("=", "").replace("@", "_")
        write_report(result, out)
        roles = role_results(result)
        me = result.per_agent[result.agents[0]]
        summary[key] = {"win_rate": me["win_rate"], "win_rate_ci": me["win_rate_ci"], "mean_score": me["mean_score"],
                        "mean_score_ci": me["mean_score_ci"], "games": result.num_games, "roles": roles}
        lines += [f"--- {key}: one {result.agents[0]} seat against {result.num_players - 1} x {key.split('@')[0]} ---", result.table(), format_roles(roles)]
    (Path(run_dir) / REPORT_DIR).mkdir(parents=True, exist_ok=True)
    (Path(run_dir) / REPORT_DIR / "summary.json").write_text(json.dumps(summary, indent=1))
    text = "\n".join(lines)
    (Path(run_dir) / REPORT_DIR / "summary.txt").write_text(text + "\n")
    return text


__all__ = ["GlobalRngGuard", "evaluate_against", "format_roles", "learner_win_rate", "role_results", "write_final_report"]
