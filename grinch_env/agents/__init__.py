"""Agents that play *Grinch Grow Your Heart* from observations, and :func:`make_agent` to build one by name.

An agent has ``name``, ``reset(seed=None)`` (called at the start of each game)
and ``act(observation, action_mask) -> int``; ``act_batch`` is optional.  It
sees only the observation and mask, never the true game state.

=================  ==============================================================
spec               agent
=================  ==============================================================
``random``         uniform over the legal actions
``greedy``         best immediately scorable value (row plus bonus, unused rows)
``expectimax``     sampling over the unseen cards with row opportunity costs;
                   options ``samples`` (32), ``horizon_cards`` (7),
                   ``row_weight`` (1.0), ``win_aware`` (1), e.g.
                   ``expectimax:samples=64``
``search``         determinised playouts of every candidate move to the end of
                   the round, batched in the engine (:mod:`.search`); options
                   ``playouts`` (64 per move), ``policy`` (``rows`` or a
                   checkpoint path), e.g. ``search:playouts=256``
``oracle``         expectimax shown the true deck order (needs ``see(game)``
                   before each ``act``: ``training.match`` plays it)
a path             a checkpoint (file or run directory), loaded by
                   ``training.checkpoint.load_agent(path, seed=None)``
=================  ==============================================================
"""

from __future__ import annotations

import os
from typing import Any

from grinch_env.agents.base import Agent, BaseAgent, View, decode, legal_actions
from grinch_env.agents.expectimax import ExpectimaxAgent
from grinch_env.agents.oracle import OracleAgent
from grinch_env.agents.search import SearchAgent
from grinch_env.agents.simple import GreedyAgent, RandomAgent

AGENT_CLASSES: dict[str, type] = {"random": RandomAgent, "greedy": GreedyAgent, "expectimax": ExpectimaxAgent, "search": SearchAgent,
                                   "oracle": OracleAgent}


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


def make_agent(spec: str | Agent, seed: int | None = None, num_players: int | None = None) -> Agent:
    """Return the agent that ``spec`` names: a built-in name with options, or a checkpoint path.

    An existing agent object is returned as it is (reset with ``seed`` if one is given).
    """
    if not isinstance(spec, str):
        if isinstance(spec, Agent):
            if seed is not None:
                spec.reset(seed)
            return spec
        raise ValueError(f"an agent spec must be a name ({', '.join(sorted(AGENT_CLASSES))}), a checkpoint path or an agent object, got {spec!r}")
    name, options = parse_spec(spec)
    if name in AGENT_CLASSES:
        cls = AGENT_CLASSES[name]
        try:
            agent = cls(seed=seed, **options)
        except TypeError as exc:
            raise ValueError(f"bad options {options} for agent {name!r}: {exc}") from None
        if options:
            agent.name = spec
        return agent
    if os.path.exists(spec):
        return _load_checkpoint(spec, seed, num_players)
    raise ValueError(f"unknown agent {spec!r}: use one of {sorted(AGENT_CLASSES)} (options like expectimax:samples=32) or an existing checkpoint path")


def _load_checkpoint(path: str, seed: int | None, num_players: int | None) -> Agent:
    try:
        from training.checkpoint import load_agent
    except ImportError as exc:
        raise ValueError(f"cannot load checkpoint {path!r}: training.checkpoint.load_agent is not available ({exc})") from None
    try:
        agent = load_agent(path, seed=seed)
    except Exception as exc:  # missing, truncated or foreign files raise many kinds of errors
        raise ValueError(f"cannot load checkpoint {path!r}: {exc}") from exc
    supported = getattr(agent, "num_players", None)
    if num_players is not None and supported is not None and not _supports(supported, num_players):
        raise ValueError(f"checkpoint {path!r} was trained for num_players={supported}, not {num_players}")
    return agent


def _supports(supported: Any, num_players: int) -> bool:
    if isinstance(supported, int):
        return supported == num_players
    try:
        return num_players in supported
    except TypeError:
        return True


__all__ = ["AGENT_CLASSES", "Agent", "BaseAgent", "ExpectimaxAgent", "GreedyAgent", "OracleAgent", "RandomAgent", "SearchAgent", "View", "decode", "legal_actions", "make_agent", "parse_spec"]
