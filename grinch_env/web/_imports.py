"""Everything the web page takes from the rest of the package, in one place.

The package is being restructured (Grinch's play CLI moves to
``grinch_env.grinch.play``; the pictures arrive as ``grinch_env.<game>.render``),
so the web server reaches other modules only through the names below.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from grinch_env.agents import champion_dir, split_specs
from grinch_env.evaluation.logs import list_logs
from grinch_env.evaluation.tournament import build_agent
from grinch_env.games import DEFAULT_GAME, GAMES, GameSpec, get_game
from grinch_env.grinch.cards import card_name

__all__ = ["DEFAULT_GAME", "GAMES", "GameSpec", "build_agent", "card_name", "champion_dir", "draw_table", "get_game", "list_logs", "play_module",
           "split_specs"]


def play_module(spec: GameSpec) -> ModuleType:
    """Return the game's play CLI module (its ``move_label`` and ``describe_action`` label the moves)."""
    return importlib.import_module(f"{spec.package}.play")


def draw_table(spec: GameSpec) -> Any:
    """Return the game's ``draw_table(game, seat=None, last_action=None) -> HxWx3 uint8`` ."""
    return importlib.import_module(f"{spec.package}.render").draw_table
