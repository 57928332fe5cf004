"""Recording and replaying Gnoming games: a reset seed plus the ``(agent, action)`` log reproduces a game exactly.

``raw_env`` records every game: ``env.action_log`` holds the ``(agent,
action)`` pairs of the decisions asked (automatic ones are replayed by the
engine) and ``env.game_seed`` the seed of its shuffles::

    env = grinch_env.gnoming.raw_env(num_players=4)
    env.reset(seed=7)
    ...                                   # play
    again = play_log(7, env.action_log, num_players=4)
    assert again.game_state() == env.game_state()
    again = play_log(None, env.action_log, game_seed=env.game_seed, num_players=4)

A log is saved as JSON with :func:`grinch_env.grinch.replay.log_to_json` and read
back with :func:`grinch_env.grinch.replay.log_from_json` (the same format).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from grinch_env.aec import log_from_json, log_to_json, replay_log
from grinch_env.gnoming.env import raw_env


def play_log(seed: int | None, log: Iterable[tuple[str, int]], *, game_seed: int | None = None, **env_kwargs: Any) -> raw_env:
    """Return a Gnoming ``raw_env`` that was reset with ``seed`` (or ``game_seed``) and stepped through ``log`` (:func:`grinch_env.aec.replay_log`)."""
    return replay_log(raw_env, seed, log, game_seed=game_seed, **env_kwargs)


__all__ = ["log_from_json", "log_to_json", "play_log"]
