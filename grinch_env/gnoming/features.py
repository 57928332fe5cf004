"""Per-action features of *Gnoming A Round* read from the observation alone (the network's inductive bias): greedy's value gaps and choice."""

from __future__ import annotations

import numpy as np

from grinch_env.gnoming.agents.base import decode
from grinch_env.gnoming.agents.simple import GreedyPolicy
from grinch_env.gnoming.game import NUM_ACTIONS

OPTION_FEATURES = 2
"""Features per action of :func:`greedy_features`: the value gap to the best legal option, and greedy's choice."""
VALUE_GAP_SCALE = 10.0


def greedy_features(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Return float32[B, 15, 2] for a batch: per legal action, ``(value - best value) / 10`` (clipped to 0..5) and 1.0 for greedy's choice.

    The values are :meth:`GreedyPolicy.option_values`, read from each
    observation alone; illegal actions get zeros.  Networks with
    ``action_features`` on Gnoming read these.
    """
    observations = np.asarray(observations)
    masks = np.asarray(masks)
    out = np.zeros((len(observations), NUM_ACTIONS, OPTION_FEATURES), dtype=np.float32)
    policy = _FEATURE_POLICY
    for i in range(len(observations)):
        legal = np.flatnonzero(masks[i]).tolist()
        if not legal:
            continue
        view = decode(observations[i].astype(np.float32, copy=False))
        values = policy.option_values(view, legal)
        best = min(values.values())
        for a, v in values.items():
            out[i, a, 0] = min((v - best) / VALUE_GAP_SCALE, 5.0) if np.isfinite(v) else 5.0
        out[i, policy.choose(view, legal), 1] = 1.0
    return out


_FEATURE_POLICY = GreedyPolicy()


__all__ = ["OPTION_FEATURES", "VALUE_GAP_SCALE", "greedy_features"]
