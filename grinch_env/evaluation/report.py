"""Evaluation report files: JSON with every figure, a text table and matplotlib plots (Agg backend)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_report(result: Any, out_dir: str | os.PathLike) -> None:
    """Write ``results.json``, ``table.txt``, ``win_rates.png``, ``scores.png`` and (games with a score pad) ``rows.png`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result.to_dict(), indent=1))
    (out / "table.txt").write_text(result.table() + "\n")
    _plots(result, out)


def _plots(result: Any, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(result.per_agent)
    stats = [result.per_agent[n] for n in names]
    x = np.arange(len(names))
    title = f"{result.num_players} players, {result.num_games} games"

    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(names) + 2), 3.5))
    rates = np.array([s["win_rate"] for s in stats])
    lo = np.clip(rates - np.array([s["win_rate_ci"][0] for s in stats]), 0, None)  # rounding can leave -1e-16
    hi = np.clip(np.array([s["win_rate_ci"][1] for s in stats]) - rates, 0, None)
    ax.bar(x, rates, yerr=[lo, hi], capsize=4, color="tab:blue")
    ax.axhline(1 / result.num_players, color="grey", linestyle="--", linewidth=1, label="1 / players")
    ax.set_xticks(x, names, rotation=20, ha="right")
    ax.set_ylabel("win rate per seat (95% Wilson CI)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "win_rates.png", dpi=100)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(names) + 2), 3.5))
    ax.boxplot([s["scores"] for s in stats], showmeans=True)
    ax.set_xticks(x + 1, names, rotation=20, ha="right")
    ax.set_ylabel("final total per seat")
    ax.set_title(f"score distribution, {title}")
    fig.tight_layout()
    fig.savefig(out / "scores.png", dpi=100)
    plt.close(fig)

    row_names = result.spec.row_names
    if not row_names:  # a game without a score pad (Gnoming) has no row plot
        return
    fig, ax = plt.subplots(figsize=(8, 3.5))
    width = 0.8 / max(1, len(names))
    for i, s in enumerate(stats):
        ax.bar(np.arange(len(row_names)) + i * width, [r["points_per_game"] for r in s["rows"]], width, label=names[i])
    ax.set_xticks(np.arange(len(row_names)) + 0.4 - width / 2, row_names)
    ax.set_ylabel("mean points per game in the row")
    ax.set_title(f"score pad usage, {title}")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out / "rows.png", dpi=100)
    plt.close(fig)
