"""Agents for every game, and :func:`make_agent` to build one by name or checkpoint path.

An agent has ``name``, ``reset(seed=None)`` (called at the start of each game)
and ``act(observation, action_mask) -> int``; ``act_batch`` is optional.  It
sees only the observation and mask, never the true game state.

``make_agent(spec, game="grinch")`` takes a built-in name of that game with
options (``"expectimax:samples=64"``; the lists are in
:mod:`grinch_env.grinch.agents` and :mod:`grinch_env.gnoming.agents`), a
checkpoint path (a run directory, a ``.pt`` or an SB3 ``.zip``), or an agent
object.  Checkpoints are loaded by the loaders of
:mod:`grinch_env.agent_base` (one layer down, so that a game's own agents,
such as the Grinch search's checkpoint rollout policy, load checkpoints
without importing this module); the trainer's loader is found through the
``grinch_env.checkpoint_loaders`` entry point, so ``grinch_env`` never
imports the trainer (or torch).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from grinch_env.agent_base import TRUST_ENV, Agent, load_checkpoint_agent, trust_checkpoints
from grinch_env.games import DEFAULT_GAME, get_game


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
    """Return the agent that ``spec`` names for ``game``: a built-in name with options, or a checkpoint path.

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
    if os.path.exists(spec):
        return load_checkpoint_agent(spec, seed, num_players, spec_game.name)
    path, sep, tail = spec.rpartition(":")
    if sep and os.path.exists(path):  # a checkpoint path with options: trust=1 (opting in to unpickling an SB3 .zip or RLlib checkpoint), a learner's search options
        _, path_options = parse_spec(f"x:{tail}")
        trust = path_options.pop("trust", 0)
        if trust not in (0, 1):
            raise ValueError(f"checkpoint spec {spec!r}: trust must be 0 or 1, got {trust!r}")
        return load_checkpoint_agent(path, seed, num_players, spec_game.name, trust=bool(trust), options=path_options)
    raise ValueError(
        f"unknown agent {spec!r} for {spec_game.title}: use one of {sorted(classes)} (with options as name:key=value, e.g. "
        f"{sorted(classes)[0]}:samples=32) or an existing checkpoint path"
    )


__all__ = ["TRUST_ENV", "make_agent", "parse_spec", "split_specs", "trust_checkpoints"]
