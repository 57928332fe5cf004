"""Durable file writes (stdlib only): what a crash may interrupt is either the old file or the new one, never half of one.

:mod:`training.checkpoint` writes checkpoints, manifests and sidecars with
them; :mod:`training.config` writes a run's ``config.yaml`` (reading and
writing a config needs no torch).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def fsync_dir(path: str | Path) -> None:
    """Flush a directory's entries (a rename or unlink in it) to disk, where the platform allows it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on a directory
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` durably: a temporary file in the same directory, fsync, ``os.replace``, fsync of the directory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes owner-only files; a checkpoint is meant to be shared
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


__all__ = ["atomic_write_bytes", "fsync_dir"]
