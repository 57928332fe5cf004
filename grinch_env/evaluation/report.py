"""Evaluation report files: JSON with every figure, a text table and matplotlib plots (Agg backend)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any


def write_report(result: Any, out_dir: str | os.PathLike) -> None:
    """Write ``results.json``, ``table.txt``, ``win_rates.png``, ``scores.png`` and (games with a score pad) ``rows.png`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result.to_dict(), indent=1))
    (out / "table.txt").write_text(result.table() + "\n")
    _plots(result, out)


def match_title(result: Any) -> str:
    """Return who played and how much: ``"run/best vs 3 x greedy: 4 players, 200 games"`` (repeated seats counted)."""
    counts: dict[str, int] = {}
    for name in result.agents:
        base = re.sub(r"#\d+$", "", name)
        counts[base] = counts.get(base, 0) + 1
    match = " vs ".join(f"{k} x {base}" if k > 1 else base for base, k in counts.items())
    return f"{match}: {result.num_players} players, {result.num_games} games"


def repeated_names_note(names: list[str]) -> str | None:
    """Return what ``greedy#2`` style names mean, or None when no agent is repeated."""
    repeats = [m for m in (re.fullmatch(r"(.*)#(\d+)", n) for n in names) if m]
    if not repeats:
        return None
    copies = ", ".join(f"{m.group(0)} = copy {m.group(2)} of {m.group(1)}" for m in repeats)
    return f"{copies} (an agent given more than once plays as separate copies in their own seats, each listed apart)"


def _plots(result: Any, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(result.per_agent)
    stats = [result.per_agent[n] for n in names]
    x = np.arange(len(names))
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    title = match_title(result)
    note = repeated_names_note(names)

    def save(fig: Any, name: str) -> None:
        if note:
            fig.text(0.01, 0.01, note, fontsize="x-small", ha="left", va="bottom")
        fig.tight_layout(rect=(0, 0.05 if note else 0, 1, 1))
        fig.savefig(out / name, dpi=100, bbox_inches="tight")
        plt.close(fig)

    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(names) + 2), 3.5))
    rates = np.array([s["win_rate"] for s in stats])
    lo = np.clip(rates - np.array([s["win_rate_ci"][0] for s in stats]), 0, None)  # rounding can leave -1e-16
    hi = np.clip(np.array([s["win_rate_ci"][1] for s in stats]) - rates, 0, None)
    ax.bar(x, rates, yerr=[lo, hi], capsize=4, color="tab:blue")
    ax.axhline(1 / result.num_players, color="grey", linestyle="--", linewidth=1, label="1 / players")
    ax.set_xticks(x, names, rotation=20, ha="right")
    ax.set_ylabel("win rate per seat (95% Wilson CI)")
    ax.set_title(f"win rate, {title}", fontsize="medium")
    ax.legend()
    save(fig, "win_rates.png")

    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(names) + 2) + 3, 3.5))
    marks = ax.boxplot([s["scores"] for s in stats], showmeans=True)
    ax.set_xticks(x + 1, names, rotation=20, ha="right")
    ax.set_ylabel("final total per seat")
    ax.set_title(f"final totals, {title}", fontsize="medium")
    mean, median = marks["means"][0], marks["medians"][0]
    key = [
        Patch(facecolor="none", edgecolor="black", label="box: middle half of the games"),
        Line2D([], [], color=median.get_color(), label="line: median"),
        Line2D([], [], color="none", marker=mean.get_marker(), markerfacecolor=mean.get_markerfacecolor(), markeredgecolor=mean.get_markeredgecolor(),
               label="triangle: mean"),
        Line2D([], [], color="black", label="whiskers: furthest totals within\n1.5 box heights of the box"),
        Line2D([], [], color="none", marker="o", markerfacecolor="none", markeredgecolor="black", label="circles: totals beyond"),
    ]
    ax.legend(handles=key, fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1))
    save(fig, "scores.png")

    row_names = result.spec.row_names
    if not row_names:  # a game without a score pad (Gnoming) has no row plot
        return
    fig, ax = plt.subplots(figsize=(8, 3.5))
    width = 0.8 / max(1, len(names))
    for i, s in enumerate(stats):
        ax.bar(np.arange(len(row_names)) + i * width, [r["points_per_game"] for r in s["rows"]], width, label=names[i])
    ax.set_xticks(np.arange(len(row_names)) + 0.4 - width / 2, row_names)
    ax.set_ylabel("mean points per game in the row")
    ax.set_title(f"points per score-pad row, {title}", fontsize="medium")
    ax.legend(fontsize="small")
    save(fig, "rows.png")
