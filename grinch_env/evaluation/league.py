"""A league table: every agent against every other, round-robin, on paired and seat-rotated deals, with ratings.

Usage::

    python -m grinch_env.evaluation.league --game grinch --players 4 --games 120 --out reports/league
    python -m grinch_env.evaluation.league --game gnoming --players 5 --agents random,greedy,search:samples=8 --games 100
    python -m grinch_env.evaluation.league --game grinch --players 2 --agents random,greedy --games 20
    python -m grinch_env.evaluation.league --players 4 --agents greedy,expectimax,checkpoints/champion_grinch --processes 2

In code: ``league("grinch", 4, ["random", "greedy"], games=120)`` returns a :class:`LeagueResult`
(``.table()``, ``.to_json()``, ``.plot(path)``, ``.write(out_dir)``).

Design (``docs/league.md``).  With ``n`` seats, the match *A alone vs B* is
:func:`~grinch_env.evaluation.evaluate.evaluate` of the line-up ``[A] + [B] * (n - 1)``: one A against ``n - 1``
copies of B, the harness rotating A through every seat of each deal (its cycle is ``n`` line-ups, so the games per
match are a multiple of ``n``: a requested count that is not is rounded up to the next multiple, with a note).
Every match of a league is played with the same seed, hence on the same deals, and game ``i`` of every match puts
the lone agent in the same seat (``i % n`` of the rotation): the two matches of a pair (A alone vs B, B alone vs A)
replay each deal seat for seat.  At two players both directions are one match (``[A, B]``), read from either side
(playing ``[B, A]`` too would repeat the same games).

* **default agents**: the game's baselines that play from the observation (:data:`BASELINES`: ``random``,
  ``greedy`` and the search baseline, ``expectimax`` for the Grinch and ``search`` for Gnoming) and ``champion``
  if ``make_agent("champion", game=G, num_players=N)`` loads (left out with a note if it does not).
* **cell (A, B)**: A's win share in the seat it holds alone (shared wins split, as the harness counts them), its
  95% Wilson interval, and its parity ``1 / n`` (the share of an agent no better than the field);
  also the paired mean score difference: per game, A's total minus the mean of the other seats' totals, averaged
  over the ``n`` games of each deal (one per seat, so deal and seat luck cancel) and then over the deals, with a
  normal 95% interval over the deals (raw points: for a game where the lowest total wins a negative difference
  favours A).
* **ratings**: openskill Plackett-Luce (:func:`~grinch_env.evaluation.ratings.rate_games`, as the harness rates one
  match) over every game of every match, game ``i`` of each match in turn (match order) for ``i = 0, 1, ...`` so that
  no match is rated last; in a game the lone agent is one team and the copies of the field agent one team with
  the mean of their totals.  The interval is ``mu +- 1.96 sigma``; the order is by ordinal ``mu - 3 sigma``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grinch_env import agents as _agents
from grinch_env.agents import split_specs
from grinch_env.evaluation.evaluate import EvalResult, agent_names, evaluate
from grinch_env.evaluation.ratings import Z95, mean_interval, rate_games, wilson_interval
from grinch_env.evaluation.tournament import build_agent, lineups
from grinch_env.games import DEFAULT_GAME, GAMES, GameSpec, get_game

CHAMPION = "champion"
DEFAULT_GAMES = 120  # games per match; rounded up to a multiple of the table size (126 at 7 players)
# The default league of each game: its built-in baselines that play from the observation alone, the search baseline
# last (the Grinch's ``search`` is left out: about 1.3 s a game at 3 players on one core, 18 times expectimax).  ``champion`` joins them where it loads (:func:`default_agents`).
BASELINES: dict[str, tuple[str, ...]] = {"grinch": ("random", "greedy", "expectimax"), "gnoming": ("random", "greedy", "search")}


def default_agents(game: str | GameSpec, num_players: int, notes: list[str] | None = None) -> list[str]:
    """Return the game's :data:`BASELINES` and ``champion`` if ``make_agent("champion", ...)`` loads at this table size.

    A champion that does not load (not a registered name yet, no checkpoint loader, a broken file: any exception)
    is left out, and a line saying why is appended to ``notes`` (when given).
    """
    spec = get_game(game)
    classes = spec.agent_classes()
    names = [name for name in BASELINES.get(spec.name, tuple(classes)) if name in classes]
    try:
        _agents.make_agent(CHAMPION, game=spec.name, num_players=num_players)
    except Exception as exc:  # not (yet) a name of this game, or its checkpoint cannot be loaded here
        if notes is not None:
            reason = " ".join(str(exc).split()) or "no message"
            reason = reason if len(reason) <= 300 else reason[:297] + "..."
            notes.append(f"note: {CHAMPION!r} left out of the default agents ({type(exc).__name__}: {reason})")
    else:
        names.append(CHAMPION)
    return names


def default_games(num_players: int) -> int:
    """Return :data:`DEFAULT_GAMES` rounded up to a multiple of ``num_players`` (a whole number of deals)."""
    return round_games(DEFAULT_GAMES, num_players)


def round_games(games: int, num_players: int) -> int:
    """Return ``games`` rounded up to a multiple of ``num_players``: whole deals, the lone agent once in each seat of each."""
    return -(-games // num_players) * num_players


@dataclass
class Match:
    """One evaluated match: ``alone`` (league index) in one seat against ``n - 1`` copies of ``field`` (at 2 players,
    one of each)."""

    alone: int
    field: int
    result: EvalResult = field(repr=False)


@dataclass
class LeagueResult:
    """Every match, cell and rating of one league; ``to_json()`` is what ``league.json`` holds."""

    game: str
    num_players: int
    agents: list[str]
    specs: list[str]
    games_per_match: int
    seed: int
    matches: list[Match] = field(repr=False)
    ratings: dict[str, dict[str, Any]]
    cells: list[dict[str, Any]]
    games_requested: int | None = None
    """The games per match asked for (None: the default); :attr:`games_per_match` is it rounded up to a multiple of the table size."""
    notes: list[str] = field(default_factory=list)
    """Lines printed above the table (a champion left out, a rounded game count)."""

    @property
    def spec(self) -> GameSpec:
        return get_game(self.game)

    @property
    def parity(self) -> float:
        return 1.0 / self.num_players

    @property
    def order(self) -> list[str]:
        """The agents, best rating (ordinal) first."""
        return sorted(self.agents, key=lambda a: -self.ratings[a]["ordinal"])

    def cell(self, agent: str, opponent: str) -> dict[str, Any]:
        """Return the cell of ``agent`` alone against ``opponent``'s copies."""
        for c in self.cells:
            if c["agent"] == agent and c["opponent"] == opponent:
                return c
        raise KeyError(f"no cell {agent!r} vs {opponent!r}")

    def win_share_matrix(self) -> list[list[float | None]]:
        """Rows and columns in :attr:`agents` order: the row agent's win share alone against the column agent (None on the diagonal)."""
        return [[None if a == b else self.cell(a, b)["win_share"] for b in self.agents] for a in self.agents]

    def to_json(self) -> dict[str, Any]:
        """Return every figure as plain JSON data (the structure is listed in ``docs/league.md``; NaN as None)."""
        n = self.num_players
        return _plain(
            {
                "game": self.game,
                "num_players": n,
                "games_requested": self.games_requested,
                "games_per_match": self.games_per_match,
                "deals_per_match": self.games_per_match // n,
                "seed": self.seed,
                "parity": self.parity,
                "total_games": sum(m.result.num_games for m in self.matches),
                "notes": self.notes,
                "agents": [{"name": name, "spec": spec} for name, spec in zip(self.agents, self.specs)],
                "ratings": [{"rank": r + 1, "agent": a, **self.ratings[a]} for r, a in enumerate(self.order)],
                "cells": self.cells,
                "win_share_matrix": {"agents": self.agents, "values": self.win_share_matrix()},
                "matches": [
                    {
                        "index": i,
                        "alone": self.agents[m.alone],
                        "field": self.agents[m.field],
                        "lineup": [self.agents[a] for a in _lineup_agents(m, n)],
                        "num_games": m.result.num_games,
                        "cycle_size": m.result.cycle_size,
                        "evaluation": m.result.to_dict(),
                    }
                    for i, m in enumerate(self.matches)
                ],
            }
        )

    def table(self) -> str:
        """Return the ratings and the pairwise table as plain text, best rating first."""
        spec, n, order = self.spec, self.num_players, self.order
        total = sum(m.result.num_games for m in self.matches)
        deals = self.games_per_match // n
        lines = [*self.notes, ""] if self.notes else []
        lines += [
            f"{spec.title} league: {len(self.agents)} agents, {n} players, {len(self.matches)} "
            f"{'match' if len(self.matches) == 1 else 'matches'} of {self.games_per_match} games ({total} games), seed {self.seed}",
            f"every match on the same {_count(deals, 'deal')}, each played {n} times: the lone agent once in each seat "
            f"({'highest' if spec.highest_total_wins else 'lowest'} total wins)",
            "",
            f"ratings: openskill Plackett-Luce over all {total} games; 95% interval mu +- 1.96 sigma; ordered by mu - 3 sigma",
        ]
        width = max(12, *(len(a) for a in order))
        head = f"{'#':>2}  {'agent':<{width}} {'mu':>7} {'95% interval':>18} {'sigma':>6} {'ordinal':>8}"
        lines += [head, "-" * len(head)]
        for r, a in enumerate(order):
            x = self.ratings[a]
            lines.append(
                f"{r + 1:>2}  {a:<{width}} {x['mu']:>7.2f} [{x['ci'][0]:>6.2f}, {x['ci'][1]:>6.2f}] {x['sigma']:>6.2f} {x['ordinal']:>8.2f}"
            )
        field_text = "the column agent" if n == 2 else f"{n - 1} x the column agent"
        lines += [
            "",
            f"pairwise: the row agent alone in one seat against {field_text}: its win share [95% Wilson interval]; "
            f"parity 1/{n} = {self.parity:.3f}",
            "(+ the interval lies above parity, - below)",
        ]
        col = 20  # a column: two spaces, the cell, one character for the mark
        short = [a if len(a) <= col else a[: col - 1] + "~" for a in order]
        head = f"{'':<{width}}" + "".join(f"  {s:>{col}} " for s in short)

        def grid(text_of) -> list[str]:  # one row per agent, one cell per opponent: text_of(cell), or "." on the diagonal
            rows = [head, "-" * len(head)]
            for a in order:
                cells = [f"  {'.':>{col}} " if a == b else text_of(self.cell(a, b)) for b in order]
                rows.append(f"{a:<{width}}" + "".join(cells))
            return rows

        def share(c) -> str:
            mark = {"above": "+", "below": "-"}.get(c["verdict"], " ")
            return f"  {c['win_share']:.3f} [{c['win_share_ci'][0]:.3f}, {c['win_share_ci'][1]:.3f}]{mark}"

        def score(c) -> str:
            lo, hi = c["score_diff_ci"]
            text = f"{c['score_diff']:+.1f} [{lo:+.1f}, {hi:+.1f}]"
            return f"  {text:>{col}} "

        lines += grid(share)
        sign_note = "" if spec.highest_total_wins else " (lowest total wins: negative favours the lone agent)"
        lines += [
            "",
            f"mean score difference per game: lone seat minus the mean of the other seats, paired by deal [95% interval over "
            f"the {_count(deals, 'deal')}]{sign_note}",
        ]
        return "\n".join(lines + grid(score))

    def plot(self, path: str | os.PathLike) -> None:
        """Write one PNG: the ratings with their intervals (best on top) and the pairwise win shares minus parity as a heat map."""
        _plot(self, Path(path))

    def write(self, out_dir: str | os.PathLike) -> list[Path]:
        """Write ``league.json``, ``league.txt`` and ``league.png`` into ``out_dir`` (created); return their paths."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        files = [out / "league.json", out / "league.txt", out / "league.png"]
        files[0].write_text(json.dumps(self.to_json(), indent=1, allow_nan=False))
        files[1].write_text(self.table() + "\n")
        self.plot(files[2])
        return files


def _count(number: int, noun: str) -> str:
    """``"1 deal"``, ``"5 deals"``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _plain(value: Any) -> Any:
    """``value`` with every NaN or infinity replaced by None (strict JSON: a role an agent never played has no mean)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _lineup_agents(match: Match, n: int) -> list[int]:
    """League indices of the match's evaluated line-up (the harness's agent order)."""
    return [match.alone, match.field] if n == 2 else [match.alone] + [match.field] * (n - 1)


def _check(game: Any, num_players: Any, agents: Sequence[Any], games: Any, processes: Any) -> tuple[GameSpec, int, int]:
    """Return ``(spec, n, games per match)``, the games rounded up to a multiple of ``n``; raise ``ValueError`` naming what is allowed."""
    spec = get_game(game)
    if isinstance(num_players, bool) or not isinstance(num_players, int) or num_players not in spec.player_counts():
        raise ValueError(f"--players (table size) for {spec.name} must be {spec.min_players}..{spec.max_players}, got {num_players!r}")
    n = num_players
    if len(lineups(n, n)) != n:  # pragma: no cover - the harness's rotation of one agent against n - 1 copies
        raise AssertionError(f"the harness's cycle of {n} agents at {n} seats is not {n} line-ups")
    if games is None:
        games = default_games(n)
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"--games (games per match) must be an int >= 1 (rounded up to a multiple of the table size, {n}), got {games!r}")
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ValueError(f"--processes must be an int >= 1, got {processes!r}")
    if len(agents) < 2:
        raise ValueError(
            f"a league needs at least 2 agents (comma-separated, e.g. --agents {','.join(BASELINES.get(spec.name, ('random', 'greedy'))[:2])}; "
            f"{spec.name} names: {', '.join(_league_names(spec))}, {CHAMPION}, or checkpoint paths), got {len(agents)}: {list(agents)!r}"
        )
    return spec, n, round_games(games, n)


def _league_names(spec: GameSpec) -> list[str]:
    """The built-in agent names of ``spec``."""
    return list(spec.agent_classes())


def league(
    game: str | GameSpec = DEFAULT_GAME,
    num_players: int = 4,
    agents: Sequence[Any] | None = None,
    games: int | None = None,
    seed: int = 0,
    processes: int = 1,
    progress: bool = False,
) -> LeagueResult:
    """Play the round-robin league of ``agents`` (default :func:`default_agents`) and return its :class:`LeagueResult`.

    ``games`` is per match (default :func:`default_games`), at least 1 and rounded up to a multiple of
    ``num_players`` (:func:`round_games`; the result's ``notes`` say so); every match uses ``seed`` (the same deals)
    and ``processes`` worker processes.  Raises ``ValueError`` saying what is wrong and what is allowed.
    ``progress`` prints one line per match to stderr.
    """
    spec = get_game(game)
    notes: list[str] = []
    if agents is None and not isinstance(num_players, bool) and num_players in spec.player_counts():
        agents = default_agents(spec, num_players, notes)
    agents = list(agents or [])
    requested = games
    spec, n, games = _check(spec, num_players, agents, games, processes)
    if requested is not None and games != requested:
        notes.append(
            f"note: {requested} games per match rounded up to {games}, a multiple of the table size {n} (whole deals: "
            f"the lone agent once in each seat of each)"
        )
    for a in agents:  # a bad name or checkpoint fails here, before any game
        try:
            build_agent(a, n, spec)
        except ValueError as exc:
            raise ValueError(f"--agents: {exc}") from None
    names = agent_names(agents, n)
    specs = [a if isinstance(a, str) else names[i] for i, a in enumerate(agents)]
    k = len(agents)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    plan = pairs if n == 2 else [m for i, j in pairs for m in ((i, j), (j, i))]
    matches: list[Match] = []
    for count, (i, j) in enumerate(plan, 1):
        start = time.perf_counter()
        lineup = [agents[i], agents[j]] if n == 2 else [agents[i]] + [agents[j]] * (n - 1)
        result = evaluate(lineup, n, games, seed=seed, processes=processes, game=spec.name)
        matches.append(Match(i, j, result))
        if progress:
            what = f"{names[i]} vs {names[j]}" if n == 2 else f"{names[i]} alone vs {n - 1} x {names[j]}"
            print(f"[{count}/{len(plan)}] {what}: {games} games, {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    cells = []
    for m_index, m in enumerate(matches):
        cells.append(_cell(m, m_index, 0, names, n))
        if n == 2:
            cells.append(_cell(m, m_index, 1, names, n))
    cells.sort(key=lambda c: (names.index(c["agent"]), names.index(c["opponent"])))
    ratings = league_ratings(names, matches, n, spec)
    return LeagueResult(spec.name, n, names, specs, games, seed, matches, ratings, cells, requested, notes)


def _cell(match: Match, m_index: int, position: int, names: list[str], n: int) -> dict[str, Any]:
    """The cell of the agent at ``position`` of the match's line-up (it holds one seat per game) against the other agent."""
    result = match.result
    me = result.per_agent[result.agents[position]]
    agent, opponent = (match.alone, match.field) if position == 0 else (match.field, match.alone)
    by_deal: dict[int, list[float]] = {}
    for rec in result.games:
        seats = [s for s, a in enumerate(rec["lineup"]) if a == position]
        if len(seats) != 1:  # pragma: no cover - the line-ups give the lone agent one seat
            raise AssertionError(f"agent {position} holds seats {seats} in game {rec['index']}")
        mine = rec["totals"][seats[0]]
        others = [t for s, t in enumerate(rec["totals"]) if s != seats[0]]
        by_deal.setdefault(rec["deal"], []).append(mine - sum(others) / len(others))
    diff, lo, hi = mean_interval([sum(d) / len(d) for d in by_deal.values()])
    wins, played = me["wins"], me["seat_games"]
    share = wins / played
    ci = list(wilson_interval(wins, played))
    parity = 1.0 / n
    return {
        "agent": names[agent],
        "opponent": names[opponent],
        "match": m_index,
        "games": played,
        "deals": len(by_deal),
        "wins": wins,
        "win_share": share,
        "win_share_ci": ci,
        "parity": parity,
        "verdict": "above" if ci[0] > parity else "below" if ci[1] < parity else "parity",
        "score_diff": diff,
        "score_diff_ci": [lo, hi],
        "mean_score": me["mean_score"],
        "mean_score_ci": me["mean_score_ci"],
    }


def rating_order(matches: Sequence[Match]) -> list[tuple[int, int]]:
    """``(match, game)`` in the order the ratings see them: game 0 of every match (match order), then game 1, ..."""
    longest = max((m.result.num_games for m in matches), default=0)
    return [(mi, g) for g in range(longest) for mi, m in enumerate(matches) if g < m.result.num_games]


def league_ratings(names: list[str], matches: Sequence[Match], n: int, spec: GameSpec) -> dict[str, dict[str, Any]]:
    """Openskill ratings ``{name: {mu, sigma, ordinal, ci, games}}`` over every game of every match (:func:`rating_order`)."""
    sign = 1 if spec.highest_total_wins else -1  # openskill ranks higher scores first
    games = []
    for mi, g in rating_order(matches):
        m = matches[mi]
        rec = m.result.games[g]
        to_league = _lineup_agents(m, n)
        games.append(([to_league[a] for a in rec["lineup"]], [sign * t for t in rec["totals"]]))
    ratings = rate_games(names, games)
    played = {name: 0 for name in names}
    for lineup, _ in games:
        for a in set(lineup):
            played[names[a]] += 1
    return {
        name: {**r, "ci": [r["mu"] - Z95 * r["sigma"], r["mu"] + Z95 * r["sigma"]], "games": played[name]} for name, r in ratings.items()
    }


def _plot(result: LeagueResult, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import TwoSlopeNorm

    order = result.order
    k, n, parity = len(order), result.num_players, result.parity
    fig, (ax_r, ax_h) = plt.subplots(1, 2, figsize=(5.5 + 1.7 * k, 2.8 + 1.05 * k), gridspec_kw={"width_ratios": [1, 0.35 + 0.38 * k]})

    # Ratings: best on top, mu with its 95% interval; the ordinal (mu - 3 sigma) marked.
    y = np.arange(k)[::-1]
    mus = np.array([result.ratings[a]["mu"] for a in order])
    lo = mus - np.array([result.ratings[a]["ci"][0] for a in order])
    hi = np.array([result.ratings[a]["ci"][1] for a in order]) - mus
    ax_r.errorbar(mus, y, xerr=[lo, hi], fmt="o", color="tab:blue", capsize=5, markersize=7, label="mu, 95% interval (mu ± 1.96 σ)")
    ax_r.scatter([result.ratings[a]["ordinal"] for a in order], y, marker="|", s=120, color="tab:grey", label="ordinal mu − 3σ (the order)")
    for yy, mu in zip(y, mus):
        ax_r.annotate(f"{mu:.1f}", (mu, yy), textcoords="offset points", xytext=(0, 8), ha="center", fontsize="small")
    ax_r.set_yticks(y, [f"{r + 1}. {a}" for r, a in enumerate(order)])
    ax_r.set_ylim(-1.1, k - 0.4)
    ax_r.set_xlabel("openskill rating (Plackett-Luce)")
    ax_r.set_title("ratings over all games, best first", fontsize="medium")
    ax_r.grid(axis="x", alpha=0.3)
    ax_r.legend(fontsize="x-small", loc="lower right", framealpha=0.9)

    # Heat map: the row agent alone against the column agent's copies, coloured by its win share minus parity.
    values = np.full((k, k), np.nan)
    for r, a in enumerate(order):
        for c, b in enumerate(order):
            if a != b:
                values[r, c] = result.cell(a, b)["win_share"] - parity
    # Red down to a share of 0 (-parity); blue up to +parity (a share of 2/n), or further if a cell is.
    top = min(1.0 - parity, max(parity, float(np.nanmax(values)) if k > 1 else parity))
    norm = TwoSlopeNorm(vmin=-parity, vcenter=0.0, vmax=top)
    cmap = plt.get_cmap("RdBu").with_extremes(bad="#dddddd")
    image = ax_h.imshow(np.ma.masked_invalid(values), cmap=cmap, norm=norm, aspect="auto")
    for r, a in enumerate(order):
        for c, b in enumerate(order):
            if a == b:
                ax_h.text(c, r, "—", ha="center", va="center", color="grey")
                continue
            cell = result.cell(a, b)
            shade = norm(values[r, c])
            colour = "white" if shade < 0.18 or shade > 0.82 else "black"
            ax_h.text(c, r - 0.22, f"{values[r, c]:+.2f}", ha="center", va="center", color=colour, fontsize="large", fontweight="bold")
            lo_c, hi_c = cell["win_share_ci"]
            ax_h.text(c, r + 0.03, f"share {cell['win_share']:.2f}", ha="center", va="center", color=colour, fontsize="small")
            ax_h.text(c, r + 0.2, f"[{lo_c:.2f}, {hi_c:.2f}]", ha="center", va="center", color=colour, fontsize="x-small")
            ax_h.text(c, r + 0.36, f"Δ {cell['score_diff']:+.1f} pts", ha="center", va="center", color=colour, fontsize="x-small")
    short = [a if len(a) <= 18 else a[:17] + "~" for a in order]
    tilt = max(len(a) for a in short) > 8
    ax_h.set_xticks(range(k), short, rotation=20 if tilt else 0, ha="right" if tilt else "center")
    ax_h.set_yticks(range(k), short)
    ax_h.set_xlabel("field: the other seat (column agent)" if n == 2 else f"field: {n - 1} copies of the column agent")
    ax_h.set_ylabel("lone agent (one seat, rotated)")
    ax_h.set_title(f"win share of the lone agent minus parity 1/{n} = {parity:.2f}", fontsize="medium")
    bar = fig.colorbar(image, ax=ax_h, fraction=0.05, pad=0.03)
    bar.set_label(f"win share − 1/{n} (white = parity)", fontsize="small")
    bar.ax.axhline(0.0, color="black", linewidth=1)
    ticks = {round(-parity, 2), 0.0, round(top, 2), *[t for t in (-0.4, -0.2, 0.2, 0.4, 0.6) if -parity + 0.05 < t < top - 0.05]}
    bar.set_ticks(sorted(ticks))
    spec = result.spec
    total = sum(m.result.num_games for m in result.matches)
    fig.suptitle(
        f"{spec.title} league, {n} players: {result.games_per_match} games per match on the same "
        f"{_count(result.games_per_match // n, 'deal')} (seats rotated), {total} games, seed {result.seed}",
        fontsize="medium",
    )
    diff_note = "" if spec.highest_total_wins else " (lowest total wins: negative favours the lone agent)"
    fig.text(
        0.01,
        0.005,
        f"cells: win share minus parity (bold), the win share and its 95% Wilson interval, Δ = mean score of the lone "
        f"seat minus the mean of the other seats, paired by deal{diff_note}",
        fontsize="x-small",
        ha="left",
        va="bottom",
    )
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grinch_env.evaluation.league", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default=DEFAULT_GAME, choices=sorted(GAMES), help=f"the game (default {DEFAULT_GAME})")
    parser.add_argument("--players", type=int, default=None, help="table size (grinch 2..6, gnoming 3..7; default 4)")
    parser.add_argument(
        "--agents",
        default=None,
        help="comma-separated agents, at least 2: built-in names with options "
        "(grinch: random, greedy, expectimax[:samples=N], search[:playouts=N]; gnoming: random, greedy, search[:samples=N]), "
        "champion (the game's shipped learned agent) or checkpoint paths (PATH[:key=value,...]); default: every built-in baseline that plays from its "
        "observation, and champion where the game has it",
    )
    parser.add_argument(
        "--games",
        type=int,
        default=None,
        help=f"games per match, at least 1 (default {DEFAULT_GAMES}); rounded up to a "
        "multiple of the table size, so that the lone agent sits in each seat of each deal once",
    )
    parser.add_argument("--seed", type=int, default=0, help="league seed: every match plays the same deals from it (default 0)")
    parser.add_argument("--processes", type=int, default=1, help="worker processes of each match (the results do not depend on it)")
    parser.add_argument("--out", default=None, metavar="DIR", help="write DIR/league.json, DIR/league.txt and DIR/league.png")
    parser.add_argument("--quiet", action="store_true", help="no progress line per match on stderr")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    spec = get_game(args.game)
    players = spec.default_players if args.players is None else args.players
    try:
        agents = None if args.agents is None else split_specs(args.agents)
        result = league(spec.name, players, agents, args.games, seed=args.seed, processes=args.processes, progress=not args.quiet)
    except ValueError as exc:
        parser.error(str(exc))
    print(result.table())
    if args.out:
        files = result.write(args.out)
        print("\nwrote " + ", ".join(str(f) for f in files))
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "BASELINES",
    "LeagueResult",
    "Match",
    "default_agents",
    "default_games",
    "league",
    "league_ratings",
    "main",
    "rating_order",
    "round_games",
]
