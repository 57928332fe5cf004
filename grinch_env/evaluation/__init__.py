"""Evaluation for every game: seat-rotated, paired-deal tournaments, intervals, ratings, reports and plots (no torch needed).

* :mod:`.tournament` — the schedule (seat rotation, paired deals) and one game's record;
* :mod:`.evaluate` — :func:`~grinch_env.evaluation.evaluate.evaluate` and the ``python -m grinch_env.evaluation`` command;
* :mod:`.ratings` — Wilson and mean intervals, openskill ratings;
* :mod:`.report` — ``results.json``, ``table.txt`` and PNG plots;
* :mod:`.versus` — one agent against baselines, by role (what a trainer reports).
"""
