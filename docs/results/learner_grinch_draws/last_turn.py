"""The last turn's discards, the one Grinch decision whose worth is exact, and ``expectimax``'s best set there.

Shared by ``bc_teacher.py`` and ``last_discard_probe.py`` (both run as scripts from the repository root, so this
folder is on their import path).  No card comes before scoring, so ``expectimax`` values a discard by
``bonus + max over open rows (row + W(unused - row, rounds left))`` (``grinch_env.grinch.agents.expectimax``).
"""
import numpy as np

from grinch_env.grinch import encoding as enc
from grinch_env.grinch import tokens as rt
from grinch_env.grinch.agents.base import decode
from grinch_env.grinch.agents.expectimax import ExpectimaxAgent
from grinch_env.grinch.cards import NUM_CARDS
from grinch_env.grinch.game import DRAW_PILE_ACTION


def last_turn_discards(obs: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """Indices of the discards (``kind`` 1) at a round's last turn outside the game's last round."""
    turn = obs[:, enc.TURN:enc.TURN + 3].argmax(1)
    rounds_left = obs[:, enc.ROUNDS_LEFT:enc.ROUNDS_LEFT + 6].argmax(1)
    return np.flatnonzero((kind == 1) & (turn == 2) & (rounds_left > 0))


def best_discards(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``bool[B, DRAW_PILE_ACTION]``: per last-turn discard decision, the legal discards ``expectimax``'s rule rates best
    (ties included)."""
    teacher = ExpectimaxAgent(seed=0)
    best = np.zeros((len(obs), DRAW_PILE_ACTION), bool)
    for n in range(len(obs)):
        legal = np.flatnonzero(mask[n][:DRAW_PILE_ACTION])
        rows, bonus = rt.hand_values(obs[n, :NUM_CARDS][None] * (1 - np.eye(NUM_CARDS, dtype=np.float32))[legal])
        view = decode(obs[n], teacher.scales)
        value = (rows + teacher.rows.offsets([v is not None for v in view.pads[0]], view.rounds_left)).max(1) + bonus
        best[n, legal[np.isclose(value, value.max())]] = True
    return best
