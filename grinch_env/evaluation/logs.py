"""Game logs of a tournament: one JSON file per game, replayable by the web page and :func:`grinch_env.aec.replay_log`.

``evaluate(..., log_dir=DIR)`` (``python -m grinch_env.evaluation ... --log-dir DIR``)
writes, for game ``i`` of the schedule, ``DIR/game_<i>_<agent per seat>_seed<deal>.json``
(e.g. ``game_0003_random-greedy-random_seed2000000.json``) holding what
:func:`grinch_env.aec.log_to_json` writes (``seed``: ``null``, ``env_kwargs``, ``log``)
plus ``game``, ``game_seed`` (the deal seed: it reproduces the shuffles), ``names``
(the agent per seat) and ``tournament`` (the tournament's seed and the game's index,
line-up, totals and winners).  ``DIR/index.json`` lists every game and its file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from grinch_env.aec import log_to_json
from grinch_env.games import GameSpec, get_game

INDEX = "index.json"
NAME_CHARS = 24
"""Each agent's name is cut to this many characters in a file name."""


def prepare_log_dir(log_dir: str | os.PathLike, game: str | GameSpec, num_players: int, game_options: Mapping[str, Any]) -> Path:
    """Return ``log_dir`` as a ``Path``, created if missing; raise ``ValueError`` if it cannot hold the logs.

    The game options must make the same table after a trip through JSON (a log's
    ``env_kwargs``): a Grinch ``bonus_layout`` given as a name or as a table
    ``{card_id: (points, suit, count)}`` does, an already resolved tuple does not.
    """
    path = Path(log_dir)
    if path.exists() and not path.is_dir():
        raise ValueError(f"log_dir {str(log_dir)!r} is a file, not a directory: give a directory for the game logs")
    hint = " (give a bonus_layout by name or as a table {card_id: (points, suit, count)})" if "bonus_layout" in game_options else ""
    try:
        kwargs = json.loads(json.dumps({"num_players": num_players, **game_options}))
        get_game(game).raw_env(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"game logs need game options that JSON can hold and the env accepts{hint}: {exc}") from None
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot create the log directory {str(log_dir)!r}: {exc.strerror or exc}") from None
    return path


def log_file_name(index: int, num_games: int, seat_names: Sequence[str], deal: int) -> str:
    """Return the file name of game ``index``: its index (zero-padded), the agent per seat and its deal seed."""
    width = max(4, len(str(num_games - 1)))
    seats = "-".join(re.sub(r"[^A-Za-z0-9_.=]+", "_", name)[:NAME_CHARS] for name in seat_names)
    return f"game_{index:0{width}d}_{seats}_seed{deal}.json"


def game_log(record: Mapping[str, Any], game: str, num_players: int, game_options: Mapping[str, Any], names: Sequence[str],
             seed: int) -> dict[str, Any]:
    """Return the JSON object of one tournament game (``record`` from :func:`~grinch_env.evaluation.tournament.run_game` with ``actions``)."""
    env_kwargs = {"num_players": num_players, **game_options}
    log = [(f"player_{seat}", action) for seat, action in record["actions"]]  # the envs' agent names
    data = json.loads(log_to_json(log, seed=None, **env_kwargs))
    seat_names = [names[a] for a in record["lineup"]]
    data.update(game=game, game_seed=record["deal"], names=seat_names,
                tournament={"seed": seed, "index": record["index"], "lineup": list(record["lineup"]),
                            "totals": list(record["totals"]), "winners": list(record["winners"])})
    return data


def write_game_log(log_dir: Path, record: Mapping[str, Any], game: str, num_players: int, num_games: int,
                   game_options: Mapping[str, Any], names: Sequence[str], seed: int) -> str:
    """Write one game's log into ``log_dir``; return its file name."""
    data = game_log(record, game, num_players, game_options, names, seed)
    name = log_file_name(record["index"], num_games, data["names"], record["deal"])
    (log_dir / name).write_text(json.dumps(data))
    return name


def write_index(log_dir: Path, game: str, num_players: int, num_games: int, seed: int, names: Sequence[str],
                game_options: Mapping[str, Any], entries: Sequence[Mapping[str, Any]]) -> Path:
    """Write ``index.json``: the tournament and, per game, its file, line-up, names, deal seed, totals and winners."""
    path = log_dir / INDEX
    head = json.dumps({"game": game, "num_players": num_players, "num_games": num_games, "seed": seed, "agents": list(names),
                       "game_options": dict(game_options)})
    games = ",\n".join(json.dumps(dict(e)) for e in entries)  # one line per game
    path.write_text(f'{head[:-1]}, "games": [\n{games}\n]}}\n')
    return path


def index_entry(record: Mapping[str, Any], file: str, names: Sequence[str]) -> dict[str, Any]:
    return {"index": record["index"], "file": file, "lineup": list(record["lineup"]), "names": [names[a] for a in record["lineup"]],
            "deal": record["deal"], "totals": list(record["totals"]), "winners": list(record["winners"])}


def list_logs(log_dir: str | os.PathLike) -> list[dict[str, Any]]:
    """Return ``{"path", "label", "game"}`` per game log in ``log_dir``: from its ``index.json`` if it has one, else every ``*.json`` file."""
    root = Path(log_dir)
    index = root / INDEX
    if index.is_file():
        try:
            data = json.loads(index.read_text())
            return [{"path": str(root / g["file"]), "game": data["game"],
                     "label": f"game {g['index']}: {', '.join(g['names'])} (totals {', '.join(str(t) for t in g['totals'])})"}
                    for g in data["games"]]
        except (ValueError, KeyError, TypeError):
            pass  # not a tournament's index: list the files
    return [{"path": str(p), "game": None, "label": p.name} for p in sorted(root.glob("*.json")) if p.name != INDEX]


__all__ = ["INDEX", "game_log", "index_entry", "list_logs", "log_file_name", "prepare_log_dir", "write_game_log", "write_index"]
