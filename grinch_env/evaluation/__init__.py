"""Evaluation for every game: seat-rotated, paired-deal tournaments, intervals, ratings, reports and plots (no torch needed).

* :mod:`.tournament` — the schedule (seat rotation, paired deals) and one game's record;
* :mod:`.evaluate` — :func:`evaluate` and the ``python -m grinch_env.evaluation`` command;
* :mod:`.ratings` — Wilson and mean intervals, openskill ratings;
* :mod:`.report` — ``results.json``, ``table.txt`` and PNG plots;
* :mod:`.versus` — one agent against baselines, by role (what a trainer reports).
"""

from grinch_env.evaluation.evaluate import EvalResult, evaluate, write_report
from grinch_env.evaluation.versus import evaluate_against, role_results, write_final_report

__all__ = ["EvalResult", "evaluate", "evaluate_against", "role_results", "write_final_report", "write_report"]
