"""Evaluate agents against each other: seat-rotated, paired-deal tournaments with intervals and ratings.

Usage::

    python -m grinch_env.evaluation --agents greedy,random --players 4 --games 2000 --seed 0 --out reports/x
    python -m grinch_env.evaluation --league checkpoints/ --agents random,greedy,expectimax --players 4 --games 800
    python -m grinch_env.evaluation --game gnoming --agents search,greedy --players 5 --games 500
    python -m grinch_env.evaluation --agents greedy,random --players 3 --games 20 --log-dir logs/x   # + one JSON log per game

In code: ``evaluate(["expectimax", "greedy"], num_players=4, num_games=400)``
(``game="gnoming"`` for the second game)
returns an :class:`EvalResult`; ``write_report(result, out_dir)`` writes
``results.json``, ``table.txt`` and PNG plots.  Games are a pure function of
``(seed, game index)``, so results are identical for any ``processes``.
The schedule (seat rotation, paired deals) is described in
:mod:`grinch_env.evaluation.tournament`.
"""

from __future__ import annotations

import argparse
import copy
import os
import pickle
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grinch_env.agents import split_specs
from grinch_env.evaluation.logs import index_entry, prepare_log_dir, write_game_log, write_index
from grinch_env.evaluation.ratings import mean_interval, rate_games, wilson_interval
from grinch_env.evaluation.report import repeated_names_note
from grinch_env.evaluation.tournament import Table, build_agent, lineups, run_game, run_games_lockstep, schedule
from grinch_env.games import DEFAULT_GAME, GAMES, GameSpec, get_game
from grinch_env.parallel import worker_pool

CHECKPOINT_SUFFIXES = (".pt", ".zip")


@dataclass
class EvalResult:
    """Every figure of one evaluation run; ``to_dict()`` is what ``results.json`` holds."""

    agents: list[str]
    num_players: int
    num_games: int
    seed: int
    bonus_layout: Any
    cycle_size: int
    per_agent: dict[str, dict[str, Any]]
    games: list[dict[str, Any]] = field(repr=False)
    game: str = DEFAULT_GAME

    @property
    def spec(self) -> GameSpec:
        return get_game(self.game)

    @property
    def balanced(self) -> bool:
        """Whether every agent sat in every seat equally often (the games fill whole cycles)."""
        return self.num_games % self.cycle_size == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "agents": self.agents,
            "num_players": self.num_players,
            "num_games": self.num_games,
            "seed": self.seed,
            "bonus_layout": self.bonus_layout if isinstance(self.bonus_layout, str) else "custom",
            "cycle_size": self.cycle_size,
            "balanced": self.balanced,
            "per_agent": self.per_agent,
            "games": [{k: g[k] for k in ("index", "deal", "lineup", "totals", "winners")} for g in self.games],
        }

    def table(self) -> str:
        """Return a plain-text table of the main figures, best rating first."""
        spec = self.spec
        role_a, role_b = spec.roles
        head = (f"{'agent':<28} {'seats':>6} {'win rate [95% CI]':>24} {'mean score [95% CI]':>26} "
                f"{'as ' + role_a:>10} {'as ' + role_b:>10} {'rating mu±sigma':>16}")
        lines = [
            f"{spec.title}: {self.num_games} games, {self.num_players} players, seed {self.seed}, cycle {self.cycle_size} line-ups"
            + ("" if self.balanced else " (last cycle partial: seats not exactly balanced)"),
            f"({'highest' if spec.highest_total_wins else 'lowest'} total wins; 'as {role_a}'/'as {role_b}': mean points per round in that role)",
            head,
            "-" * len(head),
        ]
        note = repeated_names_note(self.agents)
        if note:
            lines.insert(2, note)
        order = sorted(self.per_agent, key=lambda a: -self.per_agent[a]["rating"]["ordinal"])
        for name in order:
            a = self.per_agent[name]
            lo, hi = a["win_rate_ci"]
            slo, shi = a["mean_score_ci"]
            rating = a["rating"]
            lines.append(
                f"{name[:28]:<28} {a['seat_games']:>6} {a['win_rate']:>8.3f} [{lo:.3f}, {hi:.3f}] "
                f"{a['mean_score']:>8.1f} [{slo:7.1f}, {shi:7.1f}] {a['roles'][role_a]['mean_round_points']:>10.1f} "
                f"{a['roles'][role_b]['mean_round_points']:>10.1f} {rating['mu']:>8.2f}±{rating['sigma']:<5.2f}"
            )
        if spec.row_names:
            lines.append("")
            lines.append("mean points per game by row (usage rate):")
            lines.append(f"{'agent':<28} " + " ".join(f"{r:>14}" for r in spec.row_names))
            for name in order:
                rows = self.per_agent[name]["rows"]
                lines.append(f"{name[:28]:<28} " + " ".join(f"{r['points_per_game']:>6.1f} ({r['usage_rate']:.2f})" for r in rows))
        return "\n".join(lines)


def _check_args(agents: Sequence[Any], num_players: Any, num_games: Any, processes: Any, spec: GameSpec, lockstep: Any = 1) -> int:
    if isinstance(num_players, bool) or not isinstance(num_players, int) or num_players not in spec.player_counts():
        raise ValueError(f"table size (num_players) for {spec.title} must be an int in {spec.min_players}..{spec.max_players}, got {num_players!r}")
    n = num_players
    if isinstance(num_games, bool) or not isinstance(num_games, int) or num_games < 1:
        raise ValueError(f"num_games must be an int >= 1, got {num_games!r}")
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ValueError(f"processes must be an int >= 1, got {processes!r}")
    if isinstance(lockstep, bool) or not isinstance(lockstep, int) or lockstep < 1:
        raise ValueError(f"lockstep must be an int >= 1 (games played at once in a process), got {lockstep!r}")
    if len(agents) < 1:
        raise ValueError("give at least one agent (a name such as greedy, or a checkpoint path)")
    return n


def agent_names(agents: Sequence[Any], num_players: int) -> list[str]:
    """Return a distinct display name per agent (``greedy``, ``greedy#2`` for a repeated one; ``run/file`` for a checkpoint)."""
    names: list[str] = []
    for spec in agents:
        if isinstance(spec, str):
            base = _checkpoint_label(spec) if os.path.exists(spec) else spec
        else:
            base = getattr(spec, "name", None) or type(spec).__name__
        name, k = base, 2
        while name in names:
            name, k = f"{base}#{k}", k + 1
        names.append(name)
    return names


def _checkpoint_label(path: str) -> str:
    p = Path(path).resolve()
    return f"{p.parent.name}/{p.name}" if p.is_file() else p.name


_WORKER: dict[str, Any] = {}


def _init_worker(specs: Sequence[Any], num_players: int, game: str, game_options: dict[str, Any], seed: int, num_games: int, worker: bool = False,
                 record_actions: bool = False) -> None:
    specs = [pickle.loads(s) if isinstance(s, bytes) else s for s in specs]
    if worker and ("torch" in sys.modules or any(isinstance(s, str) and os.path.exists(s) for s in specs)):
        # One process per core: torch's default thread pool per worker oversubscribes the cores, and a
        # one-observation forward pass then took 16 ms instead of 0.4 ms (benchmarks/bench_agents.py).
        import torch

        torch.set_num_threads(1)
    _WORKER["table"] = Table(specs, num_players, game, game_options)
    _WORKER["seed"] = seed
    _WORKER["schedule"] = schedule(len(specs), num_players, num_games, seed)
    _WORKER["record_actions"] = record_actions


def _worker_game(index: int) -> dict[str, Any]:
    return run_game(_WORKER["table"], index, _WORKER["seed"], _WORKER["schedule"][index], _WORKER["record_actions"])


def _worker_lockstep(indices: Sequence[int], width: int) -> Iterator[dict[str, Any]]:
    table = _WORKER["table"]

    def make_table() -> Table:  # one table per slot: a slot's agents are reset per game, as in run_game
        return Table([copy.deepcopy(s) if not isinstance(s, str) else s for s in table.specs], table.num_players, table.game, table.game_options)

    return run_games_lockstep(make_table, indices, _WORKER["seed"], _WORKER["schedule"], width, _WORKER["record_actions"])


def lockstep_chunk(num_games: int, processes: int, lockstep: int) -> int:
    """Games in one task of a pool playing ``lockstep`` wide: 4 x ``lockstep`` while each worker still gets at least
    four tasks, down to ``lockstep`` for short matches on many workers (a task returns its games all at once)."""
    return lockstep * max(1, min(4, num_games // (4 * lockstep * processes)))


def _worker_chunk(chunk: tuple[Sequence[int], int]) -> list[dict[str, Any]]:
    return list(_worker_lockstep(*chunk))


def evaluate(
    agents: Sequence[Any],
    num_players: int,
    num_games: int,
    seed: int = 0,
    processes: int = 1,
    progress: bool = False,
    bonus_layout: Any = "standard",
    game: str | GameSpec = DEFAULT_GAME,
    game_options: dict[str, Any] | None = None,
    log_dir: str | os.PathLike | None = None,
    lockstep: int = 1,
) -> EvalResult:
    """Return the results of ``num_games`` seat-rotated, paired-deal games between ``agents`` (names, paths or agent objects).

    ``game`` names the game (``"grinch"`` or ``"gnoming"``); ``game_options``
    are its rule options (``bonus_layout`` is the Grinch's, kept as a keyword).
    ``log_dir`` (created if missing) receives one JSON game log per game and
    ``index.json`` (:mod:`grinch_env.evaluation.logs`); the results are the same with or without it.
    ``lockstep = G > 1`` plays ``G`` games at a time in each process, so that agents with a ``batch_key`` (the
    learner's network search, :class:`training.learner.search.NetSearchAgent`) answer the decisions of all
    ``G`` games in one batched call (:func:`~grinch_env.evaluation.tournament.run_games_lockstep`); each game is
    the same game as with ``lockstep=1``.
    """
    spec_game = get_game(game)
    game_options = dict(game_options or {})
    if spec_game.name == "grinch" and bonus_layout != "standard":
        game_options.setdefault("bonus_layout", bonus_layout)
    agents = list(agents)
    n = _check_args(agents, num_players, num_games, processes, spec_game, lockstep)
    # Build each agent once here so that a bad name or checkpoint fails before any game is played.
    for spec in agents:
        build_agent(spec, n, spec_game, game_options)
    names = agent_names(agents, n)
    logs = None if log_dir is None else _GameLogs(log_dir, spec_game.name, n, num_games, seed, names, game_options)
    init_args = (agents, n, spec_game.name, game_options, seed, num_games)
    bar = _progress_bar(num_games, progress)
    records: list[dict[str, Any]] = []
    if processes == 1 and lockstep > 1:
        _init_worker(*init_args, record_actions=logs is not None)
        finished: dict[int, dict[str, Any]] = {}
        for record in _worker_lockstep(range(num_games), lockstep):  # in the order games end; kept and logged in game order
            finished[record["index"]] = record
            while len(records) in finished:
                record = finished.pop(len(records))
                records.append(record if logs is None else logs.write(record))
            bar.update()
    elif processes == 1:
        _init_worker(*init_args, record_actions=logs is not None)
        for i in range(num_games):
            records.append(_worker_game(i) if logs is None else logs.write(_worker_game(i)))
            bar.update()
    else:
        # spawn, not fork: a forked copy of a process that has used torch's threads can hang.  Agent objects travel
        # as plain pickles: the pool's own pickler would hand torch tensors over as shared-memory handles, which
        # fail to open in the workers on some machines (and the pool then respawns its workers for ever).
        init_args = ([s if isinstance(s, str) else pickle.dumps(s) for s in agents], *init_args[1:], True, logs is not None)
        with worker_pool(processes, _init_worker, init_args) as pool:
            if lockstep > 1:  # chunks of 1 to 4 x lockstep consecutive games, each played lockstep wide in a worker
                size = lockstep_chunk(num_games, processes, lockstep)
                chunks = [(range(i, min(num_games, i + size)), lockstep) for i in range(0, num_games, size)]
                for chunk in pool.imap(_worker_chunk, chunks):
                    for record in sorted(chunk, key=lambda r: r["index"]):
                        records.append(record if logs is None else logs.write(record))
                        bar.update()
            else:
                for record in pool.imap(_worker_game, range(num_games), chunksize=max(1, min(16, num_games // (4 * processes)))):
                    records.append(record if logs is None else logs.write(record))
                    bar.update()
    bar.close()
    if logs is not None:
        logs.close()
    return summarise(names, n, num_games, seed, game_options.get("bonus_layout", "standard"), records, spec_game.name)


class _GameLogs:
    """Writes each finished game's log as it arrives (in game order), then ``index.json``."""

    def __init__(self, log_dir: str | os.PathLike, game: str, n: int, num_games: int, seed: int, names: list[str], game_options: dict[str, Any]) -> None:
        self.dir = prepare_log_dir(log_dir, game, n, game_options)
        self.args = (game, n, num_games, seed, names, game_options)
        self.entries: list[dict[str, Any]] = []

    def write(self, record: dict[str, Any]) -> dict[str, Any]:
        """Write ``record``'s log; return the record without its actions (the same record as a game played without logging)."""
        game, n, num_games, seed, names, options = self.args
        file = write_game_log(self.dir, record, game, n, num_games, options, names, seed)
        record.pop("actions")
        self.entries.append(index_entry(record, file, names))
        return record

    def close(self) -> None:
        game, n, num_games, seed, names, options = self.args
        write_index(self.dir, game, n, num_games, seed, names, options, self.entries)


def _progress_bar(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, unit="game", desc="evaluate", file=sys.stderr)


def summarise(names: list[str], n: int, num_games: int, seed: int, bonus_layout: Any, records: list[dict[str, Any]],
              game: str = DEFAULT_GAME) -> EvalResult:
    """Return the :class:`EvalResult` of finished game records (in game order)."""
    spec = get_game(game)
    row_names = spec.row_names
    k = len(names)
    wins = [0.0] * k
    scores: list[list[int]] = [[] for _ in range(k)]
    row_points = [[0] * len(row_names) for _ in range(k)]
    row_uses = [[0] * len(row_names) for _ in range(k)]
    role_points: list[dict[str, list[int]]] = [{role: [] for role in spec.roles} for _ in range(k)]
    for rec in records:
        lineup, totals, winners = rec["lineup"], rec["totals"], rec["winners"]
        for s, a in enumerate(lineup):
            scores[a].append(totals[s])
            if s in winners:
                wins[a] += 1.0 / len(winners)  # a shared win is split between the tied seats
        for rnd in rec["rounds"]:
            for s, entry in enumerate(rnd):
                if not entry:  # a round that was not played
                    continue
                a = lineup[s]
                role_points[a][entry["role"]].append(entry["points"])
                if row_names:
                    row_points[a][entry["row"]] += entry["points"]
                    row_uses[a][entry["row"]] += 1
    sign = 1 if spec.highest_total_wins else -1  # openskill ranks higher scores first
    ratings = rate_games(names, [(rec["lineup"], [sign * t for t in rec["totals"]]) for rec in records])
    per_agent: dict[str, dict[str, Any]] = {}
    for a, name in enumerate(names):
        seat_games = len(scores[a])
        mean, lo, hi = mean_interval(scores[a])
        roles = {}
        for role, pts in role_points[a].items():
            m, rlo, rhi = mean_interval(pts)
            roles[role] = {"rounds": len(pts), "mean_round_points": m, "ci": [rlo, rhi]}
        per_agent[name] = {
            "seat_games": seat_games,
            "wins": wins[a],
            "win_rate": wins[a] / seat_games if seat_games else float("nan"),
            "win_rate_ci": list(wilson_interval(wins[a], seat_games)),
            "mean_score": mean,
            "mean_score_ci": [lo, hi],
            "scores": scores[a],
            "rows": [
                {
                    "row": row_names[r],
                    "usage_rate": row_uses[a][r] / seat_games if seat_games else 0.0,
                    "points_per_game": row_points[a][r] / seat_games if seat_games else 0.0,
                    "mean_when_used": row_points[a][r] / row_uses[a][r] if row_uses[a][r] else 0.0,
                }
                for r in range(len(row_names))
            ],
            "roles": roles,
            **{role.lower(): roles[role] for role in spec.roles},  # "grinch"/"who": the keys results.json always had
            "rating": ratings[name],
        }
    return EvalResult(names, n, num_games, seed, bonus_layout, len(lineups(k, n)), per_agent, records, spec.name)


def write_report(result: EvalResult, out_dir: str | os.PathLike) -> None:
    """Write ``results.json``, ``table.txt`` and the PNG plots of ``result`` into ``out_dir``."""
    from grinch_env.evaluation.report import write_report as _write

    _write(result, out_dir)


def league_specs(directory: str) -> list[str]:
    """Return the checkpoints of a league directory: ``*.pt``/``*.zip`` files and run directories inside it, sorted."""
    root = Path(directory)
    if not root.is_dir():
        raise ValueError(f"--league must be an existing directory of checkpoints, got {directory!r}")
    found = sorted(str(p) for p in root.iterdir() if (p.is_file() and p.suffix in CHECKPOINT_SUFFIXES) or (p.is_dir() and any(p.glob("*.pt"))))
    if not found:
        raise ValueError(f"no checkpoint (*.pt, *.zip, or a run directory holding *.pt) in {directory!r}")
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grinch_env.evaluation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default=DEFAULT_GAME, choices=sorted(GAMES), help=f"the game (default {DEFAULT_GAME})")
    parser.add_argument("--agents", default="", help="comma-separated line-up, one entry per seat (seats rotate over the games), each an agent name with "
                        "options (grinch: random, greedy, expectimax[:samples=N], search[:playouts=N]; gnoming: random, greedy, "
                        "search[:samples=N]), champion (the game's shipped learned agent) or a checkpoint path; give one n times to fill n seats")
    parser.add_argument("--league", default=None, help="directory whose checkpoints join the agents (a league run)")
    parser.add_argument("--players", type=int, default=None,
                        help="table size (grinch 2..6, gnoming 3..7; default 4)")
    parser.add_argument("--games", type=int, default=200, help="number of games (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="tournament seed: deals and agent seeds derive from it")
    parser.add_argument("--processes", type=int, default=1, help="worker processes (results do not depend on it)")
    parser.add_argument("--lockstep", type=int, default=1, metavar="G", help="games played at once in each process (default 1), so that a "
                        "learner checkpoint with search answers G games' decisions in one batched network call; the games are the same")
    parser.add_argument("--bonus-layout", default="standard", choices=["standard", "none"], help="bonus card layout (grinch only)")
    parser.add_argument("--out", default=None, help="directory for results.json, table.txt and plots")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--log-dir", default=None, metavar="DIR", help="write one JSON game log per game (replayable in python -m grinch_env.web) "
                        "and index.json into DIR")
    parser.add_argument("--video", default=None, metavar="PATH", help="also write a video (.mp4 or .gif) of one game of the tournament "
                        "(needs grinch_env[render])")
    parser.add_argument("--video-game", type=int, default=0, help="index of the game the video shows (default 0, the first)")
    parser.add_argument("--video-seat", type=int, default=None, help="the video shows this seat's view (default: the spectator's)")
    parser.add_argument("--video-seconds", type=float, default=30.0, help="the game's length in the video in seconds (default 30)")
    parser.add_argument("--trust-checkpoint", action="store_true", help="load SB3 .zip and RLlib checkpoints among the agents: they are unpickled, which can run code, so only for files you trust "
                        "(or add trust=1 to that agent's spec: PATH.zip:trust=1); our .pt checkpoints need no opt-in")
    return parser


def write_tournament_video(result: EvalResult, specs: Sequence[Any], index: int, path: str, seat: int | None = None,
                           seconds: float = 30.0, game_options: dict[str, Any] | None = None) -> tuple[int, float]:
    """Play game ``index`` of ``result``'s tournament again (same line-up, deal and agent seeds), write its video; return ``(frames, fps)``.

    Raises ``ValueError`` if the replayed game does not end as the recorded one (an agent that is not deterministic).
    """
    from grinch_env.evaluation.tournament import agent_seed
    from grinch_env.video import play_recorded, write_game_video

    if not 0 <= index < result.num_games:
        raise ValueError(f"--video-game must be a game index in 0..{result.num_games - 1}, got {index}")
    n, options = result.num_players, dict(game_options or {})
    deal, lineup = schedule(len(specs), n, result.num_games, result.seed)[index]
    table = Table(specs, n, result.game, options)
    agents = [table.agent(a, s) for s, a in enumerate(lineup)]
    decisions = play_recorded(result.game, n, agents, deal, [agent_seed(result.seed, index, s) for s in range(n)], **options)
    state = get_game(result.game).new_game(n, deal, **options)
    for _, action in decisions:
        state.step(action)
    if list(state.totals) != result.games[index]["totals"]:
        raise ValueError(f"game {index} replayed to totals {state.totals}, not the tournament's {result.games[index]['totals']}")
    return write_game_video(path, result.game, n, deal, decisions, seat, seconds, options)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    spec = get_game(args.game)
    specs = split_specs(args.agents)
    if args.trust_checkpoint:
        from grinch_env.agents import trust_checkpoints

        trust_checkpoints()  # an environment variable: the worker processes inherit it
    try:
        if args.league:
            specs = league_specs(args.league) + specs
        if not specs:
            raise ValueError("give --agents (e.g. greedy,random) and/or --league DIR")
        if args.bonus_layout != "standard" and spec.name != "grinch":
            raise ValueError(f"--bonus-layout is a Grinch option; {spec.title} has no bonus cards")
        players = spec.default_players if args.players is None else args.players
        if args.video is not None:
            from grinch_env.video import check_video_path, fps_for

            check_video_path(args.video)
            fps_for(1, args.video_seconds)
            if not 0 <= args.video_game < args.games:
                raise ValueError(f"--video-game must be a game index in 0..{args.games - 1}, got {args.video_game}")
            if args.video_seat is not None and not 0 <= args.video_seat < players:
                raise ValueError(f"--video-seat must be a seat in 0..{players - 1}, got {args.video_seat}")
        result = evaluate(specs, players, args.games, seed=args.seed, processes=args.processes,
                          progress=not args.no_progress, bonus_layout=args.bonus_layout, game=spec.name, log_dir=args.log_dir,
                          lockstep=args.lockstep)
    except ValueError as exc:
        parser.error(str(exc))
    print(result.table())
    if args.out:
        write_report(result, args.out)
        print(f"\nwrote {args.out}/results.json, table.txt and plots")
    if args.log_dir:
        print(f"\nwrote {result.num_games} game logs and index.json to {args.log_dir}")
    if args.video is not None:
        options = {"bonus_layout": args.bonus_layout} if spec.name == "grinch" and args.bonus_layout != "standard" else {}
        frames, fps = write_tournament_video(result, specs, args.video_game, args.video, args.video_seat, args.video_seconds, options)
        lineup = result.games[args.video_game]["lineup"]
        print(f"\nwrote {args.video}: game {args.video_game} ({', '.join(result.agents[a] for a in lineup)}), {frames} frames at {fps:g} fps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
