"""Register both games with PettingZoo's registry and with Gymnasium's (``import grinch_env`` calls :func:`register_envs`).

PettingZoo (1.27 has ``pettingzoo.register`` / ``make`` / ``pprint_registry``), AEC envs,
keyword arguments passed through to the game's ``env()``::

    import grinch_env, pettingzoo
    env = pettingzoo.make("aec", "grinch_env/gnoming-v0", num_players=5, render_mode="rgb_array")
    pettingzoo.pprint_registry()

Gymnasium, single-agent wrappers (:mod:`grinch_env.gym_env`) whose other seats are agent specs::

    import gymnasium
    env = gymnasium.make("grinch_env/GnomingARound-v0", num_players=5, opponents=["greedy"])

=====================================  =========================================================
``grinch_env/grinch-v0`` (AEC)         :func:`grinch_env.grinch.env.env` (wrapped as PettingZoo's classic games)
``grinch_env/gnoming-v0`` (AEC)        :func:`grinch_env.gnoming.env.env`
``grinch_env/GrinchGrowYourHeart-v0``  :class:`grinch_env.gym_env.GameGymEnv` (``game="grinch"``)
``grinch_env/GnomingARound-v0``        :class:`grinch_env.gym_env.GameGymEnv` with ``game="gnoming"``
=====================================  =========================================================

The version suffix is each game's env version (the ``_v0`` of its ``metadata["name"]``).
The games are turn-based with no simultaneous moves, so no parallel env is registered.
"""

from __future__ import annotations

import gymnasium
import pettingzoo

from grinch_env.gym_env import ENV_IDS

AEC_IDS = {"grinch": "grinch_env/grinch-v0", "gnoming": "grinch_env/gnoming-v0"}
AEC_ENTRY_POINTS = {"grinch": "grinch_env.grinch.env:env", "gnoming": "grinch_env.gnoming.env:env"}
GYM_ENTRY_POINTS = {
    "grinch": ("grinch_env.gym_env:GameGymEnv", {"game": "grinch"}),
    "gnoming": ("grinch_env.gym_env:GameGymEnv", {"game": "gnoming"}),
}


def register_envs() -> None:
    """Register every id above that is not registered yet (a second import registers nothing and warns of nothing)."""
    for game, env_id in AEC_IDS.items():
        if env_id not in pettingzoo.aec_registry:
            pettingzoo.register("aec", env_id, entry_point=AEC_ENTRY_POINTS[game])
    for game, env_id in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            entry_point, kwargs = GYM_ENTRY_POINTS[game]
            gymnasium.register(id=env_id, entry_point=entry_point, kwargs=kwargs)


__all__ = ["AEC_IDS", "ENV_IDS", "register_envs"]
