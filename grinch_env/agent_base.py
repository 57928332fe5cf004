"""The plumbing every game's built-in agents share: a seeded generator, input checks and a default ``act_batch``."""

from __future__ import annotations

import numpy as np


def check_mask(action_mask: np.ndarray, num_actions: int) -> np.ndarray:
    """Return the legal actions of ``action_mask`` (sorted), raising ``ValueError`` for a wrong shape or no legal action."""
    mask = np.asarray(action_mask)
    if mask.shape != (num_actions,):
        raise ValueError(f"action_mask must have shape ({num_actions},), got {mask.shape}")
    legal = np.flatnonzero(mask)
    if len(legal) == 0:
        raise ValueError("action_mask has no legal action: an agent is only asked to act when it is its turn")
    return legal


class SeededAgent:
    """Common plumbing: a seeded generator, input checks and a default ``act_batch``.

    A subclass sets ``num_actions`` (its game's action count) and implements
    ``_act(observation, legal)``, called only when there is a choice, with the
    legal actions as an int64 array (or a list of ints with ``legal_as_list``).
    """

    name = "base"
    num_actions: int
    legal_as_list = False

    def __init__(self, seed: int | None = None) -> None:
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; the same seed gives the same decisions."""
        self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Return a legal action for this observation."""
        legal = check_mask(action_mask, self.num_actions)
        if len(legal) == 1:
            return int(legal[0])
        return int(self._act(np.asarray(observation, dtype=np.float32), legal.tolist() if self.legal_as_list else legal))

    def _act(self, observation: np.ndarray, legal) -> int:  # noqa: ANN001 - an array or a list, as the subclass asks
        raise NotImplementedError

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Return ``int64[B]`` actions, one ``act`` per row."""
        return np.array([self.act(o, m) for o, m in zip(observations, masks)], dtype=np.int64)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


__all__ = ["SeededAgent", "check_mask"]
