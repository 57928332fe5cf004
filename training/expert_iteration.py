"""Expert iteration: distil the ``search`` agent into the network, search with the new network, repeat.

``python -m training.expert_iteration --config configs/expert_iteration.yaml``

Generation ``k = 1..generations``:

1. the teacher is ``search:playouts=P`` whose rollout policy is the previous
   generation's network (generation 1: ``first_rollout``, by default the
   rule-based ``rows`` policy, because a network rollout costs about 100x more
   per playout on CPU);
2. the existing distillation (:func:`training.distill.run`, DAgger rounds)
   trains the student on the teacher's moves, warm-started from the previous
   generation's weights (or ``distill.init_checkpoint``); the value head learns
   the actor's final margin, as in distillation;
3. the generation's checkpoint ``<run dir>/gen_<k>/best.pt`` is played against
   the opponent (one seat, seat-rotated paired deals, :mod:`training.match`)
   at each table size of ``eval.num_players``, and, with
   ``eval.search_playouts > 0``, so is the search agent with the new network as
   its rollout policy; the figures go to ``gen_<k>/report.json`` and every
   generation's to ``<run dir>/generations.json``.

A generation whose ``best.pt`` and ``report.json`` exist is not run again, and
a generation stopped half-way resumes after its last finished distillation
round (:func:`training.distill.run`), so a run killed at any point and started
again with the same command ends on the same networks, bit for bit.  SIGINT or
SIGTERM stops it at once (the work in flight is dropped; what is saved stays
consistent) with exit status 130 / 143.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from training.checkpoint import GracefulStop, Interrupted
from training.config import DistillConfig, command_parser, run_command, write_config_yaml
from training.files import atomic_write_bytes
from training.match import format_match, run_match


class ExpertEvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    games: int = Field(default=200, ge=0, description="games per table size against the opponent (0: no evaluation)")
    num_players: list[int] = Field(default=[2, 4], description="table sizes of the evaluation")
    opponent: str = Field(default="expectimax", description="make_agent spec of the opponent in the other seats")
    search_playouts: int = Field(default=0, ge=0, description="also evaluate search with the new network as rollout policy at this budget (0: the network alone)")
    seed: int = Field(default=20_000, description="deal seed of the evaluation matches")


class ExpertIterationConfig(BaseModel):
    """``python -m training.expert_iteration``: generations of search teacher -> distilled network."""

    model_config = ConfigDict(extra="forbid")
    run_name: str = Field(default="expert_iteration", min_length=1, description="run directory name under checkpoint_dir")
    checkpoint_dir: str = Field(default="checkpoints", description="parent directory of run directories")
    generations: int = Field(default=1, ge=1, description="generations of expert iteration")
    playouts: int = Field(default=32, ge=1, description="the search teacher's determinisations per candidate move")
    first_rollout: str = Field(default="rows", description="generation 1's rollout policy: 'rows' or a checkpoint path")
    network_rollouts: bool = Field(default=True, description="generations after the first roll out with the previous network (else keep first_rollout)")
    distill: DistillConfig = Field(default_factory=DistillConfig, description="distillation of each generation (its teacher is set per generation)")
    eval: ExpertEvalConfig = Field(default_factory=ExpertEvalConfig, description="evaluation of each generation")


def teacher_spec(cfg: ExpertIterationConfig, previous: Path | None) -> str:
    """Return the search teacher's make_agent spec for a generation whose predecessor's checkpoint is ``previous``."""
    rollout = str(previous) if previous is not None and cfg.network_rollouts else cfg.first_rollout
    return f"search:playouts={cfg.playouts},policy={rollout}"


def evaluate_generation(cfg: ExpertIterationConfig, checkpoint: Path) -> list[dict[str, Any]]:
    """Return the match records of a generation's checkpoint (and its search, if configured) against the opponent."""
    records = []
    if cfg.eval.games == 0:
        return records
    specs = [str(checkpoint)]
    if cfg.eval.search_playouts:
        specs.append(f"search:playouts={cfg.eval.search_playouts},policy={checkpoint}")
    for n in cfg.eval.num_players:
        for spec in specs:
            m = run_match(spec, cfg.eval.opponent, n, cfg.eval.games, seed=cfg.eval.seed)
            print(format_match(m), flush=True)
            records.append(m)
    return records


def run(cfg: ExpertIterationConfig, run_dir: Path, progress: bool = True, override_config: bool = False) -> list[dict[str, Any]]:
    """Run every generation not yet done; return one summary per generation."""
    from training.distill import run as distill_run

    run_dir.mkdir(parents=True, exist_ok=True)
    write_config_yaml(cfg, run_dir, check_as="expert-iteration", override=override_config)
    previous = Path(cfg.distill.init_checkpoint) if cfg.distill.init_checkpoint else None
    summaries = []
    with GracefulStop("generation", drop=True):
        try:
            for k in range(1, cfg.generations + 1):
                gen_dir = run_dir / f"gen_{k}"
                report = gen_dir / "report.json"
                teacher = teacher_spec(cfg, previous if k > 1 else None)
                if (gen_dir / "best.pt").is_file() and report.is_file():
                    summary = json.loads(report.read_text())
                else:
                    dcfg = cfg.distill.model_copy(update={"teacher": teacher, "run_name": f"{cfg.run_name}/gen_{k}",
                                                          "init_checkpoint": None if previous is None else str(previous)})
                    _, log = distill_run(dcfg, gen_dir, progress=progress, override_config=override_config)
                    summary = {"generation": k, "teacher": teacher, "init_checkpoint": dcfg.init_checkpoint, "distill_log": log,
                               "matches": evaluate_generation(cfg, gen_dir / "best.pt")}
                    atomic_write_bytes(report, json.dumps(summary, indent=1).encode())
                summaries.append(summary)
                previous = gen_dir / "best.pt"
        except KeyboardInterrupt as err:
            print(f"interrupted: dropped the work in flight; every finished round and generation in {run_dir} is kept; "
                  "resume by running the same command again", flush=True)
            raise Interrupted(getattr(err, "signum", 2)) from None
    atomic_write_bytes(run_dir / "generations.json", json.dumps(summaries, indent=1).encode())
    return summaries


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("python -m training.expert_iteration", __doc__.splitlines()[0], "configs/expert_iteration.yaml", override_config=True)
    return run_command(parser, argv, ExpertIterationConfig,
                       lambda cfg, run_dir, args: run(cfg, run_dir, progress=not args.no_progress, override_config=args.override_config))


__all__ = ["ExpertIterationConfig", "main", "run", "teacher_spec"]

if __name__ == "__main__":
    sys.exit(main())
