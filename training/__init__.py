"""Training for grinch_env agents: self-play PPO, distillation (DAgger), SB3, checkpoints.

Evaluation moved to :mod:`grinch_env.evaluation` (it needs no torch); the old
module paths ``training.evaluate``, ``training.tournament``,
``training.ratings`` and ``training.report`` keep working.  Importing this
package registers the torch checkpoint loader with
:func:`grinch_env.agents.make_agent` (installed packages also find it through
the ``grinch_env.checkpoint_loaders`` entry point).
"""

from grinch_env import _aliases

_aliases.install({f"training.{m}": f"grinch_env.evaluation.{m}" for m in ("tournament", "ratings", "report")})
