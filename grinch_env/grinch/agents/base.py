"""The agent interface and a decoder that turns an observation back into what its seat knows.

An agent is any object with ``name``, ``reset(seed)`` and ``act(observation,
action_mask) -> int`` (optionally ``act_batch``).  Agents see only the
``float32[1337]`` observation of :func:`grinch_env.grinch.encoding.encode` and the
``int8[62]`` mask; :func:`decode` reads the observation back into a
:class:`View` so that rule-aware agents never need the true game state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grinch_env.agent_base import SeededAgent, check_mask
from grinch_env.grinch import encoding as enc
from grinch_env.grinch.cards import NUM_CARDS
from grinch_env.grinch.game import MAX_PLAYERS, MAX_ROUNDS, NUM_ACTIONS, PHASE_DISCARD, PHASE_DONE, PHASE_DRAW, PHASE_SCORE
from grinch_env.grinch.scoring import NUM_ROWS, resolve_layout


class BaseAgent(SeededAgent):
    """Common plumbing (:class:`grinch_env.agent_base.SeededAgent`) plus the bonus layout's scales."""

    num_actions = NUM_ACTIONS

    def __init__(self, seed: int | None = None, bonus_layout="standard") -> None:
        self.layout = resolve_layout(bonus_layout)
        self.scales = enc.Scales(self.layout)
        super().__init__(seed)


def legal_actions(action_mask: np.ndarray) -> np.ndarray:
    """Return the legal actions of ``action_mask`` (sorted), raising ``ValueError`` when there is none."""
    return check_mask(action_mask, NUM_ACTIONS)


_PHASES = (PHASE_DISCARD, PHASE_DRAW, PHASE_SCORE)


@dataclass
class View:
    """What one seat knows, decoded from its observation; seats are relative (0 = me, j = j seats to my left)."""

    num_players: int
    hand: list[int]
    piles: list[list[int]]  # contents of each pile; its order is unknown below the top two
    tops: list[int | None]
    seconds: list[int | None]
    known: list[list[int]]  # cards known to be in seat j's hand
    hand_sizes: list[int]
    grinch: int
    round: int
    rounds_left: int  # rounds after the current one
    turn: int | None
    phase: str
    first_draw_made: bool
    draw_pile_size: int
    pads: list[list[int | None]]  # written points, None for an unused row
    totals: list[int]

    @property
    def is_grinch(self) -> bool:
        return self.grinch == 0

    def unused_rows(self, seat: int = 0) -> list[int]:
        return [k for k in range(NUM_ROWS) if self.pads[seat][k] is None]

    def unseen(self) -> list[int]:
        """Return the cards I cannot locate: in other hands (not known) or in the draw pile."""
        seen = set(self.hand)
        for pile in self.piles:
            seen.update(pile)
        for j in range(1, self.num_players):
            seen.update(self.known[j])
        return [c for c in range(NUM_CARDS) if c not in seen]


def decode(observation: np.ndarray, scales: enc.Scales | None = None) -> View:
    """Return the :class:`View` that ``observation`` encodes (the inverse of :func:`grinch_env.grinch.encoding.encode`)."""
    obs = np.asarray(observation)
    if obs.shape != (enc.OBS_SIZE,):
        raise ValueError(f"observation must have shape ({enc.OBS_SIZE},), got {obs.shape}")
    if scales is None:
        scales = enc.Scales(resolve_layout("standard"))
    n = int(round(obs[enc.AT_TABLE:enc.AT_TABLE + MAX_PLAYERS].sum()))
    if not 2 <= n <= MAX_PLAYERS:
        raise ValueError(f"observation encodes {n} seats at the table; expected 2..{MAX_PLAYERS}")
    piles, tops, seconds, known, sizes, pads, totals = [], [], [], [], [], [], []
    for j in range(n):
        base = enc.SEAT_BLOCK + j * enc.SEAT_STRIDE
        piles.append(np.flatnonzero(obs[base + enc.PILE_CONTENTS:base + enc.PILE_CONTENTS + NUM_CARDS] > 0.5).tolist())
        top = np.flatnonzero(obs[base + enc.PILE_TOP:base + enc.PILE_TOP + NUM_CARDS] > 0.5)
        tops.append(int(top[0]) if len(top) else None)
        second = np.flatnonzero(obs[base + enc.PILE_SECOND:base + enc.PILE_SECOND + NUM_CARDS] > 0.5)
        seconds.append(int(second[0]) if len(second) else None)
        known.append(np.flatnonzero(obs[base + enc.KNOWN_IN_HAND:base + enc.KNOWN_IN_HAND + NUM_CARDS] > 0.5).tolist())
        sizes.append(int(round(obs[enc.HAND_SIZE + j] * enc.MAX_HAND)))
        pad = []
        for k in range(NUM_ROWS):
            used = obs[enc.ROW_USED + 7 * j + k] > 0.5
            pad.append(int(round(float(obs[enc.ROW_POINTS + 7 * j + k]) * scales.points)) if used else None)
        pads.append(pad)
        totals.append(int(round(float(obs[enc.TOTALS + j]) * scales.total)))
    phase_bits = obs[enc.PHASE:enc.PHASE + 3]
    phase = _PHASES[int(np.argmax(phase_bits))] if phase_bits.max() > 0.5 else PHASE_DONE
    turn_bits = obs[enc.TURN:enc.TURN + 3]
    return View(
        num_players=n,
        hand=np.flatnonzero(obs[:NUM_CARDS] > 0.5).tolist(),
        piles=piles,
        tops=tops,
        seconds=seconds,
        known=known,
        hand_sizes=sizes,
        grinch=int(np.argmax(obs[enc.GRINCH_SEAT:enc.GRINCH_SEAT + MAX_PLAYERS])),
        round=int(np.argmax(obs[enc.ROUND:enc.ROUND + MAX_ROUNDS])),
        rounds_left=int(np.argmax(obs[enc.ROUNDS_LEFT:enc.ROUNDS_LEFT + MAX_ROUNDS])),
        turn=int(np.argmax(turn_bits)) + 1 if turn_bits.max() > 0.5 else None,
        phase=phase,
        first_draw_made=bool(obs[enc.FIRST_DRAW_MADE] > 0.5),
        draw_pile_size=int(round(float(obs[enc.DRAW_PILE_SIZE]) * NUM_CARDS)),
        pads=pads,
        totals=totals,
    )
