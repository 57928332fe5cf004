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

from grinch_env.aec import log_from_json, log_to_json, replay_log
from grinch_env.grinch.env import raw_env


def play_log(seed: int | None, log: Iterable[tuple[str, int]], *, game_seed: int | None = None, **env_kwargs: Any) -> raw_env:
    """Return a ``raw_env`` that was reset with ``seed`` (or ``game_seed``) and stepped through ``log`` (:func:`grinch_env.aec.replay_log`)."""
    return replay_log(raw_env, seed, log, game_seed=game_seed, **env_kwargs)


__all__ = ["log_from_json", "log_to_json", "play_log"]
