"""What every *Gnoming A Round* agent reads: :func:`decode` turns an observation into a :class:`View`, plus layout arithmetic and :class:`BaseAgent`."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from grinch_env.agent_base import SeededAgent, check_mask
from grinch_env.gnoming.cards import DECK_SIZE, MAX_COPIES, MULLIGAN, NUM_KINDS, POINTS
from grinch_env.gnoming.encoding import (
    CHANNELS,
    DISCARDER,
    DRAW_SIZE,
    EMPTY,
    FILLED,
    FINAL_TURN,
    FIRST_PLAYER,
    HELD,
    HELD_SOURCE,
    NEVER_SEEN,
    NUM_REMOVABLE,
    OBS_SIZE,
    PHASE,
    PILE_COUNTS,
    PILE_TOPS,
    PRESENT,
    REMOVED,
    RESHUFFLED_COUNTS,
    RESHUFFLED_FLAG,
    ROUND,
    ROUND_SCALE,
    ROUND_SCORES,
    SEAT_BLOCK,
    TOP_DEPTH,
    TOTAL_SCALE,
    TOTALS,
    WENT_OUT,
)
from grinch_env.gnoming.game import HELD_SOURCES, MAX_PLAYERS, MIN_PLAYERS, NUM_ACTIONS, NUM_ROUNDS, NUM_SLOTS

# The observation index table of RULES_GNOMING.md §6.3, as the encoding module lays it out.
FACE_DOWN = -1  # a face-down slot in a View's layout
COUNT_SCALE = MAX_COPIES
PHASES = ("reveal", "draw", "play", "hazard")  # "play" covers the play, bounce and discard phases

SLOTS = NUM_SLOTS
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8))
LINES_THROUGH = tuple(tuple(i for i, line in enumerate(LINES) if p in line) for p in range(SLOTS))
POSITIVE_KINDS = range(6)
GOING_OUT_POINTS = 5


@dataclass
class View:
    """What one seat knows, decoded from its observation; seats are relative (0 = me, r = r seats to my left)."""

    num_players: int
    layouts: list[list[int]]  # kinds, FACE_DOWN for a face-down slot
    pile_tops: list[list[int]]  # for pile A and B: up to 3 kinds, top first
    pile_counts: list[list[int]]  # [2][12]
    never_seen: list[int]  # [12]: in face-down slots and an un-reshuffled draw pile
    reshuffled_counts: list[int]  # [12]: a reshuffled draw pile's multiset
    draw_size: int
    reshuffled: bool
    hazards_removed: int
    held: int | None
    held_source: str | None
    filled: list[bool]
    phase: str  # "reveal", "draw", "play" (play, bounce or discard), "hazard" or "done"
    round: int
    first_player: int
    went_out: int | None
    final_turn: list[bool]
    hazard_discarder: int | None
    totals: list[int]
    round_scores: list[list[int]] = field(default_factory=list)  # per round played, per relative seat

    def face_down(self, seat: int = 0) -> list[int]:
        """Return the face-down slots of relative seat ``seat``."""
        return [p for p in range(SLOTS) if self.layouts[seat][p] == FACE_DOWN]


def _one_hot(block: np.ndarray) -> int | None:
    """Return the channel set in ``block`` (None when nothing is set)."""
    hits = np.flatnonzero(block > 0.5)
    return int(hits[0]) if len(hits) else None


def decode(observation: np.ndarray) -> View:
    """Return the :class:`View` that ``observation`` encodes (the inverse of ``encoding.encode``)."""
    obs = np.asarray(observation, dtype=np.float32)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"observation must have shape ({OBS_SIZE},), got {obs.shape}")
    n = int(round(float(obs[PRESENT:PRESENT + MAX_PLAYERS].sum())))
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ValueError(f"observation encodes {n} seats at the table; expected {MIN_PLAYERS}..{MAX_PLAYERS}")
    cells = obs[:MAX_PLAYERS * SEAT_BLOCK].reshape(MAX_PLAYERS, SLOTS, CHANNELS)[:n]
    kinds = np.argmax(cells, axis=2)
    layouts = [[FACE_DOWN if k == EMPTY else int(k) for k in row] for row in kinds]
    tops = obs[PILE_TOPS:PILE_TOPS + 2 * TOP_DEPTH * CHANNELS].reshape(2, TOP_DEPTH, CHANNELS).argmax(axis=2)
    pile_tops = [[int(k) for k in pile if k != EMPTY] for pile in tops]

    def counts(start: int) -> list[int]:
        return [int(round(float(x) * COUNT_SCALE)) for x in obs[start:start + NUM_KINDS]]

    phase_bit = _one_hot(obs[PHASE:PHASE + len(PHASES)])
    source = _one_hot(obs[HELD_SOURCE:HELD_SOURCE + len(HELD_SOURCES)])
    held = _one_hot(obs[HELD:HELD + CHANNELS])
    round_index = _one_hot(obs[ROUND:ROUND + NUM_ROUNDS]) or 0
    played = round_index + (1 if phase_bit is None else 0)
    rounds = [[int(round(float(x) * ROUND_SCALE)) for x in obs[ROUND_SCORES + MAX_PLAYERS * r:ROUND_SCORES + MAX_PLAYERS * r + n]]
              for r in range(played)]
    return View(
        num_players=n,
        layouts=layouts,
        pile_tops=pile_tops,
        pile_counts=[counts(PILE_COUNTS), counts(PILE_COUNTS + NUM_KINDS)],
        never_seen=counts(NEVER_SEEN),
        reshuffled_counts=counts(RESHUFFLED_COUNTS),
        draw_size=int(round(float(obs[DRAW_SIZE]) * DECK_SIZE)),
        reshuffled=bool(obs[RESHUFFLED_FLAG] > 0.5),
        hazards_removed=int(round(float(obs[REMOVED]) * NUM_REMOVABLE)),
        held=None if held is None or held == EMPTY else held,
        held_source=None if source is None else HELD_SOURCES[source],
        filled=[bool(x > 0.5) for x in obs[FILLED:FILLED + SLOTS]],
        phase="done" if phase_bit is None else PHASES[phase_bit],
        round=round_index,
        first_player=_one_hot(obs[FIRST_PLAYER:FIRST_PLAYER + MAX_PLAYERS]) or 0,
        went_out=_one_hot(obs[WENT_OUT:WENT_OUT + MAX_PLAYERS]),
        final_turn=[bool(x > 0.5) for x in obs[FINAL_TURN:FINAL_TURN + n]],
        hazard_discarder=_one_hot(obs[DISCARDER:DISCARDER + MAX_PLAYERS]),
        totals=[int(round(float(x) * TOTAL_SCALE)) for x in obs[TOTALS:TOTALS + n]],
        round_scores=rounds,
    )


# --------------------------------------------------------------- layout evaluation
def _line_value(a: int, b: int, c: int) -> int:
    """Return v when the line (a, b, c) is matched on value v (§4.3), else 0; a face-down card never matches."""
    v = 0
    for k in (a, b, c):
        if k == MULLIGAN:
            continue
        if not 0 <= k <= 5:  # face down, negative or Hazard
            return 0
        if v == 0:
            v = POINTS[k]
        elif POINTS[k] != v:
            return 0
    return v


def expected_score(layout: list[int], unknown: float) -> float:
    """Return the §4.3 score of ``layout`` with each face-down card worth ``unknown`` (its lines unmatched).

    Only lines of three face-up cards can be matched; on a full face-up layout
    this is exactly ``scoring.score_layout`` with ``mulligan_lines="independent"``.
    """
    known, face_down = _known_score(tuple(layout))
    return known + face_down * unknown


@lru_cache(maxsize=1 << 16)
def _known_score(layout: tuple[int, ...]) -> tuple[int, int]:
    """Return ``(score of the face-up cards, number of face-down cards)``; face-down cards never lie in a matched line."""
    total = 0
    covered = [False] * SLOTS
    for line in LINES:
        v = _line_value(layout[line[0]], layout[line[1]], layout[line[2]])
        if v:
            total -= v
            for p in line:
                covered[p] = True
    face_down = 0
    for p in range(SLOTS):
        if not covered[p]:
            k = layout[p]
            if k == FACE_DOWN:
                face_down += 1
            else:
                total += POINTS[k]
    return total, face_down


def mean_points(counts: list[int] | np.ndarray) -> float:
    """Return the mean §1 points of a multiset given by kind counts (0 for an empty one)."""
    counts = np.asarray(counts, dtype=np.float64)
    size = counts.sum()
    return float(counts @ np.asarray(POINTS, dtype=np.float64) / size) if size else 0.0


def can_place(layout: list[int], slot: int, kind: int) -> bool:
    """Return whether ``kind`` may go into ``slot`` under the Mulligan limit (§3.3)."""
    return kind != MULLIGAN or all(layout[q] != MULLIGAN for q in range(SLOTS) if q != slot)


def _placed(layout: list[int], slot: int, kind: int) -> list[int]:
    out = list(layout)
    out[slot] = kind
    return out


# --------------------------------------------------------------- the agents
class BaseAgent(SeededAgent):
    """Common plumbing (:class:`grinch_env.agent_base.SeededAgent`); ``_act`` gets the legal actions as a list of ints."""

    num_actions = NUM_ACTIONS
    legal_as_list = True


def legal_actions(action_mask: np.ndarray) -> np.ndarray:
    """Return the legal actions of ``action_mask`` (sorted), raising ``ValueError`` when there is none."""
    return check_mask(action_mask, NUM_ACTIONS)


__all__ = ["BaseAgent", "COUNT_SCALE", "FACE_DOWN", "GOING_OUT_POINTS", "LINES", "LINES_THROUGH", "PHASES", "POSITIVE_KINDS", "SLOTS", "View", "can_place", "decode", "expected_score", "legal_actions", "mean_points"]
