"""Agents that play *Grinch Grow Your Heart* from observations (built by name through :func:`grinch_env.agents.make_agent`).

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
=================  ==============================================================

Built-in agents take the game's ``bonus_layout`` as a keyword.
"""

from __future__ import annotations

from grinch_env.grinch.agents.base import BaseAgent, View, decode, legal_actions
from grinch_env.grinch.agents.expectimax import ExpectimaxAgent
from grinch_env.grinch.agents.search import SearchAgent
from grinch_env.grinch.agents.simple import GreedyAgent, RandomAgent

AGENT_CLASSES: dict[str, type] = {"random": RandomAgent, "greedy": GreedyAgent, "expectimax": ExpectimaxAgent, "search": SearchAgent}

__all__ = ["AGENT_CLASSES", "BaseAgent", "ExpectimaxAgent", "GreedyAgent", "RandomAgent", "SearchAgent", "View", "decode", "legal_actions"]
