"""The general learner: rules-level tokens, one token network for both games, PPO and Deep Monte-Carlo from scratch.

``python -m training.learner.run --config configs/learner_gnoming.yaml``; see ``docs/results/learner.md``.
"""
