"""Observation and action-mask encoding of a Gnoming :class:`~grinch_env.gnoming.game.Game` from one seat (§6.3).

One shape for 3..7 players: seats are listed by *relative seat*
``r = (seat - observer) % n`` (``r = 0`` is the observer), and rows for
``r >= n`` are zero.  Nobody ever holds private information (§5), so every
seat's tensor is the same public state, rotated to that seat.

=========  =======  =========================================================
indices    size     meaning
=========  =======  =========================================================
0..818     7x9x13   layouts: index ``117 r + 13 p + c``, ``c`` the kind
                    one-hot (0..11) or ``c = 12`` face down
819..825   7        seat ``r`` is at the table
826..903   2x3x13   the top 3 cards of pile A, then pile B, top first: kind
                    one-hot, or channel 12 = no card
904..927   2x12     count of each kind in pile A, then pile B, / 14
928..939   12       never-seen count of each kind (face-down slots and a
                    draw pile never reshuffled) / 14
940..951   12       count of each kind in a reshuffled draw pile / 14
952..954   3        draw pile size / 110; reshuffled flag; Hazards removed / 3
955..967   13       held card kind one-hot (channel 12 = none)
968..972   5        held card source: draw pile, pile A, pile B, bounce, displaced
973..981   9        own slots filled this turn (zero unless the observer is the turn player)
982..985   4        phase: reveal, draw, play/bounce/discard, Hazard response
986..988   3        round one-hot
989        1        turns this round / (``max_turns_per_player`` * n)
990..996   7        relative seat of this round's first player
997..1003  7        relative seat of the player who went out (zero if nobody)
1004..1010 7        relative seat still has a final turn
1011..1017 7        relative seat of the Hazard discarder (during responses)
1018..1024 7        totals by relative seat / 100
1025..1045 3x7      round scores by round and relative seat / 50 (zero for rounds not played)
=========  =======  =========================================================

Totals and round scores may be negative, so those entries lie in
``[-1.59, 2.49]`` and ``[-1.06, 1.66]`` (:data:`OBS_LOW`, :data:`OBS_HIGH`);
the turn counter may pass 1 during the final turns.  The action mask is
``int8[15]``, all zeros for a seat that is not to act.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grinch_env.gnoming.cards import DECK_SIZE, HAZARD, MAX_COPIES, NUM_KINDS
from grinch_env.gnoming.game import (
    BOUNCE,
    DISCARD,
    DONE,
    DRAW_PHASE,
    HAZARD_PHASE,
    HELD_SOURCES,
    MAX_PLAYERS,
    MIN_PLAYERS,
    NUM_ACTIONS,
    NUM_ROUNDS,
    NUM_SLOTS,
    PLAY,
    REVEAL,
    Game,
)

CHANNELS = 13  # 12 kinds + "face down" / "no card" / "none"
EMPTY = 12
SEAT_BLOCK = NUM_SLOTS * CHANNELS  # 117
LAYOUTS = 0
PRESENT = LAYOUTS + MAX_PLAYERS * SEAT_BLOCK  # 819
PILE_TOPS = PRESENT + MAX_PLAYERS  # 826
TOP_DEPTH = 3
PILE_COUNTS = PILE_TOPS + 2 * TOP_DEPTH * CHANNELS  # 904
NEVER_SEEN = PILE_COUNTS + 2 * NUM_KINDS  # 928
RESHUFFLED_COUNTS = NEVER_SEEN + NUM_KINDS  # 940
DRAW_SIZE = RESHUFFLED_COUNTS + NUM_KINDS  # 952
RESHUFFLED_FLAG = DRAW_SIZE + 1  # 953
REMOVED = DRAW_SIZE + 2  # 954
HELD = DRAW_SIZE + 3  # 955
HELD_SOURCE = HELD + CHANNELS  # 968
FILLED = HELD_SOURCE + len(HELD_SOURCES)  # 973
PHASE = FILLED + NUM_SLOTS  # 982
ROUND = PHASE + 4  # 986
TURNS = ROUND + NUM_ROUNDS  # 989
FIRST_PLAYER = TURNS + 1  # 990
WENT_OUT = FIRST_PLAYER + MAX_PLAYERS  # 997
FINAL_TURN = WENT_OUT + MAX_PLAYERS  # 1004
DISCARDER = FINAL_TURN + MAX_PLAYERS  # 1011
TOTALS = DISCARDER + MAX_PLAYERS  # 1018
ROUND_SCORES = TOTALS + MAX_PLAYERS  # 1025
OBS_SIZE = ROUND_SCORES + NUM_ROUNDS * MAX_PLAYERS  # 1046
assert OBS_SIZE == 1046

TOTAL_SCALE = 100.0
ROUND_SCALE = 50.0
NUM_REMOVABLE = 3  # Hazards
PHASE_INDEX = {REVEAL: 0, DRAW_PHASE: 1, PLAY: 2, BOUNCE: 2, DISCARD: 2, HAZARD_PHASE: 3}
SOURCE_INDEX = {s: i for i, s in enumerate(HELD_SOURCES)}
# Bounds of §4.5: a round score lies in [-53, 83], a total in [-159, 249].
ROUND_SCORE_BOUNDS = (-53, 83)
TOTAL_BOUNDS = (-159, 249)


def observation_bounds(num_players: int, max_turns_per_player: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(low, high)`` float32[1046] arrays that hold every observation of such a game."""
    low = np.zeros(OBS_SIZE, np.float32)
    high = np.ones(OBS_SIZE, np.float32)
    low[TOTALS:ROUND_SCORES] = np.float32(TOTAL_BOUNDS[0] / TOTAL_SCALE)
    high[TOTALS:ROUND_SCORES] = np.float32(TOTAL_BOUNDS[1] / TOTAL_SCALE)
    low[ROUND_SCORES:] = np.float32(ROUND_SCORE_BOUNDS[0] / ROUND_SCALE)
    high[ROUND_SCORES:] = np.float32(ROUND_SCORE_BOUNDS[1] / ROUND_SCALE)
    cap = max_turns_per_player * num_players
    high[TURNS] = np.float32((cap + num_players - 1) / cap)  # the final turns may pass the cap
    return low, high


def _check_seat(game: Game, seat: Any) -> int:
    n = game.num_players
    if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
        raise ValueError(f"seat must be in 0..{n - 1} for {n} players, got {seat!r}")
    return int(seat)


def encode(game: Game, seat: int) -> np.ndarray:
    """Return the float32[1046] observation of ``game`` from ``seat``'s point of view (§6.3)."""
    seat = _check_seat(game, seat)
    n = game.num_players
    obs = np.zeros(OBS_SIZE, np.float32)
    rel = [(seat + r) % n for r in range(n)]  # absolute seat at each relative seat
    for r, s in enumerate(rel):
        base = LAYOUTS + SEAT_BLOCK * r
        layout, up = game.layouts[s], game.face_up[s]
        for p in range(NUM_SLOTS):
            obs[base + CHANNELS * p + (layout[p] if up[p] else EMPTY)] = 1.0
        obs[PRESENT + r] = 1.0
    for i, pile in enumerate(game.piles):
        for d in range(TOP_DEPTH):
            c = pile[-1 - d] if d < len(pile) else EMPTY
            obs[PILE_TOPS + CHANNELS * (TOP_DEPTH * i + d) + c] = 1.0
        counts = np.bincount(np.asarray(pile, np.int64), minlength=NUM_KINDS) if pile else np.zeros(NUM_KINDS)
        obs[PILE_COUNTS + NUM_KINDS * i:PILE_COUNTS + NUM_KINDS * (i + 1)] = counts / MAX_COPIES
    obs[NEVER_SEEN:NEVER_SEEN + NUM_KINDS] = np.asarray(game.never_seen_counts()) / MAX_COPIES
    if game.reshuffled:
        if game.draw_pile:
            obs[RESHUFFLED_COUNTS:RESHUFFLED_COUNTS + NUM_KINDS] = np.bincount(np.asarray(game.draw_pile, np.int64), minlength=NUM_KINDS) / MAX_COPIES
        obs[RESHUFFLED_FLAG] = 1.0
    obs[DRAW_SIZE] = len(game.draw_pile) / DECK_SIZE
    obs[REMOVED] = len(game.removed) / NUM_REMOVABLE
    obs[HELD + (EMPTY if game.held is None else game.held)] = 1.0
    if game.held_source is not None:
        obs[HELD_SOURCE + SOURCE_INDEX[game.held_source]] = 1.0
    phase = game.phase
    if phase is not DONE:
        if game.turn_player == seat and phase is not REVEAL:
            obs[FILLED:FILLED + NUM_SLOTS] = game.filled
        obs[PHASE + PHASE_INDEX[phase]] = 1.0
    obs[ROUND + game.round] = 1.0
    obs[TURNS] = game.turns_this_round / game.turn_cap
    obs[FIRST_PLAYER + (game.round_first - seat) % n] = 1.0
    if game.went_out is not None:
        obs[WENT_OUT + (game.went_out - seat) % n] = 1.0
    for r, s in enumerate(rel):
        obs[FINAL_TURN + r] = game.final_turns[s]
        obs[TOTALS + r] = game.totals[s] / TOTAL_SCALE
        for i, scores in enumerate(game.round_scores):
            obs[ROUND_SCORES + MAX_PLAYERS * i + r] = scores[s] / ROUND_SCALE
    if phase is HAZARD_PHASE:
        obs[DISCARDER + (game.turn_player - seat) % n] = 1.0
    return obs


def action_mask(game: Game, seat: int) -> np.ndarray:
    """Return the int8[15] mask of ``seat``: 1 for each legal action if ``seat`` is to act, else all zeros."""
    seat = _check_seat(game, seat)
    mask = np.zeros(NUM_ACTIONS, np.int8)
    if game.current == seat:
        mask[game.legal_actions()] = 1
    return mask


class Encoder:
    """Encodes observations like :func:`encode` and :func:`action_mask` (the env's observer)."""

    __slots__ = ()

    def observe(self, game: Game, seat: int) -> dict[str, np.ndarray]:
        """Return ``{"observation": float32[1046], "action_mask": int8[15]}`` of ``game`` from ``seat``."""
        return {"observation": encode(game, seat), "action_mask": action_mask(game, seat)}


# ------------------------------------------------------------ decoding
def _one_hot_index(block: np.ndarray, what: str) -> int | None:
    hot = np.flatnonzero(block)
    if len(hot) > 1:
        raise ValueError(f"not an observation: {what} has {len(hot)} hot entries")
    return int(hot[0]) if len(hot) else None


def _count(x: float, scale: float) -> int:
    return int(round(float(x) * scale))


def decode_game(observation: np.ndarray, rng: np.random.Generator | int | None = None, **options: Any) -> Game:
    """Return a :class:`Game` consistent with one seat's observation alone, the observer at seat 0.

    Other seats keep their relative order.  The public state is copied; the
    hidden cards are dealt from ``rng``: the never-seen multiset uniformly
    over every face-down slot and (if never reshuffled) the draw pile, a
    reshuffled pile's known multiset in random order, and each discard pile
    as its known top 3 (in order) over the rest of its counts in random order
    (that order is not in the observation).  ``encode(game, 0)`` equals the
    observation.  The player to act is the observer whenever the observation
    allows it (a search agent decodes its own decision); otherwise the rules'
    next actor.  ``options`` are the game's rule options; ``num_players``
    is refused and ``first_player`` ignored, since the observation gives both
    (relative to the observer).
    """
    obs = np.asarray(observation, dtype=np.float32)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"observation must have shape ({OBS_SIZE},), got {obs.shape}")
    if "num_players" in options:
        raise ValueError("num_players comes from the observation; do not pass it to from_observation")
    n = int(obs[PRESENT:PRESENT + MAX_PLAYERS].sum())
    if not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ValueError(f"not an observation: {n} seats present")
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    options = dict(options)
    options.pop("first_player", None)  # the observation says who starts, relative to the observer
    round_index = _one_hot_index(obs[ROUND:ROUND + NUM_ROUNDS], "the round")
    first_rel = _one_hot_index(obs[FIRST_PLAYER:FIRST_PLAYER + n], "the first player")
    rotation = options.get("start_rotation", "rotate")
    first_player = (first_rel - round_index) % n if rotation == "rotate" else first_rel
    g = Game(n, rng=rng, first_player=first_player, _start=False, **options)
    g.round = round_index
    g.round_first = first_rel
    # Public facts.
    g.face_up = []
    layouts: list[list[int | None]] = []
    for r in range(n):
        block = obs[SEAT_BLOCK * r:SEAT_BLOCK * (r + 1)].reshape(NUM_SLOTS, CHANNELS)
        kinds = [int(np.argmax(block[p])) for p in range(NUM_SLOTS)]
        layouts.append([None if k == EMPTY else k for k in kinds])
        g.face_up.append([k != EMPTY for k in kinds])
    pile_counts = [[_count(x, MAX_COPIES) for x in obs[PILE_COUNTS + NUM_KINDS * i:PILE_COUNTS + NUM_KINDS * (i + 1)]] for i in range(2)]
    never_seen = [_count(x, MAX_COPIES) for x in obs[NEVER_SEEN:NEVER_SEEN + NUM_KINDS]]
    reshuffled_counts = [_count(x, MAX_COPIES) for x in obs[RESHUFFLED_COUNTS:RESHUFFLED_COUNTS + NUM_KINDS]]
    draw_size = _count(obs[DRAW_SIZE], DECK_SIZE)
    g.reshuffled = bool(obs[RESHUFFLED_FLAG])
    g.removed = [HAZARD] * _count(obs[REMOVED], NUM_REMOVABLE)
    held = _one_hot_index(obs[HELD:HELD + CHANNELS], "the held card")
    g.held = None if held == EMPTY else held
    source = _one_hot_index(obs[HELD_SOURCE:HELD_SOURCE + len(HELD_SOURCES)], "the held card's source")
    g.held_source = None if source is None else HELD_SOURCES[source]
    g.filled = [bool(x) for x in obs[FILLED:FILLED + NUM_SLOTS]]
    phase_index = _one_hot_index(obs[PHASE:PHASE + 4], "the phase")
    g.turns_this_round = _count(obs[TURNS], g.turn_cap)
    went_out = _one_hot_index(obs[WENT_OUT:WENT_OUT + n], "who went out")
    g.went_out = went_out
    g.final_turns = [bool(x) for x in obs[FINAL_TURN:FINAL_TURN + n]]
    g.totals = [_count(x, TOTAL_SCALE) for x in obs[TOTALS:TOTALS + n]]
    g.round_scores = [
        [_count(x, ROUND_SCALE) for x in obs[ROUND_SCORES + MAX_PLAYERS * i:ROUND_SCORES + MAX_PLAYERS * i + n]]
        for i in range(round_index + (phase_index is None))
    ]
    g.round_capped = [False] * len(g.round_scores)  # not observed; bookkeeping only
    g.round_went_out = [None] * len(g.round_scores)
    # Discard piles: the known top 3 over the rest of the counts, in random order.
    g.piles = []
    for i in range(2):
        tops = []
        for d in range(TOP_DEPTH):
            c = _one_hot_index(obs[PILE_TOPS + CHANNELS * (TOP_DEPTH * i + d):PILE_TOPS + CHANNELS * (TOP_DEPTH * i + d + 1)], "a pile top")
            if c is None or c == EMPTY:
                break
            tops.append(c)
        rest = list(pile_counts[i])
        for c in tops:
            rest[c] -= 1
        below = [k for k in range(NUM_KINDS) for _ in range(rest[k])]
        below = [below[j] for j in rng.permutation(len(below))]
        g.piles.append(below + tops[::-1])
    # Hidden cards.
    pool = [k for k in range(NUM_KINDS) for _ in range(never_seen[k])]
    pool = [pool[j] for j in rng.permutation(len(pool))]
    at = 0
    g.layouts = []
    for r in range(n):
        layout = []
        for k in layouts[r]:
            if k is None:
                k = pool[at]
                at += 1
            layout.append(k)
        g.layouts.append(layout)
    if g.reshuffled:
        known = [k for k in range(NUM_KINDS) for _ in range(reshuffled_counts[k])]
        g.draw_pile = [known[j] for j in rng.permutation(len(known))]
    else:
        g.draw_pile = pool[at:]
    if len(g.draw_pile) != draw_size:
        raise ValueError(f"not a consistent observation: the draw pile holds {draw_size} cards, the counts give {len(g.draw_pile)}")
    # Who acts.
    g.responders = []
    if phase_index is None:
        g.phase = DONE
        g.current = None
        g.turn_player = first_rel
        g.round_scores = g.round_scores[:NUM_ROUNDS]
        g.round_capped = g.round_capped[:NUM_ROUNDS]
        g.round_went_out = g.round_went_out[:NUM_ROUNDS]
    elif phase_index == 0:
        g.phase = REVEAL
        g.reveal_picks = sum(map(sum, g.face_up))
        g.current = (first_rel + g.reveal_picks // 2) % n
        g.turn_player = first_rel
    else:
        g.reveal_picks = 2 * n
        g.turn_player = tp = (first_rel + g.turns_this_round) % n
        if phase_index == 1:
            g.phase = DRAW_PHASE
        elif phase_index == 2:
            g.phase = {"bounce": BOUNCE, "displaced": DISCARD}.get(g.held_source, PLAY)
        else:
            g.phase = HAZARD_PHASE
            tp = _one_hot_index(obs[DISCARDER:DISCARDER + n], "the Hazard discarder")
            g.turn_player = tp
            eligible = [(tp + i) % n for i in range(1, n) if g.face_down_count((tp + i) % n) >= 2]
            # The observer is the responder when it may respond (a search agent decodes its own turn).
            start = eligible.index(0) if 0 in eligible else 0
            g.responders = eligible[start:]
        g.current = g.responders[0] if g.phase is HAZARD_PHASE else tp
    return g


__all__ = ["OBS_SIZE", "Encoder", "action_mask", "decode_game", "encode", "observation_bounds"]
