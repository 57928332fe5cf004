"""Interval estimates and multi-player ratings used by the evaluation reports."""

from __future__ import annotations

import math
from collections.abc import Sequence

from openskill.models import PlackettLuce

Z95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson_interval(successes: float, trials: int, z: float = Z95) -> tuple[float, float]:
    """Return the Wilson score interval ``(low, high)`` of a success rate (fractional successes allowed for shared wins)."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    # The interval always holds p; clamping also absorbs rounding at p = 0 or 1.
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """Return ``(mean, low, high)``: the mean and its normal-approximation 95% interval."""
    n = len(values)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    mean = sum(values) / n
    if n == 1:
        return (mean, mean, mean)
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(var / n)
    return (mean, mean - half, mean + half)


def rate_games(names: Sequence[str], games: Sequence[tuple[Sequence[int], Sequence[float]]]) -> dict[str, dict[str, float]]:
    """Return openskill Plackett-Luce ratings ``{name: {mu, sigma, ordinal}}`` after the games, in order.

    Each game is ``(lineup, totals)``.  An agent holding several seats enters
    the match once, as a one-player team, with the mean of its seats' totals
    (higher is better); games with a single distinct agent change nothing.
    """
    model = PlackettLuce()
    ratings = {name: model.rating(name=name) for name in names}
    for lineup, totals in games:
        present = sorted(set(lineup))
        if len(present) < 2:
            continue
        scores = [sum(t for a, t in zip(lineup, totals) if a == i) / lineup.count(i) for i in present]
        teams = [[ratings[names[i]]] for i in present]
        new = model.rate(teams, scores=scores)
        for i, team in zip(present, new):
            ratings[names[i]] = team[0]
    return {name: {"mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()} for name, r in ratings.items()}
