"""*Gnoming A Round*, the project's second game (rules: ``../shared/RULES_GNOMING.md``).

:mod:`~grinch_env.gnoming.cards` and :mod:`~grinch_env.gnoming.scoring` hold
the deck and the scoring, :mod:`~grinch_env.gnoming.game` the rules engine,
:mod:`~grinch_env.gnoming.encoding` the observation, and
:mod:`~grinch_env.gnoming.env` the PettingZoo AEC environment
(``grinch_env.gnoming.env(...)`` / ``raw_env(...)``).
"""

from grinch_env.gnoming.env import env, raw_env
from grinch_env.gnoming.game import Game, IllegalActionError, Phase

ENV_VERSION = "gnoming_a_round_v0"


__all__ = ["ENV_VERSION", "Game", "IllegalActionError", "Phase", "env", "raw_env"]
