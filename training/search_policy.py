"""A checkpoint's network as the batched rollout policy of the ``search`` agent (``search:policy=<checkpoint>``).

Kept in ``training`` because it imports torch; :mod:`grinch_env.agents.search`
imports it only when a checkpoint is named.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from training.checkpoint import load_checkpoint, model_from_checkpoint, resolve_checkpoint


class NetworkPolicy:
    """``policy(obs, mask) -> actions``: the most probable legal action of a trained network for every row of a batch."""

    def __init__(self, path: str | Path, threads: int = 1) -> None:
        self.net = model_from_checkpoint(load_checkpoint(resolve_checkpoint(path)))
        self.threads = threads

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        torch.set_num_threads(self.threads)
        dist, _, _ = self.net.distribution_np(obs, mask)
        return dist.logits.argmax(dim=-1).numpy().astype(np.int64)


__all__ = ["NetworkPolicy"]
