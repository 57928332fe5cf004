"""The teacher's decisions cached by ``bc_teacher.py`` (``/tmp/bc_TEACHER_GAMES_SEED.npz``): its 2,000 training games
(seed 1) and 100 held-out games (seed 2), optionally the discards only (kind 1); and :func:`features`, every discard's
afterstate written out (``afterstate_fit.py``, ``afterstate_value.py``)."""
from pathlib import Path

import numpy as np
import torch

from grinch_env.grinch import encoding as enc
from grinch_env.grinch import tokens as rt
from grinch_env.grinch.cards import NUM_CARDS


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


lay = rt._layout("standard")
SUIT_RANK = rt._CELL.reshape(NUM_CARDS, -1)  # card -> its suit x rank cell (the tokens' extend counts by the same cells)
BONUS = np.flatnonzero(lay.points > 0)  # the 12 bonus cards


def features(obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``([D, 48, F] per discard, [D, 48] legal)``: each discard's afterstate and the decision's public context."""
    hand = obs[:, :NUM_CARDS]
    eye = np.eye(NUM_CARDS, dtype=np.float32)
    after = hand[:, None, :] * (1 - eye)  # [D, 48, 48]
    used = obs[:, enc.ROW_USED:enc.ROW_USED + 7]
    rows, bonus = rt.hand_values(after)
    rows = rows * (used[:, None] < 0.5)
    seats = obs[:, enc.SEAT_BLOCK:enc.AT_TABLE].reshape(len(obs), -1, 4, NUM_CARDS)
    unseen = (hand + seats.max(2).sum(1) == 0).astype(np.float32)
    ctx = np.concatenate([unseen @ SUIT_RANK / 2, used, obs[:, enc.ROUNDS_LEFT:enc.TURN + 3], obs[:, enc.GRINCH_SEAT:enc.GRINCH_SEAT + 1]], 1)
    per = np.concatenate([after @ SUIT_RANK / 2, after[..., BONUS], rows / 30, bonus[..., None] / 20,
                          np.broadcast_to(ctx[:, None], (len(obs), NUM_CARDS, ctx.shape[1]))], -1)
    return per.astype(np.float32), mask[:, :NUM_CARDS]


def mlp(inputs: int, width: int) -> torch.nn.Module:
    """The scorer these scripts fit: three ReLU layers of ``width``, one output."""
    return torch.nn.Sequential(torch.nn.Linear(inputs, width), torch.nn.ReLU(), torch.nn.Linear(width, width), torch.nn.ReLU(),
                               torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, 1))
