"""Train the token network from scratch by self-play: PPO or Deep Monte-Carlo, with learning curves and exact resume.

Usage::

    python -m training.learner.run --config configs/learner_gnoming.yaml            # a fresh run
    python -m training.learner.run --config configs/learner_gnoming_long.yaml --for-seconds 3600   # one piece
    python -m training.learner.run --resume checkpoints/learner_gnoming_long --for-seconds 3600    # the next piece
    python -m training.learner.run --report checkpoints/learner_gnoming --final-games 1200       # evaluate a run

A run directory ``checkpoints/<run_name>/`` holds ``latest.pt`` (weights,
optimizer, config, counters, the numpy and torch random states and the curve
so far: resuming continues exactly), ``curve.csv`` and ``curve.png`` (win
share against each curve opponent, explained variance and entropy over
training wall time and samples) and, at the end, ``report/`` with the final
seat-rotated, paired-deal evaluation (:mod:`grinch_env.evaluation`).

The budget (``max_seconds``) counts the training process's CPU time of rollouts
and updates (one torch thread: CPU seconds are core-seconds; on a shared
machine wall time is not compute); curve evaluations and checkpoint writes are
not charged to it.  Wall time is logged beside it.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from training.learner.algos import dmc_update, ppo_update
from training.learner.config import LearnerConfig, load_config
from training.learner.formats import LATEST, RUN_FORMAT, read_run_file
from training.learner.net import TokenNet
from training.learner.rollout import LearnerAgent, collect, match_batch, tokens_module

CURVE_FIELDS = ["iteration", "samples", "games", "train_seconds", "wall_seconds", "opponent", "num_players", "win_share", "half_width",
                "explained_variance", "entropy", "value_loss", "epsilon"]


def build_net(cfg: LearnerConfig) -> TokenNet:
    return TokenNet(**cfg.net.model_dump())


def epsilon_at(cfg: LearnerConfig, samples: int) -> float:
    """Return DMC's exploration after ``samples`` learner samples (linear decay)."""
    d = cfg.dmc
    frac = min(1.0, samples / d.epsilon_decay_samples)
    return d.epsilon_start + frac * (d.epsilon_end - d.epsilon_start)


def learning_rate_at(cfg: LearnerConfig, samples: int) -> float:
    """Return the learning rate after ``samples`` learner samples: ``learning_rate``, or its linear anneal to
    ``learning_rate_final`` over ``anneal_samples`` (a function of the sample count, so a resumed run follows it exactly)."""
    if cfg.learning_rate_final is None:
        return cfg.learning_rate
    frac = min(1.0, samples / cfg.anneal_samples)
    return cfg.learning_rate + frac * (cfg.learning_rate_final - cfg.learning_rate)


class Trainer:
    """One run's state: network, optimizer, random streams, counters and curve (everything ``latest.pt`` holds)."""

    def __init__(self, cfg: LearnerConfig) -> None:
        self.cfg = cfg
        torch.manual_seed(cfg.seed)
        self.rng = np.random.default_rng(cfg.seed)
        self.net = build_net(cfg)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.learning_rate, eps=1e-5)
        self.iteration = 0
        self.samples = 0
        self.games = 0
        self.train_seconds = 0.0
        self.curve: list[dict[str, Any]] = []
        self.last_stats: dict[str, float] = {}
        self.next_eval = 0.0
        self.engine = cfg.spec.vector(num_envs=cfg.num_envs, num_players=cfg.num_players, seed=cfg.seed, reward_mode=cfg.reward_mode)
        self.opponents = self._make_opponents()

    def _make_opponents(self) -> list[tuple[str, int, np.ndarray, Any]]:
        """Return ``(spec, table size, slots, agent)`` for every configured opponent and table size: which game slots it fills."""
        from grinch_env.agents import make_agent

        cfg = self.cfg
        sizes = cfg.table_sizes
        out = []
        first = 0  # the index, within each table size's slots, of the next opponent's first game
        for name, games in cfg.opponent_games():
            for k, n in enumerate(sizes):
                slots = k + len(sizes) * np.arange(first, first + games)  # slot i has size sizes[i % len(sizes)] (the engine's cycle)
                out.append((name, n, slots, make_agent(name, seed=0, num_players=n, game=cfg.game)))
            first += games
        return out

    def tables(self):
        """Return this iteration's :class:`~training.learner.rollout.Tables` (None: all self-play): the learner's seat per game
        drawn from the run's stream, every opponent re-seeded from it (so a resumed run plays the same games)."""
        from training.learner.rollout import Tables

        if not self.opponents:
            return None
        seats = np.full(self.cfg.num_envs, -1, np.int64)
        groups = []
        for _, n, slots, agent in self.opponents:
            seats[slots] = self.rng.integers(n, size=len(slots))
            agent.reset(int(self.rng.integers(2**63)))
            groups.append((slots, agent))
        return Tables(learner_seat=seats, groups=groups)

    # ------------------------------------------------------------ checkpoint
    def state(self) -> dict[str, Any]:
        return {
            "format": RUN_FORMAT, "config": self.cfg.model_dump(), "model": self.net.state_dict(), "optimizer": self.opt.state_dict(),
            "numpy_rng": self.rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
            "iteration": self.iteration, "samples": self.samples, "games": self.games, "train_seconds": self.train_seconds,
            "next_eval": self.next_eval, "curve": self.curve, "last_stats": self.last_stats,
            "tokens_version": tokens_module(self.cfg.game).TOKENS_VERSION,
        }

    def save(self, path: Path | None = None) -> Path:
        from training.checkpoint import atomic_torch_save

        path = path or self.cfg.run_dir / LATEST
        atomic_torch_save(self.state(), path)
        return path

    @classmethod
    def load(cls, path: str | Path, overrides: list[str] | None = None, config: LearnerConfig | None = None) -> Trainer:
        """Return the trainer saved at ``path`` (a ``.pt`` or a run directory).

        ``overrides`` (``key=value``) change the saved config, e.g. budgets
        (``max_seconds=...``) or, with ``run_name=NEW``, branch the run into
        ``checkpoints/NEW``; ``config`` replaces it whole (``branch_from``).
        Either way the game, the algorithm and the network must stay the
        saved run's, and the learning rate is the new config's.
        """
        ckpt, path = read_run_file(path, RUN_FORMAT, f"give a run directory holding {LATEST} or the .pt file", "a learner checkpoint")
        data = ckpt["config"] if config is None else config.model_dump()
        want = tokens_module(ckpt["config"]["game"]).TOKENS_VERSION
        if ckpt.get("tokens_version", 1) != want:
            raise ValueError(f"{path} was trained on tokens version {ckpt.get('tokens_version', 1)} of {ckpt['config']['game']}; this code encodes version {want}")
        saved = LearnerConfig.model_validate(ckpt["config"])
        cfg = saved if config is None else config
        if config is None:  # a copied run goes on, and reports, in its copy
            overrides = resume_where_loaded(path, overrides or [], ckpt["config"])
        if overrides:
            import yaml

            from training.learner.config import _set

            for item in overrides:
                key, _, value = item.partition("=")
                _set(data, key.strip(), yaml.safe_load(value))
            cfg = LearnerConfig.model_validate(data)
        changed = [k for k in ("game", "algo", "net") if getattr(cfg, k) != getattr(saved, k)]
        if changed:
            raise ValueError(f"{path} was trained with " + ", ".join(f"{k}={getattr(saved, k)!r}" for k in changed) + "; a resumed or branched run keeps "
                             + ", ".join(changed) + " (start a fresh run with --config for another)")
        t = cls(cfg)
        t.net.load_state_dict(ckpt["model"])
        t.opt.load_state_dict(ckpt["optimizer"])
        for group in t.opt.param_groups:  # the optimizer's saved state carries the old rate; the config's is the one asked for
            group["lr"] = cfg.learning_rate
        t.rng.bit_generator.state = ckpt["numpy_rng"]
        torch.set_rng_state(ckpt["torch_rng"])
        for k in ("iteration", "samples", "games", "train_seconds", "next_eval", "curve", "last_stats"):
            setattr(t, k, ckpt[k])
        return t

    # ------------------------------------------------------------ training
    def step(self) -> dict[str, float]:
        """Run one iteration: a rollout of ``num_envs`` complete games, then the family's update."""
        cfg = self.cfg
        start = time.process_time()
        eps = epsilon_at(cfg, self.samples) if cfg.algo == "dmc" else 0.0
        self.net.eval()
        batch = collect(self.engine, self.net, cfg.game, cfg.algo, self.rng, epsilon=eps, gamma=cfg.ppo.gamma, gae_lambda=cfg.ppo.gae_lambda,
                        credit=cfg.credit, tables=self.tables(), round_cut=cfg.ppo.round_cut,
                        round_baseline=cfg.ppo.round_baseline, round_target=cfg.dmc.round_target, oracle_critic=cfg.ppo.oracle_critic,
                        oracle_rows=cfg.ppo.oracle_rows, vine_pairs=cfg.ppo.vine_pairs, pad_others=cfg.pad_others,
                        td_lambda=cfg.dmc.td_lambda)
        self.net.train()
        update = ppo_update if cfg.algo == "ppo" else dmc_update
        lr = learning_rate_at(cfg, self.samples)
        for group in self.opt.param_groups:
            group["lr"] = lr
        stats = update(self.net, self.opt, batch, cfg, self.rng)
        self.net.eval()
        self.iteration += 1
        self.samples += len(batch.actions)
        self.games += batch.games
        self.train_seconds += time.process_time() - start  # CPU time: the machine is shared, so wall time is not compute
        stats["epsilon"] = eps
        if cfg.learning_rate_final is not None:
            stats["learning_rate"] = lr
        stats["mean_abs_outcome"] = float(np.abs(batch.outcomes).mean())
        stats["decisions_per_game"] = batch.steps / max(1, batch.games)
        self.last_stats = stats
        return stats

    def evaluate_curve(self, wall: float) -> list[dict[str, Any]]:
        """Add one curve point per opponent and table size (batched, seat-rotated matches on fixed deals) and return them."""
        cfg = self.cfg
        rows = []
        multi = len(cfg.table_sizes) > 1
        s = self.last_stats
        for n in cfg.table_sizes:
            for i, opp in enumerate(cfg.eval.opponents):
                win, hw = match_batch(self.net, cfg.game, cfg.algo, n, opp, cfg.eval.games, seed=10_000 * (cfg.seed + 1) + 100 * n * multi + i,
                                      reward_mode=cfg.reward_mode)
                rows.append({"iteration": self.iteration, "samples": self.samples, "games": self.games, "train_seconds": round(self.train_seconds, 2),
                             "wall_seconds": round(wall, 2), "opponent": opp, "num_players": n, "win_share": win, "half_width": hw,
                             "explained_variance": s.get("explained_variance", float("nan")), "entropy": s.get("entropy", float("nan")),
                             "value_loss": s.get("value_loss", float("nan")), "epsilon": s.get("epsilon", float("nan"))})
        self.curve.extend(rows)
        return rows

    def done(self, max_iterations: int | None = None) -> bool:
        cfg = self.cfg
        return (self.train_seconds >= cfg.max_seconds or (cfg.max_samples is not None and self.samples >= cfg.max_samples)
                or (max_iterations is not None and self.iteration >= max_iterations))


def curve_series(curve: list[dict[str, Any]]) -> list[tuple[str, int | None, list[dict[str, Any]]]]:
    """Return the curve's lines: ``(label, table size, rows)`` for every (opponent, size) pair that has points.

    A run that adds an opponent or drops a size part-way (a branch) has no
    points for the other pairs; they get no line and no legend entry.  With a
    single table size the label names the opponent alone.
    """
    sizes = list(dict.fromkeys(r.get("num_players") for r in curve))
    out = []
    for opp in dict.fromkeys(r["opponent"] for r in curve):
        for n in sizes:
            rows = [r for r in curve if r["opponent"] == opp and r.get("num_players") == n]
            if rows:
                out.append((f"vs {opp}" + (f" {n}p" if len(sizes) > 1 else ""), n, rows))
    return out


def write_curve(curve: list[dict[str, Any]], run_dir: Path, title: str, parity: float | None = None) -> None:
    """Write ``curve.csv`` and ``curve.png`` (win share with 95% bands, explained variance, entropy) into ``run_dir``.

    With several table sizes each (opponent, size) is its own line and the
    win-share axis is the win share times the table size (1.0 is parity at
    every size); ``parity`` is then ignored.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / "curve.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CURVE_FIELDS)
        w.writeheader()
        for row in curve:
            w.writerow({k: row.get(k) for k in CURVE_FIELDS})
    if not curve:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, grid = plt.subplots(2, 2, figsize=(13, 8))
    axes = [grid[0, 0], grid[0, 1], grid[1, 0], grid[1, 1]]  # win share over CPU time, over samples; explained variance; entropy
    sizes = list(dict.fromkeys(r.get("num_players") for r in curve))
    multi = len(sizes) > 1
    top = 1.0  # the plot's height: the highest ribbon, and parity always in sight
    for label, n, rows in curve_series(curve):
        scale = float(n) if multi else 1.0
        y = np.array([r["win_share"] for r in rows]) * scale
        hw = np.array([r["half_width"] for r in rows]) * scale
        top = max(top, float(np.nanmax(y + hw, initial=0.0)))
        for ax, x in ((axes[0], np.array([r["train_seconds"] for r in rows]) / 60), (axes[1], np.array([r["samples"] for r in rows]) / 1e6)):
            ax.plot(x, y, marker="o", label=label)
            ax.fill_between(x, y - hw, y + hw, alpha=0.2)
    ylabel = "win share x table size (1 = parity)" if multi else "win share (learner in 1 seat)"
    for ax in axes[:2]:
        if multi:
            ax.axhline(1.0, color="grey", linestyle="--", linewidth=1, label="parity")
        elif parity is not None:
            ax.axhline(parity, color="grey", linestyle="--", linewidth=1, label=f"parity {parity:.2f}")
        ax.set(ylabel=ylabel, title=title, ylim=(0, 1.1 * top if multi else 1))
        ax.legend(fontsize=8, ncol=2 if multi else 1)
    first = [r for r in curve if r["opponent"] == curve[0]["opponent"] and r.get("num_players") == curve[0].get("num_players")]
    x = np.array([r["train_seconds"] for r in first]) / 60
    axes[2].plot(x, [r["explained_variance"] for r in first], marker="o")
    axes[3].plot(x, [r["entropy"] for r in first], marker="o")
    axes[0].set(xlabel="training CPU time (min, 1 thread)")
    axes[1].set(xlabel="learner samples (millions)")
    axes[2].set(xlabel="training CPU time (min)", ylabel="explained variance", title="value/Q head vs returns")
    axes[3].set(xlabel="training CPU time (min)", ylabel="entropy (nats)", title="policy entropy")
    if len(first) > 1:  # in the title: a text inside the axes would sit under the legend
        axes[0].set_title(f"{title}: {first[-1]['samples']:,} samples")
    fig.tight_layout()
    fig.savefig(run_dir / "curve.png", dpi=90)
    plt.close(fig)


def final_report(trainer: Trainer, games: int, seed: int = 4242, report: Path | None = None) -> dict[str, Any]:
    """Evaluate the network (deterministic choices) with the harness: seat-rotated, paired deals; write ``report``.

    ``report`` defaults to the run directory's ``report/``.  One match per
    final opponent and table size; ``summary.json`` maps ``"<opponent>"`` (one
    table size) or ``"<opponent>@<n>p"`` (several) to the learner's result.
    A report directory that already holds a ``summary.json`` keeps its other
    matches: a second report with other opponents (or ``num_players``) adds
    its keys, one with the same opponent and size replaces that entry.
    """
    from grinch_env.evaluation.evaluate import evaluate

    cfg = trainer.cfg
    agent = LearnerAgent(trainer.net, cfg.game, cfg.algo, name=f"{cfg.run_name}")
    out: dict[str, Any] = {}
    report = cfg.run_dir / "report" if report is None else Path(report)
    report.mkdir(parents=True, exist_ok=True)
    earlier = report / "summary.json"
    kept = json.loads(earlier.read_text()) if earlier.exists() else {}
    multi = len(cfg.table_sizes) > 1
    for n in cfg.table_sizes:
        for opp in cfg.eval.final_opponents or cfg.eval.opponents:
            res = evaluate([agent] + [opp] * (n - 1), num_players=n, num_games=games, seed=seed, game=cfg.game)
            a = res.per_agent[res.agents[0]]
            key = f"{opp}@{n}p" if multi else opp
            out[key] = {"games": games, "num_players": n, "win_rate": a["win_rate"], "win_rate_ci": a["win_rate_ci"],
                        "mean_score": a["mean_score"], "parity": 1.0 / n}
            (report / (f"vs_{opp}_{n}p.txt" if multi else f"vs_{opp}.txt")).write_text(res.table() + "\n")
            (report / "summary.json").write_text(json.dumps({**kept, **out}, indent=2) + "\n")  # each match as it ends
            print(res.table(), flush=True)
    return out


def train(trainer: Trainer, for_seconds: float | None = None, max_iterations: int | None = None, quiet: bool = False,
          curve: bool = True) -> Trainer:
    """Train until the run's budget (or this piece's ``for_seconds``, or ``max_iterations``) is spent; save and return."""
    cfg = trainer.cfg
    torch.set_num_threads(cfg.torch_threads)
    start = time.perf_counter()
    piece_start = trainer.train_seconds
    last_save = time.perf_counter()
    sizes = cfg.table_sizes
    title = f"{cfg.spec.title} {'/'.join(map(str, sizes))}p, {cfg.algo}"
    parity = 1.0 / sizes[0]
    if curve and not trainer.curve:
        trainer.evaluate_curve(0.0)
        trainer.next_eval = cfg.eval.every_seconds
    while not trainer.done(max_iterations):
        if for_seconds is not None and trainer.train_seconds - piece_start >= for_seconds:
            break
        stats = trainer.step()
        if not quiet:
            print(f"it {trainer.iteration:4d} samples {trainer.samples:8d} games {trainer.games:6d} t {trainer.train_seconds:7.1f}s "
                  + " ".join(f"{k} {v:.3g}" for k, v in stats.items()), flush=True)
        if curve and trainer.train_seconds >= trainer.next_eval:
            rows = trainer.evaluate_curve(time.perf_counter() - start)
            trainer.next_eval += cfg.eval.every_seconds
            write_curve(trainer.curve, cfg.run_dir, title, parity=parity)
            if not quiet:
                print("  curve: " + ", ".join(f"vs {r['opponent']} {r['num_players']}p {r['win_share']:.3f}±{r['half_width']:.3f}" for r in rows), flush=True)
        if time.perf_counter() - last_save >= cfg.save_every_seconds:
            trainer.save()
            last_save = time.perf_counter()
    if curve and trainer.done(max_iterations) and trainer.curve and trainer.curve[-1]["iteration"] != trainer.iteration:
        trainer.evaluate_curve(time.perf_counter() - start)
    trainer.save()
    if curve:
        write_curve(trainer.curve, cfg.run_dir, title, parity=parity)
    return trainer


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m training.learner.run", description=__doc__.split("\n\n")[0])
    p.add_argument("--config", help="a configs/learner_*.yaml file (a fresh run)")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue the run saved in RUN_DIR (or a latest.pt) exactly")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key (dotted, e.g. algo=dmc)")
    p.add_argument("--for-seconds", type=float, help="stop this piece after this much training time (resume later)")
    p.add_argument("--final-games", type=int, help="games per opponent in the final report (default: eval.final_games)")
    p.add_argument("--report", metavar="RUN_DIR", help="only evaluate the network saved in RUN_DIR (seat-rotated, paired deals) and write RUN_DIR/report/ "
                   "(--set eval.final_opponents=[...] picks the opponents, --set num_players=[...] the sizes; other matches already in its "
                   "summary.json are kept)")
    return p


def resume_where_loaded(path: str | Path, overrides: list[str], saved: dict[str, Any]) -> list[str]:
    """``overrides`` plus ``checkpoint_dir`` and ``run_name`` of the directory ``path`` names, unless they are given or
    it is the one the saved config ``saved`` names: a loaded run goes on (and reports) where it was loaded from, a copy
    included, and ``--set run_name=NEW`` branches it beside it."""
    home = Path(path) if Path(path).is_dir() else Path(path).parent
    if (Path(saved.get("checkpoint_dir", "checkpoints")) / str(saved.get("run_name", ""))).resolve() == home.resolve():
        return list(overrides)
    given = {item.partition("=")[0].strip() for item in overrides}
    keep = {"checkpoint_dir": str(home.parent), "run_name": home.name}
    return [f"{key}={json.dumps(value)}" for key, value in keep.items() if key not in given] + list(overrides)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.report:
        trainer = Trainer.load(args.report, args.set)  # --set may pick the report's opponents (eval.final_opponents=[greedy])
        torch.set_num_threads(trainer.cfg.torch_threads)
        run_dir = Path(args.report) if Path(args.report).is_dir() else Path(args.report).parent
        final_report(trainer, trainer.cfg.eval.final_games if args.final_games is None else args.final_games, report=run_dir / "report")
        return 0
    if bool(args.config) == bool(args.resume):
        print("error: give exactly one of --config (a fresh run) or --resume RUN_DIR", file=sys.stderr)
        return 2
    if args.resume:
        trainer = Trainer.load(args.resume, args.set)
    else:
        cfg = load_config(args.config, args.set)
        if (cfg.run_dir / LATEST).exists():
            print(f"error: {cfg.run_dir / LATEST} exists: resume it with --resume {cfg.run_dir}, or pick another run_name (--set run_name=...)",
                  file=sys.stderr)
            return 2
        trainer = Trainer.load(cfg.branch_from, config=cfg) if cfg.branch_from else Trainer(cfg)
    import yaml

    # the config this piece runs under (a resume's --set included), beside the run's latest.pt
    trainer.cfg.run_dir.mkdir(parents=True, exist_ok=True)
    (trainer.cfg.run_dir / "config.yaml").write_text(yaml.safe_dump(trainer.cfg.model_dump(), sort_keys=False))
    train(trainer, for_seconds=args.for_seconds)
    games = trainer.cfg.eval.final_games if args.final_games is None else args.final_games
    if trainer.done() and games > 0:
        final_report(trainer, games)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
