"""The rules of *Gnoming A Round* as a state machine (``../shared/RULES_GNOMING.md``).

This module is the single source of truth for the second game's rules.  It has
no PettingZoo, gymnasium or torch import; the encoding, the environment and
the agents build on :class:`Game`.

Actions (one ``Discrete(15)`` space for every table size, §6.1)::

    0..8   slot p = 3*row + col of the actor's own layout: turn it up (reveal,
           Hazard response) or place the held card there (play, bounce)
    9      DRAW       take the top card of the draw pile
    10/11  TAKE_A/B   take the top card of discard pile A / B
    12/13  DISCARD_A/B  discard the held card onto pile A / B (in a bounce:
           stop bouncing; a Hazard leaves the round with 12)
    14     PASS       decline a Hazard response

A round: shuffle all 110 cards, deal 9 face down to each player, turn two
discard piles (a Hazard turned here leaves the round), then every player
turns up two own slots.  Turns go left: draw, play (place or discard), maybe
a bounce chain, one discard, maybe Hazard responses.  The round ends one turn
each after a player goes out (or at the turn cap); the layouts are revealed
and scored; three rounds; the lowest total wins.  A decision with exactly one
legal action is played by the engine and logged in :attr:`Game.auto_log`.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

import numpy as np

from grinch_env.games import IllegalActionError, copy_generator
from grinch_env.gnoming.cards import DECK, DECK_SIZE, HAZARD, IS_POSITIVE, MULLIGAN, NUM_KINDS, SHORT_NAMES, kind_name
from grinch_env.gnoming.scoring import MULLIGAN_LINES, round_scores, score_layout
from grinch_env.gnoming.scoring import winners as _winners

# ---------------------------------------------------------------- game facts
MIN_PLAYERS = 3
MAX_PLAYERS = 7
NUM_ROUNDS = 3
NUM_SLOTS = 9
REVEAL_PICKS = 2

# Action layout.
SLOT_BASE = 0
DRAW = 9
TAKE_A = 10
TAKE_B = 11
DISCARD_A = 12
DISCARD_B = 13
PASS = 14
NUM_ACTIONS = 15
SLOT_ACTIONS = range(SLOT_BASE, SLOT_BASE + NUM_SLOTS)

# Held-card sources, in the observation's order (§6.3).
HELD_SOURCES = ("draw", "A", "B", "bounce", "displaced")

START_ROTATIONS = ("rotate", "fixed")
DISCARD_TAKES = ("must_place", "free")
REWARD_MODES = ("win", "margin")
MIN_TURNS_PER_PLAYER = 10
MARGIN_SCALE = 100.0

OPTIONS = {
    "num_players": 4,
    "first_player": 0,
    "start_rotation": "rotate",
    "discard_take": "must_place",
    "mulligan_lines": "independent",
    "max_turns_per_player": 30,
}

# One turn takes at most 16 decisions; a round at most 31n - 1 turns (§6.2).
MAX_DECISIONS_PER_TURN = 16


def max_game_length(num_players: int, max_turns_per_player: int = 30) -> int:
    """Return the bound on decisions per game of §6.2: 3 rounds of 2n reveals and 16 decisions per turn."""
    turns = max_turns_per_player * num_players + num_players - 1
    return NUM_ROUNDS * (REVEAL_PICKS * num_players + MAX_DECISIONS_PER_TURN * turns)


MAX_GAME_LENGTH = max_game_length(MAX_PLAYERS)  # 10,410 at 7 players


class Phase(str, Enum):
    """Who decides what (§6.2); compares equal to the plain strings."""

    REVEAL = "reveal"
    DRAW = "draw"
    PLAY = "play"
    BOUNCE = "bounce"
    DISCARD = "discard"
    HAZARD = "hazard"
    DONE = "done"

    def __str__(self) -> str:
        return self.value


REVEAL, DRAW_PHASE, PLAY, BOUNCE, DISCARD, HAZARD_PHASE, DONE = (
    Phase.REVEAL, Phase.DRAW, Phase.PLAY, Phase.BOUNCE, Phase.DISCARD, Phase.HAZARD, Phase.DONE,
)

_ACTION_NAMES = tuple(
    [f"slot {p} (row {p // 3}, col {p % 3})" for p in range(NUM_SLOTS)]
    + ["DRAW", "TAKE_A", "TAKE_B", "DISCARD_A", "DISCARD_B", "PASS"]
)


def action_name(action: Any) -> str:
    """Return a readable name of ``action`` (``"slot 4 (row 1, col 1)"``, ``"DRAW"``, ...)."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)) and 0 <= action < NUM_ACTIONS:
        return _ACTION_NAMES[int(action)]
    return f"invalid action {action!r}"


def _check_int(name: str, value: Any, low: int, high: int | None, allowed: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < low or (high is not None and value > high):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return int(value)


def _check_choice(name: str, value: Any, allowed: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {tuple(allowed)}, got {value!r}")
    return value


def check_options(num_players: Any, first_player: Any, start_rotation: Any, discard_take: Any, mulligan_lines: Any,
                  max_turns_per_player: Any) -> dict[str, Any]:
    """Return the validated options as a dict; raise ``ValueError`` naming the allowed values.

    No defaults here: the defaults stand once in each signature a user calls (``Game``, ``raw_env``, ``VectorGnoming``).
    """
    n = _check_int("num_players", num_players, MIN_PLAYERS, MAX_PLAYERS, f"an int in {MIN_PLAYERS}..{MAX_PLAYERS}")
    return {
        "num_players": n,
        "first_player": _check_int("first_player", first_player, 0, n - 1, f"a seat in 0..{n - 1} for {n} players"),
        "start_rotation": _check_choice("start_rotation", start_rotation, START_ROTATIONS),
        "discard_take": _check_choice("discard_take", discard_take, DISCARD_TAKES),
        "mulligan_lines": _check_choice("mulligan_lines", mulligan_lines, MULLIGAN_LINES),
        "max_turns_per_player": _check_int(
            "max_turns_per_player", max_turns_per_player, MIN_TURNS_PER_PLAYER, None, f"an int >= {MIN_TURNS_PER_PLAYER}"
        ),
    }


def terminal_rewards(totals: Sequence[int], last_round: Sequence[int] | None, reward_mode: str = "win") -> list[float]:
    """Return every seat's end-of-game reward (§4.6): zero-sum ``"win"`` or ``"margin"``."""
    n = len(totals)
    if reward_mode == "win":
        won = set(_winners(totals, last_round))
        w = len(won)
        if w == n:
            return [0.0] * n
        return [1.0 / w if p in won else -1.0 / (n - w) for p in range(n)]
    if reward_mode == "margin":
        total = sum(totals)
        return [((total - t) / (n - 1) - t) / MARGIN_SCALE for t in totals]
    raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")


class Game:
    """One game's true state, with the transitions the rules allow.

    Seats are ``0..n-1``; play passes left (seat ``s`` to ``(s+1) % n``).
    ``layouts[s]`` holds 9 kinds by slot and ``face_up[s]`` 9 bools;
    ``piles`` is ``[A, B]``, each bottom to top; ``draw_pile`` has its top
    card last.  ``held`` is the card in hand (``None`` if none) and
    ``held_source`` one of :data:`HELD_SOURCES`.  ``removed`` lists the
    Hazards out of this round.  ``round_scores`` holds one list per round
    played (after the ±5), ``totals`` their sums.

    Randomness comes only from ``rng``: one ``rng.permutation(110)`` per round
    and one permutation per draw-pile reshuffle.  ``auto_log`` lists
    ``(seat, action)`` for every decision the engine played because it was
    the only legal one.

    ``slot_log`` is bookkeeping for incremental observers (the env's
    :class:`~grinch_env.gnoming.encoding.Encoder`), not state: :meth:`step`
    appends ``(seat, slot)`` for every slot whose card or face changed, and a
    new (empty) list replaces it whenever every layout may change at once (a
    deal, the final reveal).  Code that edits ``layouts`` or ``face_up``
    directly does not update it.
    """

    __slots__ = (
        "num_players", "num_rounds", "first_player", "start_rotation", "discard_take", "mulligan_lines",
        "max_turns_per_player", "turn_cap", "rng",
        "round", "round_first", "phase", "current", "turn_player", "reveal_picks",
        "layouts", "face_up", "piles", "draw_pile", "reshuffled", "held", "held_source", "filled", "removed",
        "went_out", "final_turns", "turns_this_round", "responders", "totals", "round_scores", "round_capped",
        "round_went_out", "auto_log", "version", "reshuffles", "_legal", "_legal_version", "slot_log",
    )

    def __init__(
        self,
        num_players: int = 4,
        *,
        rng: np.random.Generator | int | None = None,
        first_player: int = 0,
        start_rotation: str = "rotate",
        discard_take: str = "must_place",
        mulligan_lines: str = "independent",
        max_turns_per_player: int = 30,
        _start: bool = True,
    ) -> None:
        opts = check_options(num_players, first_player, start_rotation, discard_take, mulligan_lines, max_turns_per_player)
        self.num_players = n = opts["num_players"]
        self.num_rounds = NUM_ROUNDS
        self.first_player = opts["first_player"]
        self.start_rotation = opts["start_rotation"]
        self.discard_take = opts["discard_take"]
        self.mulligan_lines = opts["mulligan_lines"]
        self.max_turns_per_player = opts["max_turns_per_player"]
        self.turn_cap = self.max_turns_per_player * n
        if rng is not None and not isinstance(rng, np.random.Generator):
            _check_int("rng", rng, 0, None, "None, an int seed >= 0 or a numpy Generator")
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.totals = [0] * n
        self.round_scores: list[list[int]] = []
        self.round_capped: list[bool] = []
        self.round_went_out: list[int | None] = []
        self.auto_log: list[tuple[int, int]] = []
        self.version = 0  # bumped by every transition (a cheap change counter for observers)
        self._legal: list[int] = []
        self._legal_version = -1  # legal_actions() is cached per version
        self.round = 0
        if _start:
            self._start_round()
            self._play_forced()

    @property
    def options(self) -> dict[str, Any]:
        """The game's options (the keyword arguments that rebuild it)."""
        return {
            "num_players": self.num_players, "first_player": self.first_player, "start_rotation": self.start_rotation,
            "discard_take": self.discard_take, "mulligan_lines": self.mulligan_lines,
            "max_turns_per_player": self.max_turns_per_player,
        }

    # ------------------------------------------------------------ round flow
    def _start_round(self, deck: Sequence[int] | None = None) -> None:
        """Set up round ``self.round`` from ``deck`` (kinds, top card last), by default a fresh shuffle of all 110 cards."""
        n = self.num_players
        if deck is None:
            cards = [DECK[i] for i in self.rng.permutation(DECK_SIZE)]
        else:
            cards = list(deck)
        self.layouts = [[cards.pop() for _ in range(NUM_SLOTS)] for _ in range(n)]
        self.face_up = [[False] * NUM_SLOTS for _ in range(n)]
        self.slot_log: list[tuple[int, int]] = []
        self.removed: list[int] = []
        self.piles: list[list[int]] = [[], []]
        for pile in self.piles:
            card = cards.pop()
            while card == HAZARD:  # [decision] a turned Hazard leaves the round; nobody flips
                self.removed.append(card)
                card = cards.pop()
            pile.append(card)
        self.draw_pile = cards
        self.reshuffled = False
        self.reshuffles = 0
        self.held: int | None = None
        self.held_source: str | None = None
        self.filled = [False] * NUM_SLOTS
        self.went_out: int | None = None
        self.final_turns = [False] * n
        self.turns_this_round = 0
        self.responders: list[int] = []
        self.round_first = (self.first_player + self.round) % n if self.start_rotation == "rotate" else self.first_player
        self.turn_player = self.round_first
        self.reveal_picks = 0
        self.phase = REVEAL
        self.current = self.round_first

    def _start_turn(self, seat: int) -> None:
        self.turn_player = self.current = seat
        self.phase = DRAW_PHASE
        self.filled = [False] * NUM_SLOTS

    def _end_turn(self) -> None:
        """Count the turn, check going out (§3.7), then start the next turn or end the round."""
        tp = self.turn_player
        self.turns_this_round += 1
        self.held = None
        self.held_source = None
        self.responders = []
        if self.went_out is None:
            if False not in self.face_up[tp]:
                self.went_out = tp
                self.final_turns = [s != tp for s in range(self.num_players)]
            elif self.turns_this_round >= self.turn_cap:
                self._end_round(capped=True)
                return
        else:
            self.final_turns[tp] = False
            if not any(self.final_turns):
                self._end_round(capped=False)
                return
        self._start_turn((tp + 1) % self.num_players)

    def _end_round(self, capped: bool) -> None:
        """Reveal every face-down card where it lies, score, add to the totals, then deal the next round or end."""
        for up in self.face_up:
            up[:] = [True] * NUM_SLOTS
        self.slot_log = []
        raw = [score_layout(layout, self.mulligan_lines) for layout in self.layouts]
        scores = round_scores(raw, self.went_out, capped)
        self.round_scores.append(scores)
        self.round_capped.append(capped)
        self.round_went_out.append(self.went_out)
        self.totals = [t + s for t, s in zip(self.totals, scores)]
        self.filled = [False] * NUM_SLOTS
        if self.round + 1 < self.num_rounds:
            self.round += 1
            self._start_round()
        else:
            self.phase = DONE
            self.current = None
            self.final_turns = [False] * self.num_players

    # --------------------------------------------------------------- queries
    @property
    def done(self) -> bool:
        return self.phase is DONE

    def face_down_count(self, seat: int) -> int:
        """Return how many of ``seat``'s slots are face down."""
        return self.face_up[seat].count(False)

    def _mulligan_slots(self, seat: int) -> list[int]:
        layout, up = self.layouts[seat], self.face_up[seat]
        return [p for p in range(NUM_SLOTS) if up[p] and layout[p] == MULLIGAN]

    def _placements(self, card: int) -> list[int]:
        """Return the slots where the turn player may place ``card`` (§3.3, the Mulligan limit)."""
        if card != MULLIGAN:
            return list(range(NUM_SLOTS))
        shown = self._mulligan_slots(self.turn_player)
        if not shown:
            return list(range(NUM_SLOTS))
        return shown if len(shown) == 1 else []

    def _discards(self, card: int) -> list[int]:
        """Return the legal discard actions for ``card`` (§3.5)."""
        if card == HAZARD:
            return [DISCARD_A]
        a, b = self.piles
        if a and b:
            return [DISCARD_A, DISCARD_B]
        if b:  # A empty: start it again
            return [DISCARD_A]
        if a:
            return [DISCARD_B]
        return [DISCARD_A]

    def _can_take(self, pile: list[int]) -> bool:
        return bool(pile) and (pile[-1] != MULLIGAN or len(self._mulligan_slots(self.turn_player)) <= 1)

    def touch(self) -> None:
        """Drop cached results after editing the state directly (tests do; :meth:`step` never needs it)."""
        self.version += 1

    def legal_mask(self) -> bytearray:
        """Return :meth:`legal_actions` as ``NUM_ACTIONS`` bytes, 1 for each legal action (all 0 once the game is over)."""
        mask = bytearray(NUM_ACTIONS)
        for action in self.legal_actions():
            mask[action] = 1
        return mask

    def legal_actions(self) -> list[int]:
        """Return the sorted legal actions of the player to act (empty once the game is over)."""
        if self._legal_version != self.version:
            self._legal = self._compute_legal()
            self._legal_version = self.version
        return self._legal[:]

    def _compute_legal(self) -> list[int]:
        phase = self.phase
        if phase is REVEAL or phase is HAZARD_PHASE:
            up = self.face_up[self.current]
            slots = [p for p in range(NUM_SLOTS) if not up[p]]
            return slots + [PASS] if phase is HAZARD_PHASE else slots
        if phase is DRAW_PHASE:
            a, b = self.piles
            return [DRAW] + ([TAKE_A] if self._can_take(a) else []) + ([TAKE_B] if self._can_take(b) else [])
        if phase is PLAY:
            held = self.held
            slots = self._placements(held)
            if self.held_source == "draw" or self.discard_take == "free":
                return slots + self._discards(held)
            return slots
        if phase is BOUNCE:
            filled = self.filled
            return [p for p in range(NUM_SLOTS) if not filled[p]] + self._discards(self.held)
        if phase is DISCARD:
            return self._discards(self.held)
        return []

    def is_legal(self, action: Any) -> bool:
        """Return whether the player to act may take ``action`` now."""
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            return False
        return int(action) in self.legal_actions()

    def winners(self) -> list[int]:
        """Return the seats with the lowest total; among tied leaders the lowest third-round score (§4.6); a shared win lists all."""
        last = self.round_scores[-1] if len(self.round_scores) == self.num_rounds else None
        return _winners(self.totals, last)

    def rewards(self, reward_mode: str = "win") -> list[float]:
        """Return the zero-sum rewards of §4.6 for the current totals (``"win"`` or ``"margin"``)."""
        last = self.round_scores[-1] if len(self.round_scores) == self.num_rounds else None
        return terminal_rewards(self.totals, last, reward_mode)

    # ----------------------------------------------------------- transitions
    def step(self, action: int) -> None:
        """Apply the current player's ``action``, then any forced decisions; raise :class:`IllegalActionError` if illegal."""
        if type(action) is not int:
            if isinstance(action, (bool, np.bool_)) or not isinstance(action, np.integer):
                self._raise_illegal(action)
            action = int(action)
        if self._legal_version != self.version:
            self.legal_actions()
        if action not in self._legal:
            self._raise_illegal(action)
        self._apply(action)
        self._play_forced()

    def _play_forced(self) -> None:
        """Play every decision that has exactly one legal action (§3 [decision]), logging it in ``auto_log``."""
        while self.phase is not DONE:
            legal = self._legal = self._compute_legal()
            self._legal_version = self.version
            if len(legal) != 1:
                return
            self.auto_log.append((self.current, legal[0]))
            self._apply(legal[0])

    def _apply(self, action: int) -> None:
        """Apply a legal ``action`` of the player to act."""
        self.version += 1
        phase = self.phase
        seat = self.current
        if phase is REVEAL:
            self.face_up[seat][action] = True
            self.slot_log.append((seat, action))
            self.reveal_picks += 1
            if self.reveal_picks == REVEAL_PICKS * self.num_players:
                self._start_turn(self.round_first)
            else:
                self.current = (self.round_first + self.reveal_picks // REVEAL_PICKS) % self.num_players
        elif phase is DRAW_PHASE:
            if action == DRAW:
                self.held = self.draw_pile.pop()
                self.held_source = "draw"
                if not self.draw_pile:
                    self._reshuffle()
            else:
                self.held = self.piles[action - TAKE_A].pop()
                self.held_source = "A" if action == TAKE_A else "B"
            self.phase = PLAY
        elif phase is PLAY or phase is BOUNCE:
            if action < NUM_SLOTS:
                self._place(action)
            else:
                self._discard(action)
        elif phase is DISCARD:
            self._discard(action)
        elif phase is HAZARD_PHASE:
            if action != PASS:
                self.face_up[seat][action] = True
                self.slot_log.append((seat, action))
            self._next_responder()

    def _reshuffle(self) -> None:
        """[decision] Form a new draw pile from every discard below the two pile tops (§3.1)."""
        under: list[int] = []
        for pile in self.piles:
            under.extend(pile[:-1])
            del pile[:-1]
        self.draw_pile = [under[i] for i in self.rng.permutation(len(under))]
        self.reshuffled = True
        self.reshuffles += 1

    def _place(self, slot: int) -> None:
        """Put the held card face up into ``slot``; the displaced card D is held next (§3.4)."""
        tp = self.turn_player
        layout, up = self.layouts[tp], self.face_up[tp]
        displaced, was_up = layout[slot], up[slot]
        layout[slot] = self.held
        up[slot] = True
        self.slot_log.append((tp, slot))
        self.filled[slot] = True
        self.held = displaced
        if not was_up and IS_POSITIVE[displaced] and any(up[q] and layout[q] == displaced for q in range(NUM_SLOTS)):
            self.phase = BOUNCE
            self.held_source = "bounce"
        else:
            self.phase = DISCARD
            self.held_source = "displaced"

    def _discard(self, action: int) -> None:
        """Discard the held card (§3.5); a Hazard leaves the round and opens the responses of §3.6."""
        card = self.held
        self.held = None
        self.held_source = None
        if card == HAZARD:
            self.removed.append(card)
            n, tp = self.num_players, self.turn_player
            self.responders = [(tp + i) % n for i in range(1, n) if self.face_down_count((tp + i) % n) >= 2]
            self.phase = HAZARD_PHASE
            self._next_responder(first=True)
        else:
            self.piles[action - DISCARD_A].append(card)
            self._end_turn()

    def _next_responder(self, first: bool = False) -> None:
        if not first:
            self.responders.pop(0)
        if self.responders:
            self.current = self.responders[0]
        else:
            self._end_turn()

    def _raise_illegal(self, action: Any) -> None:
        if self.phase is DONE:
            raise IllegalActionError(f"the game is over (phase 'done'): no action is legal, got {action!r}")
        legal = self.legal_actions()
        raise IllegalActionError(
            f"illegal action {action!r} ({action_name(action)}) for seat {self.current} in phase {self.phase.value!r}; "
            f"legal actions: {legal} ({', '.join(action_name(a) for a in legal)})"
        )

    # ------------------------------------------------------- copies and views
    def clone(self, rng: np.random.Generator | None = None) -> Game:
        """Return an independent copy; it continues with ``rng`` or, by default, a copy of this game's generator."""
        g = Game.__new__(Game)
        for name in (
            "num_players", "num_rounds", "first_player", "start_rotation", "discard_take", "mulligan_lines",
            "max_turns_per_player", "turn_cap", "round", "round_first", "phase", "current", "turn_player",
            "reveal_picks", "reshuffled", "reshuffles", "held", "held_source", "went_out", "turns_this_round", "version",
        ):
            setattr(g, name, getattr(self, name))
        g._legal = []
        g._legal_version = -1
        g.rng = rng if rng is not None else copy_generator(self.rng)
        g.layouts = [x[:] for x in self.layouts]
        g.face_up = [x[:] for x in self.face_up]
        g.piles = [x[:] for x in self.piles]
        g.draw_pile = self.draw_pile[:]
        g.filled = self.filled[:]
        g.removed = self.removed[:]
        g.final_turns = self.final_turns[:]
        g.responders = self.responders[:]
        g.totals = self.totals[:]
        g.round_scores = [x[:] for x in self.round_scores]
        g.round_capped = self.round_capped[:]
        g.round_went_out = self.round_went_out[:]
        g.auto_log = self.auto_log[:]
        g.slot_log = self.slot_log[:]
        return g

    def never_seen_counts(self) -> list[int]:
        """Return the count of each kind nobody has seen: in face-down slots and in a draw pile never reshuffled."""
        counts = [0] * NUM_KINDS
        for layout, up in zip(self.layouts, self.face_up):
            for k, u in zip(layout, up):
                if not u:
                    counts[k] += 1
        if not self.reshuffled:
            for k in self.draw_pile:
                counts[k] += 1
        return counts

    def resample_from_infostate(self, seat: int, rng: np.random.Generator) -> Game:
        """Return a determinisation: a copy in which every card hidden from everyone is dealt again at random (§5).

        The never-seen multiset is dealt uniformly over every face-down slot
        and, unless it was reshuffled, the draw pile; a reshuffled draw pile
        (its multiset is public) is shuffled.  Every public fact (face-up
        cards, both piles in order, the held card, sizes, scores) is kept.
        Every seat knows the same things (§5), so ``seat`` only is checked.
        The copy continues with ``rng``.
        """
        _check_int("seat", seat, 0, self.num_players - 1, f"a seat in 0..{self.num_players - 1}")
        g = self.clone(rng=rng)
        if self.phase is DONE:
            return g
        slots = [(s, p) for s in range(self.num_players) for p in range(NUM_SLOTS) if not self.face_up[s][p]]
        pool = [self.layouts[s][p] for s, p in slots]
        if not self.reshuffled:
            pool += self.draw_pile
        pool = [pool[i] for i in rng.permutation(len(pool))]
        for (s, p), k in zip(slots, pool):
            g.layouts[s][p] = k
        if self.reshuffled:
            g.draw_pile = [self.draw_pile[i] for i in rng.permutation(len(self.draw_pile))]
        else:
            g.draw_pile = pool[len(slots):]
        return g

    def state_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable snapshot of the true state (the env's ``game_state()``, §6.4)."""
        return {
            "num_players": self.num_players,
            "round": self.round,
            "first_player": self.round_first,
            "phase": self.phase.value,
            "turn_player": self.turn_player if self.phase is not DONE else None,
            "current_player": self.current,
            "layouts": [x[:] for x in self.layouts],
            "face_up": [x[:] for x in self.face_up],
            "discard_piles": [x[:] for x in self.piles],
            "draw_pile": self.draw_pile[:],
            "draw_pile_reshuffled": self.reshuffled,
            "removed": self.removed[:],
            "held": self.held,
            "held_source": self.held_source,
            "filled": [p for p in range(NUM_SLOTS) if self.filled[p]],
            "went_out": self.went_out,
            "final_turns_left": [s for s in range(self.num_players) if self.final_turns[s]],
            "turns_this_round": self.turns_this_round,
            "round_scores": [x[:] for x in self.round_scores],
            "totals": self.totals[:],
            "options": self.options,
        }

    def render(self, seat: int | None = None) -> str:
        """Return a text picture of the table: every layout as a 3x3 grid (face down ``??``), piles, held card, scores.

        Nobody may see a face-down card (§5), so ``seat`` changes only the
        marker of the viewer's own layout.
        """
        n = self.num_players
        cap = f"{self.turns_this_round}/{self.turn_cap}"
        head = (
            f"Round {self.round + 1}/{self.num_rounds}  phase {self.phase.value}  turn player "
            f"{'-' if self.phase is DONE else self.turn_player}  to act {'-' if self.current is None else self.current}  "
            f"turns {cap}  draw pile {len(self.draw_pile)}{' (reshuffled)' if self.reshuffled else ''}"
        )
        lines = [head]
        pa = " ".join(SHORT_NAMES[k].strip() for k in self.piles[0]) or "-"
        pb = " ".join(SHORT_NAMES[k].strip() for k in self.piles[1]) or "-"
        lines.append(f"pile A (bottom..top): {pa}")
        lines.append(f"pile B (bottom..top): {pb}")
        held = "-" if self.held is None else f"{kind_name(self.held)} (from {self.held_source})"
        lines.append(f"held: {held}   removed Hazards: {len(self.removed)}")
        if self.went_out is not None:
            lines.append(f"seat {self.went_out} went out; final turns left: {[s for s in range(n) if self.final_turns[s]]}")
        grids = []
        for s in range(n):
            layout, up = self.layouts[s], self.face_up[s]
            marks = ("*" if s == seat else " ") + (">" if s == self.current else " ")
            title = f"{marks}seat {s}".ljust(12)
            rows = [" ".join(SHORT_NAMES[layout[3 * r + c]] if up[3 * r + c] else "??" for c in range(3)).ljust(12) for r in range(3)]
            scores = " ".join(str(rs[s]) for rs in self.round_scores) or "-"
            grids.append([title, *rows, f"total {self.totals[s]}".ljust(12), f"[{scores}]".ljust(12)])
        for i in range(len(grids[0])):
            lines.append("  ".join(g[i] for g in grids).rstrip())
        return "\n".join(lines)


__all__ = [
    "DISCARD", "DISCARD_A", "DISCARD_B", "DRAW", "Game", "HELD_SOURCES", "IllegalActionError", "MAX_GAME_LENGTH",
    "MAX_PLAYERS", "MIN_PLAYERS", "NUM_ACTIONS", "NUM_ROUNDS", "NUM_SLOTS", "OPTIONS", "PASS", "Phase", "REWARD_MODES",
    "SLOT_BASE", "TAKE_A", "TAKE_B", "action_name", "check_options", "max_game_length", "terminal_rewards",
]
