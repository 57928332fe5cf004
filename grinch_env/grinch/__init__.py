"""*Grinch Grow Your Heart*: rules (:mod:`.game`, :mod:`.scoring`, :mod:`.cards`), encoding, the AEC env, the batched engine and agents.

The rule contract is ``../shared/RULES.md``; :mod:`grinch_env.grinch.game` is
its single source of truth.  ``grinch_env.grinch.env(...)`` is
``grinch_env.env(...)``.
"""

from grinch_env.grinch.env import env, raw_env
from grinch_env.grinch.game import Game, IllegalActionError, Phase, terminal_rewards

__all__ = ["Game", "IllegalActionError", "Phase", "env", "raw_env", "terminal_rewards"]
