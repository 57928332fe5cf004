"""Gymnasium single-agent view of *Grinch Grow Your Heart*: :class:`GrinchGymEnv`, the generic wrapper with ``game="grinch"``.

The wrapper itself, its spaces and arguments are documented in
:mod:`grinch_env.gym_env` (one class for both games); this module keeps the
Grinch's class and id where SB3 training and old code import them::

    import gymnasium
    env = gymnasium.make("grinch_env:grinch_env/GrinchGrowYourHeart-v0", num_players=4, opponents=["greedy"])

Arguments as before: ``num_players`` (2..6, default 4), ``opponents``,
``learner_seat``, ``bonus_layout``, ``reward_mode`` (``"win"`` or
``"margin"``), and now ``render_mode`` (``"rgb_array"``, ``"human"``,
``"ansi"``) and ``render_seat``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from grinch_env.gym_env import ENV_IDS, ILLEGAL_ACTION_REWARD, LEARNER, GameGymEnv

ENV_ID = ENV_IDS["grinch"]


class GrinchGymEnv(GameGymEnv):
    """One seat of a Grinch game as a Gymnasium env (:class:`~grinch_env.gym_env.GameGymEnv` with ``game="grinch"``)."""

    def __init__(
        self,
        num_players: int = 4,
        opponents: Any = ("random",),
        learner_seat: int | None = None,
        bonus_layout: str | Mapping = "standard",
        reward_mode: str = "win",
        render_mode: str | None = None,
        render_seat: int | str | None = LEARNER,
        **game_options: Any,
    ) -> None:
        super().__init__("grinch", num_players, opponents, learner_seat, reward_mode, render_mode, render_seat,
                         bonus_layout=bonus_layout, **game_options)


__all__ = ["ENV_ID", "ILLEGAL_ACTION_REWARD", "GrinchGymEnv"]
