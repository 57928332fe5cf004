"""The teacher's decisions cached by ``bc_teacher.py`` (``/tmp/bc_TEACHER_GAMES_SEED.npz``): its 2,000 training games
(seed 1) and 100 held-out games (seed 2), optionally the discards only (kind 1); and :func:`features`, every discard's
afterstate written out (``afterstate_fit.py``, ``afterstate_value.py``), now :func:`training.learner.afterstate.features`."""
from pathlib import Path

import numpy as np


def load(teacher: str = "expectimax", train_games: int = 2000, discards_only: bool = False) -> tuple[dict, dict]:
    out = []
    for games, seed in ((train_games, 1), (100, 2)):
        path = Path(f"/tmp/bc_{teacher}_{games}_{seed}.npz")
        if not path.exists():
            raise SystemExit(f"{path} is missing: run docs/results/learner_grinch_draws/bc_teacher.py {teacher} {train_games} first")
        z = dict(np.load(path))
        if discards_only:
            keep = z["kind"] == 1
            z = {k: v[keep] for k, v in z.items()}
        out.append(z)
    return out[0], out[1]


# the afterstate written out and the scorer's shape now live in the package (training.learner.afterstate)
from training.learner.afterstate import features, mlp  # noqa: E402,F401  (re-exported for afterstate_fit.py, afterstate_value.py)
