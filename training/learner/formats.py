"""The learner's checkpoint file name and formats: one place for the trainer, expert iteration and the loaders.

A leaf module (it imports nothing at import time), so that :mod:`training.checkpoint` can
recognise a learner checkpoint without importing the trainer.
"""

LATEST = "latest.pt"  # the trainer's run-dir convention (training.checkpoint.LATEST)
RUN_FORMAT = "grinch_learner_checkpoint_v1"  # training.learner.run's latest.pt
EXPERT_FORMAT = "grinch_learner_expert_v1"  # training.learner.expert's latest.pt
LEARNER_FORMATS = (RUN_FORMAT, EXPERT_FORMAT)  # both hold a TokenNet that plays as a harness agent
AFTERSTATE_FORMAT = "grinch_learner_afterstate_v1"  # training.learner.afterstate_run's latest.pt: afterstate values, no TokenNet



def read_run_file(path, fmt: str, missing: str, kind: str):
    """Return ``(checkpoint dict, file)`` of the ``fmt`` checkpoint at ``path`` (a run directory or its ``latest.pt``).

    ``ValueError`` when it is absent (``cannot resume: <file> does not exist (<missing>)``) or of another format
    (``<file> is not <kind> (format ..., expected ...)``): the trainer's and expert iteration's one resume read.
    """
    from pathlib import Path

    import torch

    path = Path(path)
    if path.is_dir():
        path = path / LATEST
    if not path.is_file():
        raise ValueError(f"cannot resume: {path} does not exist ({missing})")
    ckpt = torch.load(path, map_location="cpu", weights_only=False)
    if ckpt.get("format") != fmt:
        raise ValueError(f"{path} is not {kind} (format {ckpt.get('format')!r}, expected {fmt!r})")
    return ckpt, path


__all__ = ["AFTERSTATE_FORMAT", "EXPERT_FORMAT", "LATEST", "LEARNER_FORMATS", "RUN_FORMAT", "read_run_file"]
