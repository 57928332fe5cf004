"""Plot several learner runs' curves on shared axes: win share against each curve opponent over training CPU time.

``python -m training.learner.compare checkpoints/learner_gnoming_3p_ppo checkpoints/learner_gnoming_3p_dmc --out docs/results/learner_gnoming_3p.png``
(``--players N``: the points of one table size of runs over several.)
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path
from typing import Any


def read_curve(run_dir: str | Path, players: int | None = None) -> list[dict[str, str]]:
    """The rows of ``run_dir/curve.csv``; with ``players``, those of that table size only (a run over several sizes
    has a row per size and point)."""
    path = Path(run_dir) / "curve.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{str(path)!r} does not exist: give run directories that hold a curve.csv")
    with open(path) as f:
        rows = list(csv.DictReader(f))
    if players is None:
        return rows
    kept = [r for r in rows if r.get("num_players") == str(players)]
    if not kept:
        sizes = sorted({int(r["num_players"]) for r in rows if r.get("num_players")})
        raise ValueError(f"{str(path)!r} has no curve point at {players} players; it has {sizes or 'no table sizes'}")
    return kept


def figure(curves: dict[str, list[dict[str, str]]], parity: float | None = None, title: str = "") -> Any:
    """The matplotlib figure of ``curves`` (run name -> curve rows): a panel of win share over training CPU time per
    opponent (only the runs with points against it), then one of the value's explained variance (each run at its own
    first opponent's points); a run has one colour in every panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colour = {name: f"C{i}" for i, name in enumerate(curves)}
    opponents = list(dict.fromkeys(row["opponent"] for rows in curves.values() for row in rows))
    fig, axes = plt.subplots(1, len(opponents) + 1, figsize=(5 * (len(opponents) + 1), 4))
    for ax, opp in zip(axes, opponents):
        for name, rows in curves.items():
            rs = [r for r in rows if r["opponent"] == opp]
            if not rs:  # no point against opp: no empty legend entry
                continue
            x = [float(r["train_seconds"]) / 60 for r in rs]
            y = [float(r["win_share"]) for r in rs]
            hw = [float(r["half_width"]) if r["half_width"] not in ("", "nan") else 0.0 for r in rs]
            ax.plot(x, y, marker="o", label=name, color=colour[name])
            ax.fill_between(x, [a - b for a, b in zip(y, hw)], [a + b for a, b in zip(y, hw)], alpha=0.15, color=colour[name])
        if parity:
            ax.axhline(parity, color="grey", linestyle="--", linewidth=1, label="parity")
        ax.set(xlabel="training CPU time (min, 1 thread)", ylabel="win share, learner in 1 seat", title=f"{title} vs {opp}", ylim=(0, 1))
        ax.legend(fontsize=8)
    ax = axes[-1]
    for name, rows in curves.items():
        first = rows[0]["opponent"] if rows else None
        rs = [r for r in rows if r["opponent"] == first and r["explained_variance"] not in ("", "nan")]
        if not rs:
            continue
        ax.plot([float(r["train_seconds"]) / 60 for r in rs], [float(r["explained_variance"]) for r in rs], marker="o", label=name,
                color=colour[name])
    ax.set(xlabel="training CPU time (min)", ylabel="explained variance", title="value / Q / afterstate V vs returns")
    ax.legend(fontsize=8)
    return fig


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.learner.compare", description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", help="run directories holding curve.csv")
    p.add_argument("--out", required=True, help="PNG to write")
    p.add_argument("--parity", type=float, help="draw the parity line at this win share (1 / players)")
    p.add_argument("--players", type=int, help="plot the points of this table size only (runs over several sizes)")
    p.add_argument("--title", default="")
    args = p.parse_args(argv)
    try:
        curves = {Path(r).name: read_curve(r, args.players) for r in args.runs}
    except (FileNotFoundError, ValueError) as e:
        p.error(str(e))
    fig = figure(curves, args.parity, args.title)
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=90)
    import matplotlib.pyplot as plt

    plt.close(fig)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
