"""Checks both games' batched-engine tests share (each game's test file calls them with its own engine)."""

from __future__ import annotations

from typing import Any

import numpy as np


def random_legal(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    """Return a uniformly random legal action per game of a batch of masks."""
    return (rng.random(mask.shape) * mask).argmax(axis=1)


def check_recycled_buffers_are_never_held(venv: Any, plain: Any, steps: int = 120) -> None:
    """Step ``venv`` (recycling observation buffers) beside ``plain`` (the same games, no recycling) and check the recycling.

    Every observation equals the plain engine's; a buffer the caller keeps,
    or of which a view survives, is never written again; dropped buffers are
    reused (fewer distinct buffers than half the steps).
    """
    (obs, mask, _), (ref, _, _) = venv.reset(), plain.reset()
    rng = np.random.default_rng(0)
    kept, seen = [], set()
    for t in range(steps):
        np.testing.assert_array_equal(obs, ref)
        if t % 10 == 0:
            kept.append((obs, obs.copy()))  # held by the caller: must never change
        view = obs[:2] if t % 7 == 0 else None  # a surviving view also holds the buffer
        seen.add(id(obs))
        actions = random_legal(rng, mask)
        previous = obs
        obs, mask, _, _, _ = venv.step(actions)
        ref = plain.step(actions)[0]
        assert obs is not previous
        if view is not None:
            assert not np.shares_memory(obs, view)
        del previous, view
    for buf, snapshot in kept:
        np.testing.assert_array_equal(buf, snapshot)
    assert len(seen) < steps // 2  # dropped buffers were reused
