"""Agents that play *Gnoming A Round* from observations (built by name through :func:`grinch_env.agents.make_agent`).

An agent has ``name``, ``reset(seed=None)``, ``act(observation, action_mask) -> int``
and ``act_batch(observations, masks) -> int64[B]``, like the Grinch agents.  It
sees only the ``float32[1046]`` observation of RULES_GNOMING.md §6.3 and the
``int8[15]`` mask; :func:`decode` reads the observation back into a
:class:`View` (what every seat knows: Gnoming has no private information).

=================  ==============================================================
spec               agent
=================  ==============================================================
``random``         uniform over the legal actions
``greedy``         one-step expected layout score (lower is better), face-down
                   cards valued at the mean of the never-seen cards
``search``         greedy rollouts on sampled determinisations
                   (``decode_game``), common random numbers across
                   candidate actions; options ``samples`` (8), ``horizon``
                   (``"turn"`` or ``"round"``), e.g. ``search:samples=16``
=================  ==============================================================
"""

from __future__ import annotations

from grinch_env.gnoming.agents.base import BaseAgent, View, decode, legal_actions
from grinch_env.gnoming.agents.search import SearchAgent
from grinch_env.gnoming.agents.simple import GreedyAgent, GreedyPolicy, RandomAgent

AGENT_CLASSES: dict[str, type] = {"random": RandomAgent, "greedy": GreedyAgent, "search": SearchAgent}

__all__ = ["AGENT_CLASSES", "BaseAgent", "GreedyAgent", "GreedyPolicy", "RandomAgent", "SearchAgent", "View", "decode", "legal_actions"]
