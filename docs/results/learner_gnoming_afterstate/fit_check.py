"""How well does a fit of ``V`` generalise on a Gnoming afterstate run's cached records?  Least squares and MLPs of given sizes.

``DATA`` is a run's ``data/gen<g>.npz`` (``training.learner.afterstate_run`` with ``game: gnoming``); ``TARGET`` a record
key (``round``: minus the round's margin, the run's target; ``score``: the own round score); every ``WIDTHxSTEPS``
is fitted by the run's own ``fit_value`` (its held-out share, the last tenth of the records: whole games).  Prints the
held-out explained variance of each.  ``GAMES=N`` in the environment keeps the file's first ``N`` games only.
docs/results/learner_gnoming_afterstate.md.

    OMP_NUM_THREADS=1 PYTHONPATH=. python docs/results/learner_gnoming_afterstate/fit_check.py DATA TARGET 128x1500 256x6000
"""
import os
import sys
import time

import numpy as np
import torch

from training.learner.afterstate_run import FitSection, fit_value


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    torch.set_num_threads(1)
    with np.load(sys.argv[1]) as z:
        x, y = z["x"].astype(np.float32), z[sys.argv[2]].astype(np.float32)
        if os.environ.get("GAMES"):
            keep = int(z["games"][:int(os.environ["GAMES"])].sum())  # records per game, in order
            x, y = x[:keep], y[:keep]
    print(f"{len(y)} records", flush=True)
    train = len(y) - max(1, int(len(y) * 0.1))
    design = np.concatenate([x, np.ones((len(y), 1), np.float32)], 1)
    w, *_ = np.linalg.lstsq(design[:train], y[:train], rcond=None)
    print(f"least squares: held-out explained variance {1 - np.var(y[train:] - design[train:] @ w) / np.var(y[train:]):.4f}", flush=True)
    for size in sys.argv[3:]:
        width, steps = (int(v) for v in size.split("x"))
        start = time.perf_counter()
        _, ev = fit_value(x, y, FitSection(width=width, steps=steps), seed=0)
        print(f"MLP {width} wide, {steps} steps: held-out explained variance {ev:.4f} ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
