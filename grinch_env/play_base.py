"""The terminal play CLI that every game shares: the prompt loop, seating the opponents, the result, and ``--game``.

Each game's ``play`` module (:mod:`grinch_env.grinch.play`,
:mod:`grinch_env.gnoming.play`) writes only what is its own: how a move is
labelled and typed (``move_label``, ``parse_move``), how the table looks to
the human (``render_for``) and its game loop's announcements.  The console
script ``grinch-play`` is :func:`main`, which picks the game with ``--game``::

    grinch-play --game gnoming --players 4 --opponents search,greedy
    python -m grinch_env.gnoming.play --players 4 --opponents search,greedy   # the same game
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import numpy as np

from grinch_env.agents import make_agent, split_specs, trust_checkpoints
from grinch_env.games import GAMES, get_game

MoveLabel = Callable[[Any, int], tuple[str, str]]
"""``move_label(game, action) -> (description, what to type)``."""
MoveParser = Callable[[str, Any, Sequence[int]], "int | None"]
"""``parse_move(text, game, legal) -> action or None``."""


class QuitError(Exception):
    """The player asked to leave (``quit`` or end of input)."""


def split_move(text: str, legal: Sequence[int]) -> tuple[int | None, list[str]]:
    """Return ``(action, words)`` of a typed move: the legal action a list number (``3``) picks, else ``None`` and the lower-cased words."""
    words = text.strip().lower().split()
    if len(words) == 1 and words[0].isdigit():
        i = int(words[0])
        return (legal[i - 1] if 1 <= i <= len(legal) else None), []
    return None, words


def print_moves(game: Any, legal: Sequence[int], move_label: MoveLabel, stdout: TextIO, title: str, width: int) -> None:
    """Print the numbered list of ``legal`` moves, each with what to type for it."""
    print(f"{title}:", file=stdout)
    for i, a in enumerate(legal, 1):
        desc, typed = move_label(game, a)
        print(f"  {i:>2}) {desc:<{width}} [{typed}]", file=stdout)


def prompt_move(game: Any, table: str, title: str, move_label: MoveLabel, parse_move: MoveParser, stdin: TextIO, stdout: TextIO,
                width: int) -> int:
    """Return the human's chosen legal action; re-asks on bad input, raises :class:`QuitError` on EOF or ``quit``.

    ``table`` is the board as the human may see it, ``title`` the prompt's
    heading (what this move is).
    """
    legal = game.legal_actions()
    print(table, file=stdout)
    print_moves(game, legal, move_label, stdout, title, width)
    while True:
        print("> ", end="", file=stdout, flush=True)
        line = stdin.readline()
        if not line:
            raise QuitError
        text = line.strip()
        if text.lower() in ("q", "quit", "exit"):
            raise QuitError
        if text.lower() in ("h", "help", "?", ""):
            print_moves(game, legal, move_label, stdout, "Legal moves", width)
            continue
        action = parse_move(text, game, legal)
        if action is not None:
            return action
        print_moves(game, legal, move_label, stdout, f"{text!r} is not a legal move now. Legal moves", width)


def seat_opponents(game: str, num_players: int, opponents: Sequence[str], seed: int | None, seat: int | None,
                   example: str) -> tuple[dict[int, Any], list[str]]:
    """Return ``(agents by seat, names by seat)`` for a table with the human at ``seat`` (``None``: every seat an agent).

    The opponents fill the other seats in order from the human's left (a
    shorter list is repeated); each agent's seed comes from ``seed``.  Raises
    ``ValueError`` for a bad table size, seat or opponent list (``example``
    is an opponent list shown in the message).
    """
    spec = get_game(game)
    if isinstance(num_players, bool) or not isinstance(num_players, int) or num_players not in spec.player_counts():
        raise ValueError(f"--players must be in {spec.min_players}..{spec.max_players}, got {num_players!r}")
    n = num_players
    watching = seat is None
    if not watching and not 0 <= seat < n:
        raise ValueError(f"--seat must be in 0..{n - 1} for {n} players, got {seat}")
    if not opponents:
        raise ValueError(f"give at least one opponent, e.g. --opponents {example}")
    if len(opponents) > n - 1 and not watching:
        raise ValueError(f"{len(opponents)} opponents given but a {n}-player table has {n - 1} other seats")
    seeds = np.random.SeedSequence(seed).generate_state(n)
    first = -1 if watching else seat
    agents: dict[int, Any] = {}
    names = ["you"] * n
    for i in range(0 if watching else 1, n):
        p = (first + i) % n
        agents[p] = make_agent(opponents[(i - 1) % len(opponents)], seed=int(seeds[p]), num_players=n, game=game)
        names[p] = agents[p].name
    return agents, names


def print_result(game: Any, names: Sequence[str], seat: int | None, stdout: TextIO) -> None:
    """Print the final totals and who won (from the human's side unless ``seat`` is ``None``)."""
    n, winners = game.num_players, game.winners()
    print("Final totals: " + ", ".join(f"seat {q} ({names[q]}) {game.totals[q]}" for q in range(n)), file=stdout)
    if seat is not None and seat in winners:
        print("You win!" if len(winners) == 1 else "You share the win!", file=stdout)
    else:
        print(f"Winner: {', '.join(f'seat {w} ({names[w]})' for w in winners)}", file=stdout)


def run_cli(game: str, play: Callable[..., Any], argv: Sequence[str] | None, stdin: TextIO | None, stdout: TextIO | None,
            opponents: str, opponents_help: str, seat_help: str) -> int:
    """Parse one game's play command line (``--players --opponents --seed --seat``), play, and return the exit status 0."""
    spec = get_game(game)
    parser = argparse.ArgumentParser(prog=f"python -m {spec.package}.play", description=f"Play {spec.title} in the terminal.")
    parser.add_argument("--players", type=int, default=spec.default_players, help=f"table size {spec.min_players}..{spec.max_players} (default {spec.default_players})")
    parser.add_argument("--opponents", default=opponents, help=opponents_help)
    parser.add_argument("--seed", type=int, default=None, help="deal and agent seed (default: random)")
    parser.add_argument("--seat", type=int, default=0, help=seat_help)
    parser.add_argument("--trust-checkpoint", action="store_true", help="load SB3 .zip and RLlib checkpoints among the agents: they are unpickled, which can run code, "
                        "so only for files you trust (or add trust=1 to that agent's spec: PATH.zip:trust=1); our .pt checkpoints need no opt-in")
    args = parser.parse_args(argv)
    if args.trust_checkpoint:
        trust_checkpoints()
    try:
        play(args.players, split_specs(args.opponents), args.seed, args.seat, stdin or sys.stdin, stdout or sys.stdout)
    except ValueError as exc:
        parser.error(str(exc))
    return 0


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """``grinch-play``: ``--game`` picks the game; every other option belongs to that game's ``play`` command."""
    chooser = argparse.ArgumentParser(prog="grinch-play", description="Play a game of grinch_env in the terminal (options: see python -m grinch_env.<game>.play --help).",
                                      add_help=False)
    chooser.add_argument("--game", choices=sorted(GAMES), default="grinch", help="the game (default grinch)")
    chosen, rest = chooser.parse_known_args(argv)
    return importlib.import_module(f"{get_game(chosen.game).package}.play").main(rest, stdin, stdout)


__all__ = ["QuitError", "main", "print_moves", "print_result", "prompt_move", "run_cli", "seat_opponents", "split_move"]
