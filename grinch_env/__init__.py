"""grinch_env: a PettingZoo benchmark for the card game *Grinch Grow Your Heart*.

``grinch_env.env(...)`` / ``grinch_env.raw_env(...)`` create the AEC
environment (see :mod:`grinch_env.env` for its documentation page);
:mod:`grinch_env.game` holds the rules, :mod:`grinch_env.scoring` the score pad.
"""

from grinch_env.env import env, raw_env, terminal_rewards
from grinch_env.game import Game, IllegalActionError

__version__ = "0.1.0"
ENV_VERSION = "grinch_grow_your_heart_v0"

__all__ = ["ENV_VERSION", "Game", "IllegalActionError", "__version__", "env", "raw_env", "terminal_rewards"]
