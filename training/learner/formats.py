"""The learner's checkpoint file name and formats: one place for the trainer and the loaders.

A leaf module (it imports nothing at import time), so that :mod:`training.checkpoint` can
recognise a learner checkpoint without importing the trainer.
"""

LATEST = "latest.pt"  # the trainer's run-dir convention (training.checkpoint.LATEST)
RUN_FORMAT = "grinch_learner_checkpoint_v1"  # training.learner.run's latest.pt
LEARNER_FORMATS = (RUN_FORMAT,)  # holds a TokenNet that plays as a harness agent
AFTERSTATE_FORMAT = "grinch_learner_afterstate_v1"  # training.learner.afterstate_run's latest.pt: afterstate values, no TokenNet



def read_run_file(path, fmt: str, missing: str, kind: str):
    """Return ``(checkpoint dict, file)`` of the ``fmt`` checkpoint at ``path`` (a run directory or its ``latest.pt``).

    ``ValueError`` when it is absent (``cannot resume: <file> does not exist (<missing>)``) or of another format
    (``<file> is not <kind> (format ..., expected ...)``): the trainers' one resume read.
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


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished child processes (a generation's workers, joined when its pool closes)."""
    import resource
    import time

    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + child.ru_utime + child.ru_stime


__all__ = ["AFTERSTATE_FORMAT", "LATEST", "LEARNER_FORMATS", "RUN_FORMAT", "cpu_seconds", "read_run_file"]
