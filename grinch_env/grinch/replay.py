"""Recording and replaying games: a reset seed plus the ``(agent, action)`` log reproduces a game exactly.

``raw_env`` records every game it plays: ``env.unwrapped.action_log`` holds
the ``(agent, action)`` pairs and ``env.unwrapped.game_seed`` the seed of the
game's deck shuffles.  Either the seed given to ``reset`` or the game seed
replays the game::

    env = grinch_env.raw_env(num_players=4)
    env.reset(seed=7)
    ...                                   # play
    again = play_log(7, env.action_log, num_players=4)
    assert again.game_state() == env.game_state()
    again = play_log(None, env.action_log, game_seed=env.game_seed, num_players=4)

A log can be saved as JSON with :func:`log_to_json` and read back with
:func:`log_from_json`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from grinch_env.aec import log_from_json, log_to_json
from grinch_env.grinch.env import raw_env


def play_log(seed: int | None, log: Iterable[tuple[str, int]], *, game_seed: int | None = None, **env_kwargs: Any) -> raw_env:
    """Return a ``raw_env`` that was reset with ``seed`` (or ``game_seed``) and stepped through ``log``.

    Raises ``ValueError`` if an entry's agent is not the one to act or its
    action is illegal at that point (the message names the entry).
    """
    if seed is None and game_seed is None:
        raise ValueError("play_log needs the reset seed or the game_seed of the recorded game, got neither")
    env = raw_env(**env_kwargs)
    env.reset(seed=seed, options=None if game_seed is None else {"game_seed": game_seed})
    for i, entry in enumerate(log):
        try:
            agent, action = entry
        except (TypeError, ValueError):
            raise ValueError(f"log entry {i} must be a pair (agent, action), got {entry!r}") from None
        if not env.agents:
            raise ValueError(f"log entry {i} ({agent}, {action}): the game is already over")
        if agent != env.agent_selection:
            raise ValueError(f"log entry {i} ({agent}, {action}): {env.agent_selection} is to act, not {agent}")
        if env.terminations[agent]:
            env.step(None)
            continue
        try:
            env.step(action)
        except ValueError as err:  # IllegalActionError names the phase and the legal actions
            raise ValueError(f"log entry {i} ({agent}, {action}): {err}") from None
    return env


__all__ = ["log_from_json", "log_to_json", "play_log"]
