"""The learner's checkpoint file name and formats: one place for the trainer, expert iteration and the loaders.

A leaf module (it imports nothing), so that :mod:`training.checkpoint` can
recognise a learner checkpoint without importing the trainer.
"""

LATEST = "latest.pt"  # the trainer's run-dir convention (training.checkpoint.LATEST)
RUN_FORMAT = "grinch_learner_checkpoint_v1"  # training.learner.run's latest.pt
EXPERT_FORMAT = "grinch_learner_expert_v1"  # training.learner.expert's latest.pt
LEARNER_FORMATS = (RUN_FORMAT, EXPERT_FORMAT)  # both hold a TokenNet that plays as a harness agent

__all__ = ["EXPERT_FORMAT", "LATEST", "LEARNER_FORMATS", "RUN_FORMAT"]
