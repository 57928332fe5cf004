"""Agents for every game, and :func:`make_agent` to build one by name or checkpoint path.

An agent has ``name``, ``reset(seed=None)`` (called at the start of each game)
and ``act(observation, action_mask) -> int``; ``act_batch`` is optional.  It
sees only the observation and mask, never the true game state.

``make_agent(spec, game="grinch")`` takes a built-in name of that game with
options (``"expectimax:samples=64"``; the lists are in
:mod:`grinch_env.grinch.agents` and :mod:`grinch_env.gnoming.agents`),
``"champion"`` (the game's shipped learned agent, :func:`champion_dir`, with the
options of its checkpoint: ``"champion:play=value"``), a checkpoint path (a run
directory, a ``.pt`` or an SB3 ``.zip``), or an agent object.  Checkpoints are loaded by the loaders of
:mod:`grinch_env.agent_base` (one layer down, so that a game's own agents,
such as the Grinch search's checkpoint rollout policy, load checkpoints
without importing this module); the trainer's loader is found through the
``grinch_env.checkpoint_loaders`` entry point, so ``grinch_env`` never
imports the trainer (or torch).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from grinch_env.agent_base import TRUST_ENV, Agent, load_checkpoint_agent, trust_checkpoints
from grinch_env.games import DEFAULT_GAME, get_game

CHAMPION = "champion"
"""The spec of each game's shipped learned agent: the run directory ``checkpoints/champion_<game>`` (:func:`champion_dir`)."""
CHAMPION_PACKAGE = "grinch_env.champions"
"""Where an installed wheel holds the champions: pyproject.toml maps this package onto ``checkpoints/`` and ships each
champion's ``latest.pt``, ``config.yaml``, ``curve.csv`` and ``report/*.json``, ``*.txt`` as its package data."""
CHAMPION_FILE = "latest.pt"
_SOURCE_CHECKPOINTS = Path(__file__).resolve().parents[2] / "checkpoints"  # a source checkout's (and an editable install's) run directories


def champion_dir(game: str = DEFAULT_GAME) -> Path | None:
    """Return the run directory of ``game``'s shipped champion (``champion_<game>``, holding ``latest.pt``), or None.

    Looked up first as package data (:data:`CHAMPION_PACKAGE`, through :mod:`importlib.resources`: an installed wheel),
    then in the source tree this module sits in (``checkpoints/champion_<game>``: a checkout, or an editable install, whose
    setuptools finder does not import a package mapped outside its parent's folder).
    """
    name = f"champion_{get_game(game).name}"
    candidates: list[Any] = []
    try:
        candidates.append(resources.files(CHAMPION_PACKAGE).joinpath(name))
    except ModuleNotFoundError:  # not installed from a wheel: no such package
        pass
    candidates.append(_SOURCE_CHECKPOINTS / name)
    for candidate in candidates:
        if isinstance(candidate, Path) and (candidate / CHAMPION_FILE).is_file():
            return candidate
    return None


def _table_sizes(supported: Any) -> list[int] | None:
    if supported is None:
        return None
    return [supported] if isinstance(supported, int) else list(supported)


def _make_champion(spec: str, options: dict[str, Any], seed: int | None, num_players: int | None, spec_game: Any) -> Agent:
    """The shipped champion of ``spec_game`` (its checkpoint's options passed through), checked to play ``num_players``."""
    path = champion_dir(spec_game.name)
    if path is None:
        raise ValueError(f"no {CHAMPION} for {spec_game.title}: champion_{spec_game.name}/{CHAMPION_FILE} is neither package data of "
                         f"{CHAMPION_PACKAGE} (an installed wheel) nor in {_SOURCE_CHECKPOINTS} (a source checkout)")
    agent = load_checkpoint_agent(str(path), seed, None, spec_game.name, options=options or None)
    sizes = _table_sizes(getattr(agent, "num_players", None))
    if num_players is not None and sizes is not None and num_players not in sizes:
        raise ValueError(f"the {spec_game.title} {CHAMPION} (make_agent({CHAMPION!r}, game={spec_game.name!r}), {path}) plays "
                         f"num_players in {sizes}, not {num_players}: its checkpoint was trained at those table sizes only; "
                         f"choose one of them or another agent")
    agent.name = spec
    return agent


def champion_table_sizes(game: str = DEFAULT_GAME) -> list[int]:
    """Return the table sizes ``make_agent("champion", game=game)`` plays (loads its checkpoint; ``ValueError`` if it cannot)."""
    agent = make_agent(CHAMPION, game=game)
    sizes = _table_sizes(getattr(agent, "num_players", None))
    return list(get_game(game).player_counts()) if sizes is None else sizes


def _looks_like_path(text: str) -> bool:
    """Whether an agent spec names a file or directory (a separator, ``~``, ``.`` or a checkpoint suffix), not an agent."""
    seps = [s for s in (os.sep, os.altsep, "/") if s]
    return any(s in text for s in seps) or text.startswith(("~", ".")) or text.endswith((".pt", ".zip"))


def _parse_value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Return ``(name, options)`` of a spec such as ``"expectimax:samples=32,depth=2"``."""
    name, _, rest = spec.partition(":")
    options: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ValueError(f"agent option {item!r} in {spec!r} must be written key=value, e.g. expectimax:samples=32")
        options[key.strip()] = _parse_value(value.strip())
    return name.strip(), options


def split_specs(text: str) -> list[str]:
    """Split a comma-separated line-up into agent specs, keeping each spec's ``key=value`` options with it.

    ``"greedy,search:samples=16,horizon=round,random"`` gives
    ``["greedy", "search:samples=16,horizon=round", "random"]``: a piece
    ``key=value`` (``key`` a Python identifier, no ``:``) continues the options
    of the spec before it; anything else, such as ``checkpoints/lr=1e-4``,
    starts a new spec.
    """
    specs: list[str] = []
    for piece in (s.strip() for s in text.split(",")):
        if not piece:
            continue
        key, eq, _ = piece.partition("=")
        if eq and key.strip().isidentifier() and ":" not in piece and specs and ":" in specs[-1]:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return specs


def make_agent(
    spec: str | Agent,
    seed: int | None = None,
    num_players: int | None = None,
    game: str = DEFAULT_GAME,
    game_options: Mapping[str, Any] | None = None,
) -> Agent:
    """Return the agent that ``spec`` names for ``game``: a built-in name with options, ``champion``, or a checkpoint path.

    ``"champion"`` (with its checkpoint's options, ``"champion:play=value"``) loads the game's shipped run directory
    (:func:`champion_dir`), at the table sizes it was trained for (a ``ValueError`` naming them for another
    ``num_players``).  A spec that looks like a path but names nothing is ``"no checkpoint at PATH"``; any other unknown
    name is ``"unknown agent"``, listing the names.

    ``game_options`` are handed to built-in agents as keywords (the Grinch
    agents take ``bonus_layout``).  An existing agent object is returned as it
    is (reset with ``seed`` if one is given).
    """
    spec_game = get_game(game)
    if not isinstance(spec, str):
        if isinstance(spec, Agent):
            if seed is not None:
                spec.reset(seed)
            return spec
        raise ValueError(f"an agent spec must be a name ({', '.join(sorted(spec_game.agent_classes()))}), a checkpoint path or an agent object, got {spec!r}")
    name, options = parse_spec(spec)
    classes = spec_game.agent_classes()
    if name in classes:
        try:
            agent = classes[name](seed=seed, **dict(game_options or {}), **options)
        except TypeError as exc:
            raise ValueError(f"bad options {options} for {spec_game.name} agent {name!r}: {exc}") from None
        if options:
            agent.name = spec
        return agent
    if name == CHAMPION:
        return _make_champion(spec, options, seed, num_players, spec_game)
    if os.path.exists(spec):
        return load_checkpoint_agent(spec, seed, num_players, spec_game.name)
    path, sep, tail = spec.rpartition(":")
    if sep and os.path.exists(path):  # a checkpoint path with options: trust=1 (opting in to unpickling an SB3 .zip or RLlib checkpoint), a learner's search options
        _, path_options = parse_spec(f"x:{tail}")
        trust = path_options.pop("trust", 0)
        if trust not in (0, 1):
            raise ValueError(f"checkpoint spec {spec!r}: trust must be 0 or 1, got {trust!r}")
        return load_checkpoint_agent(path, seed, num_players, spec_game.name, trust=bool(trust), options=path_options)
    missing = path if sep and "=" in tail else spec
    if _looks_like_path(missing):
        raise ValueError(
            f"no checkpoint at {missing}: it does not exist{'' if os.path.isabs(os.path.expanduser(missing)) else f' (from {os.getcwd()})'}; give an existing checkpoint path (a run directory of python -m training.train "
            f"holding {CHAMPION_FILE}, a .pt file, an SB3 model .zip or an RLlib run directory, options as PATH:key=value), "
            f"{CHAMPION!r} (the shipped learned agent) or a {spec_game.title} agent name: {sorted(classes)}"
        )
    raise ValueError(
        f"unknown agent {spec!r} for {spec_game.title}: use one of {sorted(classes)} (with options as name:key=value, e.g. "
        f"{sorted(classes)[0]}:samples=32), {CHAMPION!r} (the shipped learned agent, e.g. {CHAMPION}:play=value) or an existing checkpoint path"
    )


__all__ = ["CHAMPION", "CHAMPION_PACKAGE", "TRUST_ENV", "champion_dir", "champion_table_sizes", "make_agent", "parse_spec", "split_specs",
           "trust_checkpoints"]
