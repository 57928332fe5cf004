"""The general learner: rules-level tokens, one token network for both games, self-play PPO from scratch (``algo: ppo``),
and the afterstate values of both games (``algo: afterstate``).

``python -m training.train --config configs/ppo_gnoming.yaml``; see ``docs/training.md`` and ``docs/results/ppo_tokens.md``.
"""
