"""What every game's batched engine shares: the backend choice, the table sizes of a batch, and the checks on actions.

Each game's ``vector`` module (:class:`grinch_env.grinch.vector.VectorGrinch`,
:class:`grinch_env.gnoming.vector.VectorGnoming`) holds its own transitions
and encoding; the argument checks and their error messages are written once
here, so both engines refuse bad input in the same words.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

BACKENDS = ("auto", "numpy", "numba")


def pick_backend(name: str, kernels: str) -> str:
    """Return the backend to use, ``"numba"`` or ``"numpy"``, for the requested ``name``.

    ``kernels`` is the module of the game's compiled kernels (imported, so
    compiled or loaded from numba's cache, when numba is asked for or
    ``"auto"`` finds numba installed).
    """
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")
    if name == "numpy":
        return name
    try:
        importlib.import_module(kernels)
    except ImportError as exc:
        if name == "numba":
            raise ValueError(f"backend 'numba' needs the numba package (pip install numba): {exc}") from None
        return "numpy"
    return "numba"


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def table_sizes(num_envs: Any, num_players: Any, min_players: int, max_players: int) -> np.ndarray:
    """Return every game's number of players, int64[num_envs], or raise ``ValueError`` naming what is allowed.

    A shorter sequence is repeated cyclically, so that ``[2, 3, 4, 5, 6]``
    mixes sizes evenly over any batch.
    """
    if not _is_int(num_envs) or num_envs < 1:
        raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
    sizes = [num_players] if _is_int(num_players) else num_players
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, (Sequence, np.ndarray)) or len(sizes) == 0 or not all(
            _is_int(x) and min_players <= x <= max_players for x in sizes):
        raise ValueError(f"num_players must be an int in {min_players}..{max_players} or a non-empty sequence of them, got {num_players!r}")
    return np.resize(np.array(sizes, dtype=np.int64), int(num_envs))


def actions_array(actions: Any, num_envs: int) -> np.ndarray:
    """Return ``actions`` as int64[num_envs], or raise ``ValueError`` if it has the wrong shape or dtype."""
    if type(actions) is np.ndarray and actions.dtype == np.int64 and actions.shape == (num_envs,) and actions.flags.c_contiguous:
        return actions  # the common case (an argmax), without conversions
    a = np.asarray(actions)
    if a.shape != (num_envs,) or not np.issubdtype(a.dtype, np.integer):
        raise ValueError(f"actions must be an integer array of shape ({num_envs},), got dtype {a.dtype} and shape {a.shape}")
    return np.ascontiguousarray(a, dtype=np.int64)


POOL = 3  # observation buffers watched for reuse (the caller holds the last one or two while stepping)


def fresh_buffer(pool: list[np.ndarray], shape: tuple[int, int]) -> np.ndarray:
    """Return a float32 buffer of ``shape`` that no one else holds: a recycled one of ``pool`` whose only reference is the pool's, else a new one.

    A returned ``obs`` that the caller has dropped (and of which no view,
    tensor or buffer export survives, as ``sys.getrefcount`` shows) is
    indistinguishable from a new array, so it is reused: this saves the
    allocator's fresh pages (44 MB at 8192 Grinch games; page faults and
    zeroing by the kernel at every step).  Buffers the caller keeps are
    never touched again.  The engine overwrites every entry it returns.
    """
    for k in range(len(pool)):
        if sys.getrefcount(pool[k]) == 2:  # the pool's reference and getrefcount's argument
            return pool[k]
    obs = np.empty(shape, dtype=np.float32)
    if len(pool) >= POOL:
        pool.pop(0)  # the caller keeps those (a rollout buffer): stop watching the oldest
    pool.append(obs)
    return obs


def illegal_action_error(game: int, action: int, seat: int, mask: np.ndarray, action_name: Callable[[int], str]) -> ValueError:
    """Return the error a batched engine raises for an illegal ``action`` in ``game``: it names the action, the seat and the legal ones."""
    legal = np.flatnonzero(mask).tolist()
    num_actions = len(mask)
    what = action_name(action) if 0 <= action < num_actions else f"outside 0..{num_actions - 1}"
    return ValueError(
        f"illegal action {action} ({what}) for game {game} (seat {seat} to act); "
        f"legal actions: {legal} ({', '.join(action_name(x) for x in legal)})"
    )


__all__ = ["BACKENDS", "POOL", "actions_array", "fresh_buffer", "illegal_action_error", "pick_backend", "table_sizes"]
