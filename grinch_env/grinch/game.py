"""The rules of *Grinch Grow Your Heart* as a state machine (``../shared/RULES.md``).

This module is the project's single source of truth for the rules.  It has no
PettingZoo, gymnasium or torch import; the environment, the agents, the
trainer and the batched engine all build on :class:`Game`.

Actions (one ``Discrete(62)`` space for every table size)::

    0..47    discard the card with that canonical id
    48       draw the top card of the draw pile
    49 + j   draw the top card of the discard pile of the player j seats to the
             actor's left (j = 0 is the actor's own pile), j = 0..5
    55 + k   score the hand in row k (Wreaths, Noise, Ornaments, Presents,
             Rainbow, Match, Run)

A round: deal 2 cards each, then three turns.  In a turn each Who, from the
Grinch's left, draws two cards from the draw pile automatically (no action)
and discards one; then the Grinch draws twice (two actions, from the draw pile
or any discard pile, the same pile twice allowed) and discards one.  Then every
player, in the same order, scores their 5-card hand in an unused row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

import numpy as np

from grinch_env.games import IllegalActionError, copy_generator
from grinch_env.grinch.cards import NUM_CARDS, card_name
from grinch_env.grinch.scoring import NUM_ROWS, ROW_NAMES, Bonus, bonus_points, resolve_layout, row_value

# ---------------------------------------------------------------- game facts
MIN_PLAYERS = 2
MAX_PLAYERS = 6
ROUNDS_BY_PLAYERS = {2: 6, 3: 6, 4: 4, 5: 5, 6: 6}
MAX_ROUNDS = 6
TURNS_PER_ROUND = 3
DEAL_SIZE = 2
WHO_DRAWS = 2
GRINCH_DRAWS = 2
assert WHO_DRAWS == 2  # Game._begin_player unrolls a Who's two draws
HAND_SIZE_AT_SCORING = DEAL_SIZE + TURNS_PER_ROUND  # 5

# Action layout.
DISCARD_BASE = 0
DRAW_PILE_ACTION = 48
DRAW_DISCARD_BASE = 49
SCORE_BASE = DRAW_DISCARD_BASE + MAX_PLAYERS  # 55
NUM_ACTIONS = SCORE_BASE + NUM_ROWS  # 62
DRAW_ACTIONS = range(DRAW_PILE_ACTION, SCORE_BASE)
SCORE_ACTIONS = range(SCORE_BASE, NUM_ACTIONS)

# Decisions per game: per round every Who discards 3 times, the Grinch draws
# 6 times and discards 3 times, and everyone scores once.
def decisions_per_game(num_players: int) -> int:
    """Return the exact number of actions in a game with ``num_players`` players."""
    per_round = (num_players - 1) * TURNS_PER_ROUND + TURNS_PER_ROUND * (GRINCH_DRAWS + 1) + num_players
    return ROUNDS_BY_PLAYERS[num_players] * per_round


MAX_GAME_LENGTH = max(decisions_per_game(n) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1))



class Phase(str, Enum):
    """The phase of a game: one enum for the rules, the encoder and the batched engine (``code`` is its array value).

    Members are strings (``Phase.DRAW == "draw"``, JSON and f-strings print the
    value), so states and logs read as before.
    """

    DISCARD = "discard"
    DRAW = "draw"
    SCORE = "score"
    DONE = "done"

    __str__ = str.__str__
    __repr__ = str.__repr__  # messages name the phase as 'draw', as they always did
    __format__ = str.__format__
    __hash__ = str.__hash__  # hash like the plain string, so "draw" and Phase.DRAW are one dict key

    @property
    def code(self) -> int:
        """Return the phase's integer code in the batched engine's arrays (0..3)."""
        return _PHASE_CODES[self]


_PHASE_CODES = {phase: i for i, phase in enumerate(Phase)}
PHASE_DISCARD, PHASE_DRAW, PHASE_SCORE, PHASE_DONE = Phase
PHASES = tuple(Phase)

# ------------------------------------------------------------------ rewards
REWARD_MODES = ("win", "margin")
MARGIN_SCALE = 100.0


def terminal_rewards(totals: list[int], reward_mode: str = "win") -> list[float]:
    """Return every seat's terminal reward for the final ``totals`` under ``reward_mode`` (zero-sum).

    ``"win"``: the seats with the highest total share +1, the others share -1
    (all 0 if every seat ties); ``"margin"``: ``(own total - mean of the others) / 100``.
    """
    n = len(totals)
    if reward_mode == "win":
        best = max(totals)
        winners = [t == best for t in totals]
        w = sum(winners)
        if w == n:
            return [0.0] * n
        return [1.0 / w if is_winner else -1.0 / (n - w) for is_winner in winners]
    if reward_mode == "margin":
        total = sum(totals)
        return [(t - (total - t) / (n - 1)) / MARGIN_SCALE for t in totals]
    raise ValueError(f"reward_mode must be one of {REWARD_MODES}, got {reward_mode!r}")


def action_name(action: int, num_players: int | None = None) -> str:
    """Return a human-readable description of ``action`` (``"discard W3'"``, ``"draw from pile +1"``, ``"score Match"``)."""
    if 0 <= action < DRAW_PILE_ACTION:
        return f"discard {card_name(action)}"
    if action == DRAW_PILE_ACTION:
        return "draw from the draw pile"
    if DRAW_DISCARD_BASE <= action < SCORE_BASE:
        j = action - DRAW_DISCARD_BASE
        return "draw from own discard pile" if j == 0 else f"draw from the discard pile {j} seat(s) to the left"
    if SCORE_BASE <= action < NUM_ACTIONS:
        return f"score {ROW_NAMES[action - SCORE_BASE]}"
    return f"invalid action {action!r}"


def action_parts(action: int, seat: int, num_players: int) -> tuple[str, int]:
    """Split ``seat``'s legal-range ``action`` into its kind and argument, the one decoding the CLI and the pictures word.

    ``("discard", card)``, ``("draw", -1)`` (the draw pile), ``("take", source seat)`` (the top card of that seat's
    discard pile) or ``("score", row)``.
    """
    if action < DRAW_PILE_ACTION:
        return "discard", action
    if action == DRAW_PILE_ACTION:
        return "draw", -1
    if action < SCORE_BASE:
        return "take", (seat + action - DRAW_DISCARD_BASE) % num_players
    return "score", action - SCORE_BASE


def check_num_players(num_players: Any) -> int:
    """Return ``num_players`` if it is an int in 2..6, else raise ``ValueError``."""
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) or not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
        raise ValueError(f"num_players must be an int in {MIN_PLAYERS}..{MAX_PLAYERS}, got {num_players!r}")
    return int(num_players)


class Game:
    """One game's true state, with the transitions the rules allow.

    Seats are ``0..n-1``.  ``hands[p]`` is a list of card ids, ``piles[p]``
    seat ``p``'s discard pile from bottom to top, ``draw_pile`` the draw pile
    with its top card last.  ``known[p]`` holds the cards publicly known to
    be in ``p``'s hand (cards the Grinch took from a discard pile and has not
    discarded).  Randomness comes only from ``rng``, one deck shuffle
    (``rng.permutation(48)``) at the start of every round.

    :attr:`pile_log` (read-only) tells observers which piles changed: an
    incremental one (the env's :class:`~grinch_env.grinch.encoding.Encoder`)
    rebuilds only those seats' pile features.  Code that edits ``piles`` or
    ``known`` directly calls :meth:`piles_replaced` afterwards.
    """

    __slots__ = (
        "num_players", "num_rounds", "first_grinch", "layout", "rng",
        "round", "turn", "phase", "grinch", "order", "pos", "current", "draws_made",
        "hands", "piles", "draw_pile", "known", "score_sheet", "totals", "_pile_log",
    )

    def __init__(
        self,
        num_players: int = 4,
        *,
        rng: np.random.Generator | int | None = None,
        bonus_layout: str | Mapping | tuple = "standard",
        first_grinch: int = 0,
        num_rounds: int | None = None,
        _start: bool = True,
    ) -> None:
        self.num_players = n = check_num_players(num_players)
        if isinstance(first_grinch, bool) or not isinstance(first_grinch, (int, np.integer)) or not 0 <= first_grinch < n:
            raise ValueError(f"first_grinch must be a seat in 0..{n - 1} for {n} players, got {first_grinch!r}")
        self.first_grinch = int(first_grinch)
        if num_rounds is None:
            num_rounds = ROUNDS_BY_PLAYERS[n]
        if isinstance(num_rounds, bool) or not isinstance(num_rounds, (int, np.integer)) or not 1 <= num_rounds <= MAX_ROUNDS:
            raise ValueError(f"num_rounds must be an int in 1..{MAX_ROUNDS} (default: the rules' {ROUNDS_BY_PLAYERS[n]} for {n} players), got {num_rounds!r}")
        self.num_rounds = int(num_rounds)
        self.layout = resolve_layout(bonus_layout)
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.score_sheet: list[list[int | None]] = [[None] * NUM_ROWS for _ in range(n)]
        self.totals = [0] * n
        self.round = 0
        if _start:
            self._start_round()

    # ------------------------------------------------------------ round flow
    def _start_round(self, deck: Sequence[int] | None = None) -> None:
        """Deal a new round from ``deck`` (top card last), by default a fresh shuffle."""
        n = self.num_players
        cards = self.rng.permutation(NUM_CARDS).tolist() if deck is None else list(deck)
        self.grinch = g = (self.first_grinch + self.round) % n
        self.order = [(g + i) % n for i in range(1, n + 1)]  # Whos from the Grinch's left, Grinch last
        self.hands = [[cards.pop() for _ in range(DEAL_SIZE)] for _ in range(n)]
        self.piles = [[] for _ in range(n)]
        self.known = [[] for _ in range(n)]
        self.piles_replaced()
        self.draw_pile = cards
        self.turn = 1
        self.draws_made = 0
        self._begin_player(0)

    def _begin_player(self, pos: int) -> None:
        """Make the ``pos``-th player of this turn's order the actor; a Who draws here."""
        self.pos = pos
        p = self.current = self.order[pos]
        if p == self.grinch:
            self.phase = PHASE_DRAW
            self.draws_made = 0
        else:
            self.phase = PHASE_DISCARD
            hand = self.hands[p]
            draw_pile = self.draw_pile
            if len(draw_pile) >= 2:  # the usual case, without the refill checks (WHO_DRAWS == 2, unrolled)
                hand.append(draw_pile.pop())
                hand.append(draw_pile.pop())
                return
            for _ in range(WHO_DRAWS):
                if self.draw_pile:
                    hand.append(self.draw_pile.pop())
                elif self.can_draw_from_draw_pile():
                    hand.append(self._pop_draw_pile())
                else:
                    break  # [decision] a Who draws only what is left

    @property
    def pile_log(self) -> list[int]:
        """The seats whose discard pile or known cards changed, in order, since the piles were last replaced (treat as read-only).

        :meth:`step` appends the seat it discarded for, or the seat drawn from
        and the drawing seat; every pile may change at once at a new round, a
        draw-pile refill or a :meth:`piles_replaced` call, and then a new
        (empty) list takes the old one's place, so an observer that keeps the
        list it last saw knows it must look at every seat again.
        """
        return self._pile_log

    def piles_replaced(self) -> None:
        """Say that every seat's pile and known cards may have changed (after editing ``piles`` or ``known`` directly): :attr:`pile_log` starts anew."""
        self._pile_log = []

    def can_draw_from_draw_pile(self) -> bool:
        """Return whether the draw pile has a card now or after a refill from the piles' lower cards."""
        return bool(self.draw_pile) or any(len(p) > 1 for p in self.piles)

    def _pop_draw_pile(self) -> int:
        if not self.draw_pile:
            self._refill_draw_pile()
        return self.draw_pile.pop()

    def _refill_draw_pile(self) -> None:
        """[decision] Shuffle the cards under every discard pile's top into a new draw pile."""
        under: list[int] = []
        for pile in self.piles:
            under.extend(pile[:-1])
            del pile[:-1]
        self.piles_replaced()
        self.draw_pile = [under[i] for i in self.rng.permutation(len(under))]

    def _end_discard(self) -> None:
        if self.pos + 1 < self.num_players:
            self._begin_player(self.pos + 1)
        elif self.turn < TURNS_PER_ROUND:
            self.turn += 1
            self._begin_player(0)
        else:
            self.turn = None
            self.phase = PHASE_SCORE
            self.pos = 0
            self.current = self.order[0]

    # --------------------------------------------------------------- queries
    @property
    def done(self) -> bool:
        return self.phase == PHASE_DONE

    def is_grinch(self, seat: int) -> bool:
        return seat == self.grinch

    def legal_actions(self) -> list[int]:
        """Return the sorted legal actions of the current player (empty once the game is over)."""
        phase = self.phase
        if phase == PHASE_DISCARD:
            return sorted(self.hands[self.current])
        if phase == PHASE_DRAW:
            n = self.num_players
            cur = self.current
            actions = [DRAW_PILE_ACTION] if self.can_draw_from_draw_pile() else []
            piles = self.piles
            for j in range(n):
                if piles[(cur + j) % n]:
                    actions.append(DRAW_DISCARD_BASE + j)
            return actions
        if phase == PHASE_SCORE:
            sheet = self.score_sheet[self.current]
            return [SCORE_BASE + k for k in range(NUM_ROWS) if sheet[k] is None]
        return []

    def legal_mask(self) -> bytearray:
        """Return :meth:`legal_actions` as ``NUM_ACTIONS`` bytes, 1 for each legal action (all 0 once the game is over).

        The same rules as :meth:`legal_actions`, written per phase straight into the bytes (the env asks for a mask every
        step); ``tests/test_rules.py::test_legal_mask_is_the_legal_actions`` holds the two equal.
        """
        mask = bytearray(NUM_ACTIONS)
        phase = self.phase
        if phase == PHASE_DISCARD:
            for action in self.hands[self.current]:
                mask[action] = 1
        elif phase == PHASE_DRAW:
            cur = self.current
            piles = self.piles
            mask[DRAW_PILE_ACTION] = self.can_draw_from_draw_pile()
            mask[DRAW_DISCARD_BASE:DRAW_DISCARD_BASE + self.num_players] = bytes(map(bool, piles[cur:] + piles[:cur]))
        elif phase == PHASE_SCORE:
            mask[SCORE_BASE:] = bytes([v is None for v in self.score_sheet[self.current]])
        return mask

    def is_legal(self, action: int) -> bool:
        """Return whether the current player may take ``action`` now."""
        phase = self.phase
        if phase == PHASE_DISCARD:
            return 0 <= action < DRAW_PILE_ACTION and action in self.hands[self.current]
        if phase == PHASE_DRAW:
            if action == DRAW_PILE_ACTION:
                return self.can_draw_from_draw_pile()
            j = action - DRAW_DISCARD_BASE
            return 0 <= j < self.num_players and bool(self.piles[(self.current + j) % self.num_players])
        if phase == PHASE_SCORE:
            k = action - SCORE_BASE
            return 0 <= k < NUM_ROWS and self.score_sheet[self.current][k] is None
        return False

    def hand_value(self, seat: int, row: int) -> int:
        """Return what scoring seat's current hand in ``row`` would write (row value plus bonus)."""
        hand = self.hands[seat]
        return row_value(hand, row) + bonus_points(hand, self.layout)

    def winners(self) -> list[int]:
        """Return the seats with the highest total (all of them in a tie)."""
        best = max(self.totals)
        return [p for p, t in enumerate(self.totals) if t == best]

    def rewards(self, reward_mode: str = "win") -> list[float]:
        """Return every seat's terminal reward for the current totals (:func:`terminal_rewards`)."""
        return terminal_rewards(self.totals, reward_mode)

    # ----------------------------------------------------------- transitions
    def step(self, action: int) -> None:
        """Apply the current player's ``action``; raise :class:`IllegalActionError` if the rules forbid it."""
        if type(action) is not int:
            # numpy integers are fine; None, floats and bools are not actions.
            if isinstance(action, (bool, np.bool_)) or not isinstance(action, np.integer):
                self._raise_illegal(action)
            action = int(action)
        # The legality checks are is_legal's, inlined per phase (this is the hot path).
        p = self.current
        phase = self.phase
        if phase == PHASE_DISCARD:
            hand = self.hands[p]
            if not (0 <= action < DRAW_PILE_ACTION and action in hand):
                self._raise_illegal(action)
            hand.remove(action)
            self.piles[p].append(action)
            self._pile_log.append(p)
            known = self.known[p]
            if known and action in known:
                known.remove(action)
            # _end_discard, with _begin_player's usual case (the next Who draws two cards) inlined.
            pos = self.pos + 1
            if pos < self.num_players:
                nxt = self.order[pos]
                draw_pile = self.draw_pile
                if nxt != self.grinch and len(draw_pile) >= 2:
                    self.pos = pos
                    self.current = nxt
                    hand = self.hands[nxt]
                    hand.append(draw_pile.pop())
                    hand.append(draw_pile.pop())
                    return
            self._end_discard()
        elif phase == PHASE_DRAW:
            if action == DRAW_PILE_ACTION:
                if not (self.draw_pile or self.can_draw_from_draw_pile()):
                    self._raise_illegal(action)
                self.hands[p].append(self._pop_draw_pile())
            else:
                n = self.num_players
                j = action - DRAW_DISCARD_BASE
                if not (0 <= j < n and self.piles[(p + j) % n]):
                    self._raise_illegal(action)
                source = (p + j) % n
                card = self.piles[source].pop()
                self.hands[p].append(card)
                self.known[p].append(card)
                self._pile_log += (source, p)
            self.draws_made += 1
            if self.draws_made == GRINCH_DRAWS:
                self.phase = PHASE_DISCARD
        elif phase == PHASE_SCORE:
            row = action - SCORE_BASE
            sheet = self.score_sheet[p]
            if not (0 <= row < NUM_ROWS and sheet[row] is None):
                self._raise_illegal(action)
            points = self.hand_value(p, row)
            sheet[row] = points
            self.totals[p] += points
            if self.pos + 1 < self.num_players:
                self.pos += 1
                self.current = self.order[self.pos]
            else:
                self.round += 1
                if self.round < self.num_rounds:
                    self._start_round()
                else:
                    self.phase = PHASE_DONE
                    self.current = None
                    self.turn = None
        else:
            self._raise_illegal(action)

    def _raise_illegal(self, action: Any) -> None:
        legal = self.legal_actions()
        if self.phase == PHASE_DONE:
            raise IllegalActionError(f"the game is over (phase 'done'): no action is legal, got {action!r}")
        raise IllegalActionError(
            f"illegal action {action!r} ({action_name(action) if isinstance(action, (int, np.integer)) and not isinstance(action, bool) else 'not an int action'}) "
            f"for seat {self.current} in phase {self.phase!r}; legal actions: {legal} "
            f"({', '.join(action_name(a) for a in legal)})"
        )

    # ------------------------------------------------------- copies and views
    def clone(self, rng: np.random.Generator | None = None) -> Game:
        """Return an independent copy; it continues with ``rng`` or, by default, a copy of this game's generator."""
        g = Game.__new__(Game)
        g.num_players = self.num_players
        g.num_rounds = self.num_rounds
        g.first_grinch = self.first_grinch
        g.layout = self.layout
        g.rng = rng if rng is not None else copy_generator(self.rng)
        g.round = self.round
        g.turn = self.turn
        g.phase = self.phase
        g.grinch = self.grinch
        g.order = self.order  # never mutated in place
        g.pos = self.pos
        g.current = self.current
        g.draws_made = self.draws_made
        g.hands = [h[:] for h in self.hands]
        g.piles = [p[:] for p in self.piles]
        g.known = [k[:] for k in self.known]
        g.draw_pile = self.draw_pile[:]
        g._pile_log = self._pile_log[:]
        g.score_sheet = [s[:] for s in self.score_sheet]
        g.totals = self.totals[:]
        return g

    def unseen_cards(self, seat: int) -> list[int]:
        """Return the cards ``seat`` cannot locate: in other hands (not publicly known) or in the draw pile."""
        seen = set(self.hands[seat])
        for pile in self.piles:
            seen.update(pile)
        for p, known in enumerate(self.known):
            if p != seat:
                seen.update(known)
        return [c for c in range(NUM_CARDS) if c not in seen]

    def resample_from_infostate(self, seat: int, rng: np.random.Generator) -> Game:
        """Return a determinisation: a copy in which every card hidden from ``seat`` is dealt again at random.

        The copy agrees with everything ``seat`` knows (its own hand, every
        discard pile in order, the cards known to be in other hands, hand and
        pile sizes, score pads) and draws a fresh shuffle for the other hands'
        unknown cards and the draw pile's order.  The copy continues with
        ``rng``, so later rounds are also fresh shuffles.
        """
        g = self.clone(rng=rng)
        if self.phase == PHASE_DONE:
            return g
        pool = self.unseen_cards(seat)
        perm = rng.permutation(len(pool))
        shuffled = [pool[i] for i in perm]
        at = 0
        for p in range(self.num_players):
            if p == seat:
                continue
            known = self.known[p]
            hidden = len(self.hands[p]) - len(known)
            g.hands[p] = known[:] + shuffled[at:at + hidden]
            at += hidden
        g.draw_pile = shuffled[at:]
        return g

    def state_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable snapshot of the true state (the env's ``game_state()``)."""
        return {
            "num_players": self.num_players,
            "num_rounds": self.num_rounds,
            "round": min(self.round, self.num_rounds - 1) if self.phase == PHASE_DONE else self.round,
            "turn": self.turn,
            "phase": self.phase,
            "grinch": self.grinch,
            "current_player": self.current,
            "hands": [sorted(h) for h in self.hands],
            "discard_piles": [p[:] for p in self.piles],
            "draw_pile_size": len(self.draw_pile),
            "score_sheet": [s[:] for s in self.score_sheet],
            "totals": self.totals[:],
            "known_in_hand": [sorted(k) for k in self.known],
        }

    def render(self, seat: int | None = None) -> str:
        """Return a text picture of the table; with ``seat``, only what that player may see."""
        lines = [
            f"Round {min(self.round + 1, self.num_rounds)}/{self.num_rounds}  "
            f"turn {self.turn if self.turn is not None else '-'}  phase {self.phase}  "
            f"Grinch: seat {self.grinch}  to act: {self.current if self.current is not None else '-'}  "
            f"draw pile: {len(self.draw_pile)}"
        ]
        for p in range(self.num_players):
            role = "Grinch" if p == self.grinch else "Who   "
            arrow = ">" if p == self.current else " "
            if seat is None or p == seat:
                hand = " ".join(card_name(c) for c in sorted(self.hands[p]))
            else:
                known = set(self.known[p])
                hand = " ".join([card_name(c) for c in sorted(known)] + ["??"] * (len(self.hands[p]) - len(known)))
            pile = " ".join(card_name(c) for c in self.piles[p]) or "-"
            sheet = " ".join("." if v is None else str(v) for v in self.score_sheet[p])
            lines.append(f"{arrow}seat {p} {role} hand [{hand}]  pile [{pile}]  pad [{sheet}]  total {self.totals[p]}")
        return "\n".join(lines)


__all__ = [
    "MARGIN_SCALE", "REWARD_MODES", "Phase", "terminal_rewards",
    "Bonus", "Game", "IllegalActionError", "action_name", "check_num_players", "decisions_per_game",
    "action_parts", "MIN_PLAYERS", "MAX_PLAYERS", "ROUNDS_BY_PLAYERS", "MAX_ROUNDS", "TURNS_PER_ROUND", "NUM_ACTIONS",
    "DISCARD_BASE", "DRAW_PILE_ACTION", "DRAW_DISCARD_BASE", "SCORE_BASE", "MAX_GAME_LENGTH",
    "PHASE_DISCARD", "PHASE_DRAW", "PHASE_SCORE", "PHASE_DONE",
]
