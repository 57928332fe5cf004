"""Training for grinch_env agents: self-play PPO, distillation (DAgger), SB3, RLlib, checkpoints.

Evaluation lives in :mod:`grinch_env.evaluation` (it needs no torch).
:func:`grinch_env.agents.make_agent` finds this package's torch checkpoint
loader through the ``grinch_env.checkpoint_loaders`` entry point
(``training.checkpoint:load_agent``), so ``grinch_env`` never imports
``training``.
"""
