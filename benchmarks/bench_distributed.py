"""Benchmark: the afterstate learner's generations played in one process, on 2 local worker processes and on 2 Ray
actors, side by side in one run (the Ray line needs ``.[ray]``), and a check that all three fit the same values.

Each line trains the same small run (:mod:`training.learner.afterstate_run`, the Grinch at 2 players by default; no
evaluation, no report) for ``--generations`` generations in a fresh directory and prints, per generation, the wall
seconds of the whole step (playing its ``--games`` games, then the fit on the driver), and the games per wall second
of the run.  The Ray line starts Ray once before it is timed; its actors start in the first generation (their start
is in that generation's time, as a local pool's is in every generation's).  The last column says whether the run's
fitted values (every tensor of ``latest.pt``'s ``values``) are bit-identical to the one-process run's.

On the project's 2-core shared machine, two workers and the driver share two cores with everything else: the
figures are a floor, not a cluster's.  Usage::

    OMP_NUM_THREADS=1 python benchmarks/bench_distributed.py                       # about a minute
    OMP_NUM_THREADS=1 python benchmarks/bench_distributed.py --games 1000 --generations 3 --workers 4
    OMP_NUM_THREADS=1 python benchmarks/bench_distributed.py --set game=gnoming --set num_players=3
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from training.distributed import init_ray, ray_available  # noqa: E402
from training.learner.afterstate_run import AfterstateRun, load_config  # noqa: E402


def leaves(tree: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of a nested checkpoint structure by its path."""
    if isinstance(tree, dict):
        return {k: v for key in tree for k, v in leaves(tree[key], f"{path}/{key}").items()}
    if isinstance(tree, (list, tuple)):
        return {k: v for i, item in enumerate(tree) for k, v in leaves(item, f"{path}/{i}").items()}
    return {path: tree}


def same_values(a: Path, b: Path) -> bool:
    """Whether the ``values`` of two run directories' ``latest.pt`` are bit-identical."""
    va, vb = (leaves(torch.load(d / "latest.pt", weights_only=True)["values"]) for d in (a, b))
    if va.keys() != vb.keys():
        return False
    return all(torch.equal(x, vb[k]) if isinstance(x, torch.Tensor) else x == vb[k] for k, x in va.items())


def timed_run(overrides: list[str], directory: Path, generations: int) -> tuple[list[float], AfterstateRun]:
    """Wall seconds of each generation's step (play and fit) and the run."""
    run = AfterstateRun(load_config(None, [f"checkpoint_dir={directory}", *overrides]))
    run.cfg.run_dir.mkdir(parents=True, exist_ok=True)
    seconds = []
    torch.set_num_threads(run.cfg.torch_threads)
    with run.open_workers():
        while run.generation < generations:
            start = time.perf_counter()
            run.step()
            seconds.append(time.perf_counter() - start)
            run.save()
    return seconds, run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=300, help="games per generation")
    p.add_argument("--generations", type=int, default=2)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--steps", type=int, default=200, help="value.steps and later.steps (the fit on the driver)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="more afterstate config overrides")
    args = p.parse_args(argv)
    base = [f"games_per_generation={args.games}", f"generations={args.generations}", f"value.steps={args.steps}", "value.width=64",
            "eval_games=0", "final_games=0", *args.set]
    if not any(s.startswith("game=gnoming") for s in args.set):
        base.append(f"later.steps={args.steps}")
    lines = [("one process", ["workers=1"]), (f"{args.workers} local workers", [f"workers={args.workers}"])]
    if ray_available():
        init_ray("local")  # started before the line is timed
        lines.append((f"{args.workers} ray workers", ["backend=ray", f"workers={args.workers}"]))
    else:
        print("ray is not installed: no ray line (pip install -e '.[ray]')")
    header = f"{'where':<18}" + "".join(f"{'gen ' + str(g) + ' s':>10}" for g in range(args.generations)) + f"{'games/s':>10}{'same values':>13}"
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        reference = None
        for i, (name, where) in enumerate(lines):
            seconds, run = timed_run([*base, f"run_name=line{i}", *where], Path(tmp), args.generations)
            reference = reference or run.cfg.run_dir
            same = "yes" if same_values(reference, run.cfg.run_dir) else "NO"
            rate = args.games * args.generations / sum(seconds)
            print(f"{name:<18}" + "".join(f"{s:>10.2f}" for s in seconds) + f"{rate:>10.1f}{same:>13}", flush=True)
    if ray_available():
        import ray

        ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
