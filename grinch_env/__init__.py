"""grinch_env: a PettingZoo benchmark for the card game *Grinch Grow Your Heart*.

``grinch_env.env(...)`` / ``grinch_env.raw_env(...)`` create the AEC
environment (see :mod:`grinch_env.env` for its documentation page);
:mod:`grinch_env.game` holds the rules, :mod:`grinch_env.scoring` the score pad.
"""

from grinch_env.env import env, raw_env, terminal_rewards
from grinch_env.game import Game, IllegalActionError

__version__ = "0.1.0"
ENV_VERSION = "grinch_grow_your_heart_v0"

# Gymnasium single-agent wrapper (grinch_env/gym_env.py); the guard keeps re-imports from re-registering.
import gymnasium as _gymnasium  # noqa: E402

if "grinch_env/GrinchGrowYourHeart-v0" not in _gymnasium.registry:
    _gymnasium.register(id="grinch_env/GrinchGrowYourHeart-v0", entry_point="grinch_env.gym_env:GrinchGymEnv")

__all__ = ["ENV_VERSION", "Game", "IllegalActionError", "__version__", "env", "raw_env", "terminal_rewards"]
