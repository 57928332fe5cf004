"""Train the token network from scratch by self-play PPO, with learning curves and exact resume.

The one CLI is :mod:`training.train` (``algo: ppo``); this module holds the run: :class:`Trainer` (its state),
:func:`train` (the loop), :func:`final_report` and the curve.

A run directory ``checkpoints/<run_name>/`` holds ``latest.pt`` (weights,
optimizer, config, counters, the numpy and torch random states and the curve
so far: resuming continues exactly), ``curve.csv`` and ``curve.png`` (win
share against each curve opponent, explained variance and entropy over
training wall time and samples) and, at the end, ``report/`` with the final
seat-rotated, paired-deal evaluation (:mod:`grinch_env.evaluation`).

Every iteration plays ``num_envs`` games in ``shards`` shards, each a pure function of the iteration's weights and
one seed drawn from the run's stream (:class:`training.learner.rollout.ShardPlayer`), then updates on their decisions
in shard order.  The shards are played where ``backend`` and ``workers`` say (:mod:`training.distributed`: this
process, local worker processes or Ray actors, a dead actor's shard played again): the weights after any iteration
depend on ``shards``, never on where they were played, so ``workers``, ``backend`` and ``address`` may change on
resume and ``shards`` may not.

The budget (``max_seconds``) counts the CPU time of rollouts (in this process, or as the workers report it) and
updates (one torch thread: CPU seconds are core-seconds; on a shared machine wall time is not compute); curve
evaluations and checkpoint writes are not charged to it.  Wall time is logged beside it.
"""

from __future__ import annotations

import copy
import csv
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from training.learner.algos import ppo_update
from training.learner.config import LearnerConfig
from training.learner.formats import LATEST, RUN_FORMAT, read_run_file
from training.learner.net import TokenNet
from training.learner.rollout import LearnerAgent, ShardResult, match_batch, merge_batches, play_shard, shard_setup, tokens_module

CURVE_FIELDS = ["iteration", "samples", "games", "train_seconds", "wall_seconds", "opponent", "num_players", "win_share", "half_width",
                "explained_variance", "entropy", "value_loss"]


def build_net(cfg: LearnerConfig) -> TokenNet:
    return TokenNet(**cfg.net.model_dump())


def learning_rate_at(cfg: LearnerConfig, samples: int) -> float:
    """Return the learning rate after ``samples`` learner samples: ``learning_rate``, or its linear anneal to
    ``learning_rate_final`` over ``anneal_samples`` (a function of the sample count, so a resumed run follows it exactly)."""
    if cfg.learning_rate_final is None:
        return cfg.learning_rate
    frac = min(1.0, samples / cfg.anneal_samples)
    return cfg.learning_rate + frac * (cfg.learning_rate_final - cfg.learning_rate)


class Trainer:
    """One run's state: network, optimizer, random streams, counters and curve (everything ``latest.pt`` holds), and the
    workers that play its shards (opened by the first iteration, released by :meth:`close`)."""

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
        self._workers = None  # training.distributed.Workers, opened by the first play()

    # ------------------------------------------------------------ shards
    @property
    def in_process(self) -> bool:
        """Whether the shards are played in this process (backend local, one worker)."""
        return self.cfg.backend == "local" and self.cfg.workers == 1

    def workers(self):
        """The :class:`training.distributed.Workers` that play the shards (opened on first use)."""
        if self._workers is None:
            from training.distributed import Workers

            cfg = self.cfg
            self._workers = Workers(cfg.backend, cfg.workers, cfg.address, torch_threads=cfg.torch_threads)
        return self._workers

    def close(self) -> None:
        """Release the workers (Ray actors, if any); a later iteration opens them again."""
        if self._workers is not None:
            self._workers.close()
            self._workers = None

    def weights(self) -> dict[str, np.ndarray]:
        """The network's weights as numpy arrays (what the workers load)."""
        return {k: v.detach().cpu().numpy().copy() for k, v in self.net.state_dict().items()}

    def play(self, seeds: list[int]) -> list[ShardResult]:
        """Play one shard per seed with the current weights, where the config says; the results in seed order."""
        return self.workers().map(play_shard, seeds, setup=shard_setup, setup_args=(self.cfg.model_dump(), self.weights()))

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
        (``max_seconds=...``), where the shards are played (``workers``,
        ``backend``, ``address``) or, with ``run_name=NEW``, branch the run into
        ``checkpoints/NEW``; ``config`` replaces it whole (``branch_from``).
        Either way the game and the network must stay the saved run's, a
        resumed run (not a ``config`` branch) keeps its ``shards``, and the
        learning rate is the new config's.  The keys of retired options in an
        older checkpoint's config are dropped (:meth:`LearnerConfig.stored_data`).
        """
        ckpt, path = read_run_file(path, RUN_FORMAT, f"give a run directory holding {LATEST} or the .pt file", "a learner checkpoint")
        try:
            stored = LearnerConfig.stored_data(ckpt["config"])
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        want = tokens_module(stored["game"]).TOKENS_VERSION
        if ckpt.get("tokens_version", 1) != want:
            raise ValueError(f"{path} was trained on tokens version {ckpt.get('tokens_version', 1)} of {stored['game']}; this code encodes version {want}")
        saved = LearnerConfig.model_validate(stored)
        data = copy.deepcopy(stored) if config is None else config.model_dump()
        cfg = saved if config is None else config
        if config is None:  # a copied run goes on, and reports, in its copy
            overrides = resume_where_loaded(path, overrides or [], stored)
        if overrides:
            import yaml

            from training.learner.config import _set

            for item in overrides:
                key, _, value = item.partition("=")
                _set(data, key.strip(), yaml.safe_load(value))
            cfg = LearnerConfig.model_validate(data)
        kept = ("game", "net") if config is not None else ("game", "net", "shards")
        changed = [k for k in kept if getattr(cfg, k) != getattr(saved, k)]
        if changed:
            raise ValueError(f"{path} was trained with " + ", ".join(f"{k}={getattr(saved, k)!r}" for k in changed) + "; a resumed or branched run keeps "
                             + ", ".join(changed) + (" (its weights depend on the shards; workers, backend and address may change)" if "shards" in changed
                                                     else " (start a fresh run with --config for another)"))
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
        """Run one iteration: ``num_envs`` complete games in ``shards`` shards (each from its own seed, drawn here), then
        the PPO update on their decisions in shard order."""
        cfg = self.cfg
        start = time.process_time()
        seeds = [int(self.rng.integers(2**63)) for _ in range(cfg.shards)]
        self.net.eval()
        results = self.play(seeds)
        batch = merge_batches([r.batch for r in results])
        self.net.train()
        lr = learning_rate_at(cfg, self.samples)
        for group in self.opt.param_groups:
            group["lr"] = lr
        stats = ppo_update(self.net, self.opt, batch, cfg, self.rng)
        self.net.eval()
        self.iteration += 1
        self.samples += len(batch.actions)
        self.games += batch.games
        # CPU time (the machine is shared, so wall time is not compute): this process's, and the shards' where other processes played them
        self.train_seconds += time.process_time() - start + (0.0 if self.in_process else sum(r.cpu_seconds for r in results))
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
                win, hw = match_batch(self.net, cfg.game, n, opp, cfg.eval.games, seed=10_000 * (cfg.seed + 1) + 100 * n * multi + i,
                                      reward_mode=cfg.reward_mode)
                rows.append({"iteration": self.iteration, "samples": self.samples, "games": self.games, "train_seconds": round(self.train_seconds, 2),
                             "wall_seconds": round(wall, 2), "opponent": opp, "num_players": n, "win_share": win, "half_width": hw,
                             "explained_variance": s.get("explained_variance", float("nan")), "entropy": s.get("entropy", float("nan")),
                             "value_loss": s.get("value_loss", float("nan"))})
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


def first_above(rows: list[dict[str, Any]], parity: float | None) -> int | None:
    """The index of the first of a line's ``rows`` whose 95% interval lies above ``parity``; None if none does."""
    if parity is None:
        return None
    return next((i for i, r in enumerate(rows) if r["win_share"] - r["half_width"] > parity), None)


def minutes_to_beat(rows: list[dict[str, Any]], parity: float | None) -> float | None:
    """The training CPU-minutes of the first of a line's ``rows`` whose 95% interval lies above ``parity``; None if none does."""
    i = first_above(rows, parity)
    return None if i is None else rows[i]["train_seconds"] / 60


def write_curve(curve: list[dict[str, Any]], run_dir: Path, title: str, parity: float | None = None) -> None:
    """Write ``curve.csv`` and ``curve.png`` (win share with 95% bands, explained variance, entropy) into ``run_dir``.

    With several table sizes each (opponent, size) is its own line and the
    win-share axis is the win share times the table size (1.0 is parity at
    every size); ``parity`` is then ignored.  Each opponent has its own line
    style, and a star marks the first point of a line whose interval clears
    parity, with its training CPU-minutes (:func:`minutes_to_beat`).
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
    styles = {opp: ("-", "--", ":", "-.")[i % 4] for i, opp in enumerate(dict.fromkeys(r["opponent"] for r in curve))}
    for label, n, rows in curve_series(curve):
        scale = float(n) if multi else 1.0
        y = np.array([r["win_share"] for r in rows]) * scale
        hw = np.array([r["half_width"] for r in rows]) * scale
        top = max(top, float(np.nanmax(y + hw, initial=0.0)))
        for ax, x in ((axes[0], np.array([r["train_seconds"] for r in rows]) / 60), (axes[1], np.array([r["samples"] for r in rows]) / 1e6)):
            line = ax.plot(x, y, marker="o", linestyle=styles[rows[0]["opponent"]], label=label)[0]
            ax.fill_between(x, y - hw, y + hw, alpha=0.2)
        i = first_above(rows, 1.0 / n if n else parity)
        if i is not None:  # the first point whose interval clears parity, with its CPU-minutes
            beat = rows[i]["train_seconds"] / 60
            axes[0].plot([beat], [y[i]], marker="*", markersize=14, color=line.get_color(), zorder=5)
            axes[0].annotate(f"{beat:.0f} min", (beat, y[i]), textcoords="offset points", xytext=(6, -12), fontsize=7,
                             color=line.get_color())
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
    agent = LearnerAgent(trainer.net, cfg.game, name=f"{cfg.run_name}")
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
    """Train until the run's budget (or this piece's ``for_seconds``, or ``max_iterations``) is spent; save and return.

    The trainer's workers are released at the end (:meth:`Trainer.close`)."""
    cfg = trainer.cfg
    torch.set_num_threads(cfg.torch_threads)
    start = time.perf_counter()
    piece_start = trainer.train_seconds
    last_save = time.perf_counter()
    sizes = cfg.table_sizes
    title = f"{cfg.spec.title} {'/'.join(map(str, sizes))}p, ppo"
    parity = 1.0 / sizes[0]
    if curve and not trainer.curve:
        trainer.evaluate_curve(0.0)
        trainer.next_eval = cfg.eval.every_seconds
    try:
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
    finally:
        trainer.close()  # the workers (Ray actors) go; a later piece opens them again
    if curve and trainer.done(max_iterations) and trainer.curve and trainer.curve[-1]["iteration"] != trainer.iteration:
        trainer.evaluate_curve(time.perf_counter() - start)
    trainer.save()
    if curve:
        write_curve(trainer.curve, cfg.run_dir, title, parity=parity)
    return trainer


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
